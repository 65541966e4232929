"""Device names from inputs reached the terminal raw (render/text.py legend, the `show` table, `parse
--format text`): a sysfs probe JSON naming its CAs `mlx5_7<ESC>[2J` and `mlx5_5<NUL>` cleared the
screen of whoever ran `check --format text`. Every renderer of text now shows control characters as
their escapes (render/sanitise.py), as host names already were."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from topodiag.bundle import redact
from topodiag.cli.app import app
from topodiag.parsers import base

from ._evil_names import evil_sysfs

RAW = ("\x1b", "\x00", "\r", "\u2028", "\u202e")


@pytest.mark.parametrize("args", [["check", "--from", "{f}", "--format", "text"], ["show", "--from", "{f}"],
                                  ["parse", "{f}", "--format", "text"]])
def test_no_control_character_from_an_input_reaches_the_terminal(tmp_path, args):
    path = str(evil_sysfs(tmp_path / "sysfs.json"))
    done = CliRunner().invoke(app, [a.replace("{f}", path) for a in args])
    assert done.exit_code in (0, 1, 3), done.output  # 3: the sysfs tree shows GPUs that no input checked (SYS005)
    for raw in RAW:
        assert raw not in done.stdout, (raw, args[0])
    assert "mlx5_5\\x1b[2J" in done.stdout and "mlx5_3\\x00" in done.stdout


def test_one_ansi_pattern():
    assert redact._ANSI_RE is base.ANSI_RE
