"""Reports where people put them: the README's recipes run as written (Prometheus textfile, HTML for a
ticket, JSON for a pipeline, the slurm.conf prolog snippet), `--output` written atomically whatever
the verdict, text by default, every command's text within 80 columns with nothing cut, completion
of option values, and the report's schema shipped with the package."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 (pyproject.toml: tomli there)
    import tomli as tomllib  # type: ignore[no-redef]
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
MAN = (ROOT / "man" / "topodiag.1").read_text()
HOSTS = ROOT / "fixtures" / "hosts"
B300 = HOSTS / "b300-rails-disabled"  # seven IB001 ports down: a node with findings
HEALTHY_PROM = """# HELP topodiag_findings Findings per rule.
# TYPE topodiag_findings gauge
topodiag_findings{code="IB001",slug="ib-port-down",severity="error"} 0
topodiag_exit_code 0
"""


def _sh_blocks(section: str) -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", section, re.S)


def _run_sh(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """A README recipe through sh, with `topodiag` being this checkout."""
    bin_dir = cwd / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "topodiag"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m topodiag \"$@\"\n")
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", "PYTHONPATH": str(ROOT)}
    env.pop("TOPODIAG_FORMAT", None)
    return subprocess.run(["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


# -- the Prometheus recipe, end to end on a node with findings --------------------------------------

def test_the_prometheus_recipe_publishes_a_node_with_findings_and_leaves_no_temp_file(tmp_path):
    """The recipe the README gave before (`> f.$$ && mv`) never published on a node with findings:
    check exits 1, the && skipped the rename, the healthy metrics stayed and a temp file was left."""
    section = README.split("## Monitoring and Slurm", 1)[1].split("\n## ", 1)[0]
    [recipe] = [b for b in _sh_blocks(section) if "--format prometheus" in b]
    assert "--output /var/lib/node_exporter/textfile/topodiag.prom" in recipe
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    target = textfile / "topodiag.prom"
    target.write_text(HEALTHY_PROM)  # the last run's, when the node was healthy
    # as written, but this node's inputs come from the recorded B300 (no GPU or HCA here)
    script = recipe.replace("/var/lib/node_exporter/textfile", str(textfile)) \
                   .replace("topodiag check ", f"topodiag check --from {B300} ")
    res = _run_sh(script, tmp_path)
    assert res.returncode == ExitCode.FINDINGS, res.stderr  # cron sees the verdict ...
    text = target.read_text()  # ... and the metrics are published all the same
    assert 'topodiag_findings{code="IB001",slug="ib-port-down",severity="error"} 7' in text
    assert "topodiag_exit_code 1" in text and HEALTHY_PROM not in text
    assert sorted(p.name for p in textfile.iterdir()) == ["topodiag.prom"]  # no temp file left


def test_output_leaves_the_old_file_and_no_temp_file_when_rendering_fails(tmp_path, monkeypatch):
    import topodiag.render.prometheus as prometheus

    target = tmp_path / "topodiag.prom"
    target.write_text(HEALTHY_PROM)

    def broken(diagnosis, stream, **options):
        stream.write("half a fi")
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(prometheus, "render", broken)
    res = CliRunner().invoke(app, ["check", "--from", str(B300), "--format", "prometheus", "--output", str(target)])
    assert res.exit_code != 0 and isinstance(res.exception, RuntimeError)
    assert target.read_text() == HEALTHY_PROM and sorted(p.name for p in tmp_path.iterdir()) == ["topodiag.prom"]


def test_output_into_a_missing_directory_is_one_line_and_exit_3(tmp_path):
    res = CliRunner().invoke(app, ["check", "--from", str(B300), "--output", str(tmp_path / "no\x1b[2J" / "r.txt")])
    assert res.exit_code == ExitCode.INCOMPLETE
    assert res.stderr.startswith("topodiag: error: ") and "cannot write the report" in res.stderr
    assert "\x1b" not in res.stderr and res.stderr.count("\n") == 1  # the path's escape shown, not acted on


@pytest.mark.parametrize("argv", [
    ["parse", "fixtures/ibstat/{ib}", "--format", "json"],
    ["show", "--from", "fixtures/hosts/b300-rails-disabled", "--format", "json"],
    ["plan", "--from", "fixtures/hosts/hgx-h100-healthy-assembled"],
    ["fleet", "fixtures/hosts/b300-rails-disabled", "fixtures/hosts/hgx-h100-healthy-assembled"],
])
def test_every_report_command_takes_output(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(ROOT)
    ib = sorted(p.name for p in (ROOT / "fixtures" / "ibstat").glob("*.txt"))[0]
    argv = [a.replace("{ib}", ib) for a in argv]
    shown = CliRunner().invoke(app, argv)
    target = tmp_path / "report"
    written = CliRunner().invoke(app, argv + ["--output", str(target)])
    assert written.exit_code == shown.exit_code and written.stdout == ""
    assert _same_but_times(target.read_text()) == _same_but_times(shown.stdout)


def _same_but_times(text: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "T", text)


# -- HTML for a ticket, JSON for a pipeline ----------------------------------------------------------

def _check_recipes() -> list[str]:
    section = README.split("## `topodiag check --from PATH...`", 1)[1].split("\n## ", 1)[0]
    lines = [ln.split("#", 1)[0].strip() for b in _sh_blocks(section) for ln in b.splitlines()]
    return [ln for ln in lines if "--output" in ln]


def test_the_ticket_and_pipeline_recipes_as_written(tmp_path):
    html_recipe, json_recipe = _check_recipes()
    assert html_recipe == "topodiag check --from ticket-1234.tar.gz --format html --output ticket-1234.html"
    bundle = HOSTS / "hgx-h100-nvlink-xids-assembled"
    res = _run_sh(html_recipe.replace("ticket-1234.tar.gz", str(bundle)), tmp_path)
    assert res.returncode == ExitCode.FINDINGS and res.stdout == ""
    page = (tmp_path / "ticket-1234.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "generated (UTC)" in page
    out = tmp_path / "var" / "tmp"
    out.mkdir(parents=True)
    script = json_recipe.replace("/var/tmp", str(out)).replace("topodiag check ", f"topodiag check --from {bundle} ")
    assert _run_sh(script, tmp_path).returncode == ExitCode.FINDINGS
    report = json.loads((out / "topodiag.json").read_text())
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(report)
    assert report["schema_version"] == 4 and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", report["generated_at"])
    assert report["command"].startswith(f"topodiag check --from {bundle} --format json --output ")
    assert report["collected_at"] is None  # the fixture bundle's manifest records no time


def test_json_says_when_the_bundle_was_collected_and_which_versions(tmp_path):
    import shutil

    bundle = tmp_path / "b"
    shutil.copytree(HOSTS / "roce-macvlan-pods", bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["created"] = "2026-11-30T08:15:00Z"
    manifest["facts"] = {"hostname": "x", "kernel": "5.15.0-105-generic", "ofed": "MLNX_OFED_LINUX-23.10-1.1.9.0"}
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    report = json.loads(CliRunner().invoke(app, ["check", "--from", str(bundle), "--format", "json"]).stdout)
    assert report["collected_at"] == "2026-11-30T08:15:00Z"
    # the NCCL log of this scenario says "NCCL version 2.13.4+cuda11.3" (checked by hand); the
    # kernel and OFED version are the manifest's facts, as collect writes them
    assert report["versions"] == {"cuda": "11.3", "nccl": "2.13.4", "ofed": "MLNX_OFED_LINUX-23.10-1.1.9.0",
                                  "kernel": "5.15.0-105-generic"}
    text = CliRunner().invoke(app, ["check", "--from", str(bundle)]).stdout
    head = " ".join(text.split("\n\n")[0].split())
    assert "collected 2026-11-30T08:15:00Z" in head and "kernel 5.15.0-105-generic" in head
    manifest["created"] = "last Tuesday"  # not a time collect writes: not claimed
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    report = json.loads(CliRunner().invoke(app, ["check", "--from", str(bundle), "--format", "json"]).stdout)
    assert report["collected_at"] is None


# -- text by default --------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["check", "--from", str(B300)], ["fleet", str(B300), str(HOSTS / "v100-nvlinks-down")]])
def test_a_pipe_gets_text_json_only_when_asked(argv):
    assert not CliRunner().invoke(app, argv).stdout.lstrip().startswith("{")
    asked = CliRunner().invoke(app, argv, env={"TOPODIAG_FORMAT": "json"})
    assert json.loads(asked.stdout)
    assert "TOPODIAG_FORMAT" in MAN.split(".SH ENVIRONMENT", 1)[1].split(".SH FILES", 1)[0]


# -- 80 columns, nothing cut --------------------------------------------------------------------------

def _commands() -> list[list[str]]:
    topo = sorted((ROOT / "fixtures" / "nvidia_smi_topo_m").glob("*.txt"))[0]
    runs = sorted((ROOT / "fixtures" / "nccl_tests").glob("*.txt"))[:2]
    scenarios = [p for p in sorted(HOSTS.iterdir()) if p.is_dir()]
    out = [["check", "--from", str(p)] for p in scenarios]
    out += [["check", "--from", str(B300), "-v"], ["parse", str(topo)], ["parse", "--list"], ["rules"],
            ["explain", "IB001"], ["explain", "GPU001"], ["show", "--from", str(HOSTS / "hgx-h100-healthy-assembled")],
            ["plan", "--from", str(HOSTS / "hgx-h100-healthy-assembled")], ["compare", *map(str, runs)],
            ["fleet", *map(str, scenarios[:6])]]
    return out


@pytest.mark.parametrize("argv", _commands(), ids=lambda a: " ".join(Path(x).name for x in a)[:60])
def test_every_commands_text_fits_80_columns(argv):
    res = CliRunner().invoke(app, argv, env={"COLUMNS": "80"})
    assert res.exit_code in (0, 1, 3), res.output
    lines = res.stdout.splitlines()
    assert lines and max(len(ln) for ln in lines) <= 80, [ln for ln in lines if len(ln) > 80][:3]


@pytest.mark.parametrize("host", [p for p in sorted(HOSTS.iterdir()) if p.is_dir()], ids=lambda p: p.name)
def test_no_finding_is_cut(host):
    """Each finding's message ends in the text report (wrapped, never cut with "...")."""
    import topodiag

    d = topodiag.diagnose([str(host)])
    flat = " ".join(CliRunner().invoke(app, ["check", "--from", str(host)], env={"COLUMNS": "80"}).stdout.split())
    for f in d.findings:
        tail = " ".join(f.message.split())[-40:]
        assert tail in flat, (f.code, tail)


