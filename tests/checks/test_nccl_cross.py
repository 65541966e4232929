"""NCCL004 with the node's other inputs (issue 26 item 3): an IB verbs failure beside an ACS redirect
or a NIC link that went down, an NVLS/fabric failure beside the GPUs' fabric state, is one finding that
names both sources."""

from __future__ import annotations

from pathlib import Path

import topodiag

FX = Path(__file__).resolve().parents[2] / "fixtures"


def _nccl004(paths) -> list:
    return [f for f in topodiag.diagnose([str(p) for p in paths]).findings if f.code == "NCCL004"]


def test_completion_error4_beside_acs_redirect_names_both():
    """NVIDIA/nccl#523's own situation: completion status 4 (local protection) and ACSCtl ReqRedir+ on
    the bridges (the lspci grep of that thread); the completion finding says the ACS redirect is there."""
    found = _nccl004([FX / "nccl_debug/nccl-warn-ib-completion-error4-h100-01.log",
                      FX / "lspci_vvv/lspci-acsctl-grep-nccl523-redirect-error4-01.txt"])
    completion = [f for f in found if "completion" in f.message.lower()]
    assert completion and all("ACS redirects peer traffic on" in f.message and "PCI001" in f.message
                              for f in completion)
    alone = _nccl004([FX / "nccl_debug/nccl-warn-ib-completion-error4-h100-01.log"])
    assert not any("ACS redirects" in f.message for f in alone)


def test_an_nvls_failure_beside_a_fabric_not_completed_names_both(tmp_path):
    """An NVLS failure line (INVENTED here from the NCCL catalogue's entry "Could not find NIC for rank
    %d in NVLS graph", with NCCL's prefix) beside the real `nvidia-smi -q` of a fabric In Progress."""
    log = tmp_path / "nvls.log"
    log.write_text("#@ source: INVENTED for this test from an NCCL catalogue entry\n#@ ---\n"
                   "node1:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
                   "node1:100:100 [0] NCCL WARN Could not find NIC for rank 3 in NVLS graph\n")
    found = _nccl004([log, FX / "nvidia_smi_q/nvidia-smi-q-fabric-in-progress-na-01.txt"])
    assert found and any("the same fault seen from the fabric side" in f.message and "In Progress" in f.message
                         for f in found), [f.message for f in found]
    assert not any("fabric side" in f.message for f in _nccl004([log]))
