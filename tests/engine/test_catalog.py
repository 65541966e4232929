"""Rule catalog loading and validation, on rule files written to a temporary directory."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from topodiag.engine import Catalog, CatalogError, Severity, load_catalog, load_rule
from topodiag.engine.findings import Evidence, Finding, hit

GOOD = """
code = "{code}"
slug = "{slug}"
title = "GPU pairs weaker than the best"
severity = "warning"
tags = ["prolog", "topology"]
requires = ["nvidia_smi_topo_m"]
message = "{{slowest}} is {{ratio:.1f}}x slower than {{best}} (threshold {{min_ratio}})"
why = "SYS pair ~ 64 GB/s vs NV18 450 GB/s: 7x."
fix = "Reseat the GPU baseboard."
how_to_check = "nvidia-smi topo -m"
references = ["https://docs.nvidia.com/"]

[params]
min_ratio = 1.5
names = ["a", "b"]

[[examples.pass]]
description = "all NV18"
inputs = {{ nvidia_smi_topo_m = "fixtures/nvidia_smi_topo_m/x.txt" }}

[[examples.fail]]
inline.nvidia_smi_topo_m = "GPU0 GPU1"
subjects = ["gpu:0"]
params = {{ min_ratio = 2.0 }}
"""


def write(root: Path, family: str, name: str, text: str) -> Path:
    path = root / family / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def good(root: Path, code: str = "TOPO001", slug: str = "gpu-link-asymmetry", family: str = "topo",
         name: str | None = None) -> Path:
    return write(root, family, name or f"{code}-{slug}.toml", GOOD.format(code=code, slug=slug))


def errors_of(root: Path) -> list[str]:
    with pytest.raises(CatalogError) as info:
        load_catalog(root)
    return info.value.errors


def test_a_valid_rule_loads_with_every_field(tmp_path):
    good(tmp_path)
    catalog = load_catalog(tmp_path)
    rule = catalog.get("TOPO001")
    assert (rule.code, rule.slug, rule.family) == ("TOPO001", "gpu-link-asymmetry", "TOPO")
    assert rule.severity is Severity.WARNING
    assert rule.tags == ("prolog", "topology")
    assert rule.requires == ("nvidia_smi_topo_m",)
    assert dict(rule.params) == {"min_ratio": 1.5, "names": ["a", "b"]}
    assert rule.references == ("https://docs.nvidia.com/",)
    assert not rule.builtin
    (p,), (f,) = rule.pass_examples, rule.fail_examples
    assert p.description == "all NV18" and dict(p.inputs) == {"nvidia_smi_topo_m": "fixtures/nvidia_smi_topo_m/x.txt"}
    assert dict(f.inline) == {"nvidia_smi_topo_m": "GPU0 GPU1"} and f.subjects == ("gpu:0",)
    assert dict(f.params) == {"min_ratio": 2.0}
    assert rule.format_message({"slowest": "GPU0-GPU4", "ratio": 7.03, "best": "GPU0-GPU1"}) == (
        "GPU0-GPU4 is 7.0x slower than GPU0-GPU1 (threshold 1.5)"
    )


def test_optional_keys_have_defaults(tmp_path):
    write(tmp_path, "ib", "IB001-ib-port-down.toml", """
        code = "IB001"
        slug = "ib-port-down"
        title = "t"
        severity = "critical"
        message = "{port} is {state}"
        why = "w"
        fix = "f"
    """)
    rule = load_catalog(tmp_path).get("ib-port-down")
    assert rule.tags == () and rule.requires == () and dict(rule.params) == {}
    assert rule.pass_examples == () and rule.fail_examples == () and rule.how_to_check == ""


def test_lookup_by_code_slug_and_case_and_families(tmp_path):
    good(tmp_path)
    good(tmp_path, "NVL001", "nvlink-inactive", "nvlink")
    catalog = load_catalog(tmp_path)
    assert isinstance(catalog, Catalog) and len(catalog) == 2
    assert catalog.find("topo001").code == "TOPO001"
    assert catalog.find("nvlink-inactive").code == "NVL001"
    assert catalog.find("NOPE001") is None and "NVL001" in catalog
    assert catalog.families() == ["NVL", "TOPO"]
    assert [r.code for r in catalog.with_tag("prolog")] == ["NVL001", "TOPO001"]
    with pytest.raises(KeyError, match="NOPE"):
        catalog.get("NOPE")


def test_profiles_directory_is_not_read_as_rules(tmp_path):
    good(tmp_path)
    write(tmp_path, "profiles", "dgx-h100.toml", 'name = "dgx-h100"\n')
    assert load_catalog(tmp_path).codes() == ["TOPO001"]


@pytest.mark.parametrize(
    "edit, key, fragment",
    [
        (lambda t: 'colour = "red"\n' + t, "colour", "unknown key"),
        (lambda t: t.replace('severity = "warning"', 'severity = "fatal"'), "severity", "'fatal' is not one of info"),
        (lambda t: t.replace('severity = "warning"\n', ""), "severity", "missing"),
        (lambda t: t.replace('why = "SYS pair ~ 64 GB/s vs NV18 450 GB/s: 7x."', 'why = "  "'), "why", "must not be empty"),
        (lambda t: t.replace('fix = "Reseat the GPU baseboard."', "fix = 3"), "fix", "must be a string"),
        (lambda t: t.replace('tags = ["prolog", "topology"]', 'tags = ["Prolog"]'), "tags", "'Prolog'"),
        (lambda t: t.replace('requires = ["nvidia_smi_topo_m"]', 'requires = "nvidia_smi_topo_m"'), "requires", "list of strings"),
        (lambda t: t.replace("{ratio:.1f}", "{0}"), "message", "placeholder {0}"),
        (lambda t: t.replace("{ratio:.1f}x", "{ratio"), "message", "bad template"),
        (lambda t: t.replace('description = "all NV18"', 'descr = "all NV18"'), "examples.pass[0].descr", "unknown key"),
        (lambda t: t.replace("[[examples.fail]]", "[[examples.broken]]"), "examples.broken", "unknown key"),
        (lambda t: t.replace("min_ratio = 1.5", "MinRatio = 1.5"), "params.MinRatio", "lowercase name"),
        (lambda t: "builtin = 1\n" + t, "builtin", "true or false"),
    ],
)
def test_invalid_rules_give_one_line_errors_naming_file_and_key(tmp_path, edit, key, fragment):
    path = good(tmp_path)
    path.write_text(edit(path.read_text()))
    errors = errors_of(tmp_path)
    assert any(e.startswith(f"{tmp_path.name}/topo/TOPO001-gpu-link-asymmetry.toml: {key}: ") and fragment in e
               for e in errors), errors
    assert all("\n" not in e for e in errors)


def test_problem_entries_are_validated(tmp_path):
    path = good(tmp_path)
    path.write_text(path.read_text() + textwrap.dedent("""
        [[examples.fail]]
        problems = [{ source = "ibstat", kind = "exploded", reason = "x", colour = 1 }]
    """))
    errors = errors_of(tmp_path)
    assert any("examples.fail[1].problems[0].kind: 'exploded' is not one of failed, unparseable" in e for e in errors)
    assert any("examples.fail[1].problems[0].colour: unknown key" in e for e in errors)


def test_bad_code_format(tmp_path):
    write(tmp_path, "topo", "TOPO01-gpu-link-asymmetry.toml", GOOD.format(code="TOPO01", slug="gpu-link-asymmetry"))
    errors = errors_of(tmp_path)
    assert any("TOPO01-gpu-link-asymmetry.toml: code: 'TOPO01' is not letters then three digits" in e for e in errors)


def test_bad_slug_format(tmp_path):
    write(tmp_path, "topo", "TOPO001-GPU_Link.toml", GOOD.format(code="TOPO001", slug="GPU_Link"))
    assert any(": slug: 'GPU_Link' is not lowercase words" in e for e in errors_of(tmp_path))


def test_file_name_must_match_code_and_slug(tmp_path):
    good(tmp_path, name="TOPO002-gpu-link-asymmetry.toml")
    errors = errors_of(tmp_path)
    assert errors == [
        f"{tmp_path.name}/topo/TOPO002-gpu-link-asymmetry.toml: code: file name must be "
        "TOPO001-gpu-link-asymmetry.toml (from code and slug), not TOPO002-gpu-link-asymmetry.toml"
    ]


def test_duplicate_codes_and_slugs_name_both_files(tmp_path):
    good(tmp_path, "TOPO001", "one")
    good(tmp_path, "TOPO001", "two")
    good(tmp_path, "NVL001", "same", "nvlink")
    good(tmp_path, "NVL002", "same", "nvlink")
    errors = errors_of(tmp_path)
    assert any("TOPO001-two.toml: code: TOPO001 is also used by" in e and "TOPO001-one.toml" in e for e in errors)
    assert any("NVL002-same.toml: slug: 'same' is also used by" in e and "NVL001-same.toml" in e for e in errors)


def test_invalid_toml_names_file_and_line(tmp_path):
    write(tmp_path, "topo", "TOPO001-x.toml", 'code = "TOPO001"\nslug = \n')
    (error,) = errors_of(tmp_path)
    assert error.startswith(f"{tmp_path.name}/topo/TOPO001-x.toml: not valid TOML: ") and "line 2" in error


def test_every_bad_file_is_reported_not_only_the_first(tmp_path):
    good(tmp_path, "TOPO001", "a").write_text('code = "TOPO001"\n')
    good(tmp_path, "TOPO002", "b").write_text('code = "TOPO002"\n')
    errors = errors_of(tmp_path)
    assert any("TOPO001-a.toml" in e for e in errors) and any("TOPO002-b.toml" in e for e in errors)


def test_missing_rules_directory(tmp_path):
    with pytest.raises(CatalogError, match="rules directory not found"):
        load_catalog(tmp_path / "nope")


def test_load_rule_directly(tmp_path):
    rule = load_rule(good(tmp_path))
    assert rule.code == "TOPO001" and rule.path.name == "TOPO001-gpu-link-asymmetry.toml"


def test_severity_order_and_parsing():
    assert Severity.INFO < Severity.WARNING < Severity.ERROR < Severity.CRITICAL
    assert Severity.parse("Error") is Severity.ERROR and Severity.parse(4) is Severity.CRITICAL
    assert str(Severity.WARNING) == "warning"
    with pytest.raises(ValueError, match="one of: info, warning, error, critical"):
        Severity.parse("fatal")


def test_finding_is_frozen_and_json_ready():
    f = Finding("IB001", "ib-port-down", "error", "nic:mlx5_0", "mlx5_0 port 1 is Down",
                evidence=[{"source": "ibstat", "file": "ibstat.txt", "line_no": 7}], why="w", fix="f",
                expectation="profile dgx-h100", action="reseat-cable")
    assert f.severity is Severity.ERROR and f.subjects == ("nic:mlx5_0",)
    assert f.evidence == (Evidence("ibstat", "ibstat.txt", 7),)
    assert f.to_dict() == {
        "code": "IB001", "slug": "ib-port-down", "severity": "error", "subjects": ["nic:mlx5_0"],
        "message": "mlx5_0 port 1 is Down", "evidence": [{"source": "ibstat", "file": "ibstat.txt", "line_no": 7}],
        "why": "w", "fix": "f", "expectation": "profile dgx-h100", "action": "reseat-cable",
    }
    with pytest.raises(AttributeError):
        f.code = "IB002"  # type: ignore[misc]
    h = hit(["gpu:0", "gpu:1"], severity="info", ratio=7, evidence=Evidence("nvidia_smi_topo_m"))
    assert h.severity is Severity.INFO and dict(h.values) == {"ratio": 7} and h.evidence[0].source == "nvidia_smi_topo_m"


def test_the_catalog_without_examples_is_the_same_catalog():
    """check reads the rules without their examples (half of each file): nothing else may differ."""
    from dataclasses import replace

    from topodiag.engine import load_catalog

    full, lean = load_catalog(), load_catalog(examples=False)
    assert full.codes() == lean.codes()
    for rule in full:
        assert replace(rule, pass_examples=(), fail_examples=()) == lean.get(rule.code)


def test_requires_names_known_capabilities_or_inputs(tmp_path):
    """A capability (nic.port_state, alternatives a|b) must be one topodiag/model/schema.py declares;
    an input name (a throwaway rule's) passes as it is."""
    def with_requires(name: str, requires: str) -> Path:
        root = tmp_path / name
        text = GOOD.format(code="TOPO001", slug="gpu-link-asymmetry")
        text = re.sub(r"(?m)^requires = .*$", f"requires = {requires}", text)
        write(root, "topo", "TOPO001-gpu-link-asymmetry.toml", text)
        return root

    for name, requires, want in (("cap", '["nic.port_state"]', ("nic.port_state",)),
                                 ("alt", '["nic.port_state|nccl.transport"]', ("nic.port_state|nccl.transport",)),
                                 ("tools", '["ibstat|ibv_devinfo"]', ("ibstat|ibv_devinfo",))):
        assert load_catalog(with_requires(name, requires)).get("TOPO001").requires == want
    (line,) = errors_of(with_requires("typo", '["nic.port_sate"]'))
    assert "requires: 'nic.port_sate' is no capability" in line and "nic.port_state" in line  # the close ones
    (line,) = errors_of(with_requires("dot", '["nic."]'))
    assert "requires: 'nic.' is not a capability" in line
