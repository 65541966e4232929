"""NVIDIA Xid codes: what each means and how grave it is for the node (frozen data, no imports that cost).

From NVIDIA's Xid catalogue ("Xid Errors", docs.nvidia.com/deploy/xid-errors, R535-R580 editions):
the code, its short name, who is usually at fault and the action the catalogue gives. The grade is
topodiag's reading of that action for a cluster node: "app" (the job's own error: the GPU is fine),
"watch" (the GPU is healthy but degrading or recovering by itself), "reset" (the GPU needs a reset or
the node a reboot before the next job), "lost" (the GPU is gone from the bus or unusable: drain and
service it). An Xid not in the table is "unknown": the finding says to look it up.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

# code -> (grade, short name)
XIDS: Mapping[int, tuple[str, str]] = MappingProxyType({
    13: ("app", "graphics engine exception (illegal instruction or address in the job's kernel)"),
    31: ("app", "GPU memory page fault (the job read or wrote an unmapped address)"),
    43: ("app", "GPU stopped processing (the job's context was killed)"),
    45: ("app", "preemptive cleanup after a previous error (its cause is the Xid before it)"),
    48: ("reset", "double-bit ECC error (uncorrectable memory error)"),
    61: ("reset", "internal micro-controller breakpoint / warning"),
    62: ("reset", "internal micro-controller halt"),
    63: ("watch", "ECC page retirement or row remapping recorded"),
    64: ("reset", "ECC page retirement or row remapping failed"),
    68: ("app", "video decoder exception"),
    69: ("app", "graphics engine class error"),
    74: ("reset", "NVLink error (a link went down or reported a fatal error)"),
    79: ("lost", "GPU has fallen off the bus (no longer answers on PCIe)"),
    92: ("watch", "high single-bit ECC error rate"),
    94: ("reset", "contained ECC error (the affected job was killed; reset when idle)"),
    95: ("lost", "uncontained ECC error (every job on the GPU is affected; reset required)"),
    109: ("app", "context switch timeout"),
    119: ("reset", "GSP RPC timeout (the GPU System Processor stopped answering)"),
    120: ("reset", "GSP error"),
    121: ("watch", "C2C link corrected error"),
    140: ("reset", "unrecovered ECC error"),
    143: ("lost", "GPU initialisation failure"),
    144: ("reset", "NVLink SAW error"),
    145: ("reset", "NVLink RLW error"),
    146: ("reset", "NVLink TLW error"),
    147: ("reset", "NVLink TREX error"),
    148: ("reset", "NVLink NVLPW_CTRL error"),
    149: ("reset", "NVLink NETIR error"),
    150: ("reset", "NVLink MSE error"),
    154: ("reset", "GPU recovery action changed (the driver asks for a reset, reboot or drain)"),
})

GRADE_ORDER = ("app", "watch", "unknown", "reset", "lost")

# Recorded now, applied at the GPU's next reset: Xid 63 on A100 and later is a row remap that stays
# pending until the GPU is reset (NVIDIA's GPU memory error management: "a GPU reset applies pending
# remaps"); a job started before that reset runs on the row that failed. After a reset (or a driver
# reload) the event is history.
PENDING_UNTIL_RESET = frozenset({63})


def blocks_job(xid: int, action: "str | None" = None) -> bool:
    """Whether this Xid, seen since the GPU's last reset, means the GPU must not take a new job: the
    catalogue's "reset" and "lost" grades, a pending row remap (PENDING_UNTIL_RESET), and Xid 154 by the
    action it names ("GPU Reset Required", "Node Reboot Required", "Drain P2P"...: yes; "None": no;
    an action the line does not say: yes, as its grade)."""
    if xid == 154 and action is not None:
        return action.strip().lower() != "none"
    return grade(xid) in ("reset", "lost") or xid in PENDING_UNTIL_RESET


def grade(xid: int) -> str:
    return XIDS.get(xid, ("unknown", ""))[0]


def name(xid: int) -> str:
    return XIDS.get(xid, ("unknown", "not in topodiag's table: see NVIDIA's Xid catalogue"))[1]


# NVSwitch SXids (the nvidia-nvswitch driver's "SXid (PCI:...): N, ..." lines), from the Fabric Manager
# user guide's SXid tables (DU-09883-001). Most lines say their own gravity ("N, Fatal, Link 30 LTSSM
# Fault Up" / "N, Non-fatal, Link 32 ..."); a line that prints only "N, Data {...}" is graded by the
# code: the single-bit ECC SXids the switch corrects by itself are "correctable"; the others are
# "unknown" (look them up). Grades: fatal > nonfatal > unknown > correctable.
SXID_CORRECTABLE = frozenset({11012, 11021, 11022, 11023, 12021, 12023, 15008, 15011, 19049, 19055, 19057,
                              19059, 19062, 19065, 19068, 19071, 24001})
# Classed non-fatal by the guide, yet its impact is "GPU NVLink traffic will be stalled, and the
# subsequent GPU access will hang" with a restart to recover: graded fatal here whatever the line says.
SXID_STALLING = frozenset({11004, 12028})
SXID_NAMES: Mapping[int, str] = MappingProxyType({
    11004: "ingress invalid ACL: NVLink traffic through the port stalls until reset",
    12028: "egress non-posted PRIV error: NVLink traffic through the port stalls until reset",
    20034: "LTSSM fault up (the NVLink went down)",
    22013: "minion link DLREQ interrupt",
    **{c: "single-bit ECC error, corrected by the switch" for c in (11012, 11021, 11022, 11023, 12021, 12023,
                                                                   15008, 15011, 19049, 19055, 19057, 19059,
                                                                   19062, 19065, 19068, 19071, 24001)},
})
SXID_GRADE_ORDER = ("correctable", "unknown", "nonfatal", "fatal")


def sxid_grade(sxid: int, text: str) -> str:
    """The gravity of one SXid line: its own word ("Fatal" / "Non-fatal") when it prints one, else by the code."""
    if sxid in SXID_STALLING:
        return "fatal"
    after = text.split(f"): {sxid},", 1)[1][:24].strip().lower() if f"): {sxid}," in text else ""
    if after.startswith(("non-fatal", "nonfatal", "non fatal")):
        return "correctable" if sxid in SXID_CORRECTABLE else "nonfatal"
    if after.startswith("fatal"):
        return "fatal"
    return "correctable" if sxid in SXID_CORRECTABLE else "unknown"


def sxid_name(sxid: int) -> str:
    return SXID_NAMES.get(sxid, "see the SXid tables of NVIDIA's Fabric Manager user guide")
