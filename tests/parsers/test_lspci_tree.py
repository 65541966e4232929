"""lspci -t / -tv: parents and bus ranges from the drawing; and PCI001 with a grepped -vvv paste."""

from __future__ import annotations

import pytest

from topodiag.checks import pci
from topodiag.parsers import ParseError, lspci_tree, lspci_vvv

TREE = """\
-+-[0000:00]-+-00.0  Intel Corporation Device 09a2
 |           +-02.1-[04-10]----00.0-[05-10]--+-00.0-[06]----00.0  NVIDIA Corporation GH100 [H100 SXM5 80GB]
 |           |                               +-02.0-[07]----00.0  Mellanox Technologies MT2910 Family [ConnectX-7]
 |           |                               \\-03.0-[08]--
 |           \\-03.0
 \\-[0000:80]-+-01.0-[81]--+-00.0  NVIDIA Corporation GH100 [H100 SXM5 80GB]
             |            \\-00.1  NVIDIA Corporation Device 22a3
             \\-02.0
"""


def test_parents_ranges_and_names():
    r = lspci_tree.parse(TREE)
    by = {d.bdf: d for d in r.devices}
    assert r.roots == ("0000:00", "0000:80")
    assert by["0000:04:00.0"].parent == "0000:00:02.1" and (by["0000:04:00.0"].secondary, by["0000:04:00.0"].subordinate) == (5, 16)
    assert by["0000:06:00.0"].parent == "0000:05:00.0" and by["0000:06:00.0"].name.endswith("[H100 SXM5 80GB]")
    assert by["0000:07:00.0"].parent == "0000:05:02.0"
    assert (by["0000:05:03.0"].secondary, by["0000:05:03.0"].subordinate) == (8, 8)
    assert by["0000:00:03.0"].parent is None and by["0000:81:00.1"].parent == "0000:80:01.0"
    assert by["0000:80:02.0"].parent is None
    assert len(r.devices) == 13


def test_single_domain_form_and_a_prompt():
    r = lspci_tree.parse("$ lspci -t\n-[0000:00]-+-00.0\n           +-01.0-[01]----00.0\n           \\-1f.3\n")
    assert [d.bdf for d in r.devices] == ["0000:00:00.0", "0000:00:01.0", "0000:01:00.0", "0000:00:1f.3"]
    assert lspci_tree.sniff("-[0000:00]-+-00.0\n") == 0.9


@pytest.mark.parametrize("text", ["", "00:01.0 PCI bridge: Intel\n", "GPU0 X NV18\n", "+-\n|\n\\-\n"])
def test_not_a_tree(text):
    with pytest.raises(ParseError):
        lspci_tree.parse(text)


def test_the_tree_places_a_grepped_acs_paste():
    """A -vvv paste grepped to a switch port's ACS line (no "Bus:" line, no GPU or NIC block): alone it
    cannot say what the port separates; with the tree, the downstream port above the GPU lies between
    that GPU and the NIC on the next port, and the finding names both ends."""
    grepped = lspci_vvv.parse("$ sudo lspci -vvv -s 05:00.0 | grep ACSCtl\n"
                              "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n")
    alone = list(pci.acs_redirect(grepped))
    assert [h.variant for h in alone] == ["unplaced"]
    [h] = list(pci.acs_redirect(grepped, lspci_tree=lspci_tree.parse(TREE)))
    assert h.variant == "default" and {"pci:0000:06:00.0", "pci:0000:07:00.0"} <= set(h.subjects)
