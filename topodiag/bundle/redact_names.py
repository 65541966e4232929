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
