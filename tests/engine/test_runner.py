"""The runner: skips with reasons, crash isolation (SYS003), selection, config overrides, exit codes.

Rules are written to a temporary directory and their checks registered here, inside
`registry.scoped()`, so nothing leaks into the real registry.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from topodiag.engine import (
    ConfigError,
    Evidence,
    Finding,
    InputProblem,
    SelectionError,
    Severity,
    check,
    exit_code_for,
    hit,
    load_catalog,
    parse_fail_on,
    registry,
    run,
    select_rules,
    split_codes,
)
from topodiag.engine import runner as runner_mod
from topodiag.exit_codes import ExitCode

RULES = {
    "topo/AAA001-needs-topo.toml": """
        code = "AAA001"
        slug = "needs-topo"
        title = "needs the topo matrix"
        severity = "error"
        requires = ["nvidia_smi_topo_m"]
        message = "{gpu} is far ({path})"
        why = "w"
        fix = "f"
    """,
    "topo/AAA002-threshold.toml": """
        code = "AAA002"
        slug = "threshold"
        title = "compares with a param"
        severity = "warning"
        message = "{value} below {minimum}"
        why = "w"
        fix = "f"
        [params]
        minimum = 10
        label = "x"
    """,
    "ib/BBB001-ib-thing.toml": """
        code = "BBB001"
        slug = "ib-thing"
        title = "optional input"
        severity = "critical"
        message = "{port} down"
        why = "w"
        fix = "f"
    """,
    "ib/BBB002-no-check.toml": """
        code = "BBB002"
        slug = "no-check"
        title = "nothing registered"
        severity = "info"
        message = "m"
        why = "w"
        fix = "f"
    """,
}


@pytest.fixture
def catalog(tmp_path):
    for rel, text in RULES.items():
        path = tmp_path / "rules" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return load_catalog(tmp_path / "rules")


@pytest.fixture(autouse=True)
def clean_registry():
    with registry.scoped():
        yield


def register_basic(crash_in: str | None = None):
    seen = {}

    @check("AAA001")
    def aaa001(nvidia_smi_topo_m, params, topology=None):
        seen["AAA001"] = (nvidia_smi_topo_m, topology)
        if crash_in == "AAA001":
            raise ZeroDivisionError("division by zero")
        yield hit("gpu:3", gpu="GPU3", path="SYS", evidence={"source": "nvidia_smi_topo_m", "file": "t.txt", "line_no": 5})

    @check("AAA002")
    def aaa002(params):
        seen["AAA002"] = dict(params)
        if params["minimum"] > 5:
            return hit(value=5)
        return None

    @check("BBB001")
    def bbb001(ibstat=None):
        seen["BBB001"] = ibstat
        return []

    return seen


def codes(outcome):
    return [f.code for f in outcome.findings]


def test_rules_run_with_their_inputs_and_params(catalog):
    seen = register_basic()
    out = run(catalog, {"nvidia_smi_topo_m": "TOPO", "topology": "T", "unused": 1})
    assert seen["AAA001"] == ("TOPO", "T") and seen["AAA002"] == {"minimum": 10, "label": "x"} and seen["BBB001"] is None
    assert out.ran == ("AAA001", "AAA002", "BBB001")
    a, b = out.findings
    assert (a.code, a.slug, a.severity, a.subjects, a.message) == ("AAA001", "needs-topo", Severity.ERROR, ("gpu:3",), "GPU3 is far (SYS)")
    assert a.evidence == (Evidence("nvidia_smi_topo_m", "t.txt", 5),) and (a.why, a.fix) == ("w", "f")
    assert (b.code, b.severity, b.message) == ("AAA002", Severity.WARNING, "5 below 10")
    assert out.exit_code is ExitCode.FINDINGS


def test_missing_required_input_skips_with_reason(catalog):
    seen = register_basic()
    out = run(catalog, {"nvidia_smi_topo_m": None})
    assert "AAA001" not in seen and "AAA001" not in out.ran
    reasons = {s.code: s.reason for s in out.skipped}
    assert reasons["AAA001"] == "needs nvidia_smi_topo_m (not given)"
    assert reasons["BBB002"] == "no check is implemented for this rule"


def test_skip_reason_names_the_source_failure(catalog):
    register_basic()
    problem = InputProblem("nvidia_smi_topo_m", "failed", "timed out after 10 s")
    out = run(catalog, {}, problems=[problem])
    reasons = {s.code: s.reason for s in out.skipped}
    assert reasons["AAA001"] == "needs nvidia_smi_topo_m (source failed: timed out after 10 s)"
    (f,) = [f for f in out.findings if f.code == "SYS001"]
    assert f.message == "nvidia_smi_topo_m could not be collected: timed out after 10 s"
    assert f.subjects == ("source:nvidia_smi_topo_m",)


def test_check_signature_requirement_counts_too(catalog):
    @check("BBB001")
    def bbb001(ibstat):
        return hit(port="mlx5_0/1")

    out = run(catalog, {})
    assert {s.code: s.reason for s in out.skipped}["BBB001"] == "needs ibstat (not given)"
    out = run(catalog, {"ibstat": object()})
    assert codes(out) == ["BBB001"] and out.findings[0].severity is Severity.CRITICAL


def test_a_crashing_check_becomes_sys003_and_the_run_goes_on(catalog):
    seen = register_basic(crash_in="AAA001")
    out = run(catalog, {"nvidia_smi_topo_m": "TOPO"}, fail_on="critical")
    assert "AAA002" in seen and "BBB001" in seen  # the rules after the crash still ran
    crash = [f for f in out.findings if f.code == "SYS003"]
    assert len(crash) == 1
    f = crash[0]
    assert f.slug == "check-crashed" and f.subjects == ("rule:AAA001",)
    assert f.message == "check AAA001 (needs-topo) crashed: ZeroDivisionError: division by zero"
    assert f.evidence[0].source == "topodiag" and f.evidence[0].file.endswith("test_runner.py")
    assert "AAA001" not in codes(out)  # partial output of a crashed check is dropped
    assert out.crashes[0].code == "AAA001" and "ZeroDivisionError" in out.crashes[0].traceback
    assert out.exit_code is ExitCode.INTERNAL  # the warning from AAA002 is below --fail-on critical


def test_findings_win_over_a_crash(catalog):
    register_basic(crash_in="AAA001")
    out = run(catalog, {"nvidia_smi_topo_m": "TOPO"}, fail_on="warning")
    assert "SYS003" in codes(out) and out.exit_code is ExitCode.FINDINGS


def test_bad_output_of_a_check_is_a_crash_too(catalog):
    @check("AAA002")
    def aaa002(params):
        return [hit(value=1), "not a hit"]

    @check("BBB001")
    def bbb001():
        return hit(wrong_name="mlx5_0")  # the template wants {port}

    out = run(catalog, {})
    messages = sorted(f.message for f in out.findings)
    assert messages == [
        "check AAA002 (threshold) crashed: TypeError: check AAA002 produced str, not a Hit or Finding",
        "check BBB001 (ib-thing) crashed: KeyError: 'port'",
    ]


def test_a_check_may_return_findings_or_one_hit(catalog):
    @check("AAA002")
    def aaa002():
        return Finding("AAA002", "threshold", "info", (), "made by hand")

    @check("BBB001")
    def bbb001():
        return hit("nic:mlx5_0", port="mlx5_0/1", severity="info", expectation="best peer port")

    out = run(catalog, {})
    assert [(f.code, f.message, f.severity, f.expectation) for f in out.findings] == [
        ("AAA002", "made by hand", Severity.INFO, None),
        ("BBB001", "mlx5_0/1 down", Severity.INFO, "best peer port"),
    ]
    assert out.exit_code is ExitCode.OK


def test_builtin_rules_from_the_catalog_are_used_when_present(tmp_path, catalog):
    real = Path(__file__).resolve().parents[2] / "rules" / "sys"
    for p in real.glob("*.toml"):
        (catalog.root / "sys").mkdir(exist_ok=True)
        (catalog.root / "sys" / p.name).write_text(p.read_text())
    full = load_catalog(catalog.root)
    out = run(full, {}, problems=[InputProblem("ibstatus", "unparseable", "expected a port block", "ib.txt", 3)])
    (f,) = out.findings
    assert f.code == "SYS002" and f.message == "ib.txt:3: not readable as ibstatus output: expected a port block"
    assert "must not drain a node" not in f.why and "Exit code 3" in f.why  # the catalog's text, not the fallback
    builtin = {r.code for r in full if r.builtin}
    assert builtin == {"SYS001", "SYS002", "SYS003", "SYS004"}  # SYS005 has a check (it reads the topology)
    assert not [s for s in out.skipped if s.code in builtin]  # builtin rules are not "skipped"
    assert out.exit_code is ExitCode.INCOMPLETE
    out = run(full, {}, problems=[InputProblem("ibstatus", "unparseable", "no port block", None, 2)])
    assert out.findings[0].message == "live output line 2: not readable as ibstatus output: no port block"


@pytest.mark.parametrize(
    "select, ignore, expected",
    [
        (None, None, ["AAA001", "AAA002", "BBB001", "BBB002"]),
        ("AAA001", None, ["AAA001"]),
        ("AAA", None, ["AAA001", "AAA002"]),
        ("bbb", None, ["BBB001", "BBB002"]),
        ("threshold,BBB001", None, ["AAA002", "BBB001"]),
        (["AAA00", "BBB002"], None, ["AAA001", "AAA002", "BBB002"]),
        (None, "BBB", ["AAA001", "AAA002"]),
        ("AAA", "AAA002", ["AAA001"]),
        ("AAA001", "AAA", []),
    ],
)
def test_select_and_ignore(catalog, select, ignore, expected):
    chosen = [r.code for r in select_rules(catalog, select, ignore)]
    assert chosen == expected


def test_unknown_selectors_are_usage_errors(catalog):
    with pytest.raises(SelectionError, match=r"--select: 'ZZZ' names no rule .*families: AAA, BBB"):
        select_rules(catalog, "ZZZ")
    with pytest.raises(SelectionError, match="--ignore: 'AAA009'"):
        run(catalog, {}, ignore="AAA009")


def test_tool_health_rules_stay_on_under_select_but_obey_ignore(catalog):
    register_basic(crash_in="AAA001")
    out = run(catalog, {"nvidia_smi_topo_m": "T"}, select="AAA001")
    assert codes(out) == ["SYS003"] and out.ran == ("AAA001",)
    out = run(catalog, {"nvidia_smi_topo_m": "T"}, select="AAA001", ignore="SYS003")
    assert codes(out) == [] and out.crashes and out.exit_code is ExitCode.OK


def test_config_overrides_params_severity_and_enabled(catalog):
    seen = register_basic()
    config = {"AAA002": {"params": {"minimum": 7.5}, "severity": "critical"}, "needs-topo": {"enabled": False}}
    out = run(catalog, {"nvidia_smi_topo_m": "T"}, config=config)
    assert seen["AAA002"] == {"minimum": 7.5, "label": "x"}
    (f,) = out.findings
    assert f.severity is Severity.CRITICAL and f.message == "5 below 7.5"
    assert {s.code: s.reason for s in out.skipped}["AAA001"] == "disabled in the config"


def test_config_severity_wins_over_the_hit(catalog):
    @check("BBB001")
    def bbb001():
        return hit(port="p", severity="info")

    out = run(catalog, {}, config={"BBB001": {"severity": "warning"}})
    assert out.findings[0].severity is Severity.WARNING


@pytest.mark.parametrize(
    "config, message",
    [
        ({"NOPE001": {}}, "config: rules.NOPE001: no such rule"),
        ({"AAA002": {"colour": 1}}, "config: rules.AAA002.colour: unknown key (known: enabled, severity, params)"),
        ({"AAA002": {"params": {"maximum": 1}}}, "config: rules.AAA002.params.maximum: unknown parameter (known: minimum, label)"),
        ({"AAA002": {"params": {"minimum": "ten"}}}, "config: rules.AAA002.params.minimum: 'ten' is not a int like the default 10"),
        ({"AAA002": {"params": {"minimum": True}}}, "config: rules.AAA002.params.minimum: True is not a int"),
        ({"AAA002": {"severity": "fatal"}}, "config: rules.AAA002.severity: unknown severity 'fatal'"),
        ({"AAA002": {"enabled": "no"}}, "config: rules.AAA002.enabled: must be true or false"),
        ({"AAA002": {}, "threshold": {}}, "config: rules.threshold: AAA002 configured twice"),
        ({"AAA002": 3}, "config: rules.AAA002: must be a table"),
    ],
)
def test_config_errors_are_one_line(catalog, config, message):
    with pytest.raises(ConfigError) as info:
        run(catalog, {}, config=config)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_deadline_skips_the_rest(catalog, monkeypatch):
    register_basic()
    clock = iter([0.0, 0.0, 5.0, 5.0, 5.0, 5.0])
    monkeypatch.setattr(runner_mod.time, "monotonic", lambda: next(clock))
    out = run(catalog, {"nvidia_smi_topo_m": "T"}, deadline_s=1)
    assert out.ran == ("AAA001",)
    assert {s.code: s.reason for s in out.skipped}["AAA002"] == "run deadline of 1 s reached"


# --- exit codes, one test each (docs/architecture.md: findings win over 4 and 3) ---------------------------

def _f(code, severity="error"):
    return Finding(code, "s", severity, (), "m")


def test_exit_ok():
    assert exit_code_for([]) is ExitCode.OK
    assert exit_code_for([_f("AAA001", "warning")]) is ExitCode.OK


def test_exit_findings_at_or_above_fail_on():
    assert exit_code_for([_f("AAA001", "error")]) is ExitCode.FINDINGS
    assert exit_code_for([_f("AAA001", "warning")], Severity.WARNING) is ExitCode.FINDINGS
    assert exit_code_for([_f("AAA001", "critical")], None) is ExitCode.OK  # --fail-on never


def test_exit_incomplete_for_a_failed_input():
    assert exit_code_for([_f("SYS001")]) is ExitCode.INCOMPLETE
    assert exit_code_for([_f("SYS002", "critical")], Severity.INFO) is ExitCode.INCOMPLETE  # never counts to fail_on


def test_exit_internal_for_a_crash():
    assert exit_code_for([_f("SYS001"), _f("SYS003")]) is ExitCode.INTERNAL


def test_exit_findings_win_over_internal_and_incomplete():
    assert exit_code_for([_f("SYS003"), _f("SYS001"), _f("AAA001")]) is ExitCode.FINDINGS


def test_run_exit_codes_end_to_end(catalog):
    register_basic()
    assert run(catalog, {}, fail_on="error").exit_code is ExitCode.OK  # AAA002 warning only
    assert run(catalog, {}, fail_on="warning").exit_code is ExitCode.FINDINGS
    assert run(catalog, {}, problems=[InputProblem("ibstat", "failed", "rc 1")]).exit_code is ExitCode.INCOMPLETE
    out = run(catalog, {}, fail_on="never")
    assert out.exit_code is ExitCode.OK and out.summary() == {
        "findings": {"info": 0, "warning": 1, "error": 0, "critical": 0},
        "rules_run": 2, "rules_skipped": 2, "fail_on": None, "exit_code": 0,
    }


def test_helpers():
    assert split_codes(" TOPO, NVL001 ,,") == ("TOPO", "NVL001")
    assert split_codes(["IB", "NCCL001,PERF"]) == ("IB", "NCCL001", "PERF")
    assert split_codes(None) == ()
    assert parse_fail_on("Warning") is Severity.WARNING and parse_fail_on("none") is None
    with pytest.raises(ValueError):
        parse_fail_on("loud")
    with pytest.raises(ValueError):
        InputProblem("ibstat", "exploded", "x")


# --- the registry ------------------------------------------------------------------------------

def test_registry_rejects_bad_codes_duplicates_and_star_args():
    with pytest.raises(ValueError, match="letters then three digits"):
        check("topo1")

    @check("ZZZ001")
    def one():
        pass

    with pytest.raises(ValueError, match="registered twice"):
        @check("ZZZ001")
        def two():
            pass

    with pytest.raises(ValueError, match="plain named parameter"):
        @check("ZZZ002")
        def star(*inputs):
            pass

    spec = registry.get("ZZZ001")
    assert spec.code == "ZZZ001" and spec.func is one and spec.inputs == ()


def test_registry_spec_splits_inputs():
    @check("ZZZ003")
    def f(topology, params, rule, ibstat=None):
        pass

    spec = registry.get("ZZZ003")
    assert spec.required == ("topology",) and spec.optional == ("ibstat",) and spec.wants == ("params", "rule")


def test_scoped_restores_the_registry():
    before = registry.registered()
    with registry.scoped():
        @check("ZZZ004")
        def f():
            pass

        assert "ZZZ004" in registry.registered()
    assert registry.registered() == before
    registry.unregister("ZZZ999")  # unknown: no error


def test_alternatives_in_requires_are_met_by_any_one(tmp_path):
    path = tmp_path / "rules" / "ib" / "CCC001-any-ib.toml"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent("""
        code = "CCC001"
        slug = "any-ib"
        title = "any IB tool"
        severity = "error"
        requires = ["topology", "ibstat|ibv_devinfo"]
        message = "m"
        why = "w"
        fix = "f"
    """))
    cat = load_catalog(tmp_path / "rules")
    calls = []

    @check("CCC001")
    def ccc001(topology):
        calls.append(topology)

    out = run(cat, {"topology": "T", "ibv_devinfo": "parsed"})
    assert out.ran == ("CCC001",) and calls == ["T"]
    out = run(cat, {"topology": "T"})
    assert {s.code: s.reason for s in out.skipped}["CCC001"] == "needs one of ibstat, ibv_devinfo (not given)"
    out = run(cat, {"topology": "T"}, problems=[InputProblem("ibstat", "failed", "timed out after 5 s")])
    assert {s.code: s.reason for s in out.skipped}["CCC001"] == (
        "needs one of ibstat, ibv_devinfo (ibstat source failed: timed out after 5 s)")


def test_each_file_of_a_source_runs_the_check_once_and_names_its_file(catalog):
    from topodiag.engine import Each

    got = []

    @check("AAA001")
    def aaa001(nvidia_smi_topo_m, params):
        got.append(nvidia_smi_topo_m)
        yield hit("gpu:0", gpu=nvidia_smi_topo_m, path="SYS", evidence=[Evidence("nvidia_smi_topo_m", None, 7),
                                                                         Evidence("other", None, 1)])

    out = run(catalog, {"nvidia_smi_topo_m": Each.of([("A", "a.txt"), ("B", "b.txt")])}, select="AAA001")
    assert got == ["A", "B"] and out.ran == ("AAA001",)
    assert [f.message for f in out.findings] == ["A is far (SYS)", "B is far (SYS)"]
    assert [f.evidence for f in out.findings] == [
        (Evidence("nvidia_smi_topo_m", "a.txt", 7), Evidence("other", None, 1)),
        (Evidence("nvidia_smi_topo_m", "b.txt", 7), Evidence("other", None, 1))]
    assert run(catalog, {"nvidia_smi_topo_m": Each.of([])}, select="AAA001").ran == ()


def test_a_rule_only_with_tags_runs_when_asked_for_by_tag_or_code():
    """GPU003 (the prolog's view of the kernel log) runs in the prolog (tags=prolog) and when selected
    by code or family, not in a full check, where GPU001 already reports the same GPUs."""
    from topodiag.engine.catalog import load_catalog

    full = load_catalog()
    assert full.find("GPU003").only_with_tags and not full.find("GPU001").only_with_tags
    codes = lambda **kw: {r.code for r in select_rules(full, **kw)}  # noqa: E731
    assert "GPU003" not in codes() and "GPU001" in codes()
    assert "GPU003" in codes(tags="prolog") and "GPU001" not in codes(tags="prolog")
    assert "GPU003" in codes(select="GPU003") and "GPU003" in codes(select="GPU")  # by code or family
    assert "GPU003" not in codes(select="IB")


def test_only_with_tags_must_be_a_boolean_and_needs_tags(tmp_path):
    from topodiag.engine.catalog import CatalogError, load_rule

    base = ('code = "ZZZ901"\nslug = "x"\ntitle = "x"\nseverity = "info"\nmessage = "x"\nwhy = "x"\nfix = "x"\n')
    for extra, words in (('only_with_tags = "yes"\ntags = ["a"]\n', "true or false"),
                         ("only_with_tags = true\n", "needs tags")):
        p = tmp_path / "ZZZ901-x.toml"
        p.write_text(base + extra)
        with pytest.raises(CatalogError, match=words):
            load_rule(p)


def test_a_capability_is_met_by_any_input_that_gives_it_and_its_skip_names_them(tmp_path):
    """requires = ["nic.port_state"]: met by ibstat, ibv_devinfo, ibstatus, rdma_link or the sysfs probe
    (the merge modules' PROVIDES / FILLS); the skip names the fact and every input that gives it."""
    (tmp_path / "rules" / "ccc").mkdir(parents=True)
    (tmp_path / "rules" / "ccc" / "CCC001-cap.toml").write_text(textwrap.dedent("""\
        code = "CCC001"
        slug = "cap"
        title = "t"
        severity = "error"
        requires = ["nic.port_state"]
        message = "m"
        why = "w"
        fix = "f"
    """))
    cat = load_catalog(tmp_path / "rules")

    @check("CCC001")
    def ccc001(topology):
        return None

    for source in ("ibstat", "ibv_devinfo", "ibstatus", "rdma_link", "sysfs_infiniband"):
        assert run(cat, {"topology": "T", source: "parsed"}).ran == ("CCC001",)
    out = run(cat, {"topology": "T", "kernel_log": "parsed", "nccl_debug": "parsed"})
    assert out.ran == ()
    reason = {s.code: s.reason for s in out.skipped}["CCC001"]
    assert reason == ("needs nic.port_state (from ibstat, ibv_devinfo, ibstatus, rdma_link or sysfs_infiniband): "
                      "not given")
    assert runner_mod.describe_requires("nic.port_state") == (  # explain names the tools too
        "nic.port_state (from ibstat, ibv_devinfo (ibv_devinfo -v), ibstatus, rdma_link (rdma link show) or "
        "sysfs_infiniband (python -m topodiag.live.sysfs_probe))")
    out = run(cat, {"topology": "T"}, problems=[InputProblem("ibstatus", "failed", "timed out after 5 s")])
    assert {s.code: s.reason for s in out.skipped}["CCC001"].endswith(": ibstatus source failed: timed out after 5 s")


def test_a_skip_keeps_the_capabilities_it_lacks_and_the_checklist_names_them():
    from topodiag.engine import load_checks
    from topodiag.engine.checklist import checklist

    load_checks()
    out = run(load_catalog(Path(__file__).resolve().parents[2] / "rules", examples=False), {"topology": "T"},
              select="PERF,IB001")
    skipped = {s.code: s for s in out.skipped}
    assert skipped["PERF001"].needs == ("nccl.busbw",) and skipped["PERF004"].needs == ("nccl.pair_busbw",)
    assert skipped["IB001"].needs == ("nic.port_state",)
    assert set(skipped["PERF001"].to_dict()) == {"code", "slug", "reason"}  # the report's form is unchanged
    row = next(r for r in checklist(out) if r.symptom == "step time far above expectation")
    assert row.state == "not checked" and row.fact.endswith("(needs nccl.busbw, nccl.pair_busbw)")
