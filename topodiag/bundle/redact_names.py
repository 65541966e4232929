"""Which names redaction reads as what (topodiag/bundle/redact.py): a GPU model's own token (a host
named h100 must not turn "NVIDIA H100 80GB HBM3" into "NVIDIA host-0001 80GB HBM3"), and whether the
dotted labels after a host name are a domain or a file's suffix (nccl-node12.log keeps ".log": "log"
never becomes a domain that every X.log in the bundle is rewritten by)."""

from __future__ import annotations

import re

_MODEL_TOKEN_RE = re.compile(r"(?i)[a-z]{1,2}\d{1,4}[a-z]?")


def is_model(name: str) -> bool:
    """A GPU model's own token (H100, A100, GB200, L40S), not a name that merely holds one."""
    if not _MODEL_TOKEN_RE.fullmatch(name):
        return False
    from ..knowledge import gpu_facts

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


# -- what else names a person or a site (N18 of the attack pass) ----------------------------------

# A user's home (/home/alice77, /Users/alice77) and an e-mail address: the user name is replaced
# (user-0001), and the address's domain with it; root and the system's own users stay.
HOME_RE = re.compile(r"(?<![\w.-])(/(?:home|Users|users|u)/)([A-Za-z0-9_][A-Za-z0-9._-]{0,63})(?=/|[\s\"',;:)\]}]|\Z)")
EMAIL_RE = re.compile(r"(?<![\w.+%-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?![\w-])")
KEEP_USERS = frozenset({"root", "nobody", "daemon", "shared", "linuxbrew"})
# A Slurm node list (SLURM_JOB_NODELIST=gpu-node[12-13],login77): the whole value names the job's
# nodes and the site's naming scheme; it is replaced by one token.
NODELIST_RE = re.compile(r"\b(SLURM_(?:JOB_|STEP_)?NODELIST|SLURM_JOB_NODES?|SLURM_NODELIST)([ \t]*[=:][ \t]*\"?)"
                         r"([^\s\"']+)")
# A peer named in a message body with its port: "Connected to jobhost99:29500", "connecting to
# master-7:29400" (a name: it starts with a letter).
PEER_PORT_RE = re.compile(r"(?i)\b(?:connected to|connecting to|connect to|connection to|connection from|"
                          r"listening on|bound to|rendezvous (?:at|on)|master(?:_addr)? (?:is|at))[ \t]+"
                          r"([A-Za-z][\w-]*(?:\.[A-Za-z0-9][\w-]*)*):\d{2,5}\b")
