"""The generic text view of parsed data: tables for records, bullets for long lists."""

from topodiag.render.parsed_text import render


def test_scalars_tables_and_nesting() -> None:
    data = {
        "source": "ibstat",
        "cas": [
            {"name": "mlx5_0", "firmware": "28.39", "unused": None,
             "ports": [{"port": 1, "state": "Active", "rate_gbps": 400.0}]},
            {"name": "mlx5_1", "firmware": "28.39", "unused": None, "ports": []},
        ],
        "errors": [],
        "ok": True,
    }
    assert render(data) == (
        "source: ibstat\n"
        "cas (2):\n"
        "  name    firmware\n"
        "  mlx5_0  28.39\n"
        "  mlx5_1  28.39\n"
        "  [mlx5_0]\n"
        "    ports (1):\n"
        "      port  state   rate_gbps\n"
        "      1     Active  400\n"
        "errors: -\n"
        "ok: yes\n"
    )


def test_long_and_nested_lists_become_bullets() -> None:
    notes = ["line 8: elision marker '....': output not shown in full", "line 9: GPU 3 UUID redacted"]
    out = render({"notes": notes, "channels": [[{"kind": "gpu", "dev": 0}, {"kind": "net", "dev": 1}]]})
    assert out == (
        "notes (2):\n"
        "  - line 8: elision marker '....': output not shown in full\n"
        "  - line 9: GPU 3 UUID redacted\n"
        "channels (1):\n"
        "  - gpu:0, net:1\n"
    )
