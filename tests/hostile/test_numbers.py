"""Numbers no renderer or JSON writer was ready for.

- an nccl-tests busbw of 1e308 (one column of a real output rewritten) made `check --format html`
  and `compare --plot` exit 4 (the SVG chart divided an int too large for a float): every renderer
  now survives any finite or infinite number;
- `plan --params nan` (or inf, 1e308) printed "nanB params" and JSON with NaN in it, and
  `compare` wrote `Infinity` for a gain: both are usage errors or null now, never NaN in JSON;
- `plan --nodes 1000000000` ran away (7 GB): refused at the option with the bounds;
- `compare` kept 1,024 of a file's 5,000 runs without saying so."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli.app import app
from topodiag.plan.models import BOUNDS
from topodiag.render.chart_svg import svg_chart
from topodiag.render.sanitise import json_safe

REPO = Path(__file__).resolve().parents[2]
HOST = REPO / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"
NCCL_TESTS = HOST / "commands" / "nccl_tests.txt"
ROW = re.compile(r"^(\s+[0-9]+\s+[0-9]+\s+float\s+sum\s+-1\s+\S+\s+\S+\s+)\S+", re.M)


def _strict(text: str):
    def refuse(name):
        raise ValueError(f"{name} in JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def huge(tmp_path) -> Path:
    """The healthy node's nccl-tests output with every out-of-place busbw made 1e308."""
    text = ROW.sub(lambda m: m.group(1) + "1e308", NCCL_TESTS.read_text())
    assert text.count("1e308") >= 6
    path = tmp_path / "big.txt"
    path.write_text(text)
    return path


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("value", [1e308, float("inf"), float("-inf"), float("nan"), -5.0, 10 ** 400])
def test_the_svg_chart_survives_any_number(value):
    series = [("a", [(1024, 10.0), (2048, value), (float("inf"), 3.0), (10 ** 400, 2.0)]), ("b", [(4096, value)])]
    svg = svg_chart(series, expectation=value)
    ET.fromstring(svg)  # well-formed
    assert "nan" not in svg.lower() and "inf" not in svg.lower()


def test_check_html_and_compare_plot_with_a_busbw_of_1e308(huge, tmp_path):
    done = _run("check", "--from", huge, "--format", "html")
    assert done.exit_code in (0, 1), done.output[-500:]
    assert "<svg" in done.stdout
    plot = tmp_path / "p.svg"
    done = _run("compare", NCCL_TESTS, huge, "--plot", plot, "--format", "json")
    assert done.exit_code == 0, done.output[-500:]
    ET.fromstring(plot.read_text())
    data = _strict(done.stdout)  # no Infinity
    assert any(b["gain_pct_vs_first"] is None for b in data["bands"])


def test_json_safe_replaces_non_finite_numbers():
    assert json_safe({"a": [1.0, float("nan"), (float("inf"), 2)]}) == {"a": [1.0, None, [None, 2]]}


@pytest.mark.parametrize("args", [["--params", "nan", "--layers", "80", "--hidden", "8192"],
                                  ["--params", "inf", "--layers", "80", "--hidden", "8192"],
                                  ["--params", "1e308", "--layers", "80", "--hidden", "8192"],
                                  ["--nodes", "1000000000"], ["--nodes", str(BOUNDS["nodes"][1] + 1)],
                                  ["--seq", "100000000"], ["--micro-batches", "0"]])
def test_plan_refuses_numbers_out_of_bounds_at_the_option(args):
    done = _run("plan", "--from", HOST, *args, "--format", "json")
    assert done.exit_code == 2, done.output[-500:]
    assert "from " in done.output and len(done.output.strip().splitlines()) == 1
    assert "NaN" not in done.stdout


def test_plan_json_at_the_bounds_is_strict_json():
    done = _run("plan", "--from", HOST, "--params", "1e15", "--layers", "10000", "--hidden", str(1 << 20),
                "--format", "json")
    assert done.exit_code == 0, done.output[-500:]
    _strict(done.stdout)


def test_compare_says_which_runs_it_left_out(tmp_path):
    one = "\n".join(line for line in NCCL_TESTS.read_text().split("\n") if not line.startswith("#@"))
    many = tmp_path / "many.txt"
    many.write_text(one * 1100)
    done = _run("compare", NCCL_TESTS, many, "--format", "json")
    assert done.exit_code == 0, done.output[-500:]
    data = _strict(done.stdout)
    compared = sum(1 for r in data["runs"] if r["path"] == str(many))
    assert compared < 1100
    assert f"many.txt holds 1100 runs; {compared} are compared, the other {1100 - compared}" in " ".join(data["summary"])
