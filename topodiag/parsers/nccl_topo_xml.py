"""Parser for NCCL topology XML: NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE systems and NCCL_GRAPH_DUMP_FILE graphs.

Reads what NCCL dumps (and what clouds ship as static topology files, which may lack class and
affinity attributes and use virtual switches `ffff:ff:01.0`):

    <system version="1">
      <cpu numaid="0" affinity="0000,000fffff,ff000000,0fffffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="106">
        <pci busid="0000:16:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="8">
          <nic>
            <net name="mlx5_0" dev="0" speed="100000" port="1" guid="0x78ad550003d3ebe8" maxconn="131072" gdr="0"/>
        ...
        <pci busid="0000:69:00.0" class="0x030200" ...><gpu dev="0" sm="80" rank="0" gdr="1"><nvlink target="0000:07:00.0" count="2" tclass="0x068000"/></gpu></pci>

and graph dumps:

    <graphs version="1">
      <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="12" speedinter="12" typeintra="SYS" typeinter="PIX">
        <channel><net dev="0"/><gpu dev="0"/><gpu dev="1"/><net dev="0"/></channel>

A DOCTYPE or ENTITY declaration is refused before parsing (entity expansion attacks); so is XML
whose root is not `system` or `graphs`, or that has none of their elements, or is cut off (a
truncated paste: the error names its last line). Text before the first XML line (a prompt, `cat
topo.xml`) and after the root's end tag is skipped with a note; line numbers stay those of the text.

JSON: {source: "nccl_topo_xml", kind: "system" | "graphs", version,
       cpus: [{numaid, affinity (as printed), cpus ("0-27,56-83" decoded from the mask: comma-separated
               32-bit hex words, most significant first; null without affinity), arch, vendor, family
               (familyid), model (modelid), host_hash}],
       pci: [{busid, parent_busid (null under a cpu), numaid (of the enclosing cpu), pci_class (the `class`
              attribute, or null),
              kind ("gpu" | "nic" | "switch" | "other": class 0x03xxxx, 0x02xxxx, 0x0604xx, else from the
              child elements; "other" with class null means the file does not say), vendor, device,
              link_speed (as printed), link_speed_gts (float), link_width}],
       gpus: [{busid, numaid, dev, rank, sm, gdr, nvlinks: [{target, count, tclass}]}],
       nets: [{name, dev, port, guid, speed_mbps, gdr, maxconn, busid (of the enclosing pci or null), numaid}],
       graphs: [{id, pattern, crossnic, nchannels, speedintra, speedinter (GB/s, floats; `bwintra` /
                 `bwinter` accepted), typeintra, typeinter, samechannels,
                 channels: [[{kind: "gpu" | "net", dev}, ...]]}],
       notes: [strings]}
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from .base import ParseError, ParserInfo, note
from .sniff.nccl_topo_xml import sniff

INFO = ParserInfo(
    source="nccl_topo_xml",
    tool="NCCL_TOPO_DUMP_FILE / NCCL_GRAPH_DUMP_FILE",
    description="NCCL's topology and graph XML dumps, and vendor topology files",
)
SOURCE = INFO.source

MAX_DEPTH = 64  # NCCL trees are a handful of levels deep; deeper is not a topology
MAX_CPU_BITS = 1 << 16

_DECL_RE = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.I)
_XML_START_RE = re.compile(r"^[ \t\ufeff]*<(?:\?xml|!--|[A-Za-z_])", re.M)
_ROOT_TAG_RE = re.compile(r"<(?![?!])\s*([A-Za-z_][\w.\-]*)")
_GTS_RE = re.compile(r"^\s*([0-9]{1,4}(?:\.[0-9]{1,6})?)\s*GT/s", re.I)


@dataclass(frozen=True)
class Cpu:
    numaid: int | None
    affinity: str | None
    cpus: str | None
    arch: str | None
    vendor: str | None
    family: int | None
    model: int | None
    host_hash: str | None


@dataclass(frozen=True)
class Pci:
    busid: str | None
    parent_busid: str | None
    numaid: int | None
    pci_class: str | None  # the `class` attribute (a Python keyword cannot be a field name)
    kind: str
    vendor: str | None
    device: str | None
    link_speed: str | None
    link_speed_gts: float | None
    link_width: int | None


@dataclass(frozen=True)
class NvlinkRef:
    target: str | None
    count: int | None
    tclass: str | None


@dataclass(frozen=True)
class Gpu:
    busid: str | None
    numaid: int | None
    dev: int | None
    rank: int | None
    sm: int | None
    gdr: int | None
    nvlinks: tuple[NvlinkRef, ...]


@dataclass(frozen=True)
class Net:
    name: str | None
    dev: int | None
    port: int | None
    guid: str | None
    speed_mbps: int | None
    gdr: int | None
    maxconn: int | None
    busid: str | None
    numaid: int | None


@dataclass(frozen=True)
class Hop:
    kind: str  # "gpu" | "net"
    dev: int | None


@dataclass(frozen=True)
class Graph:
    id: int | None
    pattern: int | None
    crossnic: int | None
    nchannels: int | None
    speedintra: float | None
    speedinter: float | None
    typeintra: str | None
    typeinter: str | None
    samechannels: int | None
    channels: tuple[tuple[Hop, ...], ...]


@dataclass(frozen=True)
class NcclTopology:
    source: str = SOURCE
    kind: str = "system"
    version: int | None = None
    cpus: tuple[Cpu, ...] = ()
    pci: tuple[Pci, ...] = ()
    gpus: tuple[Gpu, ...] = ()
    nets: tuple[Net, ...] = ()
    graphs: tuple[Graph, ...] = ()
    notes: tuple[str, ...] = ()


# -- attribute readers ------------------------------------------------------------------------


class _Reader:
    """Reads typed attributes, noting values that are not what NCCL writes (and keeping going)."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def int_attr(self, el: ET.Element, name: str) -> int | None:
        raw = el.get(name)
        if raw is None:
            return None
        text = raw.strip()
        try:
            if re.fullmatch(r"[+-]?[0-9]{1,18}", text):
                return int(text)
            if re.fullmatch(r"0[xX][0-9a-fA-F]{1,16}", text):
                return int(text, 16)
            if re.fullmatch(r"[+-]?[0-9]{1,18}\.0*", text):
                return int(text.split(".")[0])
        except ValueError:  # pragma: no cover - the patterns only admit valid literals
            pass
        self._bad(el, name, raw, "an integer")
        return None

    def float_attr(self, el: ET.Element, *names: str) -> float | None:
        for name in names:
            raw = el.get(name)
            if raw is None:
                continue
            text = raw.strip()
            if re.fullmatch(r"[+-]?(?:[0-9]{1,18}(?:\.[0-9]{0,18})?|\.[0-9]{1,18})(?:[eE][+-]?[0-9]{1,3})?", text):
                value = float(text)
                if value == value and value not in (float("inf"), float("-inf")):
                    return value
            self._bad(el, name, raw, "a number")
            return None
        return None

    def str_attr(self, el: ET.Element, name: str) -> str | None:
        raw = el.get(name)
        return None if raw is None else raw.strip()

    def _bad(self, el: ET.Element, name: str, raw: str, what: str) -> None:
        self.notes.append(note(SOURCE, "attribute-invalid", tag=el.tag, name=name, raw=raw[:30], what=what))


