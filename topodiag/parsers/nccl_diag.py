"""Parser for NCCL's active diagnostics report (NCCL 2.31+, `NCCL_RUN_DIAGNOSTICS=1`): the `NCCL DIAG`
lines that the process hosting rank 0 prints at communicator initialization, found in an NCCL log or in
a job's output.

    node1:4242 NCCL DIAG === NCCL Diagnostics ===
    node1:4242 NCCL DIAG [OK]   p2p: all 56 directed GPU P2P edges verified
    node1:4242 NCCL DIAG [INFO] p2p: 54/56 directed GPU P2P edges verified (skipped indirect=2)
    node1:4242 NCCL DIAG [INFO] p2p: write mismatch srcRank=3 srcCudaDev=3 srcNvmlDev=3 dstRank=5 dstCudaDev=5
        dstNvmlDev=5 path=PXB handle=LEGACY_CUDA_IPC expected=0x... got=0x... verify=0x...; check the affected
        pair with 'nvidia-smi topo -p2p p', then check Linux bare-metal IOMMU mode and PCIe ACS settings
    node1:4242 NCCL DIAG NCCL diagnostics completed in 245.3 ms across 8 ranks

The formats are those of NVIDIA/nccl src/diagnostics/p2p.cc (DIAG_PRINT, "<host>:<pid> " prefix) and of
the user guide's Diagnostics page (the "[OK]   p2p: verified P2P access in both directions between every
GPU pair (N peer accesses)" and "[INFO] p2p: only P/T GPU-to-GPU peer accesses passed verification"
summaries). Any text before "NCCL DIAG" (launcher prefixes, timestamps) is ignored.

JSON: {source: "nccl_diag", reports (number of "=== NCCL Diagnostics ===" headers), hosts, summaries
[{line_no, ok, passed, tested, skipped_indirect}], failures [{line_no, host, kind ("write mismatch",
"read mismatch", "peer-memory import failed", "destination buffer unavailable", "local CUDA setup
failed", "topology check failed", "launch/check failed", "setup failed", ...), src_rank, src_cuda_dev,
src_nvml_dev, dst_rank, dst_cuda_dev, dst_nvml_dev, path (NCCL's path type: NVL, NVB, PIX, PXB, PHB,
SYS, NET...), handle, reason, advice}], other [{line_no, text}] (other [INFO] lines), completed
{ms, ranks} (the last "completed in" line), lines (NCCL DIAG lines read)}. ParseError when no NCCL DIAG
line is found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines
from .sniff.nccl_diag import sniff

INFO = ParserInfo(
    source="nccl_diag",
    tool="NCCL_RUN_DIAGNOSTICS=1 (NCCL DIAG lines, NCCL 2.31+)",
    description="NCCL's active diagnostics report: P2P peer accesses verified, the failing GPU pair and its path",
)
SOURCE = INFO.source

MAX_ITEMS = 512
_DIAG_RE = re.compile(r"(?:^|\s)(?:(\S+?):(\d+)\s+)?NCCL DIAG\s?(.*)$")
_FIELDS_RE = re.compile(r"\b(srcRank|srcCudaDev|srcNvmlDev|dstRank|dstCudaDev|dstNvmlDev|path|handle|reason)=([^\s;]+)")
# "[INFO] p2p: <kind> srcRank=...": the kind is cut in code (_failure_kind), never by `\s+(.*?)\s+srcRank=`,
# whose three runs over the same blanks backtrack cubically on a line of blanks.
_FAILURE_HEAD_RE = re.compile(r"^\[INFO\]\s+p2p:(?=\s)")
_SRC_RANK_RE = re.compile(r"(?<=\s)srcRank=")
_SETUP_RE = re.compile(r"^\[INFO\]\s+p2p:\s+(setup failed|resource cleanup failed)\b")
_ALL_RE = re.compile(r"^\[OK\]\s+p2p:\s+all\s+(\d+)\s+directed GPU P2P edges verified(?:\s*\(skipped indirect=(\d+)\))?")
_PART_RE = re.compile(r"^\[INFO\]\s+p2p:\s+(\d+)/(\d+)\s+directed GPU P2P edges verified(?:\s*\(skipped indirect=(\d+)\))?")
_DOC_OK_RE = re.compile(r"^\[OK\]\s+p2p:\s+verified P2P access in both directions between every GPU pair \((\d+) peer accesses\)")
_DOC_PART_RE = re.compile(r"^\[INFO\]\s+p2p:\s+only\s+(\d+)/(\d+)\s+GPU-to-GPU peer accesses passed verification")
_DONE_RE = re.compile(r"completed in\s+([\d.]+)\s*ms\s+across\s+(\d+)\s+ranks")


@dataclass(frozen=True)
class Summary:
    line_no: int
    ok: bool
    passed: int
    tested: int
    skipped_indirect: Optional[int]


@dataclass(frozen=True)
class Failure:
    line_no: int
    host: Optional[str]
    kind: str
    src_rank: Optional[int]
    src_cuda_dev: Optional[int]
    src_nvml_dev: Optional[int]
    dst_rank: Optional[int]
    dst_cuda_dev: Optional[int]
    dst_nvml_dev: Optional[int]
    path: Optional[str]
    handle: Optional[str]
    reason: Optional[str]
    advice: Optional[str]


@dataclass(frozen=True)
class Other:
    line_no: int
    text: str


@dataclass(frozen=True)
class NcclDiag:
    source: str
    reports: int
    hosts: tuple[str, ...]
    summaries: tuple[Summary, ...]
    failures: tuple[Failure, ...]
    other: tuple[Other, ...]
    completed: Optional[dict]
    lines: int


def _int(v: Optional[str]) -> Optional[int]:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _failure_kind(body: str) -> Optional[str]:
    r"""What `^\[INFO\]\s+p2p:\s+(.*?)\s+srcRank=` captured, in linear time: the text between the blanks
    after 'p2p:' and the blank run before the first 'srcRank=' that follows a blank."""
    head = _FAILURE_HEAD_RE.match(body)
    if head is None:
        return None
    rest = body[head.end():]
    lead = len(rest) - len(rest.lstrip())
    tag = _SRC_RANK_RE.search(rest, lead + 1)  # the first after a kind (the pattern's lazy group)
    if tag is None:  # else both blank runs share the blanks after 'p2p:': an empty kind, two blanks at least
        return "" if lead >= 2 and rest.startswith("srcRank=", lead) else None
    return rest[lead: tag.start()].rstrip()


def _failure(body: str, n: int, host: Optional[str]) -> Optional[Failure]:
    kind = _failure_kind(body)
    if kind is None:
        m = _SETUP_RE.match(body)
        if m is None:
            return None
        kind = m.group(1)
    f = dict(_FIELDS_RE.findall(body))
    if "rank" in body and "srcRank" not in f:  # "setup failed on rank 3 result=2"
        r = re.search(r"rank[= ](\d+)", body)
        f["srcRank"] = r.group(1) if r else None
    advice = body.split(";", 1)[1].strip() if ";" in body else None
    return Failure(n, host, kind, _int(f.get("srcRank")), _int(f.get("srcCudaDev")), _int(f.get("srcNvmlDev")),
                   _int(f.get("dstRank")), _int(f.get("dstCudaDev")), _int(f.get("dstNvmlDev")), f.get("path"),
                   f.get("handle"), f.get("reason"), advice)


def _summary(body: str, n: int) -> Optional[Summary]:
    for rx, ok in ((_ALL_RE, True), (_DOC_OK_RE, True)):
        m = rx.match(body)
        if m:
            skipped = m.group(2) if rx is _ALL_RE else None
            return Summary(n, ok, int(m.group(1)), int(m.group(1)), _int(skipped))
    for rx in (_PART_RE, _DOC_PART_RE):
        m = rx.match(body)
        if m:
            skipped = m.group(3) if rx is _PART_RE else None
            return Summary(n, False, int(m.group(1)), int(m.group(2)), _int(skipped))
    return None


def parse(text: str) -> NcclDiag:
    reports = seen = 0
    hosts: list[str] = []
    summaries: list[Summary] = []
    failures: list[Failure] = []
    other: list[Other] = []
    completed = None
    lines = clean_lines(text)
    for n, line in enumerate(lines, 1):
        if "NCCL DIAG" not in line:
            continue
        m = _DIAG_RE.search(line)
        if m is None:
            continue
        seen += 1
        host, body = m.group(1), m.group(3).strip()
        if host and host not in hosts and len(hosts) < MAX_ITEMS:
            hosts.append(host)
        if body.startswith("=== NCCL Diagnostics"):
            reports += 1
            continue
        done = _DONE_RE.search(body)
        if done:
            completed = {"ms": float(done.group(1)), "ranks": int(done.group(2))}
            continue
        s = _summary(body, n)
        if s is not None:
            if len(summaries) < MAX_ITEMS:
                summaries.append(s)
            continue
        f = _failure(body, n, host)
        if f is not None:
            if len(failures) < MAX_ITEMS:
                failures.append(f)
            continue
        if body.startswith("[INFO]") and len(other) < MAX_ITEMS:
            other.append(Other(n, body[:500]))
    if not seen:
        raise ParseError("expected NCCL DIAG lines (NCCL_RUN_DIAGNOSTICS=1, NCCL 2.31+); found none", len(lines))
    return NcclDiag(SOURCE, reports, tuple(hosts), tuple(summaries), tuple(failures), tuple(other), completed, seen)
