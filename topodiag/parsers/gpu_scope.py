"""Parser for the gpu_scope probe's JSON (topodiag/live/gpu_scope_probe.py): what decides which GPUs
a job step or a container sees. It reads the recorded texts, and judges nothing (topodiag.model.scope
does):

    env            {"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_STEP_GPUS": "2,3", ...}   as recorded
    cgroup         proc/self/cgroup; the cgroup v1 devices.list lines, e.g.
                       c 195:2 rwm          /dev/nvidia2 (major 195: the NVIDIA driver)
                       c 195:255 rwm        /dev/nvidiactl
                       a *:* rwm            every device (no restriction)
    driver_gpus    /proc/driver/nvidia/gpus/<bus id>/information, e.g.
                       Model:           NVIDIA H100 80GB HBM3
                       GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b
                       Bus Location:    0000:62:00.0
                       Device Minor:    5

JSON: {source: "gpu_scope", ok, error, env {name: value}, cgroup_version (1, 2 or null: no cgroup
file), cgroup_path, device_rules (null: no v1 list was readable; else [{type "a"/"b"/"c", major,
minor (null for "*"), access}]), driver_gpus [{bdf, minor, uuid, model, excluded}]}. ParseError
when the text is not that probe's JSON object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from .base import ParseError, ParserInfo, cap_line, probe_object
from .sniff.gpu_scope import sniff

INFO = ParserInfo(
    source="gpu_scope",
    tool="env (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS, SLURM_STEP_GPUS, GPU_DEVICE_ORDINAL); cat /proc/self/cgroup; "
         "cat /proc/driver/nvidia/gpus/*/information",
    description="The GPUs this job step or container may see: CUDA_VISIBLE_DEVICES, Slurm's GPU ids, the "
                "cgroup device rules, and the driver's GPUs by bus id (device minor, UUID)",
    prolog_safe=True,
    probe="gpu_scope",
    timeout_s=2.0,
)
SOURCE = INFO.source

NVIDIA_MAJOR = 195  # /dev/nvidiaN is (195, N); nvidiactl 255, nvidia-modeset 254
_RULE_RE = re.compile(r"^([abc])\s+(\*|[0-9]{1,9}):(\*|[0-9]{1,9})\s+([rwm]{1,3})$")
_INFO_RE = re.compile(r"^\s*([A-Za-z][A-Za-z ]{0,40}?)\s*:\s*(.*?)\s*$")
_BDF_RE = re.compile(r"^(?:[0-9a-f]{4}|[0-9a-f]{8}):[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_ENV_NAMES = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")


@dataclass(frozen=True)
class DeviceRule:
    type: str  # "a" (all), "b" (block), "c" (character)
    major: Optional[int]  # None: "*"
    minor: Optional[int]
    access: str


@dataclass(frozen=True)
class DriverGpu:
    bdf: str  # "0000:62:00.0"
    minor: Optional[int]  # /dev/nvidia<minor>
    uuid: Optional[str]
    model: Optional[str]
    excluded: Optional[bool]


@dataclass(frozen=True)
class GpuScope:
    source: str
    ok: bool
    error: Optional[str]
    env: dict
    cgroup_version: Optional[int]
    cgroup_path: Optional[str]
    device_rules: Optional[tuple[DeviceRule, ...]]
    driver_gpus: tuple[DriverGpu, ...]


def short_bdf(bdf: str) -> str:
    """'00000000:18:00.0' -> '0000:18:00.0' (the form sysfs prints), lower case."""
    dom, _, rest = bdf.lower().partition(":")
    return f"{dom[-4:]}:{rest}"


def device_rules(text: str) -> tuple[DeviceRule, ...]:
    """The rules of a cgroup v1 devices.list ("c 195:0 rwm"); lines of another form are left out."""
    out = []
    for line in text.splitlines():
        m = _RULE_RE.match(cap_line(line).strip())
        if m:
            major, minor = (None if g == "*" else int(g) for g in (m.group(2), m.group(3)))
            out.append(DeviceRule(m.group(1), major, minor, m.group(4)))
    return tuple(out)


def information(bdf: str, text: Optional[str]) -> DriverGpu:
    """One GPU's /proc/driver/nvidia/gpus/<bdf>/information ("Device Minor: \t 5")."""
    fields = {}
    for line in (text or "").splitlines():
        m = _INFO_RE.match(cap_line(line))
        if m:
            fields.setdefault(m.group(1).strip().lower(), m.group(2))
    minor = fields.get("device minor", "")
    excluded = fields.get("gpu excluded", fields.get("blacklisted"))
    where = (fields.get("bus location") or "").lower()
    return DriverGpu(short_bdf(where if _BDF_RE.match(where) else bdf),
                     int(minor) if minor.isdigit() and len(minor) < 6 else None,
                     fields.get("gpu uuid") or None, fields.get("model") or None,
                     None if excluded is None else excluded.lower().startswith("yes"))


def _cgroup_version(self_text: Optional[str]) -> Optional[int]:
    lines = [ln.strip() for ln in (self_text or "").splitlines() if ln.strip()]
    if not lines:
        return None
    return 2 if all(ln.startswith("0::") for ln in lines) else 1


def _text(data: dict, key: str, where: str) -> Optional[str]:
    v = data.get(key)
    if v is not None and not isinstance(v, str):
        raise ParseError(f"{where}.{key}: expected a string or null, found {type(v).__name__}", 1)
    return v


def _gpus(data: dict) -> tuple[DriverGpu, ...]:
    raw = data.get("driver_gpus") or []
    if not isinstance(raw, list):
        raise ParseError("driver_gpus: expected a list", 1)
    out = []
    for i, g in enumerate(raw):
        if not isinstance(g, dict) or not isinstance(g.get("bdf"), str) or not _BDF_RE.match(g["bdf"].lower()):
            raise ParseError(f"driver_gpus[{i}]: expected {{bdf, information}} with a PCI bus id", 1)
        out.append(information(g["bdf"], _text(g, "information", f"driver_gpus[{i}]")))
    return tuple(sorted(out, key=lambda g: g.bdf))


def parse(text: str) -> GpuScope:
    data = probe_object(text, "gpu_scope", "the gpu_scope probe's JSON")
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and _ENV_NAMES.match(k) and isinstance(v, str)
                                            for k, v in env.items()):
        raise ParseError("env: expected an object of variable names to strings", 1)
    cgroup: Any = data.get("cgroup") or {}
    if not isinstance(cgroup, dict):
        raise ParseError("cgroup: expected an object", 1)
    self_text = _text(cgroup, "self", "cgroup")
    listing = _text(cgroup, "devices_list", "cgroup")
    path = _text(cgroup, "devices_path", "cgroup")
    error = data.get("error")
    return GpuScope(SOURCE, data.get("ok") is not False, error if isinstance(error, str) else None,
                    dict(sorted(env.items())), _cgroup_version(self_text), path,
                    None if listing is None else device_rules(listing), _gpus(data))
