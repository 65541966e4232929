"""Live collection on the node: every source run concurrently, each under its own timeout and all
under one deadline, into a bundle directory (the same layout `check --from` reads).

A live `check` collects into a temporary bundle and then reads it exactly as it would read one
given with `--from`, so a bundle gives the same findings as the live run it came from.

    records = collect(Options(deadline_s=20))        # -> [Record]
    topodiag.bundle.write_bundle_dir(root, records, host=..., ...)  # manifest.json, commands/, probes/, sysfs/

What each source is (LiveSource): a probe (a Python function returning JSON: NVML, sysfs, pyverbs),
declared here in PROBES since it is collection code, or a command (argv run by live.commands.run),
taken from the parsers: every parser whose ParserInfo has an argv is run, its output going to
`commands/<source>.txt` (an argv with the word "{netdev}" is run once per RoCE interface into that
one member: live/netdevs.py). `prolog` marks the passive, fast ones a Slurm prolog may run: probes
whose parser is prolog_safe (no command is), so prolog mode picks them from PROBES without
importing a single parser. A tool that is not installed, or a probe that finds no driver or device, is
"not_available" (a normal outcome on a host without GPU or HCA: no finding); a tool that ran and
failed is "failed"; one that did not finish in time is "timed_out". Probes run in daemon threads: a
probe stuck in the driver (NVML on a wedged GPU) is abandoned at the deadline, not waited for.
The probes that call into a C library (NVML, libibverbs: LiveSource.child) run in a child process
(`python -m <module>`, live/child.py) under the source's timeout, so that a crash (SIGSEGV) or a
hang in the library is a failed source whose JSON names the call it happened in (SYS001), never
the end of `check` or `prolog`: one more Python start (~50-100 ms) on the prolog path.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional

from . import commands as _commands
from .commands import MIN_START_S, NVIDIA_SMI_HARDWARE_CODES, CommandResult, run
from .netdevs import NETDEV

from .deadline import MAX_DEADLINE_S, check_deadline  # noqa: F401  (where commands found them)


@dataclass(frozen=True)
class Options:
    deadline_s: float = 30.0  # the whole collection
    prolog: bool = False  # only the passive, fast sources
    sysfs_root: str = "/"
    nccl_logs: tuple[str, ...] = ()  # files the user hands over (collect --nccl-log)
    nccl_tests: tuple[str, ...] = ()
    kernel_log_since_s: Optional[float] = None  # --kernel-log-since: judge only the kernel log's last S seconds


@dataclass(frozen=True)
class LiveSource:
    name: str  # the parser source its output is read as
    member: str  # where it goes in the bundle
    timeout_s: float
    prolog: bool
    argv: tuple[str, ...] = ()  # a command
    probe: Optional[Callable[[Options], dict]] = None  # or a probe
    answer_rcs: tuple[int, ...] = ()  # non-zero exit codes that are still an answer (ParserInfo.answer_rcs)
    child: str = ""  # run the probe as `python -m <child>` in a child process instead (live/child.py)


@dataclass
class Record:
    """One source's outcome: what the manifest says of it, and the member's text (or None)."""

    source: str
    status: str  # ok | failed | timed_out | not_available
    member: Optional[str]
    text: Optional[str] = None
    argv: tuple[str, ...] = ()
    rc: Optional[int] = None
    duration_s: Optional[float] = None
    timed_out: bool = False
    reason: str = ""
    extra_files: list[tuple[str, str]] = field(default_factory=list)  # (bundle path, text): sysfs snapshot
    where: str = ""  # the bundle member its source writes (probes/pyverbs.json): tells two probes of one source apart
    # a file the user gave (--nccl-log, --nccl-tests) that the member copies, never held in memory (text None)
    source_path: Optional[str] = None

    @property
    def label(self) -> str:
        """The source's name for a person, with the probe when a probe fed it: two probes feed
        sysfs_infiniband, so "sysfs_infiniband (pyverbs.json)"."""
        where = self.where or ""
        return f"{self.source} ({where.rsplit('/', 1)[-1]})" if where.startswith("probes/") else self.source


def _nvml(opts: Options) -> dict:
    from . import nvml_probe

    return nvml_probe.probe()


def _nvml_child(timeout_s: float) -> dict:
    from . import child, nvml_probe

    return child.run_probe("topodiag.live.nvml_probe", timeout_s, nvml_probe.blank(), "NVML")


def _pyverbs_child(timeout_s: float) -> dict:
    from . import child, pyverbs_probe

    return child.run_probe("topodiag.live.pyverbs_probe", timeout_s, pyverbs_probe.blank(), "pyverbs")


CHILDREN: dict[str, Callable[[float], dict]] = {"nvml": _nvml_child, "pyverbs": _pyverbs_child}


def _sysfs(opts: Options) -> dict:
    from . import sysfs_probe

    return sysfs_probe.probe(opts.sysfs_root)


def _ib_counters(opts: Options) -> dict:
    from . import ib_counters_probe

    return ib_counters_probe.probe(opts.sysfs_root, ib_counters_probe.interval_from_env())


def _pyverbs(opts: Options) -> dict:
    from . import pyverbs_probe

    return pyverbs_probe.probe()


def _kernel_log(opts: Options) -> dict:
    from . import kernel_log_probe

    return kernel_log_probe.probe(opts.sysfs_root, opts.kernel_log_since_s)


def _peermem(opts: Options) -> dict:
    from . import peermem_probe

    return peermem_probe.probe(opts.sysfs_root)


def _gpu_scope(opts: Options) -> dict:
    from . import gpu_scope_probe

    return gpu_scope_probe.probe(opts.sysfs_root)


def _nccl_env(opts: Options) -> dict:
    """The NCCL_* variables of this process's environment (only those: an environment carries secrets)."""
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")}
    return {"probe": "nccl_env", "ok": True, "env": env}


