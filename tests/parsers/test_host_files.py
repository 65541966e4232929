"""/proc/cmdline and /proc/modules (lsmod): the forms people paste, what they are not."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, detect, proc_cmdline, proc_modules


@pytest.mark.parametrize("text,on,pt,off", [
    ("BOOT_IMAGE=/vmlinuz-5.15.0 root=UUID=0b1 ro intel_iommu=on quiet\n", ("intel_iommu=on",), False, False),
    ("BOOT_IMAGE=/vmlinuz-5.15.0 root=UUID=0b1 ro intel_iommu=on iommu=pt\n", ("intel_iommu=on",), True, False),
    ('GRUB_CMDLINE_LINUX="amd_iommu=off quiet splash"\n', (), False, True),
    ("BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro intel_iommu=on,sm_on\n", ("intel_iommu=on,sm_on",), False, False),
])
def test_iommu_modes(text, on, pt, off):
    r = proc_cmdline.parse(text)
    assert (r.iommu.vendor_on, r.iommu.passthrough, r.iommu.off) == (on, pt, off)


def test_cmdline_refuses_other_text():
    with pytest.raises(ParseError):
        proc_cmdline.parse("GPU0 GPU1 CPU Affinity\n")


def test_modules_from_proc_and_lsmod():
    proc = "nv_peer_mem 16384 0 - Live 0x0000000000000000\nib_core 462848 8 rdma_cm, Live 0x0\nnvidia 56332288 2 nv_peer_mem, Live 0x0\n"
    r = proc_modules.parse(proc)
    assert r.peer_memory == ("nv_peer_mem",) and r.nvidia and r.ib
    lsmod = "Module                  Size  Used by\nnvidia_uvm           1437696  0\nnvidia              56332288  1 nvidia_uvm\n"
    r = proc_modules.parse(lsmod)
    assert r.peer_memory == () and r.modules == ("nvidia_uvm", "nvidia")
    assert detect(lsmod) == "proc_modules"


def test_modules_do_not_claim_nccl_tests_rows():
    rows = "  1073741824     268435456     float     sum      -1   4800.0  223.69  391.46      0\n" * 4
    assert detect(rows) != "proc_modules"
    with pytest.raises(ParseError):
        proc_modules.parse(rows)