def test_collects_summary_fits_80_columns():
    from topodiag.cli.collect import collected_line
    from topodiag.live.collection import Record

    records = [Record(f"source_{i}", "not_available", None, reason=f"tool_{i} is not installed (not on PATH)")
               for i in range(30)]
    text = collected_line(records)
    assert max(len(ln) for ln in text.splitlines()) <= 80 and "source_29: tool_29 is not installed" in " ".join(text.split())


# -- the slurm.conf snippet ---------------------------------------------------------------------------

def _conf(text: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in text.splitlines() if ln and not ln.startswith("#") and "=" in ln)


@pytest.mark.parametrize("where", ["README", "man"])
def test_the_slurm_conf_snippet_parses_and_gives_the_prolog_time(where):
    if where == "README":
        [block] = re.findall(r"```ini\n(# slurm\.conf\nProlog=.+?)```", README, re.S)
        [script] = re.findall(r"```sh\n(#!/bin/sh\n# /etc/slurm/prolog\.d/topodiag\.sh.+?)```", README, re.S)
    else:
        text = MAN.replace("\\-", "-")
        block, script = re.search(r"# slurm\.conf\n(.+?)\n\n# /etc/slurm/prolog\.d/topodiag\.sh\n(.+?)\n\.fi",
                                  text, re.S).groups()
    conf = _conf(block)
    assert conf["Prolog"].startswith("/") and "Alloc" in conf["PrologFlags"].split(",")
    deadline = float(re.search(r"topodiag prolog .*--deadline (\d+)", script).group(1))
    assert int(conf["PrologEpilogTimeout"]) > deadline  # Slurm never kills a check bounded by its own deadline
    assert re.search(r"^PATH=.*/usr/bin.*\nexport PATH$", script, re.M)  # slurmd gives a prolog no search path


