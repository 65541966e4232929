"""ibstatus: the facts each corpus file's `#@ expected:` line states, and the edge cases of the format."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, ibstatus
from tests.fixtures_index import FIXTURES


def load(name: str) -> str:
    return blank_provenance_header((FIXTURES / "ibstatus" / name).read_text())


def test_sysfs_missing_is_zero_cas_plus_the_error() -> None:
    text = load("ibstatus-error-no-sysfs-01.txt")
    assert detect(text) == "ibstatus"
    r = ibstatus.parse(text)
    assert r.cas == ()
    [err] = r.errors
    assert err.line_no == 7
    assert "sys files not found (/sys/class/infiniband/*/ports)" in err.text


def test_roce_ethernet_blocks_with_ib_rate_names() -> None:
    r = ibstatus.parse(load("ibstatus-roce-ethernet-100g-01.txt"))
    assert [c.name for c in r.cas] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    for ca in r.cas[:2]:
        [p] = ca.ports
        assert (p.link_layer, p.base_lid, p.sm_lid) == ("Ethernet", 0, 0)
        assert (p.state, p.state_raw, p.physical_state, p.physical_state_raw) == ("Active", "4: ACTIVE", "LinkUp", "5: LinkUp")
        assert p.rate_gbps == 100.0 and p.rate_raw == "100 Gb/sec (4X EDR)"
    assert r.cas[0].ports[0].default_gid == "fe80:0000:0000:0000:8ae9:a4ff:fe9c:7f1a"
    last = r.cas[2].ports[0]  # fragment: only the gid line survived
    assert last.default_gid.endswith("fe77:0b48") and last.state is None


def test_two_ports_of_one_device_old_kernel() -> None:
    r = ibstatus.parse(load("ibstatus-invented-mlx4-two-ports-no-link-layer-01.txt"))
    [ca] = r.cas
    p1, p2 = ca.ports
    assert (p1.port, p1.rate_gbps, p1.base_lid, p1.sm_lid, p1.link_layer) == (1, 56.0, 3, 1, "InfiniBand")
    assert (p2.port, p2.state, p2.physical_state, p2.rate_gbps, p2.rate_raw) == (2, "Down", "Polling", None, None)


def test_fatal_no_devices() -> None:
    r = ibstatus.parse("Fatal error:  No devices\n")
    assert r.cas == () and r.errors[0].text == "Fatal error:  No devices"


def test_crlf_tabs_and_ansi() -> None:
    text = load("ibstatus-roce-ethernet-100g-01.txt")
    base = ibstatus.parse(text)
    assert ibstatus.parse(text.replace("\n", "\r\n")).cas == base.cas
    assert ibstatus.parse(text.replace("        ", "\t")).cas == base.cas
    assert ibstatus.parse("\x1b[0m" + text).cas == base.cas


def test_bad_lid_is_refused_with_its_line() -> None:
    with pytest.raises(ParseError) as info:
        ibstatus.parse("Infiniband device 'mlx5_0' port 1 status:\n\tbase lid:\t 0xzz\n")
    assert info.value.line_no == 2


@pytest.mark.parametrize("text,line_no", [("", 0), ("CA 'mlx5_0'\n\tCA type: MT4129\n", 1), ("Fatal error: disk full\n", 1)])
def test_empty_or_foreign_text_is_refused(text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as info:
        ibstatus.parse(text)
    assert info.value.line_no == line_no


def test_sniff() -> None:
    assert ibstatus.sniff("Infiniband device 'mlx5_0' port 1 status:\n") == 0.9
    assert ibstatus.sniff("CA 'mlx5_0'\n\tCA type: MT4129\n") == 0


def test_streaming_form_matches() -> None:
    text = load("ibstatus-roce-ethernet-100g-01.txt")
    assert ibstatus.parse_lines(iter(text.splitlines(keepends=True))) == ibstatus.parse(text)
