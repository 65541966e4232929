"""The text report prints a finding's already-wrapped lines as they are where rich would not wrap them
again (render/text.py `_print_wrapped`): the report is the same, character for character, as when rich
wraps every finding itself -- on host scenarios, kernel logs with many findings and non-ASCII text,
at several widths, with and without --verbose."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from topodiag.pipeline import run
from topodiag.render import text

ROOT = Path(__file__).resolve().parent.parent.parent
INPUTS = [ROOT / "fixtures" / "hosts" / "2x8h100-ndr-degraded",
          ROOT / "fixtures" / "hosts" / "hgx-h100-healthy-assembled",
          *sorted((ROOT / "fixtures" / "kernel_log").glob("*.txt"))[:12]]


def _render(d, width: int, verbose: bool) -> str:
    out = io.StringIO()
    text.render(d, out, width=width, verbose=verbose)
    return out.getvalue()


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_the_report_is_what_rich_wrapping_every_finding_gives(path, monkeypatch):
    from topodiag.render import meta

    monkeypatch.setattr(meta, "now_utc", lambda: "2026-12-05T18:00:00Z")  # one report time for both
    d = run.diagnose([str(path)])
    ours = {(w, v): _render(d, w, v) for w in (40, 80, 137) for v in (False, True)}
    monkeypatch.setattr(text, "_print_wrapped", lambda console, t, width: console.print(t))
    for (w, v), got in ours.items():
        assert got == _render(d, w, v), (w, v)


def test_a_colour_terminal_gets_the_same_report_as_rich_wrapping_every_finding(monkeypatch):
    """On a terminal the lines go through rich (the severity word's style): the same bytes, escapes
    included, as rich wrapping each finding itself."""
    from topodiag.render import meta

    monkeypatch.setattr(meta, "now_utc", lambda: "2026-12-05T18:00:00Z")
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich: a terminal, with colours
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    d = run.diagnose([str(INPUTS[0])])
    ours = _render(d, 80, False)
    assert "\x1b[" in ours  # styles written
    monkeypatch.setattr(text, "_print_wrapped", lambda console, t, width: console.print(t))
    assert ours == _render(d, 80, False)


def test_a_finding_with_wide_or_control_characters_is_left_to_rich():
    from rich.text import Text

    seen = []

    class Console:
        color_system = "standard"
        record = False

        def print(self, t, **kw):
            seen.append(kw.get("soft_wrap"))

    for plain in ("GPU 0: \u6545\u969c", "tab\there", "esc \x1b[31m", "ok line\n    and its rest"):
        text._print_wrapped(Console(), Text(plain), 80)
    text._print_wrapped(Console(), Text("narrow"), 20)
    assert seen == [None, None, None, True, None]


def test_no_styles_to_write_the_plain_lines_go_to_the_file():
    from rich.text import Text

    class Console:
        color_system = None
        record = False
        file = io.StringIO()

        def print(self, t, **kw):  # pragma: no cover - not reached
            raise AssertionError("printed through rich")

    text._print_wrapped(Console(), Text("ERROR IB001 mlx5_0 port 1 is Down\n    -> reseat"), 80)
    assert Console.file.getvalue() == "ERROR IB001 mlx5_0 port 1 is Down\n    -> reseat\n"
