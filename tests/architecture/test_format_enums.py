"""The --format choices of check and show are made from the render registry (issue 32: five format
lists kept by hand): every choice renders a registered format, and every registered format but the
prolog's slurm line is offered by a command."""

from __future__ import annotations

from topodiag.cli.check import ReportFormat
from topodiag.cli.show import ShowFormat
from topodiag.render import FORMATS, OFFERED, format_enum


def test_every_offered_format_is_registered():
    for command, offered in OFFERED.items():
        assert set(offered.values()) <= set(FORMATS), command
    assert set(FORMATS) - {f for offered in OFFERED.values() for f in offered.values()} == {"slurm"}


def test_the_cli_choices_are_the_registry_s():
    assert [m.value for m in ReportFormat] == list(OFFERED["check"])
    assert [m.value for m in ShowFormat] == list(OFFERED["show"])
    assert ReportFormat("json") == "json" and ReportFormat.html.value == "html"


def test_format_enum_is_a_str_enum_per_command():
    enum = format_enum("show", "X")
    assert enum.json == "json" and isinstance(enum.dot, str) and OFFERED["show"][enum.json.value] == "topology-json"
