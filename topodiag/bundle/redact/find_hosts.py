"""Where the host names of a bundle are found, before any member is redacted: with topodiag's own
parsers (NCCL log line prefixes, nccl-tests device lines, IB node descriptions of iblinkinfo and
ibnetdiscover, busbw pairs, NCCL DIAG prefixes), peers NCCL names in a message body ("remote peer
node018.cluster<53735>"), peers named with a port ("Connected to jobhost99:29500"), shell prompts
pasted with an output, the host column of syslog / journal lines, probe JSON `hostname` keys,
hostname files and sysfs node_desc files. The NCCL XML host_hash is a hash, not a name."""

from __future__ import annotations

import os
import re
from typing import Mapping, Optional

from ...parsers.base import ANSI_RE
from .names import plausible_host

_HOST_SOURCES = ("nccl_debug", "nccl_tests", "iblinkinfo", "ibnetdiscover", "busbw_pairs", "nccl_diag")
_ANSI_RE = ANSI_RE  # one pattern for the escape sequences tools print (parsers/base.py)
_PROMPT_RE = re.compile(  # "root@node017:~# ", "[admin@ws01 ~]$ ": a shell prompt pasted with an output
    r"^[ \t]*\[?[A-Za-z_][\w.-]*@([A-Za-z0-9][\w-]*(?:\.[\w-]+)*)(?=[:\s\]])[^\n]*?[#$%>\u279c]", re.M)
# syslog / journal lines: "Nov 05 13:55:26 node1 systemd[1]: ..." and "2024-11-05T13:55:26+0000 node1 kernel: ..."
_SYSLOG_HOST_RE = re.compile(r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*) "
                             r"([A-Za-z0-9][\w.-]*) [\w.@/-]+(?:\[\d+\])?:", re.M)
# NCCL names a peer by its resolved host name in message bodies: "socketProgress: Connection closed
# by remote peer node018.cluster<53735>" (a name, not an address: it starts with a letter).
PEER_HOST_RE = re.compile(r"\b(?:peer|connect(?:ing)? to)[ \t]+([A-Za-z][\w-]*(?:\.[A-Za-z0-9][\w-]*)*)<\d{1,5}>")
# A peer named in a message body with its port: "Connected to jobhost99:29500", "connecting to
# master-7:29400" (a name: it starts with a letter).
PEER_PORT_RE = re.compile(r"(?i)\b(?:connected to|connecting to|connect to|connection to|connection from|"
                          r"listening on|bound to|rendezvous (?:at|on)|master(?:_addr)? (?:is|at))[ \t]+"
                          r"([A-Za-z][\w-]*(?:\.[A-Za-z0-9][\w-]*)*):\d{2,5}\b")
_JSON_HOST_RE = re.compile(r"\"(?:hostname|host|nodename|node_name|host_name)\"[ \t]*:[ \t]*\"([^\"\n]+)\"")
_HCA_WORD_RE = re.compile(r"(?i)(?:HCA-?\d+|mlx\d+_\d+|[a-z]+\d*_\d+|hfi\d+_\d+|qib\d+|mthca\d+|bnxt_re\d+|irdma\d+|"
                          r"rocep\w+|ibp\w+|ib\d+)")
_VENDOR_DEFAULT_RE = re.compile(r"MT\d+$")  # "MT25408 ConnectX Mellanox Technologies"
_MF0_RE = re.compile(r"^MF0;([^:;\s]+):")


def _desc_host(desc: Optional[str]) -> Optional[str]:
    """The host part of an IB node description: "node017 HCA-1" -> node017, "MF0;leaf01:MQM8700/U1"
    -> leaf01, "ibrouter01" -> ibrouter01; None for a vendor default ("MT4129 ConnectX7 ...")."""
    if not desc:
        return None
    d = desc.strip().strip('"').strip()
    m = _MF0_RE.match(d)
    if m:
        return m[1]
    parts = d.split()
    if not parts or _VENDOR_DEFAULT_RE.match(parts[0]):
        return None
    if len(parts) == 2 and _HCA_WORD_RE.fullmatch(parts[1]):
        return parts[0]
    if len(parts) == 1 and re.search(r"\d", parts[0]) and re.search(r"[A-Za-z]", parts[0]):
        return parts[0]
    return None


