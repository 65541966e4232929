"""Names and values a report controls never act on the terminal, and never crash the sort (issue 16)."""

from __future__ import annotations

import io
import json

from topodiag.fleet import render_json, render_text, run_fleet
from topodiag.fleet.compare import natural
from topodiag.render.sanitise import clean, line

from .conftest import node

EVIL = "gpu\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil\r\n\x00"
ACTIVE = ("\x1b", "\x07", "\x9b", "\u202e", "\x00", "\r")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_clean_and_line():
    assert clean("gpu\x1b[31m\u202e\x9bé") == "gpu\\x1b[31m\\u202e\\x9bé"
    assert clean("plain-name.local") == "plain-name.local"
    assert line("a\nb\r\n\tc\x1b", 6) == "a b..."
    assert line("a\u2028b\x85c") == "a b c"


def test_the_text_form_shows_escapes_instead_of_running_them(tmp_path, base_report):
    d = tmp_path / "r"
    d.mkdir()
    for i in range(1, 5):
        fp = {"nic:mlx5_0.firmware": "28.\x1b[2J\u202e"} if i == 2 else {}
        r = node(base_report, EVIL if i == 2 else f"n{i}", fp=fp)
        r["findings"] = [{"code": "IB001\x1b[5m", "severity": "error"}] if i == 2 else []
        (d / f"n{i}.json").write_text(json.dumps(r))
    (d / "bad\x1b[2J.json").write_text("not json")
    for i in (5, 6):  # a duplicate host name with escapes
        (d / f"n{i}.json").write_text(json.dumps(node(base_report, EVIL)))
    result = run_fleet([str(d)])
    assert result.outliers and result.duplicates and result.failures
    for tty in (True, False):
        out = Tty() if tty else io.StringIO()
        render_text(result, file=out, fail_on="error")
        text = out.getvalue()
        assert "gpu\\x1b]0;pwned\\x07" in text
        raw = ("\x1b]0;", "\x1b[2J", "\x1b[5m", "\x07", "\x9b", "\u202e", "\x00", "\r") if tty else ACTIVE
        for c in raw:  # on a terminal rich adds colour sequences of its own; none of the report's
            assert c not in text, (c, tty)
    data = render_json(result)
    assert data.isascii() and json.loads(data)["duplicates"][0]["host"] == EVIL  # JSON escapes, keeps the data


def test_natural_sort_takes_only_ascii_digits():
    names = ["node10", "node2", "node²", "n٣", "a" + "9" * 5000, "node02"]
    assert sorted(names, key=natural) == ["a" + "9" * 5000, "node2", "node02", "node10", "node²", "n٣"]


def test_host_names_with_odd_digits_do_not_crash_fleet(base_report):
    texts = [(f"n{i}", json.dumps(node(base_report, h))) for i, h in enumerate(["gpu²", "gpu٣", "gpu1", "x" * 9000])]
    sick = node(base_report, "gpu¹")
    sick["findings"] = [{"code": "IB001", "severity": "error"}]
    result = run_fleet([], texts=texts + [("n9", json.dumps(sick))])
    assert result.nodes == 5 and [n["node"] for n in result.with_findings] == ["n9"]
