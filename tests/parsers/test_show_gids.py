"""show_gids: the facts each corpus file's `#@ expected:` line states, and the edge cases of the format."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, ibstat, ibv_devinfo, show_gids
from tests.fixtures_index import FIXTURES


def load(name: str) -> str:
    return blank_provenance_header((FIXTURES / "show_gids" / name).read_text())


def roce_v2_ipv4(table) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for row in table.rows:
        if row.ipv4 and row.type == "RoCE v2":
            out.setdefault(row.device, []).append(row.index)
    return out


def test_8nic_pod_roce_v2_ipv4_is_index_7() -> None:
    text = load("show_gids-roce-8nic-01.txt")
    assert detect(text) == "show_gids"
    [table] = show_gids.parse(text).tables
    assert {r.device for r in table.rows} == {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}
    assert roce_v2_ipv4(table) == {"mlx5_0": [7], "mlx5_1": [7], "mlx5_2": [7]}  # mlx5_3 cut before index 6
    link_local = [r for r in table.rows if r.device == "mlx5_0" and r.index in (4, 5)]
    assert [(r.ipv4, r.version) for r in link_local] == [(None, "v1"), (None, "v2")]
    assert table.rows[2].ipv4 == "10.156.129.132" and table.rows[2].netdev == "net1"
    assert table.n_gids_found is None  # fragment


def test_macvlan_pods_are_two_tables_with_different_indexes() -> None:
    r = show_gids.parse(load("show_gids-roce-macvlan-pods-01.txt"))
    first, second = r.tables
    assert [(x.index, x.ipv4, x.version) for x in first.rows] == [(4, "172.20.1.1", "v1"), (5, "172.20.1.1", "v2")]
    assert [(x.index, x.ipv4, x.version) for x in second.rows] == [(6, "172.20.1.2", "v1"), (7, "172.20.1.2", "v2")]
    assert roce_v2_ipv4(first) == {"mlx5_4": [5]} and roce_v2_ipv4(second) == {"mlx5_4": [7]}


def test_complete_output_counts() -> None:
    [table] = show_gids.parse(load("show_gids-readme-1nic-complete-01.txt")).tables
    assert table.n_gids_found == 4 == len(table.rows)
    assert roce_v2_ipv4(table) == {"mlx5_0": [3]}


def test_space_aligned_and_crlf_and_comment_prefixed() -> None:
    text = ("# DEV     PORT    INDEX   GID                                     IPv4            VER     DEV\r\n"
            "# ---     ----    -----   ---                                     ------------    ---     ---\r\n"
            "# mlx5_0  1       0       fe80:0000:0000:0000:ec0d:9a03:00ca:2f4c                 v1\r\n"
            "# n_gids_found=1\r\n")
    [table] = show_gids.parse(text).tables
    [row] = table.rows
    assert (row.device, row.index, row.version, row.netdev, table.n_gids_found) == ("mlx5_0", 0, "v1", None, 1)


def test_truncated_row_is_skipped() -> None:
    text = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\nmlx5_0\t1\t0\tfe80:0000:0000:0000:0ac0:eb"
    assert show_gids.parse(text).tables[0].rows == ()


@pytest.mark.parametrize("text,line_no", [("", 0), ("CA 'mlx5_0'\n\tCA type: MT4129\n", 1)])
def test_empty_or_foreign_text_is_refused(text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as info:
        show_gids.parse(text)
    assert info.value.line_no == line_no


def test_other_ib_parsers_do_not_claim_show_gids() -> None:
    text = load("show_gids-roce-8nic-01.txt")
    assert ibstat.sniff(text) == 0 and ibv_devinfo.sniff(text) == 0
