"""`check --format prometheus` is valid text format (checked with prometheus_client's own parser)
and says what the JSON report says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from topodiag.cli import app

HOSTS = Path(__file__).resolve().parents[2] / "fixtures" / "hosts"


def metrics(name: str) -> tuple[dict, dict]:
    runner = CliRunner()
    prom = runner.invoke(app, ["check", "--from", str(HOSTS / name), "--format", "prometheus"])
    report = json.loads(runner.invoke(app, ["check", "--from", str(HOSTS / name), "--format", "json"]).stdout)
    assert prom.exit_code == report["summary"]["exit_code"]
    families = {f.name: f for f in text_string_to_metric_families(prom.stdout)}
    assert all(f.type == "gauge" for f in families.values())
    return families, report


def samples(family) -> dict[tuple, float]:
    return {tuple(sorted(s.labels.items())): s.value for s in family.samples}


@pytest.mark.parametrize("name", sorted(p.name for p in HOSTS.iterdir() if p.is_dir()))
def test_every_scenario_parses_and_counts_its_findings(name):
    families, report = metrics(name)
    assert samples(families["topodiag_exit_code"]) == {(): report["summary"]["exit_code"]}
    counted = {}
    for f in report["findings"]:
        key = (("code", f["code"]), ("severity", f["severity"]), ("slug", f["slug"]))
        counted[key] = counted.get(key, 0) + 1
    got = samples(families["topodiag_findings"]) if "topodiag_findings" in families else {}
    assert {k: v for k, v in got.items() if v} == counted
    ran_codes = {dict(k)["code"] for k in got}
    assert ran_codes >= {f["code"] for f in report["findings"] if not f["code"].startswith("SYS")}


def test_ports_links_and_gauges_of_the_b300():
    """B300 ibstat: 7 ConnectX-8 ports Down/Disabled, 4 ConnectX-7 Active at 100 Gb/s."""
    families, _ = metrics("b300-rails-disabled")
    up = samples(families["topodiag_ib_port_active"])
    assert sum(1 for v in up.values() if v == 0) == 7 and sum(1 for v in up.values() if v == 1) == 4
    rate = samples(families["topodiag_ib_port_rate_gbps"])
    assert rate[(("device", "mlx5_2"), ("link_layer", "InfiniBand"), ("port", "1"))] == 100
    assert samples(families["topodiag_rules"])[(("state", "run"),)] >= 5


def test_nvlink_gauges_of_the_v100_with_two_links_down():
    families, _ = metrics("v100-nvlinks-down")
    assert samples(families["topodiag_nvlink_active_links"]) == {(("gpu", "3"), ("model", "Tesla V100-SXM2-32GB")): 4}
    up = samples(families["topodiag_nvlink_link_up"])
    assert up[(("gpu", "3"), ("link", "3"))] == 0 and up[(("gpu", "3"), ("link", "0"))] == 1


def test_label_values_are_escaped():
    from topodiag.render.prometheus import _escape

    assert _escape('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
