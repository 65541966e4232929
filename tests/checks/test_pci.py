"""PCI001/PCI002 from lspci -vvv: ACS redirect placed with the GPUs/NICs below a bridge, links."""

from __future__ import annotations

from topodiag.checks import pci
from topodiag.engine import Severity
from topodiag.parsers.lspci_vvv import parse

SWITCH = """0000:16:02.0 PCI bridge: PLX Technology, Inc. PEX 89104 PCIe Gen 5 Switch (rev b0)
	Bus: primary=16, secondary=18, subordinate=19, sec-latency=0
		ACSCtl:	SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
0000:18:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM not supported
		LnkSta:	Speed 2.5GT/s (downgraded), Width x16 (ok)
0000:19:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]
		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM not supported
		LnkSta:	Speed 32GT/s (ok), Width x8 (downgraded)
0000:20:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
"""


def test_a_redirecting_bridge_is_named_with_the_gpu_and_nic_below_it():
    [h] = list(pci.pci001(parse(SWITCH)))
    assert h.variant == "default" and h.severity is None  # the rule's own: error
    assert list(h.subjects) == ["pci:0000:16:02.0", "pci:0000:18:00.0", "pci:0000:19:00.0"]
    assert h.values["gpus"] == 1 and h.values["nics"] == 1


def test_acs_off_is_quiet_and_a_bridge_with_nothing_known_below_is_a_warning():
    assert list(pci.pci001(parse(SWITCH.replace("ReqRedir+ CmpltRedir+", "ReqRedir- CmpltRedir-")))) == []
    lone = "0000:80:01.0 PCI bridge: Intel Corporation Device 352a (rev 04)\n\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"
    [h] = list(pci.pci001(parse(lone)))
    assert h.variant == "unplaced" and h.severity == Severity.WARNING and "no_gpu" in h.notes


def test_links_width_is_a_fault_speed_of_a_gpu_is_information():
    found = {h.subjects[0]: h for h in pci.pci002(parse(SWITCH))}
    assert found["pci:0000:19:00.0"].severity == Severity.ERROR  # the NIC at x8 of x16
    gpu = found["pci:0000:18:00.0"]
    assert gpu.severity == Severity.INFO and "idle_gpu" in gpu.notes  # 2.5 GT/s at idle