def decode_affinity(mask: str) -> str | None:
    """'0000,000fffff,ff000000,0fffffff' -> '0-27,56-83' (32-bit hex words, most significant first)."""
    words = [w.strip() for w in mask.strip().split(",")]
    if not words or any(not re.fullmatch(r"[0-9a-fA-F]{1,8}", w) for w in words):
        return None
    if len(words) * 32 > MAX_CPU_BITS:
        return None
    value = 0
    for w in words:
        value = (value << 32) | int(w, 16)
    bits = bin(value)[:1:-1] if value else ""  # least significant bit first
    ranges: list[str] = []
    for m in re.finditer(r"1+", bits):
        start, end = m.start(), m.end() - 1
        ranges.append(f"{start}-{end}" if end > start else str(start))
    return ",".join(ranges)


def pci_kind(pci_class: str | None, el: ET.Element) -> str:
    """gpu / nic / switch / other from the PCI class code, else from what the element holds."""
    if pci_class:
        c = pci_class.strip().lower()
        if c.startswith("0x"):
            c = c[2:]
        c = c.rjust(6, "0")
        if re.fullmatch(r"[0-9a-f]{6}", c):
            if c.startswith("03"):
                return "gpu"
            if c.startswith("02"):
                return "nic"
            if c.startswith("0604"):
                return "switch"
            return "other"
    tags = {child.tag for child in el}
    if "gpu" in tags:
        return "gpu"
    if "nic" in tags:
        return "nic"
    if "pci" in tags:
        return "switch"
    return "other"


