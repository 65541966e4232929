"""Which names redaction reads as what: whether a name can be a host at all, whether it is also an
ordinary word (master, node, gpu, ubuntu, tesla...) or a GPU model's own token (a host named h100
must not turn "NVIDIA H100 80GB HBM3" into "NVIDIA host-0001 80GB HBM3"), where such a word is used
as a host, and whether the dotted labels after a host name are a domain or a file's suffix
(nccl-node12.log keeps ".log": "log" never becomes a domain that every X.log is rewritten by)."""

from __future__ import annotations

import re

_MODEL_TOKEN_RE = re.compile(r"(?i)[a-z]{1,2}\d{1,4}[a-z]?")


def is_model(name: str) -> bool:
    """A GPU model's own token (H100, A100, GB200, L40S), not a name that merely holds one."""
    if not _MODEL_TOKEN_RE.fullmatch(name):
        return False
    from ...knowledge import gpu_facts

    return gpu_facts(name.upper()) is not None


# Top-level domains a dotted tail after a host name may end in to be read as its domain (with any
# two-letter country code); file suffixes never are (nccl-node12.log keeps its ".log").
_TLDS = frozenset({"com", "net", "org", "edu", "gov", "mil", "int", "info", "biz", "io", "ai", "cloud", "local",
                   "localdomain", "lan", "internal", "intranet", "corp", "home", "cluster", "hpc", "priv",
                   "private", "invalid", "arpa", "test", "example", "site", "domain"})
_FILE_SUFFIXES = frozenset({"log", "txt", "json", "jsonl", "ndjson", "xml", "csv", "out", "err", "gz", "xz", "bz2",
                            "zst", "tgz", "tar", "zip", "sh", "py", "md", "rs", "js", "ts", "rb", "go", "so",
                            "cc", "hh", "cs", "conf", "cfg", "ini", "yaml", "yml", "toml", "prom", "svg", "html",
                            "htm", "pdf", "png", "jpg", "dat", "bin", "tmp", "bak", "old", "new", "pid", "lock",
                            "sock", "nsys", "qdrep", "sqlite", "db", "mk"})


def is_domain_tail(dom: str) -> bool:
    """Dotted labels (lower case, no leading dot) that end in a top-level domain of _TLDS or a
    two-letter country code, and not in a file suffix."""
    last = dom.rsplit(".", 1)[-1]
    if last in _FILE_SUFFIXES:
        return False
    return last in _TLDS or (len(last) == 2 and last.isalpha())


_KEEP_HOSTS = {"localhost", "localhost.localdomain", "ip6-localhost"}
# Words of the tools' own formats: never taken for a host name (a parser bug must not make the
# redactor rewrite the format).
_NOT_HOSTS = {"ca", "sw", "rt", "switch", "router", "hca", "port", "lid", "nccl", "info", "warn", "trace",
              "root", "none", "null", "unknown", "mlx5", "ib", "roce", "eth", "lo", "hostname", "host", "name"}
_HOST_WORD_RE = re.compile(r"[A-Za-z0-9][\w.-]*")


def plausible_host(name: str) -> bool:
    """A name that may be a host: 2 to 253 characters of letters, digits, '_', '.' and '-', not all
    digits and dots (an IPv4 address), not localhost nor a word of the tools' formats."""
    if not (2 <= len(name) <= 253) or name.lower() in _KEEP_HOSTS or name.lower() in _NOT_HOSTS:
        return False
    # No ':' passes the pattern (no IPv6 address), and a dotted IPv4 address is all digits and dots.
    return _HOST_WORD_RE.fullmatch(name) is not None and not name.replace(".", "").isdigit()


