"""IB011 software-rdma, and the link layer inferred for a port that prints none (issue 10)."""

from __future__ import annotations

import pytest

from topodiag import parsers
from topodiag.engine import Severity
from tests.checks.test_ib import NDR, findings

RXE_DEVINFO = "fixtures/ibv_devinfo/ibv_devinfo-rxe-dev-46-soft-roce-rxe0-no-link-layer-01.txt"
RXE_LINK = "fixtures/rdma_link/rdma_link-soft-roce-rxe-one-port-01.txt"
SIW_RXE = "fixtures/rdma_link/rdma_link-invented-details-siw-rxe-caps-01.txt"

_RENAMED = """\
hca_id:\troce0
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t0.0.0
\tnode_guid:\t\t\t428d:5cff:fe35:bb12
\tsys_image_guid:\t\t\t0000:0000:0000:0000
\tvendor_id:\t\t\t0x0000
\tvendor_part_id:\t\t\t0
\thw_ver:\t\t\t\t0x0
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tsm_lid:\t\t\t0
\t\t\tport_lid:\t\t0
"""


def test_ib011_soft_roce_from_ibv_devinfo_is_info():
    [f] = findings("IB011", RXE_DEVINFO)
    assert (f.severity, list(f.subjects)) == (Severity.INFO, ["nic:rxe0"])
    assert "rxe0 is Soft RoCE (rxe)" in f.message and "not an RDMA NIC" in f.message


def test_ib011_from_rdma_link_names_the_netdev_and_each_software_device():
    [f] = findings("IB011", RXE_LINK)
    assert list(f.subjects) == ["nic:rxe_0"] and "over p1p1" in f.message
    subjects = sorted(s for f in findings("IB011", SIW_RXE) for s in f.subjects)
    assert "nic:mlx5_0" not in subjects and len(subjects) >= 2


def test_ib011_vendor_zero_firmware_zero_is_software_whatever_its_name():
    [f] = findings("IB011", inline={"ibv_devinfo": _RENAMED})
    assert list(f.subjects) == ["nic:roce0"] and "vendor id 0, firmware 0.0.0" in f.message


def test_ib011_hardware_hcas_give_nothing():
    assert findings("IB011", NDR) == []


@pytest.mark.parametrize("state,inferred", [("PORT_ACTIVE (4)", "Ethernet"), ("PORT_DOWN (1)", None)])
def test_active_port_without_link_layer_or_port_guid_infers_ethernet_from_the_node_guid(state, inferred):
    """ibv_devinfo without -v prints no port GUID: an Active port with lid 0 / SM lid 0 on a CA whose node
    GUID is MAC-derived is Ethernet (an Active InfiniBand port has a LID); a Down one is left unknown."""
    r = parsers.get("ibv_devinfo").parse(_RENAMED.replace("PORT_ACTIVE (4)", state))
    assert r.cas[0].ports[0].link_layer == inferred
    assert [i.link_layer for i in r.inferred] == ([inferred] if inferred else [])