# -- parsing ----------------------------------------------------------------------------------


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _load(text: str, notes: list[str]) -> ET.Element:
    """The root element; ParseError (with the line of the file) for anything that is not safe, well-formed XML.

    Blank lines before the XML (a blanked provenance header) keep their numbers; other text before
    the first XML line (a shell prompt, `cat topo.xml`) and after the root's end tag is skipped with a note.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    decl = _DECL_RE.search(text)
    if decl:
        raise ParseError(
            f"XML with a <!{decl.group(1).upper()} ...> declaration is refused (NCCL topology files have none; "
            "entity expansion can exhaust memory)", _line_of(text, decl.start()))
    if not text.strip():
        raise ParseError("expected NCCL topology XML ('<system version=...>' or '<graphs ...>'), found no text", 0)
    first = _XML_START_RE.search(text)
    if first is None:
        stripped = text.lstrip()
        line = _line_of(text, len(text) - len(stripped))
        raise ParseError("expected NCCL topology XML ('<system version=...>' or '<graphs ...>'), "
                         f"found '{stripped.splitlines()[0][:60]}'", line)
    start = first.start()
    offset = text.count("\n", 0, start)  # lines before the XML (blanked header lines, say)
    if text[:start].strip():
        notes.append(note(SOURCE, "text-before-lines", last=offset) if offset > 1
                     else note(SOURCE, "text-before-line", line=offset))
    body = text[start:]
    close = max(body.rfind("</system>"), body.rfind("</graphs>"))
    if close >= 0:
        end = body.index(">", close) + 1
        rest = body[end:]
        if rest.strip():
            junk = end + len(rest) - len(rest.lstrip())
            notes.append(note(SOURCE, "text-after-root", line=offset + _line_of(body, junk)))
            body = body[:end]
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        line, _col = getattr(exc, "position", (1, 0))
        msg = str(exc).split(": line ")[0]
        last = len(body.rstrip().split("\n"))  # the last line with text
        if int(line) >= last and msg in ("no element found", "unclosed token"):
            raise ParseError("the XML ends before its elements are closed (truncated output?); "
                             "expected a complete NCCL topology or graph dump", offset + last) from None
        raise ParseError(f"not well-formed XML ({msg}); expected an NCCL topology or graph dump",
                         offset + min(int(line), last)) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # pragma: no cover - expat reports via ParseError
        raise ParseError(f"unreadable XML: {exc}", offset + 1) from None
    if root.tag not in ("system", "graphs"):
        raise ParseError(
            f"expected an NCCL topology root element <system> or <graphs>, found <{str(root.tag)[:40]}>",
            offset + _root_line(body))
    return root


def _root_line(text: str) -> int:
    """Line of the root element's start tag (past the declaration and comments), for errors about it."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    pos = 0
    while True:
        m = _ROOT_TAG_RE.search(text, pos)
        if m is None:
            return 1
        before = text[:m.start()]
        if before.count("<!--") > before.count("-->"):  # inside a comment: look further
            pos = m.end()
            continue
        return _line_of(text, m.start())


def _depth_ok(root: ET.Element) -> None:
    stack = [(root, 1)]
    while stack:
        el, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ParseError(f"XML nested more than {MAX_DEPTH} levels deep: not an NCCL topology", 0)
        stack.extend((child, depth + 1) for child in el)


def _system(root: ET.Element, rd: _Reader) -> NcclTopology:
    cpus: list[Cpu] = []
    pcis: list[Pci] = []
    gpus: list[Gpu] = []
    nets: list[Net] = []
    skipped: set[str] = set()

    def gpu(el: ET.Element, busid: str | None, numaid: int | None) -> None:
        links = []
        for child in el:
            if child.tag == "nvlink":
                links.append(NvlinkRef(rd.str_attr(child, "target"), rd.int_attr(child, "count"), rd.str_attr(child, "tclass")))
            else:
                skipped.add(f"<{child.tag}> in <gpu>")
        gpus.append(Gpu(busid, numaid, rd.int_attr(el, "dev"), rd.int_attr(el, "rank"), rd.int_attr(el, "sm"),
                        rd.int_attr(el, "gdr"), tuple(links)))

    def nic(el: ET.Element, busid: str | None, numaid: int | None) -> None:
        for child in el:
            if child.tag == "net":
                nets.append(Net(rd.str_attr(child, "name"), rd.int_attr(child, "dev"), rd.int_attr(child, "port"),
                                rd.str_attr(child, "guid"), rd.int_attr(child, "speed"), rd.int_attr(child, "gdr"),
                                rd.int_attr(child, "maxconn"), busid, numaid))
            else:
                skipped.add(f"<{child.tag}> in <nic>")

    # explicit stack of (element, parent busid, numaid), popped in document order
    stack: list[tuple[ET.Element, str | None, int | None]] = []
    for top in root:
        if top.tag == "cpu":
            numaid = rd.int_attr(top, "numaid")
            affinity = rd.str_attr(top, "affinity")
            decoded = decode_affinity(affinity) if affinity is not None else None
            if affinity is not None and decoded is None:
                rd.notes.append(note(SOURCE, "affinity-invalid", numaid=numaid, affinity=affinity[:40]))
            cpus.append(Cpu(numaid, affinity, decoded, rd.str_attr(top, "arch"), rd.str_attr(top, "vendor"),
                            rd.int_attr(top, "familyid"), rd.int_attr(top, "modelid"), rd.str_attr(top, "host_hash")))
            stack.extend((child, None, numaid) for child in reversed(list(top)))
        else:
            stack.append((top, None, None))
        while stack:
            el, parent, numaid = stack.pop()
            _walk(el, parent, numaid, stack, pcis, gpu, nic, rd, skipped)
    notes = list(rd.notes)
    notes.extend(note(SOURCE, "not-modelled", what=what) for what in sorted(skipped))
    return NcclTopology(kind="system", version=rd.int_attr(root, "version"), cpus=tuple(cpus), pci=tuple(pcis),
                        gpus=tuple(gpus), nets=tuple(nets), notes=tuple(notes))


