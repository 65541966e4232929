"""Each rule says, as data, what the node needs for its findings (`action`, from a fixed vocabulary):
the catalog loader refuses any other word, every shipped rule names one, the JSON schema lists the
same words, and a finding carries its rule's action (or its variant's, from `[actions]`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from topodiag.engine import load_catalog
from topodiag.engine.catalog import default_rules_dir, rule_files
from topodiag.engine.findings import ACTIONS
from tests.engine.test_catalog import GOOD, errors_of, write

ROOT = Path(__file__).resolve().parents[2]
VOCABULARY = ("none", "rerun", "reset-gpu", "reboot", "reseat-cable", "service-ticket")


def test_the_vocabulary_is_fixed_and_the_schema_lists_it():
    assert tuple(ACTIONS) == VOCABULARY
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    assert schema["$defs"]["finding"]["properties"]["action"]["enum"] == list(VOCABULARY)
    assert "action" in schema["$defs"]["finding"]["required"]


@pytest.mark.parametrize("path", rule_files(default_rules_dir()), ids=lambda p: p.stem)
def test_every_shipped_rule_names_its_action(path):
    data = tomllib.loads(path.read_text())
    assert data.get("action") in VOCABULARY, f"{path.name}: action = {data.get('action')!r}"
    for variant, action in data.get("actions", {}).items():
        assert action in VOCABULARY and (variant in data.get("messages", {}) or variant == "default")


def _rule(tmp_path, extra: str, tables: str = "") -> Path:
    text = GOOD.format(code="TOPO001", slug="gpu-link-asymmetry")
    text = text.replace('severity = "warning"\n', f'severity = "warning"\n{extra}\n', 1)
    text = text.replace("[params]", f"{tables}\n[params]", 1)
    return write(tmp_path, "topo", "TOPO001-gpu-link-asymmetry.toml", text)


@pytest.mark.parametrize("extra, tables, fragment", [
    ('action = "replace the node"', "", "action: 'replace the node' is not one of none, rerun, reset-gpu, reboot, "
                                        "reseat-cable, service-ticket"),
    ('action = 3', "", "action: 3 is not one of"),
    ('action = "reboot"', '[actions]\nnope = "reboot"\n', "actions.nope: names no message variant"),
    ('action = "reboot"', '[messages]\nslow = "x"\n[actions]\nslow = "power-cycle"\n', "actions.slow: 'power-cycle'"),
])
def test_the_loader_refuses_an_action_outside_the_vocabulary(tmp_path, extra, tables, fragment):
    _rule(tmp_path, extra, tables)
    [line] = errors_of(tmp_path)
    assert line.startswith("rules") or "TOPO001-gpu-link-asymmetry.toml" in line
    assert fragment in line


def test_a_rule_s_action_and_its_variants_reach_the_finding(tmp_path):
    _rule(tmp_path, 'action = "reseat-cable"', '[messages]\nsoft = "x {slowest}"\n[actions]\nsoft = "none"\n')
    rule = load_catalog(tmp_path).get("TOPO001")
    assert rule.action == "reseat-cable" and rule.action_for("default") == "reseat-cable"
    assert rule.action_for("soft") == "none"
    catalog = load_catalog()
    ib001 = catalog.get("IB001")
    assert ib001.action_for("polling") == "reseat-cable" and ib001.action_for("linkup") == "none"
    assert ib001.format_observed({"nic": "mlx5_0", "port": 1, "state": "Down", "physical_state": "Polling"}) == \
        "mlx5_0 port 1 Down/Polling"
    assert ib001.format_observed({"nic": "mlx5_0"}) == ""  # a value missing: no observed text, never an error


def test_a_finding_from_a_real_input_says_its_action():
    from topodiag.pipeline import diagnose

    d = diagnose([ROOT / "fixtures" / "hosts" / "v100-nvlinks-down"])
    assert {f.code: f.action for f in d.outcome.findings}.get("NVL001") == "reset-gpu"
