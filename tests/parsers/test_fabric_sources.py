"""The nvidia_smi_q, fabricmanager and peermem parsers beyond their fixture pairs: a whole report with
GPU lines and PCIe link info, bad input with its line, module lists."""

from __future__ import annotations

import pytest

from topodiag.errors import ParseError
from topodiag.parsers import fabricmanager, nvidia_smi_q, peermem

# invented: the layout of nvidia-smi -q (R550+) for two GPUs, trimmed
REPORT = """
==============NVSMI LOG==============

Timestamp                                 : Mon Jul  1 10:00:00 2024
Driver Version                            : 550.90.07
CUDA Version                              : 12.4

Attached GPUs                             : 2
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Serial Number                         : 1652923456789
    GPU UUID                              : GPU-6328b923-c487-281a-fd27-291f5d278893
    PCI
        Bus                               : 0x18
        Bus Id                            : 00000000:18:00.0
        GPU Link Info
            PCIe Generation
                Max                       : 5
                Current                   : 5
            Link Width
                Max                       : 16x
                Current                   : 8x
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 0
        ClusterUUID                       : 00000000-0000-0000-0000-000000000000
        Health
            Bandwidth                     : Full

GPU 00000000:2A:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    PCI
        Bus Id                            : 00000000:2A:00.0
        GPU Link Info
            PCIe Generation
                Max                       : 5
                Current                   : 1
            Link Width
                Max                       : 16x
                Current                   : 16x
    Fabric
        State                             : In Progress
        Status                            : N/A
"""


def test_whole_report():
    r = nvidia_smi_q.parse(REPORT)
    assert (r.driver_version, r.cuda_version, r.attached_gpus) == ("550.90.07", "12.4", 2)
    a, b = r.gpus
    assert a.bus_id == "00000000:18:00.0" and a.serial == "1652923456789" and a.uuid.startswith("GPU-6328")
    assert (a.pcie.max_gen, a.pcie.current_gen, a.pcie.max_width, a.pcie.current_width) == (5, 5, 16, 8)
    assert (a.fabric.state, a.fabric.status, a.fabric.clique_id) == ("Completed", "Success", "0")
    assert a.fabric.health == {"bandwidth": "Full"}
    assert (b.index, b.bus_id, b.pcie.current_gen, b.fabric.state) == (1, "00000000:2A:00.0", 1, "In Progress")
    assert nvidia_smi_q.sniff(REPORT) > 0.9


def test_grep_of_several_fabric_blocks_is_several_gpus():
    text = "    Fabric\n        State : In Progress\n--\n    Fabric\n        State : Completed\n        Status : Success\n"
    r = nvidia_smi_q.parse(text)
    assert [g.fabric.state for g in r.gpus] == ["In Progress", "Completed"]


def test_crlf_and_not_the_tool():
    assert nvidia_smi_q.parse(REPORT.replace("\n", "\r\n")).gpus[1].fabric.state == "In Progress"
    with pytest.raises(ParseError) as e:
        nvidia_smi_q.parse("\nhello world\nfoo : bar\n")
    assert e.value.line_no == 2


def test_fabricmanager_state_words():
    assert fabricmanager.parse("active\n").state == "active"
    r = fabricmanager.parse("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
                            "     Active: failed (Result: exit-code) since Mon 2024-07-01 10:00:00 UTC\n")
    assert (r.state, r.state_line) == ("failed", 2)
    assert fabricmanager.parse("Unit nvidia-fabricmanager.service could not be found.\n").unit_missing
    with pytest.raises(ParseError):
        fabricmanager.parse("\n\nsomething else\n")


def test_peermem_proc_modules_and_lsmod():
    proc = ("nvidia_uvm 1437696 0 - Live 0x0000000000000000 (POE)\n"
            "nvidia 56512512 1 nvidia_uvm, Live 0x0000000000000000 (POE)\n"
            "ib_core 434176 8 rdma_cm,ib_uverbs, Live 0x0000000000000000\n")
    r = peermem.parse(proc)
    assert (r.full_list, r.peer_absent, r.nvidia_loaded, r.ib_core_loaded) == (True, True, True, True)
    r = peermem.parse(proc + "nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)\n")
    assert (r.peer_absent, r.peer_module, r.peer_line) == (False, "nvidia_peermem", 4)
    r = peermem.parse("$ ls /sys/kernel/mm/memory_peers/\nnv_mem\n")
    assert (r.memory_peers, r.peer_absent) == (("nv_mem",), False)
    r = peermem.parse("$ lsmod | grep mlx5\nmlx5_ib 397312 0\n")
    assert r.peer_absent is None  # a grep that could not have shown the module says nothing
    with pytest.raises(ParseError):
        peermem.parse("nothing here\n")
