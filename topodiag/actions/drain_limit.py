"""The drain limit: a prolog that drains on a false positive must not take down a fleet.

Before draining, the prolog asks Slurm how many nodes already carry a topodiag drain reason
(`sinfo -R -h -o '%E|%N'`: one line per reason, `REASON|NODELIST`) and how many nodes the cluster
has (`sinfo -h -N -o '%N'`: one node name per line, once per partition). The default `sinfo -R`
format (`%20E %9u %19H %N` in sinfo(1): REASON USER TIMESTAMP NODELIST, with its header; the reason
cut at 20 characters keeps the `topodiag:` prefix), as a wrapper may print it whatever -o says, is
read too:

    REASON               USER      TIMESTAMP           NODELIST
    Kill task failed     root      2024-01-25T15:12:23 ip-10-0-1-23
    topodiag: IB001 mlx5_0 port 1 Down/Polling|gpu[001-003,017]

The node lists are expanded with ClusterShell where it is installed (nodenames.expand, each node
once); without it, they are counted from their text (nodenames.count: an upper bound, so the limit
errs on the side of not draining).

The limit (both knobs, CLI `--drain-limit` / `--drain-limit-percent`, site config `[slurm]`
`drain_limit` / `drain_limit_percent`): topodiag may have at most
`min(drain_limit, max(1, floor(drain_limit_percent% x the cluster's nodes)))` nodes drained at once,
this node included; default min(8, 10%), so 1 node on a cluster of up to 19 nodes, 2 on 20-29,
8 from 80 nodes on. `drain_limit = 0` never drains (report only). A node that topodiag has drained
already is not a new drain: its reason may be updated. When the count cannot be had (no sinfo, it
failed or timed out, an output it cannot read), the node is not drained: the limit could not be
checked, and one line says so. A drain held back exits the prolog 0 (cli/prolog.py): Slurm drains
a node whose prolog fails, so a non-zero exit would drain it all the same.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional

DEFAULT_NODES = 8
DEFAULT_PERCENT = 10.0
REASONS_ARGV = ("-R", "-h", "-o", "%E|%N")
NODES_ARGV = ("-h", "-N", "-o", "%N")
MAX_LINES = 100_000  # a cluster's sinfo answer: past this, it is not read
_HEADER_RE = re.compile(r"^\s*REASON\s+USER\s+TIMESTAMP\s+NODELIST\s*$")
# the default format's tail: USER, TIMESTAMP (ISO, or Unknown), NODELIST
_DEFAULT_RE = re.compile(r"^(?P<reason>.*?)\s+(?P<user>\S+)\s+(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown)"
                         r"\s+(?P<nodes>\S+)\s*$")


class CountError(ValueError):
    """sinfo's answer could not be read (one line)."""


@dataclass(frozen=True)
class Limit:
    nodes: int = DEFAULT_NODES
    percent: float = DEFAULT_PERCENT

    def allowed(self, cluster_nodes: int) -> int:
        """How many nodes topodiag may have drained at once on a cluster of `cluster_nodes`."""
        if self.nodes <= 0:
            return 0
        by_share = max(1, math.floor(self.percent / 100.0 * cluster_nodes + 1e-9))
        return min(self.nodes, by_share)

    def text(self, cluster_nodes: int) -> str:
        return (f"at most {self.allowed(cluster_nodes)} allowed (the smaller of {self.nodes} node"
                f"{'s' if self.nodes != 1 else ''} and {self.percent:g}% of {cluster_nodes}, at least 1)")


def parse_reasons(text: str) -> list[tuple[str, str]]:
    """`sinfo -R` lines -> [(reason, nodelist)]: `REASON|NODELIST` lines, or the default format;
    CountError for a line that is neither."""
    out = []
    for n, line in enumerate(text.splitlines()[:MAX_LINES + 1], 1):
        if n > MAX_LINES:
            raise CountError(f"more than {MAX_LINES} lines")
        if not line.strip() or _HEADER_RE.match(line):
            continue
        if "|" in line:
            reason, _, nodes = line.rpartition("|")
        else:
            m = _DEFAULT_RE.match(line)
            if m is None:
                raise CountError(f"line {n} is not REASON|NODELIST nor REASON USER TIMESTAMP NODELIST: "
                                 f"{_shown(line)}")
            reason, nodes = m.group("reason"), m.group("nodes")
        if not nodes.strip():
            raise CountError(f"line {n} has no node list: {_shown(line)}")
        out.append((reason.strip(), nodes.strip()))
    return out


def drained_by_topodiag(reasons: list[tuple[str, str]], prefix: str) -> tuple[set[str], int]:
    """(the node names known, how many nodes) that carry a reason starting with `prefix`. With
    ClusterShell the lists are expanded (each node once); else counted from the text (an upper bound)."""
    from .nodenames import NodeSetError, count, expand

    names: set[str] = set()
    counted = 0
    for reason, nodes in reasons:
        if not reason.startswith(prefix):
            continue
        try:
            names.update(expand(nodes, "sinfo -R node list", groups=False))
        except ImportError:
            counted += count(nodes, "sinfo -R node list")
        except NodeSetError as exc:
            raise CountError(str(exc)) from None
        except Exception as exc:  # ClusterShell's parse error: a list it cannot read
            raise CountError(f"sinfo -R node list {_shown(nodes)}: {type(exc).__name__}: {exc}") from None
    return names, len(names) + counted


def parse_nodes(text: str) -> set[str]:
    """`sinfo -h -N -o %N`: one node name a line (once per partition) -> the set of names."""
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise CountError(f"more than {MAX_LINES} lines")
    names = {ln.strip() for ln in lines if ln.strip()}
    bad = next((n for n in names if " " in n or "|" in n), None)
    if bad is not None:
        raise CountError(f"not one node name a line: {_shown(bad)}")
    if not names:
        raise CountError("no node listed")
    return names


def _shown(text: str) -> str:
    from .nodenames import shown

    return shown(text, 60)


@dataclass(frozen=True)
class Decision:
    drain: bool
    said: str  # why not, or what was counted (for the line on stderr)


def decide(node: str, limit: Limit, sinfo: Optional[str], prefix: str, run_sinfo) -> Decision:
    """Whether draining `node` keeps topodiag's drains within `limit`; `run_sinfo(argv_tail)` runs
    sinfo and returns (ok, stdout, reason). Unknown counts never drain."""
    if limit.nodes <= 0:
        return Decision(False, "0 (never drain)")
    if sinfo is None:
        return Decision(False, "cannot be checked: sinfo not found (on PATH, in the standard Slurm places, or "
                               "beside the scontrol given with --scontrol / the site config)")
    ok, out, why = run_sinfo(REASONS_ARGV)
    if not ok:
        return Decision(False, f"cannot be checked: sinfo -R: {why}")
    ok_n, out_n, why_n = run_sinfo(NODES_ARGV)
    if not ok_n:
        return Decision(False, f"cannot be checked: sinfo -N: {why_n}")
    try:
        names, drained = drained_by_topodiag(parse_reasons(out), prefix)
        cluster = len(parse_nodes(out_n))
    except CountError as exc:
        return Decision(False, f"cannot be checked: sinfo printed what topodiag cannot read ({exc})")
    if node in names:
        drained -= 1  # drained by topodiag already, its state seen differently: not a new drain
    allowed = limit.allowed(cluster)
    if drained + 1 > allowed:
        return Decision(False, f"{drained} node{'s' if drained != 1 else ''} already drained by topodiag and "
                               f"{limit.text(cluster)}")
    return Decision(True, f"{drained + 1} of at most {allowed} nodes drained by topodiag")
