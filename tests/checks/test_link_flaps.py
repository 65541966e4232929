"""IB009: link flaps counted per port inside a time window, from the kernel log's mlx5 lines."""

from __future__ import annotations

from topodiag.checks import link_flaps
from topodiag.engine import Severity
from topodiag.parsers.kernel_log import parse

PARAMS = {"window_s": 600, "min_changes": 3, "error_changes": 10}


def flaps(text: str, **params):
    return list(link_flaps.ib009(parse(text), {**PARAMS, **params}))


def test_ib_port_states_are_read_as_changes():
    log = parse("[ 9.1] mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT\n"
                "[ 9.8] mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE\n"
                "[ 50.0] mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN\n")
    assert [(e.device, e.netdev, e.state, e.time_s) for e in log.link_events] == [
        ("0000:ab:00.0", "mlx5_5", "up", 9.8), ("0000:ab:00.0", "mlx5_5", "down", 50.0)]


def test_changes_spread_over_hours_are_no_flap():
    text = "".join(f"[{t:8.1f}] mlx5_core 0000:3b:00.0 ib0: Link {'down' if i % 2 == 0 else 'up'}\n"
                   for i, t in enumerate((100.0, 4000.0, 9000.0, 15000.0)))
    assert flaps(text) == []


def test_the_worst_window_is_counted_and_ten_changes_are_an_error():
    quiet = "[  10.0] mlx5_core 0000:3b:00.0 ib0: Link up\n"
    burst = "".join(f"[{5000 + 20 * i:8.1f}] mlx5_core 0000:3b:00.0 ib0: Link {'down' if i % 2 == 0 else 'up'}\n"
                    for i in range(10))
    [h] = flaps(quiet + burst)
    assert h.values["count"] == 10 and h.values["downs"] == 5 and h.values["span"] == "180 s"
    assert h.severity == Severity.ERROR and tuple(h.subjects) == ("pci:0000:3b:00.0",)
    [h] = flaps(quiet + "".join(burst.splitlines(True)[:4]))
    assert h.values["count"] == 4 and h.severity is None  # the rule's default: warning


def test_ports_are_judged_apart():
    text = ("[1.0] mlx5_core 0000:3b:00.0 ib0: Link down\n[2.0] mlx5_core 0000:3b:00.1 ib1: Link down\n"
            "[3.0] mlx5_core 0000:3b:00.0 ib0: Link up\n[4.0] mlx5_core 0000:3b:00.1 ib1: Link up\n")
    assert flaps(text) == []


def test_lines_without_time_stamps_count_as_one_span():
    text = "kernel: mlx5_core 0000:01:00.1 eth1: Link up\n" * 3
    [h] = flaps(text)
    assert h.values["count"] == 3 and "no time stamps" in h.values["span"]