# The probes, each named by its member (probes/<name>.json) and feeding the parser source it names:
# one whose ParserInfo is prolog_safe, the one naming this probe in ParserInfo.probe feeding it too
# (tests/live/test_collection.py holds both). A probe runs in a prolog only where it says so.
PROBES: tuple[LiveSource, ...] = (
    LiveSource("nvml", "probes/nvml.json", 15.0, True, probe=_nvml, child="nvml"),
    LiveSource("sysfs_infiniband", "probes/sysfs.json", 10.0, True, probe=_sysfs),
    LiveSource("sysfs_infiniband", "probes/pyverbs.json", 10.0, False, probe=_pyverbs,
               child="pyverbs"),  # opens a verbs context per device
    LiveSource("ib_counters", "probes/ib_counters.json", 5.0, True, probe=_ib_counters),  # one sample unless TOPODIAG_COUNTER_INTERVAL
    LiveSource("nccl_env", "probes/nccl_env.json", 2.0, False, probe=_nccl_env),  # a prolog's environment is not the job's
    LiveSource("kernel_log", "probes/kernel_log.json", 5.0, True, probe=_kernel_log),  # /dev/kmsg, non-blocking
    LiveSource("peermem", "probes/peermem.json", 2.0, True, probe=_peermem),  # /proc/modules, memory_peers: files
    LiveSource("gpu_scope", "probes/gpu_scope.json", 2.0, True, probe=_gpu_scope),  # the GPUs this job may see: env, cgroup, /proc/driver/nvidia
)


def command_sources() -> tuple[LiveSource, ...]:
    """One command for every parser with a live argv, sorted by source (imports every parser)."""
    from ..parsers import infos

    return tuple(LiveSource(i.source, f"commands/{i.source}.txt", i.timeout_s, False, i.argv, answer_rcs=i.answer_rcs)
                 for i in infos() if i.argv)


def __getattr__(name: str) -> Any:
    # SOURCES, every source in the order the manifest lists them (the probes, then the commands),
    # is made on first use: importing this module, and prolog mode, import no parser.
    if name == "SOURCES":
        sources = PROBES + command_sources()
        globals()["SOURCES"] = sources
        return sources
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Probe failures that mean "nothing of that kind on this host" rather than "broken".
_ABSENT_MARKERS = ("not readable", "not installed", "not importable", "library not found", "no rdma devices", "no such file", "not present",
                   "does not exist", "no nvidia driver")


def _from_probe(src: LiveSource, data: dict, duration: float) -> Record:
    text = json.dumps(data, indent=1, sort_keys=False) + "\n"
    if data.get("ok", True):
        return Record(src.name, "ok", src.member, text, duration_s=duration)
    error = str(data.get("error") or "the probe failed")
    status = "not_available" if any(m in error.lower() for m in _ABSENT_MARKERS) else "failed"
    # Its JSON still says why: it goes in the bundle and its parser reads it (no NVIDIA library on a
    # host whose PCI bus shows NVIDIA GPUs is a finding, TOPO006).
    return Record(src.name, status, src.member, text, duration_s=duration, reason=error)


# A tool that ran and was refused by the kernel for this user (dmesg where kernel.dmesg_restrict=1),
# or a file the host does not have (`cat /proc/modules` in a container): the host keeps its source
# from us, nothing on it is broken.
_NOT_PERMITTED = ("operation not permitted", "permission denied", "no such file or directory",
                  # systemctl in a container whose PID 1 is not systemd: no service manager to ask
                  "has not been booted with systemd", "failed to connect to bus")