def _sources_for(name: str, text: str) -> list[str]:
    from ...parsers import SOURCES, detect_all

    stem = os.path.basename(name.replace("\\", "/")).split(".", 1)[0]
    stem = re.sub(r"-\d+$", "", stem)
    out = [stem] if stem in SOURCES else []
    try:
        out += [s for s, _ in detect_all(text) if s not in out]
    except Exception:  # detection must not stop redaction
        pass
    return [s for s in out if s in _HOST_SOURCES]


def _fabric_hosts(source: str, result) -> set[Optional[str]]:
    hosts: set[Optional[str]] = set()
    if source == "iblinkinfo":
        for node in result.nodes:
            hosts.add(_desc_host(node.description))
            hosts.update(_desc_host(ln.peer.description) for ln in node.links if ln.peer is not None)
    elif source == "ibnetdiscover":
        for node in result.nodes:
            hosts.add(_desc_host(node.description))
            hosts.update(_desc_host(c.peer_description) for c in node.connections)
        for p in result.ports:
            hosts.update((_desc_host(p.description), _desc_host(p.peer_description)))
    return hosts


def _hosts_of(source: str, result) -> set[str]:
    hosts: set[Optional[str]] = set()
    if source == "nccl_debug":
        hosts.update(result.hosts)
        hosts.update(r.host for r in result.ranks)
        hosts.update((result.cuda_devs or {}).keys())
    elif source == "nccl_tests":
        hosts.update(d.host for d in result.devices)
    elif source in ("busbw_pairs", "nccl_diag"):  # nccl_diag: the "<host>:<pid> NCCL DIAG" prefixes
        hosts.update(result.hosts)
    else:
        hosts = _fabric_hosts(source, result)
    return {h for h in hosts if h}


def _prompt_hosts(text: str) -> list[str]:
    """The host names of shell prompts pasted with an output ("root@node017:~# ")."""
    return [m[1] for m in _PROMPT_RE.finditer(_ANSI_RE.sub("", text))]


def _named_in_text(text: str) -> set[str]:
    """Host names found in a member's text without a parser (prompts, syslog, peers)."""
    found = set(_prompt_hosts(text))
    found.update(m[1] for m in _SYSLOG_HOST_RE.finditer(text))
    if "<" in text:
        found.update(m[1] for m in PEER_HOST_RE.finditer(text))
    found.update(m[1] for m in PEER_PORT_RE.finditer(text))
    return found


def _named_by_file(path: str, text: str) -> Optional[set[str]]:
    """The host names of a member read by its name (probe JSON, hostname, node_desc); None: another."""
    if path.endswith(".json"):
        return {m[1] for m in _JSON_HOST_RE.finditer(text)}
    if path.endswith(("kernel/hostname", "/etc/hostname")) or path == "hostname":
        return {text.strip()}
    if path.endswith("node_desc"):
        host = _desc_host(text.strip())
        return {host} if host else set()
    return None


def _parsed_hosts(path: str, text: str) -> set[str]:
    """The host names topodiag's parsers read in a member."""
    from ...parsers import ParseError, blank_provenance_header, get

    found: set[str] = set()
    body = blank_provenance_header(text)
    for source in _sources_for(path, body):
        try:
            result = get(source).parse(body)
        except (ParseError, RecursionError):
            continue
        found |= _hosts_of(source, result)
    return found


def hostnames_in(members: Mapping[str, str]) -> set[str]:
    """Host names the members name (see the module's docstring): member path -> text in, the
    plausible host names out (a trailing dot dropped)."""
    found: set[str] = set()
    for name, text in members.items():
        path = name.replace("\\", "/")
        found |= _named_in_text(text)
        by_file = _named_by_file(path, text)
        found |= by_file if by_file is not None else _parsed_hosts(path, text)
    return {h.rstrip(".") for h in found if plausible_host(h.rstrip("."))}
