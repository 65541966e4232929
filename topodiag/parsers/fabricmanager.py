"""Parser for the NVIDIA Fabric Manager service's state and journal: `systemctl is-active
nvidia-fabricmanager` (one word), `systemctl status nvidia-fabricmanager` and `journalctl -u
nvidia-fabricmanager`, alone or pasted together.

    failed
    Sep 18 03:19:01 host nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]
    Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 don't match with driver version 550.120. Please update with matching NVIDIA driver package.
    Nov 05 13:55:26 node1 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
         Active: active (running) since Mon 2024-07-01 10:00:00 UTC; 2h ago

JSON: {source: "fabricmanager", state ("active", "inactive", "failed", "activating", "unknown": the
is-active word or systemctl status's Active: line; null when neither is in the text), unit_missing
(systemctl: the unit could not be found), nothing_to_do [{line_no, text}] (NV_WARN_NOTHING_TO_DO / no
NVSwitch found), version_mismatch {fm_version, driver_version, line_no} or null, failures [{line_no,
text}] (the unit's process failed), started (a "Started NVIDIA fabric manager" or "Successfully configured"
line), lines}. ParseError when nothing in the text is about the fabric manager.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .. import catalogues
from .base import ParseError, ParserInfo, clean_lines, first_body_line
from .ib_records import ToolError
from .sniff.fabricmanager import _STATES, _WORD_RE, sniff

INFO = ParserInfo(
    source="fabricmanager",
    tool="systemctl is-active nvidia-fabricmanager; journalctl -u nvidia-fabricmanager",
    description="NVIDIA Fabric Manager: service state, NV_WARN_NOTHING_TO_DO (no NVSwitch), driver version mismatch, failures",
    # Live: one command gives the unit's state (its Active: line) and its last journal lines; exit 3
    # is a unit that is not running, 4 one that is not installed ("could not be found"): both answers.
    # Without systemd (a container) the source is not available.
    argv=("systemctl", "status", "nvidia-fabricmanager", "--no-pager", "--lines=20"),
    timeout_s=10.0,
    answer_rcs=(3, 4),
)
SOURCE = INFO.source

MAX_EVENTS = 50
MAX_TEXT = 300
_ACTIVE_RE = re.compile(r"^\s*Active:\s+(\S+)")
_MISMATCH_RE = re.compile(r"fabric manager NVIDIA GPU driver interface version (\S+?)\.? do(?:n.?t|esn.?t|es not) match"
                          r"(?: with)? (?:the )?driver version ([0-9]+(?:\.[0-9]+)+)", re.I)
_NOTHING_RE = re.compile(r"NV_WARN_NOTHING_TO_DO|no NVSwitch devices? (?:found|detected)", re.I)
_FAIL_RE = re.compile(r"nvidia-fabricmanager\.service: (?:Control process exited, code=exited, status=[1-9]|"
                      r"Failed with result|Main process exited, code=exited, status=[1-9])"
                      r"|Failed to start NVIDIA fabric manager|\" failed! Exit code: [1-9]", re.I)
_STARTED_RE = re.compile(r"Started NVIDIA fabric manager|Successfully configured all the available NVSwitches", re.I)
_MISSING_RE = re.compile(r"Unit nvidia-fabricmanager(?:\.service)? (?:could not be found|not found)", re.I)
# a journal line's "<date> <host> <process>[pid]: " and Fabric Manager's own "[date] [LEVEL] [tid n] "
_JOURNAL_RE = re.compile(r"^(?:\S+ +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} \S+ [^\s:\[]+(?:\[[0-9]+\])?|"
                         r"[^\s:\[]+\[[0-9]+\]): ")
_FMLOG_RE = re.compile(r"^\[[^\]]{1,40}\] \[(?:INFO|WARNING|ERROR|FATAL|DEBUG)\] (?:\[tid [0-9]+\] )?")
_ABOUT_RE = re.compile(r"fabric ?manager|nv-fabricmanager|NVSwitch|NV_WARN_NOTHING_TO_DO", re.I)


@dataclass(frozen=True)
class Line:
    line_no: int
    text: str


@dataclass(frozen=True)
class Mismatch:
    fm_version: str
    driver_version: str
    line_no: int


@dataclass(frozen=True)
class FabricManager:
    source: str
    state: Optional[str]
    state_line: Optional[int]
    unit_missing: bool
    nothing_to_do: tuple[Line, ...]
    version_mismatch: Optional[Mismatch]
    failures: tuple[Line, ...]
    started: bool
    lines: int
    errors: tuple[ToolError, ...] = ()  # its failure lines: those the catalogue explains (not the informational ones) and
    unrecognised: tuple[ToolError, ...] = ()  # the failure-looking ones no entry explains (SYS004), as in every record


def _state(body: str) -> Optional[str]:
    m = _WORD_RE.match(body)
    if m:
        return m[1]
    m = _ACTIVE_RE.match(body)
    return m[1] if m and m[1] in _STATES else None


def parse(text: str) -> FabricManager:
    lines = clean_lines(text)
    state: Optional[str] = None
    state_line: Optional[int] = None
    nothing: list[Line] = []
    failures: list[Line] = []
    mismatch: Optional[Mismatch] = None
    missing = started = False
    about = 0
    known: list[ToolError] = []
    unknown: list[ToolError] = []
    for n, raw in enumerate(lines, 1):
        body = raw.strip()
        if not body:
            continue
        s = _state(body)
        if s is not None and state is None:
            state, state_line = s, n
            about += 1
            continue
        if not _ABOUT_RE.search(body) and "systemd" not in body:
            continue
        about += 1 if _ABOUT_RE.search(body) else 0
        m = _MISMATCH_RE.search(body)
        if m and mismatch is None:
            mismatch = Mismatch(m[1], m[2].rstrip("."), n)
        if _NOTHING_RE.search(body) and len(nothing) < MAX_EVENTS:
            nothing.append(Line(n, body[:MAX_TEXT]))
        if _FAIL_RE.search(body) and len(failures) < MAX_EVENTS:
            failures.append(Line(n, body[:MAX_TEXT]))
        missing = missing or bool(_MISSING_RE.search(body))
        started = started or bool(_STARTED_RE.search(body))
        _classify(n, body, known, unknown)
    _route(known, nothing, failures)
    if not about:
        raise ParseError("nothing about nvidia-fabricmanager in the text (no is-active word, no fabric manager journal line)",
                         first_body_line(lines))
    return FabricManager(source=SOURCE, state=state, state_line=state_line, unit_missing=missing,
                         nothing_to_do=tuple(nothing), version_mismatch=mismatch, failures=tuple(failures),
                         started=started, lines=len(lines),
                         errors=tuple(sorted([*known, *unknown], key=lambda e: e.line_no)), unrecognised=tuple(unknown))


def _route(known: list, nothing: list, failures: list) -> None:
    """What the catalogue classed as Fabric Manager finding nothing to manage, or as its failure, joins
    `nothing_to_do` / `failures` (which FAB002 reads) where the parser's own patterns missed it."""
    for e in known:
        into = {"fabric-manager-idle": nothing, "fabric-manager-failure": failures}.get(e.class_)
        if into is not None and len(into) < MAX_EVENTS and all(x.line_no != e.line_no for x in into):
            into.append(Line(e.line_no, e.text))
    nothing.sort(key=lambda x: x.line_no)
    failures.sort(key=lambda x: x.line_no)


def message(body: str) -> str:
    """A journal line's message: its date, host and process prefix (and Fabric Manager's own log
    prefix) taken off."""
    m = _JOURNAL_RE.match(body)
    text = body[m.end():] if m else body
    m = _FMLOG_RE.match(text)
    return text[m.end():] if m else text


def _classify(n: int, body: str, known: list, unknown: list) -> None:
    """The line through the fabricmanager catalogue: an entry that is not informational goes to
    `known`; a failure-looking line no entry explains to `unknown`."""
    if len(known) + len(unknown) >= MAX_EVENTS:
        return
    text = message(body)
    hit = catalogues.classify_for(SOURCE, text)
    if hit is not None:
        if hit.entry.cls != "informational":
            e = hit.entry
            known.append(ToolError(n, body[:MAX_TEXT], class_=e.cls, entry=e.id, severity=e.severity))
    elif catalogues.looks_like_failure(text):
        unknown.append(ToolError(n, body[:MAX_TEXT]))
