"""`check --format html`: one self-contained page (nothing fetched), escaped input text, every section;
loaded in headless Chromium for a screenshot where Chromium is installed (.ci/run installs it)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import topodiag

ROOT = Path(__file__).resolve().parents[2]
XIDS = ROOT / "fixtures" / "hosts" / "hgx-h100-nvlink-xids-assembled"


def _page(*paths) -> str:
    buf = io.StringIO()
    topodiag.diagnose([str(p) for p in paths]).render("html", buf)
    return buf.getvalue()


def test_the_page_is_self_contained_and_has_every_section():
    page = _page(XIDS)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"<script|<link|<img|@import|url\(", page, re.I)
    assert not re.search(r"(?:src|href)=\"(?:https?:)?//", page)  # nothing fetched
    for part in ("FINDINGS", "GPU001 gpu-xid (4)", "<summary>why</summary>", "Paths (nvidia-smi topo -m classes)",
                 "The node", "nccl-tests", "Inputs", "rules skipped"):
        assert part in page, part
    assert page.count("<svg") == 2  # the node and the busbw chart


def test_input_text_is_escaped(tmp_path):
    log = tmp_path / "k.txt"
    log.write_text("[ 1.0] NVRM: Xid (PCI:0000:18:00): 79, pid=1, <script>alert(1)</script> GPU has fallen off the bus.\n")
    buf = io.StringIO()
    topodiag.diagnose([str(log)], host="<img src=x onerror=alert(1)>").render("html", buf)
    page = buf.getvalue()
    assert "<script>" not in page and "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_cli_writes_it(tmp_path):
    from typer.testing import CliRunner

    from topodiag.cli import app

    res = CliRunner().invoke(app, ["check", "--from", str(XIDS), "--format", "html"])
    assert res.exit_code == 1 and res.stdout.startswith("<!DOCTYPE html>")


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")), reason="Chromium is not installed")
def test_headless_chromium_loads_and_draws_it(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(_page(XIDS))
    shot = tmp_path / "report.png"
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--screenshot={shot}",
                    "--window-size=1200,1600", page.as_uri()], capture_output=True, timeout=120)
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_the_chart_draws_the_busbw_perf001_judged_against():
    """The dashed line is PERF001's expected busbw (the value of its message: 400 GB/s for two DGX
    H100 over 8 NDR rails), not a number read back out of the expectation's text (which also says
    '8 x 50 GB/s')."""
    page = _page(ROOT / "fixtures" / "nccl_tests" / "nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt")
    assert "expected 400</text>" in page and "expected 50</text>" not in page