# -- completion of option values -----------------------------------------------------------------------

@pytest.mark.parametrize("words, expected", [
    ("topodiag check --fail-on ", {"info", "warning", "error", "critical", "never"}),
    ("topodiag check --select IB00", {"IB001", "IB002"}),
    ("topodiag check --profile dgx-h", {"dgx-h100"}),
    ("topodiag parse x --source nvidia_smi_to", {"nvidia_smi_topo_m"}),
    ("topodiag check --format ", {"text", "json", "prometheus", "html"}),
    ("topodiag rules --family NV", {"NVL"}),
    ("topodiag explain GPU00", {"GPU001", "GPU002"}),
    ("topodiag prolog --fail-on w", {"warning"}),
])
def test_completion_offers_option_values(words, expected):
    res = CliRunner().invoke(app, [], prog_name="topodiag", env={
        "_TOPODIAG_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split(" ")) - 1)})
    assert expected <= set(res.output.split()), res.output


def test_completion_of_a_comma_separated_list_completes_its_last_item():
    from topodiag.cli import complete

    assert "IB001,NVL001" in complete.rules("IB001,NVL00") and complete.levels("cr") == ["critical"]


# -- the schema in the package --------------------------------------------------------------------------

def test_the_report_schema_is_shipped_in_the_wheel():
    from topodiag.render import json_report

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"]["docs/report.schema.json"] == f"topodiag/{json_report.PACKAGED_SCHEMA}"
    assert "docs/report.schema.json" in project["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    path = json_report.schema_path()
    assert path.is_file() and json.loads(path.read_text())["$defs"]["report"]["properties"]["schema_version"][
        "const"] == json_report.SCHEMA_VERSION


def test_the_built_wheel_holds_the_schema(tmp_path, monkeypatch):
    """Build the wheel from this tree (hatchling, the project's build backend; the C scanner not
    compiled) and read the schema back out of it: the same bytes as docs/report.schema.json."""
    import zipfile

    builders = pytest.importorskip("hatchling.builders.wheel")
    monkeypatch.setenv("TOPODIAG_NO_COMPILE", "1")
    [wheel] = list(builders.WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"]))
    with zipfile.ZipFile(wheel) as z:
        assert z.read("topodiag/report.schema.json") == (ROOT / "docs" / "report.schema.json").read_bytes()
        assert "topodiag/render/json_report.py" in z.namelist()
