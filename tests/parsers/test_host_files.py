"""/proc/modules (lsmod): the forms people paste, what they are not."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, detect, proc_modules


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
