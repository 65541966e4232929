"""Prometheus label values (topodiag/render/prometheus.py): only backslash, double quote and newline
were escaped, so a CA named "mlx5_1<CR><LF>evil 1" gave a CR in the textfile: a reader with
universal newlines (Python's open()) saw a broken sample, and prometheus_client's parser raised
"Invalid value". NUL, ESC and U+2028 passed raw too."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from topodiag.cli.app import app
from topodiag.render.prometheus import _escape, _num

from ._evil_names import EVIL, evil_sysfs


def test_label_values_with_control_characters_parse_and_act_on_nothing(tmp_path):
    done = CliRunner().invoke(app, ["check", "--from", str(evil_sysfs(tmp_path / "sysfs.json")),
                                    "--format", "prometheus"])
    text = done.stdout
    assert done.exit_code in (0, 1, 3), done.output  # 3: the sysfs tree shows GPUs that no input checked (SYS005)
    for raw in ("\r", "\x00", "\x1b", "\u2028", "\u202e"):
        assert raw not in text
    assert text.splitlines() == text.split("\n")[:-1]  # universal newlines see the same lines
    devices = {s.labels["device"] for fam in text_string_to_metric_families(text) for s in fam.samples
               if "device" in s.labels}
    assert "mlx5_1\\r\nevil 1" in devices and "mlx5_3\\x00" in devices and "mlx5_5\\x1b[2J" in devices
    assert not any(name in devices for name in EVIL.values())


def test_escape_and_numbers():
    assert _escape('a"b\\c\nd\re') == 'a\\"b\\\\c\\nd\\\\re'
    assert (_num(float("inf")), _num(float("-inf")), _num(float("nan")), _num(10 ** 400)) == ("+Inf", "-Inf", "NaN", "+Inf")
