"""Parser for `nvidia-smi nvlink -info` (NVLink encryption state and NVLink firmware versions).

A real mode: NVIDIA's nvidia-smi release notes add "Device NVLINK Encryption status" and "Nvlink Firmware
Version info" to 'nvidia-smi nvlink -info', later rename 'NVLE' to 'NVLink Encryption' and add an NVLink
version line; the firmware names are NVML's NVML_NVLINK_FIRMWARE_UCODE_TYPE_{MSE,NETIR,NETIR_UPHY,
NETIR_CLN,NETIR_DLN}. One block per GPU (GB200, from NVIDIA/k8s-test-infra#371):

    GPU 0: NVIDIA GB200 (UUID: GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde)
             NVLE: disabled
             Firmware Version:
                 MSE: 14:4:0
                 NETIR: 36:2014:1862

Names under 'Firmware Version:' (deeper indented, or version-shaped 'a:b:c' values when a paste lost
the indentation) go to `firmware` by snake_case name; another 'key: value' line in a GPU block goes to
`fields`. It holds no link state: nothing here says a link is up. Elided or cut-off blocks are
`truncated`; the NVML all-inactive line and "does not have or support Nvlink" are kept as for
`nvidia-smi nvlink -s`; output of the other modes is refused with a ParseError naming it.

JSON: {source: "nvidia_smi_nvlink_info",
       gpus: [{index (null: pasted without a 'GPU n:' header), model, uuid (null when redacted or absent),
               line_no, nvle (the encryption state as printed, e.g. "disabled", or null),
               nvle_enabled (true | false | null when not printed or not understood),
               nvlink_version (as printed, or null), firmware {mse, netir, netir_uphy, netir_cln,
               netir_dln, ...: version string}, fields {snake_name: value} (other lines),
               all_links_inactive, nvlink_unsupported, message, truncated}],
       elided, elided_gpu_indices, errors [{line_no, text}], notes [strings]}
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

from ._nvidia_smi_records import gpu_from_block, gpu_record, smi_note, result_from_walk, result_record
from .base import ParserInfo, clean_lines, iter_clean_lines
from .nvidia_smi_gpu_blocks import ERROR_RE, GpuBlock, Walk, snake, walk
from .sniff.nvidia_smi_nvlink_info import sniff

INFO = ParserInfo(
    source="nvidia_smi_nvlink_info",
    tool="nvidia-smi nvlink -info",
    description="NVLink encryption state and NVLink firmware versions",
)
SOURCE = INFO.source
MODE_NAME = "`nvidia-smi nvlink -info` (encryption and firmware)"
EXPECT = "'NVLE: ...' / 'Firmware Version:' lines"

FIELD_RE = re.compile(r"^([A-Za-z][A-Za-z0-9 ()/_.-]{0,60}?)\s*:\s*(.*)$")
NVLE_RE = re.compile(r"^(?:NVLE|NVLink Encryption)$", re.I)
FIRMWARE_RE = re.compile(r"^(?:NVLink )?Firmware Versions?$", re.I)
VERSION_KEY_RE = re.compile(r"^NVLink Version$", re.I)
VERSION_VALUE_RE = re.compile(r"^[0-9]{1,9}(?:[:.][0-9]{1,9}){1,4}$")
ENABLED = {"enabled": True, "enable": True, "on": True, "yes": True, "true": True,
           "disabled": False, "disable": False, "off": False, "no": False, "false": False}


Gpu = gpu_record(__name__, ("nvle", Optional[str]), ("nvle_enabled", Optional[bool]), ("nvlink_version", Optional[str]),
                 ("firmware", dict), ("fields", dict))
NvlinkInfo = result_record("NvlinkInfo", __name__, SOURCE)


def _indent(raw: str) -> int:
    return len(raw.expandtabs(8)) - len(raw.expandtabs(8).lstrip())


def _read(line: str, raw: str, line_no: int, gpu: GpuBlock) -> str | None:
    m = FIELD_RE.match(line)
    if m is None or ERROR_RE.match(line):
        return None
    key, value = re.sub(r"\s+", " ", m.group(1)), m.group(2).strip()
    d = gpu.data
    if NVLE_RE.match(key) or VERSION_KEY_RE.match(key):
        if not value:
            return "partial"
        d["nvle" if NVLE_RE.match(key) else "nvlink_version"] = value
        d.pop("firmware_indent", None)
        d["seen"] = True
        return "content"
    if FIRMWARE_RE.match(key) and not value:
        d["firmware_indent"] = _indent(raw)
        d.setdefault("firmware", {})
        d["seen"] = True
        return "content"
    if not d.get("seen"):
        return None  # a 'key: value' line before any -info line is not evidence of this mode
    in_firmware = "firmware_indent" in d and (_indent(raw) > d["firmware_indent"] or bool(VERSION_VALUE_RE.match(value)))
    if not value:
        return "partial"
    if in_firmware:
        d["firmware"][snake(key)] = value
    else:
        d.pop("firmware_indent", None)
        d.setdefault("fields", {})[snake(key)] = value
    return "content"


def _freeze(g: GpuBlock) -> Gpu:
    d = g.data
    nvle = d.get("nvle")
    return gpu_from_block(Gpu, g, nvle, ENABLED.get(nvle.lower()) if nvle else None, d.get("nvlink_version"),
                          dict(d.get("firmware", {})), dict(d.get("fields", {})))


def _result(w: Walk) -> NvlinkInfo:
    notes = list(w.notes)
    for g in w.gpus:
        if g.data.get("nvle") and ENABLED.get(g.data["nvle"].lower()) is None:
            notes.append(smi_note("nvle-not-understood", gpu=g.label, state=g.data["nvle"][:30]))
    return result_from_walk(NvlinkInfo, w, tuple(_freeze(g) for g in w.gpus), notes)


def parse(text: str) -> NvlinkInfo:
    """`nvidia-smi nvlink -info` output -> NvlinkInfo; ParseError when the text is not that mode's."""
    return _result(walk(clean_lines(text), _read, "info", MODE_NAME, EXPECT))


def parse_lines(lines: Iterable[str]) -> NvlinkInfo:
    """Streaming form of parse for an iterable of raw lines."""
    return _result(walk(iter_clean_lines(lines), _read, "info", MODE_NAME, EXPECT))
