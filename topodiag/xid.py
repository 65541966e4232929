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


def grade(xid: int) -> str:
    return XIDS.get(xid, ("unknown", ""))[0]


def name(xid: int) -> str:
    return XIDS.get(xid, ("unknown", "not in topodiag's table: see NVIDIA's Xid catalogue"))[1]
