"""Classification half of tools/catalogue_nccl.py: a message's class from the file that prints it and
its wording (the class vocabulary is topodiag/catalogues/classes.toml). The first rule that fits wins;
tools/nccl_curation.toml corrects single entries afterwards."""

from __future__ import annotations

import re

FAULT_INFO_RE = re.compile(r"[Ff]ail|[Ee]rror|ERROR|[Uu]nable|[Cc]ould not|[Cc]ouldn't|[Tt]ime ?out|timed out|"
                           r"->\s*%d(?![\[\d])|[Aa]bort")  # "-> %d" the NCCLCHECK chain, not "-> %d[%lx]" connections


def is_fault_info(f: str) -> bool:
    """An INFO format that signals a fault (failed, error, unable, could not, timeout, abort, the
    NCCLCHECK "-> %d" chain)."""
    return FAULT_INFO_RE.search(f) is not None


def _has(f: str, *words: str) -> bool:
    return any(w in f for w in words)


def _rx(f: str, pattern: str) -> bool:
    return re.search(pattern, f) is not None


# (test on (file, format, lowercase format), class), in order
RULES = [
    (lambda p, f, l: _rx(f, r"^(?:%s:%d(?: \(%s\))? )?-> %d") or _rx(f, r"^%s:%d -> %d"), "internal-bug"),
    (lambda p, f, l: _has(l, "remote process exited", "closed connection", "connection closed",
                          "closed by remote", "peer closed", "remote peer", "remote error"), "remote-failure"),
    (lambda p, f, l: _has(l, "timeout", "timed out", "time out"), "timeout"),
    (lambda p, f, l: _has(l, "out of memory", "memlock", "ulimit", "no space", "too many open", "/dev/shm",
                          "posix_fallocate", "exhaust", "limit reached", "failed to allocate", "allocation failed",
                          "cannot allocate", "malloc failed", "calloc failed", "shm_open", "not enough"),
     "resource-exhausted"),
    (lambda p, f, l: _has(l, "nvls", "multicast", "imex", "mnnvl", "fabric", "cumem", "cumulticast", "nvlink sharp")
     or _rx(p, r"nvls|mnnvl|cumem|imex"), "fabric-nvls"),
    (lambda p, f, l: _has(f, "Cuda failure", "CUDA failure", "cudaError", "CUDA error", "cuda error")
     or _rx(l, r"\bcu[a-z]+[A-Z]?\w* (?:failed|returned)") or _rx(f, r"\bcu[A-Z]\w+\b.*(?:fail|error)"),
     "cuda-failure"),
    (lambda p, f, l: _has(l, "gdr", "peermem", "peer_mem", "dmabuf", "dma-buf", "gpu direct"), "gdr-unavailable"),
    (lambda p, f, l: _has(f, "NET/IB", "ibv_", "IBV_", "mlx5", "NCCL_IB_", "ib_", "IB ") or _rx(p, r"net_ib|ibvwrap|ib_plugin|ibvcore|ibvsymbols"),
     "ib"),
    (lambda p, f, l: _has(f, "plugin", "Plugin", "dlopen", "dlsym", "symbol") or _rx(p, r"plugin/"), "plugin-failure"),
    (lambda p, f, l: _has(f, "NET/Socket", "SOCKET_IFNAME", "socket", "Socket", "Bootstrap", "bootstrap", "connect", "accept")
     or _rx(p, r"socket|bootstrap|net_socket|ras/"), "socket"),
    (lambda p, f, l: _rx(p, r"graph/|topo|xml") or _has(l, "topology", "xml", "topo ", "pci path", "sysfs"), "topology-load"),
    (lambda p, f, l: _has(f, "NCCL_", "environment", "env ") and _has(l, "invalid", "ignor", "unknown", "unsupported",
                                                                          "not supported", "parse", "out of range"),
     "config-ignored"),
    (lambda p, f, l: _rx(p, r"param") or _has(l, "ignoring", "ignored"), "config-ignored"),
    (lambda p, f, l: _has(l, "call to ", "pthread", "ioctl", "mmap", "open(", "strerror", "errno", "syscall", "fork",
                          "unlink", "ftruncate", "failed to open", "cannot open", "could not open"), "system-failure"),
    (lambda p, f, l: _has(l, "internal error", "unexpected", "should not", "unknown", "bug", "assert", "corrupt",
                          "unreachable", "inconsistent"), "internal-bug"),
    (lambda p, f, l: _has(l, "invalid", "must be", "must not", "not supported", "unsupported", "null", "mismatch",
                          "cannot be", "not allowed", "wrong", "out of range", "only supported", "requires",
                          "not initialized", "already", "expected", "illegal", "bad "), "api-misuse"),
    (lambda p, f, l: _rx(p, r"transport/net|proxy|transport\.cc|transport/coll"), "network-unreachable"),
    (lambda p, f, l: _rx(p, r"enqueue|collectives|init|group|register|rma|gin|devcomm|symmetric|sym"), "api-misuse"),
    (lambda p, f, l: _rx(p, r"misc/|os/|utils"), "system-failure"),
]


def _ib(f: str, low: str) -> str:
    if _has(low, "completion", "async event", "poll", "qp ", "failed", "error", "ibv_", "returned"):
        if not _has(low, "no device", "not found", "invalid", "unknown", "gid", "could not find", "hca",
                    "unsupported", "not supported", "ignoring"):
            return "ib-verbs-failure"
    return "ib-config"


def _socket(f: str, low: str) -> str:
    if _has(low, "interface", "ifname", "no usable", "address family", "no socket", "not a valid", "invalid",
            "unknown", "ipv6", "getifaddrs"):
        return "socket-config"
    return "network-unreachable"


def classify(path: str, f: str, level: str) -> str:
    low = f.lower()
    for test, cls in RULES:
        if test(path, f, low):
            if cls == "ib":
                return _ib(f, low)
            if cls == "socket":
                return _socket(f, low)
            return cls
    return "internal-bug"


def is_fallback(path: str, f: str) -> bool:
    """True when no rule fits the message: its class is the last resort (internal-bug), not a reading."""
    low = f.lower()
    return not any(test(path, f, low) for test, _ in RULES)