def _refused(src: LiveSource, res: CommandResult) -> Optional[Record]:
    """A tool that was not let to answer (no permission, no service manager) is not on this host, not failed."""
    said = res.stderr.lower()
    if not any(m in said for m in _NOT_PERMITTED):
        return None
    why = ("no service manager to ask (systemd is not PID 1: a container?)" if "systemd" in said or "bus" in said
           else "not permitted for this user, or not on this host (run as root; for dmesg, or set "
                "kernel.dmesg_restrict=0)")
    return Record(src.name, "not_available", None, argv=res.argv, rc=res.rc,
                  reason=f"{' '.join(res.argv)}: {why}: {res.stderr.strip()[:200]}")


def _output(res: CommandResult) -> str:
    """What the tool printed; a failed tool's stderr after it (its error is part of what it said)."""
    text = res.stdout
    if res.stderr.strip() and res.rc != 0:
        text = (text + ("\n" if text and not text.endswith("\n") else "") + res.stderr) if text else res.stderr
    return text


def _from_command(src: LiveSource, res: CommandResult) -> Record:
    if res.not_found:
        return Record(src.name, "not_available", None, argv=res.argv, reason=res.reason)
    if res.skipped:  # the deadline had passed before it could start
        return Record(src.name, "timed_out", None, argv=res.argv, duration_s=0.0, timed_out=True, reason=res.reason)
    answered = res.ok or (not res.timed_out and not res.truncated and res.rc in src.answer_rcs)
    refused = None if answered or res.timed_out else _refused(src, res)
    if refused is not None:
        return refused
    # cut at MAX_OUTPUT_BYTES: failed, its output kept up to the cut as a timed-out tool's partial output
    status = "ok" if answered else ("timed_out" if res.timed_out else "failed")
    if answered and not res.ok:
        res = replace(res, reason="")  # an exit code that is an answer (systemctl status 3/4): no failure
    text = _output(res)
    reason = res.reason
    if src.argv[:1] == ("nvidia-smi",) and res.rc in NVIDIA_SMI_HARDWARE_CODES:
        reason += " (a hardware fault: see nvidia-smi -q and dmesg for Xid errors)"
    # An answer that is empty (lspci in a container: exit 0, nothing printed) is recorded as such: an
    # "ok" entry with its empty member, read back as "printed nothing" (load/gather.py), live and bundle alike.
    member = src.member if text or status == "ok" else None
    return Record(src.name, status, member, text if member else None, argv=res.argv, rc=res.rc,
                  duration_s=round(res.duration_s, 3), timed_out=res.timed_out, reason=reason)


def _run_one(src: LiveSource, opts: Options, timeout_s: float, deadline: Optional[float] = None) -> Record:
    start = time.monotonic()
    if src.probe is not None:
        try:
            data = CHILDREN[src.child](_child_timeout(timeout_s, deadline)) if src.child else src.probe(opts)
        except Exception as exc:  # a probe bug is a failed source, not a crashed run
            return Record(src.name, "failed", None, duration_s=round(time.monotonic() - start, 3),
                          reason=f"probe crashed: {type(exc).__name__}: {exc}")
        files_read = data.pop("files_read", None) if isinstance(data, dict) else None
        rec = _from_probe(src, data, round(time.monotonic() - start, 3))
        died = data.get("died") if isinstance(data, dict) else None
        if isinstance(died, dict) and died.get("how") == "timeout":  # the child was stopped in a call
            rec.status, rec.timed_out = "timed_out", True
        if isinstance(files_read, list):
            rec.extra_files = _snapshot(files_read)
        return rec
    if NETDEV in src.argv:  # run once per RoCE interface, into one member (live/netdevs.py)
        from .netdevs import collect_per_netdev

        return Record(src.name, **collect_per_netdev(src, opts, timeout_s, deadline))
    return _from_command(src, run(src.argv, timeout_s, deadline=deadline))


# A child is stopped this long before the collection's deadline, so that its record (naming the call
# it was stopped in) is made before the deadline abandons the source.
CHILD_MARGIN_S = 0.25


def _child_timeout(timeout_s: float, deadline: Optional[float]) -> float:
    if deadline is not None:
        timeout_s = min(timeout_s, deadline - time.monotonic() - CHILD_MARGIN_S)
    return max(timeout_s, 0.05)


def _snapshot(files_read: list) -> list[tuple[str, str]]:
    """The sysfs files a probe read, as plain bundle members under sysfs/ (a link becomes
    `<path>.symlink` holding its target: bundles hold plain files only)."""
    out = []
    for entry in files_read:
        if not isinstance(entry, (list, tuple)) or not entry or not isinstance(entry[0], str):
            continue
        parts = entry[0].split("/")
        if entry[0].startswith("/") or ".." in parts or "" in parts:
            continue
        if len(entry) == 3 and entry[1] == "->":
            out.append((f"sysfs/{entry[0]}.symlink", f"{entry[2]}\n"))
        elif len(entry) == 2:
            out.append((f"sysfs/{entry[0]}", str(entry[1])))
    return out


