"""Node names and node sets, checked before anything expands or runs.

A node set (`gpu[001-128]`, `rack[1-4]-gpu[01-16]`, `a,b,c`, `gpu[1-64]!gpu7`) is counted from its
text before ClusterShell expands it: 3 KB of brackets named a million nodes (13.7 GB) before. The
count is an upper bound (the nodes of every term added up, `!`, `&` and `^` included, each bracket
the product of its ranges); past MAX_NODES, or a bracket range past MAX_RANGE values, the node set
is refused in one line and nothing is expanded. `@group` names are resolved by ClusterShell's group
configuration (the admin's), so they are counted after resolving, against the same cap; node sets
read from files (a `clush -b` header) may not use them.

A node name that reaches a command must be a host name: ASCII letters, digits, `.`, `-` and `_`,
at most 253 characters, not starting with `-` or `.` (so it can never be read as an option), no
space, quote, shell metacharacter or control character. `check_node_name` says which entry is bad,
in one line.
"""

from __future__ import annotations

import re

MAX_NODES = 100_000  # a node set names at most this many nodes, counted before it is expanded
MAX_RANGE = 100_000  # one bracket (`[1-100000]`) holds at most this many values
MAX_NODESET_CHARS = 65_536  # the text of one node set
MAX_NAME = 253  # a DNS name's length

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*\Z")
_BRACKET_RE = re.compile(r"\[([^\[\]]*)\]")
_ELEMENT_RE = re.compile(r"\s*([0-9]{1,18})(?:\s*-\s*([0-9]{1,18})(?:\s*/\s*([0-9]{1,18}))?)?\s*\Z")
_TERMS_RE = re.compile(r"[,!&^\s]+")


class NodeSetError(ValueError):
    """A node set or node name refused (one line)."""


def shown(text: str, limit: int = 60) -> str:
    """A name or node set as an error line may show it: escapes visible, cut short."""
    out = ascii(text[:limit])
    return out + ("..." if len(text) > limit else "")


def check_node_name(name: str) -> str:
    """`name` when it is a host name a command may be given; else NodeSetError naming it."""
    if not name:
        raise NodeSetError("an empty node name")
    if len(name) > MAX_NAME:
        raise NodeSetError(f"node name {shown(name)} is longer than {MAX_NAME} characters")
    if name.startswith("-"):
        raise NodeSetError(f"node name {shown(name)} starts with '-' (it would be read as an option)")
    if not _NAME_RE.match(name):
        bad = next((c for c in name if not (c.isascii() and (c.isalnum() or c in "._-"))), name[:1])
        raise NodeSetError(f"node name {shown(name)} has {ascii(bad)}: a host name has only letters, digits, "
                           "'.', '-' and '_'")
    return name


def _bracket_size(spec: str, where: str) -> int:
    total = 0
    for part in spec.split(","):
        m = _ELEMENT_RE.match(part)
        if not m:
            return 1  # not a range ClusterShell reads either: its parser says what is wrong
        lo, hi, step = int(m.group(1)), int(m.group(2) or m.group(1)), int(m.group(3) or 1)
        n = 0 if hi < lo or step < 1 else (hi - lo) // step + 1
        if n > MAX_RANGE:
            raise NodeSetError(f"{where}: [{' '.join(part.split())}] is {n} values; at most {MAX_RANGE} "
                               "in one range")
        total += n
        if total > MAX_RANGE:
            raise NodeSetError(f"{where}: [{shown(spec, 40)}] is more than {MAX_RANGE} values; at most "
                               f"{MAX_RANGE} in one bracket")
    return total


def count(text: str, where: str = "node set") -> int:
    """An upper bound on the nodes `text` names, from its text alone (never expanded); NodeSetError
    past MAX_NODES."""
    if len(text) > MAX_NODESET_CHARS:
        raise NodeSetError(f"{where}: {len(text)} characters; at most {MAX_NODESET_CHARS}")
    total = 0
    depth, term = 0, []
    terms = []
    for c in text:  # split at the separators outside brackets
        depth += c == "["
        depth -= c == "]" and depth > 0
        if depth == 0 and (c in ",!&^" or c.isspace()):
            terms.append("".join(term))
            term = []
        else:
            term.append(c)
    terms.append("".join(term))
    for t in terms:
        if not t:
            continue
        n = 1
        for spec in _BRACKET_RE.findall(t):
            n *= max(1, _bracket_size(spec, where))
            if n > MAX_NODES:
                break
        total += n
        if total > MAX_NODES:
            raise NodeSetError(f"{where}: {shown(text)} names more than {MAX_NODES} nodes; at most "
                               f"{MAX_NODES} (split it)")
    return total


def expand(text: str, where: str = "node set", groups: bool = True) -> list[str]:
    """The node names of `text`, counted first (NodeSetError past the caps, nothing expanded);
    `groups=False` refuses `@group` names (a node set read from a file). ImportError without
    ClusterShell; its NodeSetParseError for what it cannot read."""
    bad = next((c for c in text if not c.isascii() or not c.isprintable()), None)
    if bad is not None:
        raise NodeSetError(f"{where}: {shown(text)} has {ascii(bad)}: a node set has only printable ASCII")
    if "@" in text and not groups:
        raise NodeSetError(f"{where}: {shown(text)} names a @group; only node names and ranges are read here")
    count(text, where)
    from ClusterShell.NodeSet import NodeSet

    nodes = NodeSet(text)
    if len(nodes) > MAX_NODES:  # @groups, resolved by the admin's configuration
        raise NodeSetError(f"{where}: {shown(text)} names {len(nodes)} nodes; at most {MAX_NODES}")
    return list(nodes)