# Host names that are also ordinary words (in English, in the tools' own output, vendor and
# distribution names, default host names): a host named so is replaced only where it is used as a
# host, never in ordinary text ("the master rank", "NVIDIA Tesla V100", "Ubuntu 22.04").
_COMMON_WORDS = frozenset("""
    admin agent all alpha any auto backup bad bastion beta blue box build bus cache client close cluster
    compute container controller core cpu cpus data database db debug default delta dev device devices
    docker done down driver edge engine enabled disabled error failed fabric fatal gamma gateway good
    gpu gpus graph green guest head home instance job jobs jump kernel kube kvm launcher leaf link links
    local login machine main manager master mgmt mgt monitor net network nfs no node nodes off ok omega
    on open peer pod primary prod proxy qemu rank ranks ready red remote ring run running runtime
    scheduler scratch secondary server servers service services sigma slave slurm socket spine staging
    start stop storage system test testing train training tree true false up user users vm web work
    worker workers yes
    tesla titan quadro volta turing ampere hopper blackwell grace pascal kepler maxwell lovelace rubin
    orin xavier jetson dgx hgx nvlink nvswitch mellanox connectx bluefield infiniband ethernet nvidia
    intel amd dell hpe lenovo supermicro cisco arista juniper broadcom gigabyte asus inspur quanta
    ubuntu debian centos rocky fedora linux redhat rhel suse alma
""".split())


def is_word(name: str) -> bool:
    """A host name (or single-label domain) that is also an ordinary word: letters only, and in
    _COMMON_WORDS; or a product's model token (h100, a100, gb200, l40s: a GPU model knowledge.py
    knows, the whole name). Such a name is redacted only where it is used as a host
    (word_host_at), so "NVIDIA H100 80GB HBM3" stays itself on a host named h100; every other name
    (node017, gpu-a100-01, a letters-only name no text uses: selene) is redacted wherever it stands
    as a whole token."""
    if name.isalpha() and name.lower() in _COMMON_WORDS:
        return True
    return is_model(name)


# Where a host that is an ordinary word is used as a host (judged at each of its occurrences as a
# whole token, by the text around it on its line):
#   user@master, root@master:~#, ssh://master, http://master:8080      after '@' or '//'
#   master:29500, master:4242:4242 [0] (NCCL), [master:852715] (MPI)   followed by ':' and digits
#   master (a line that is only the name: hostname files, a prefix's host column as streamed)
#   master.cluster.local                                               a registered domain follows
#   host: master, hostname=master, "hostname": "master", on master device 0, peer master<41234>,
#   MASTER_ADDR=master, ssh master                                     after such a key ("on master 3": text)
#   "master HCA-1", "master mlx5_0", MF0;master:                       IB node descriptions
#   Nov 05 13:55:26 master kernel: ...                                 the host column of syslog
_PORT_AFTER_RE = re.compile(r":\d+(?::\d+[ \t]+\[|\b)")
_EOL_AFTER_RE = re.compile(r"[ \t]*(?:\r?\n|\Z)")
_HCA_AFTER_RE = re.compile(r"(?i)[ \t]+(?:hca-?\d+|mlx\d+_\d+)\b")
_WORD_KEY_RE = re.compile(r"(?i)\b(?:host|hostname|hostnames|host_name|nodename|node_name|nodelist|nodes|server"
                          r"|peer|ssh|on|[a-z_]*addr(?:ess)?)[\"']?[ \t]*(?:[:=][ \t]*)?[\"']?\Z")
_DIGIT_AFTER_RE = re.compile(r"[ \t]+\d")
_SYSLOG_BEFORE_RE = re.compile(r"(?i)(?:[a-z]{3} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dt\d\d:\d\d:\d\d\S*) ")


def word_host_at(s: str, i: int, j: int) -> bool:
    """Whether the word s[i:j] (a host name that is also an ordinary word) is used as a host there
    (the contexts listed above; the FQDN form is judged by the caller). `s` may be lower-cased."""
    before = s[max(s.rfind("\n", 0, i) + 1, i - 80):i]
    if before.endswith(("@", "//")) or _PORT_AFTER_RE.match(s, j) or _HCA_AFTER_RE.match(s, j):
        return True
    if before.strip(" \t") == "" and _EOL_AFTER_RE.match(s, j):
        return True
    if s[j:j + 1] == ":" and before.lower().endswith("mf0;"):
        return True
    if s[j:j + 1] == " " and _SYSLOG_BEFORE_RE.fullmatch(before):
        return True
    return _WORD_KEY_RE.search(before) is not None and not _DIGIT_AFTER_RE.match(s, j)