def selected(opts: Options) -> list[LiveSource]:
    """The sources to run: all of SOURCES, or in prolog mode only the prolog ones (from PROBES
    alone unless SOURCES is already made: no parser is imported for it)."""
    pool = globals().get("SOURCES")
    if pool is None:
        pool = PROBES if opts.prolog else __getattr__("SOURCES")
    return [s for s in pool if s.prolog or not opts.prolog]


def collect(opts: Options, sources: Optional[Iterable[LiveSource]] = None,
            progress: Optional[Callable[[Record], None]] = None) -> list[Record]:
    """Run the sources concurrently; every one has a Record when the deadline passes."""
    check_deadline(opts.deadline_s)
    chosen = list(sources) if sources is not None else selected(opts)
    started = time.monotonic()
    deadline = started + opts.deadline_s
    left = _commands.time_left()  # a command's --deadline (commands.session) bounds the collection too
    # (looked up on the module at each call: a test that replaces commands.time_left must not leave
    # its stand-in bound here for the rest of the process)
    if left is not None:
        deadline = min(deadline, time.monotonic() + left)
    if deadline - time.monotonic() <= MIN_START_S:  # nothing can start: each source says so
        return [Record(src.name, "timed_out", None, argv=src.argv, duration_s=0.0, timed_out=True,
                       reason="not started: no time left before the --deadline") for src in chosen] + _user_files(opts)
    results: dict[int, Record] = {}
    lock = threading.Lock()

    said = threading.Lock()  # one progress line at a time: two sources never share a line

    def work(i: int, src: LiveSource) -> None:
        remaining = max(deadline - time.monotonic(), 0.0)
        rec = _run_one(src, opts, min(src.timeout_s, remaining), deadline)
        rec.where = src.member
        with lock:
            results[i] = rec
        if progress is not None:
            with said:
                progress(rec)

    threads = []
    for i, src in enumerate(chosen):
        t = threading.Thread(target=work, args=(i, src), name=f"topodiag-{src.name}", daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(max(deadline - time.monotonic(), 0.0))
    out = []
    with lock:
        for i, src in enumerate(chosen):
            rec = results.get(i)
            if rec is None:  # still running at the deadline: abandoned (daemon thread)
                rec = Record(src.name, "timed_out", None, argv=src.argv, timed_out=True,
                             duration_s=round(deadline - started, 3),
                             reason=f"not finished within the {deadline - started:.3g} s deadline")
            out.append(rec)
    out.extend(_user_files(opts))
    return out


def _user_files(opts: Options) -> list[Record]:
    """NCCL logs and nccl-tests outputs the user hands over, copied into the bundle as given."""
    from ..errors import InputError
    from ..load.files import open_text

    out = []
    for n, (source, path) in enumerate([("nccl_debug", p) for p in opts.nccl_logs]
                                       + [("nccl_tests", p) for p in opts.nccl_tests], 1):
        member = f"logs/{n:02d}-{os.path.basename(path) or 'log'}"
        try:  # refused here when it is not a readable text file; only its head is read (a log of GBs)
            opened = open_text(path)
            try:
                head = opened.head
            finally:
                opened.close()
        except InputError as exc:
            out.append(Record(source, "failed", None, reason=f"{exc.where}: {exc.message}"))
            continue
        out.append(Record(source, "ok", member, None, reason=f"given: {path}", source_path=path))
        from ..parsers import blank_provenance_header, detect_all

        found = {name for name, _ in detect_all(blank_provenance_header(head))}
        for other in ("nccl_tests", "nccl_debug", "nccl_diag"):
            if other != source and other in found:
                # an nccl-tests run with NCCL_DEBUG=INFO is both, a log with NCCL DIAG lines holds a
                # diagnostics report too: one member, an entry per source
                out.append(Record(other, "ok", member, None, reason=f"given: {path} (it holds {other} output too)",
                                  source_path=path))
    return out


def host_facts(sysfs_root: str = "/") -> dict[str, Any]:
    """Hostname, kernel, OFED version and the NCCL_* environment, for the manifest. ofed_info runs
    under the command's --deadline (commands.session): with no time left it is not run (ofed None)."""
    node = os.uname()  # (what socket.gethostname and platform.release read, without importing either)
    facts: dict[str, Any] = {"hostname": node.nodename, "kernel": node.release,
                             "nccl_env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")}}
    ofed = run(("ofed_info", "-s"), 5.0)
    facts["ofed"] = ofed.stdout.strip().rstrip(":") if ofed.ok else None
    return facts