def _walk(el: ET.Element, parent: str | None, numaid: int | None, stack: list, pcis: list[Pci],
          gpu: Any, nic: Any, rd: _Reader, skipped: set[str]) -> None:
    """Handle one element below a <cpu> (or at the top level), pushing its children."""
    if el.tag == "pci":
        busid = rd.str_attr(el, "busid")
        pci_class = rd.str_attr(el, "class")
        speed = rd.str_attr(el, "link_speed")
        gts = _GTS_RE.match(speed) if speed else None
        pcis.append(Pci(busid, parent, numaid, pci_class, pci_kind(pci_class, el), rd.str_attr(el, "vendor"),
                        rd.str_attr(el, "device"), speed, float(gts.group(1)) if gts else None,
                        rd.int_attr(el, "link_width")))
        stack.extend((child, busid, numaid) for child in reversed(list(el)))
    elif el.tag == "gpu":
        gpu(el, parent, numaid)
    elif el.tag == "nic":
        nic(el, parent, numaid)
    else:
        skipped.add(f"<{el.tag}>")


def _graphs(root: ET.Element, rd: _Reader) -> NcclTopology:
    graphs: list[Graph] = []
    skipped: set[str] = set()
    for g in root:
        if g.tag != "graph":
            skipped.add(f"<{g.tag}> in <graphs>")
            continue
        channels = []
        for ch in g:
            if ch.tag != "channel":
                skipped.add(f"<{ch.tag}> in <graph>")
                continue
            hops = []
            for hop in ch:
                if hop.tag in ("gpu", "net"):
                    hops.append(Hop(hop.tag, rd.int_attr(hop, "dev")))
                else:
                    skipped.add(f"<{hop.tag}> in <channel>")
            channels.append(tuple(hops))
        graphs.append(Graph(rd.int_attr(g, "id"), rd.int_attr(g, "pattern"), rd.int_attr(g, "crossnic"), rd.int_attr(g, "nchannels"),
                            rd.float_attr(g, "speedintra", "bwintra"), rd.float_attr(g, "speedinter", "bwinter"),
                            rd.str_attr(g, "typeintra"), rd.str_attr(g, "typeinter"), rd.int_attr(g, "samechannels"),
                            tuple(channels)))
    notes = list(rd.notes)
    notes.extend(note(SOURCE, "not-modelled", what=what) for what in sorted(skipped))
    return NcclTopology(kind="graphs", version=rd.int_attr(root, "version"), graphs=tuple(graphs), notes=tuple(notes))


def parse(text: str) -> NcclTopology:
    """NCCL topology or graph XML -> NcclTopology; ParseError for unsafe, malformed or other XML."""
    notes: list[str] = []
    root = _load(text, notes)
    _depth_ok(root)
    wanted = ("cpu", "pci", "nic", "gpu") if root.tag == "system" else ("graph",)
    if not any(child.tag in wanted for child in root):
        raise ParseError(f"found <{root.tag}> without any <{'> or <'.join(wanted)}> element: "
                         "not an NCCL topology or graph dump", _root_line(text.replace("\r\n", "\n")))
    rd = _Reader()
    rd.notes.extend(notes)
    return _system(root, rd) if root.tag == "system" else _graphs(root, rd)
