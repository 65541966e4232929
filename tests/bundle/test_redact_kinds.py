"""One test per identifier-kind module of topodiag/bundle/redact/, on lines of the project's
fixtures (each named by its file), with the tokens worked out by hand from each kind's rule: tokens
are handed out in order of first sight, per kind, from a fresh Redactor."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from topodiag.bundle.redact import Redactor, hostnames_in
from topodiag.bundle.redact import core, ipv4, text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
JOBSTEP_MLX5_7 = ("sysfs/hgx-h100-jobstep-2of8/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.0/0000:c2:01.0/"
                  "0000:c4:00.0/infiniband/mlx5_7")


def _line(rel: str, needle: str) -> str:
    """The first line of fixtures/<rel> (its `#@` header left out) that holds needle."""
    lines = (FIXTURES / rel).read_text(encoding="utf-8").splitlines()
    return next(ln for ln in lines if needle in ln and not ln.startswith("#@"))


def test_people_home_directories_and_email_addresses() -> None:
    py = _line("nccl_debug/nccl-catalogue-nvls-cuda-invalid-argument-01.log", "/home/kw2501")
    r = Redactor()
    assert r.redact(py) == py.replace("/home/kw2501/", "/home/user-0001/")
    assert r.mapping()["user kw2501"] == "user-0001"
    mail = _line("nvidia_bug_report/nvidia-bug-report-assembled-gpu-fallen-off-bus-01.log", "linux-bugs@")
    assert mail.strip() == "or by sending email to 'linux-bugs@nvidia.com'."
    assert Redactor().redact(mail) == mail.replace("linux-bugs@nvidia.com", "user-0001@domain-01.invalid")
    # the prompt's host (found by hostnames_in) is the host pass's, and so is the home directory named
    # as the host here: a '#' right after a name does not end a user name of HOME_RE
    prompt = _line("hosts/roce-lossy-discards-assembled/commands/mlnx_qos.txt", "mlnx_qos -i ens6")
    assert prompt.rstrip() == "root@centos12:/home/centos12# mlnx_qos -i ens6"
    hosts = hostnames_in({"commands/mlnx_qos.txt": prompt + "\n"})
    assert hosts == {"centos12"}
    assert Redactor(hosts).redact(prompt) == prompt.replace("centos12", "host-0001")
    assert Redactor().redact("cd /home/centos12/x") == "cd /home/user-0001/x"  # with no host: a user's home
    assert Redactor().redact("cd /home/root/x /home/nobody") == "cd /home/root/x /home/nobody"  # kept users


def test_people_slurm_node_lists_one_token_per_value() -> None:
    # invented for a test (the shape of Slurm's environment; no fixture prints one)
    r = Redactor()
    assert r.redact("SLURM_JOB_NODELIST=gpu[01-04],login7\n") == "SLURM_JOB_NODELIST=nodelist-01\n"
    assert r.redact('SLURM_NODELIST: "gpu[01-04],login7"') == 'SLURM_NODELIST: "nodelist-01"'
    assert r.redact("SLURM_JOB_NODELIST=gpu05") == "SLURM_JOB_NODELIST=nodelist-02"


def test_serials_of_lspci_vpd_and_of_a_sysfs_file_named_for_one() -> None:
    rel = "lspci_vvv/lspci-vvv-s-asus-esc8000a-e12-gpus-cx7-raid-01.txt"
    first, second = _line(rel, "MT24216006W0"), _line(rel, "MT24426016T3")
    r = Redactor()
    # twelve characters each: the tokens keep the width, digits only, in order of first sight
    assert r.redact(first) == first.replace("MT24216006W0", "000000000001")
    assert r.redact(second) == second.replace("MT24426016T3", "000000000002")
    assert r.redact(first) == first.replace("MT24216006W0", "000000000001")  # the same serial, the same token
    # a file named for a serial is redacted whole (no label in it); elsewhere the bare value stays
    assert r.redact("MT24426016T3\n", member="sys/class/dmi/id/board_serial") == "000000000002\n"
    assert r.redact("MT24426016T3\n", member="sys/class/dmi/id/board_name") == "MT24426016T3\n"


def test_lids_of_sysfs_files_named_lid_and_sm_lid() -> None:
    lid = (FIXTURES / JOBSTEP_MLX5_7 / "ports/1/lid").read_text()
    sm_lid = (FIXTURES / JOBSTEP_MLX5_7 / "ports/1/sm_lid").read_text()
    assert (lid, sm_lid) == ("0x2b\n", "0x1\n")
    r = Redactor()
    assert r.redact(lid, member="sys/class/infiniband/mlx5_7/ports/1/lid") == "0x1\n"
    # sm_lid 0x1 is a new LID: the next token is 2 (1 is taken, and never a LID's own value)
    assert r.redact(sm_lid, member="sys/class/infiniband/mlx5_7/ports/1/sm_lid") == "0x2\n"
    assert r.redact(lid, member="sys/class/infiniband/mlx5_7/ports/1/rate") == lid  # no LID by its name
    assert r.mapping()["lid 43"] == "lid 1" and r.mapping()["lid 1"] == "lid 2"


def test_guids_one_token_for_the_colon_0x_and_byte_forms() -> None:
    node_guid = (FIXTURES / JOBSTEP_MLX5_7 / "node_guid").read_text()
    assert node_guid == "a088:c203:0074:cd54\n"
    r = Redactor()
    # 16 significant hex digits, not a MAC-derived (ff:fe) id: a, then the counter, at that width
    assert r.redact(node_guid) == "a000:0000:0000:0001\n"
    assert r.redact("\tNode GUID: 0xa088c2030074cd54") == "\tNode GUID: 0xa000000000000001"
    # invented for a test: the same id as EUI-64 colon bytes
    assert r.redact("a0:88:c2:03:00:74:cd:54") == "a0:00:00:00:00:00:00:01"
    assert r.mapping() == {"0xa088c2030074cd54": "0xa000000000000001"}


def test_ipv4_addresses_kept_and_mapped() -> None:
    rel = "rdma_link/rdma_link-roce-cx6dx-two-ports-trailing-space-01.txt"
    lo, en01 = _line(rel, "inet 127.0.0.1/8"), _line(rel, "inet 192.168.56.106")
    r = Redactor()
    assert r.redact(lo) == lo  # loopback
    # the subnet's broadcast address names the site's network as much as the host's: both mapped
    assert r.redact(en01) == en01.replace("192.168.56.106", "198.18.0.1").replace("192.168.56.255", "198.18.0.2")
    m = ipv4.Ipv4Map()
    assert [m.token(int.from_bytes(bytes(a), "big")) for a in ((255, 255, 240, 0), (224, 0, 0, 251), (0, 0, 0, 0))] == [
        0xFFFFF000, 0xE00000FB, 0]  # a netmask, multicast and the unspecified address are kept
    assert m.token(0xA9FE0307) == 0xA9FE0001  # 169.254.3.7 stays link-local: 169.254.0.1


def test_macs_keep_separators_and_the_broadcast_address() -> None:
    ether = _line("rdma_link/rdma_link-roce-cx6dx-two-ports-trailing-space-01.txt", "link/ether")
    assert ether.strip() == "link/ether 9c:63:c0:c5:47:a4 brd ff:ff:ff:ff:ff:ff"
    assert Redactor().redact(ether) == ether.replace("9c:63:c0:c5:47:a4", "02:00:00:00:00:01")


def test_the_pass_order_reads_an_ipv4_in_an_ipv6_address_once() -> None:
    # IPv6 before IPv4: ::ffff:a.b.c.d goes through the IPv4 map once, and the placeholder it leaves
    # is not read again by the IPv4 pass; the bare address gets the same token
    assert core.PASSES.index(core.redact_ipv6) < core.PASSES.index(core.redact_ipv4)
    assert Redactor().redact("::ffff:10.1.2.3 and 10.1.2.3") == "::ffff:198.18.0.1 and 198.18.0.1"


def test_placeholders_and_right_aligned_columns() -> None:
    hold, restore = text.placeholders()
    held = hold("host-0001") + " " + hold("198.18.0.1")
    assert len(held) == 5 and restore(held) == "host-0001 198.18.0.1"
    assert text.fit("   ", "1719", "1") == "      1"  # the column's right edge stays
    assert text.fit("   ", "7", "12") == "  12"  # a longer token takes a blank from the left
    assert text.case("0002C903", "000a0001") == "000A0001"


# -- the hex form of an IPv6 address, on every Python ---------------------------------------------

@settings(max_examples=3000, deadline=None)
@given(n=st.one_of(st.integers(0, (1 << 128) - 1), st.integers(0, (1 << 32) - 1).map(lambda v: (0xFFFF << 32) | v),
                   st.lists(st.sampled_from([0, 0, 0, 1, 0xFFFF, 0xABC]), min_size=8, max_size=8)
                   .map(lambda gs: int("".join(f"{g:04x}" for g in gs), 16))))
def test_hex_text_is_ipaddress_hex(n: int) -> None:
    """redact/ipv6.py `hex_text` is what `ipaddress` prints where it prints hex (every address before
    Python 3.13; all but the IPv4-mapped ones from 3.13, which it prints dotted): the same text,
    exploded and compressed, and never a dot."""
    import ipaddress
    import sys

    from topodiag.bundle.redact.ipv6 import hex_text

    addr = ipaddress.IPv6Address(n)
    for exploded in (True, False):
        text = hex_text(n, exploded)
        assert "." not in text and int(ipaddress.IPv6Address(text)) == n
        if sys.version_info < (3, 13) or addr.ipv4_mapped is None:
            assert text == (addr.exploded if exploded else addr.compressed)


def test_hex_text_hand_checked() -> None:
    """An IPv4-mapped GID as show_gids prints it, compressed as an ip command would; runs of zeros."""
    from topodiag.bundle.redact.ipv6 import hex_text

    mapped = (0xFFFF << 32) | 0xC6120001  # ::ffff:198.18.0.1
    assert hex_text(mapped, True) == "0000:0000:0000:0000:0000:ffff:c612:0001"
    assert hex_text(mapped) == "::ffff:c612:1"
    assert hex_text(0) == "::" and hex_text(1) == "::1" and hex_text(1 << 112) == "1::"
    assert hex_text(int("1" + "0000" * 2 + "0001" + "0000" * 3 + "0001", 16)) == "1:0:0:1::1"  # the first of two runs
    assert hex_text(int("0001" * 8, 16)) == "1:1:1:1:1:1:1:1"
    assert hex_text(int("0001" + "0000" + "0001" * 6, 16)) == "1:0:1:1:1:1:1:1"  # one zero group is kept
