"""Record what decides which GPUs this process (a Slurm job step, a container) can see, read-only:
the environment variables that name GPUs, this process's cgroup and its device rules, and the NVIDIA
driver's own list of GPUs (`/proc/driver/nvidia/gpus/<bus id>/information`: bus id, device minor,
UUID, model). It judges nothing: `topodiag.model.scope` does, from this JSON, so that `check --from`
a bundle judges exactly as the live run did.

`probe(root="/", env=None)` reads `<root>/proc/self/cgroup`, the cgroup v1 `devices.list` of the
cgroup it names (`<root>/sys/fs/cgroup/devices/<path>/devices.list`; under cgroup v2 the device rules
are an eBPF program with no list to read: `devices_list` is null) and `<root>/proc/driver/nvidia/gpus`
(a file that cannot be read is null, never an exception); `env` defaults to `os.environ`, of which
only ENV_VARS are kept (an environment holds secrets).

Probe JSON (schema_version 1):

    {"probe": "gpu_scope", "schema_version": 1, "root": "/", "ok": true, "error": null,
     "env": {"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_STEP_GPUS": "2,3"},     the ENV_VARS that are set
     "cgroup": {"self": "12:devices:/slurm/uid_1000/job_42/step_0\\n...",   proc/self/cgroup as read
                "devices_path": "sys/fs/cgroup/devices/slurm/uid_1000/job_42/step_0/devices.list",
                "devices_list": "c 195:2 rwm\\nc 195:255 rwm\\n..."},          null where not readable
     "driver_gpus": [{"bdf": "0000:62:00.0", "information": "Model: ... Device Minor: 5 ..."}]}

`ok` is false only when `root` is not a directory. A host without the NVIDIA driver has
`"driver_gpus": []`; a process outside any job has no ENV_VARS set and its cgroup's rules allow all.

    python -m topodiag.live.gpu_scope_probe [ROOT]
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Mapping, Optional

from .rooted import Rooted

PROBE = "gpu_scope"
SCHEMA_VERSION = 1
# CUDA's and the container toolkit's selections, Slurm's allocation (global ids), the order CUDA uses
ENV_VARS = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPU_DEVICE_ORDINAL", "NVIDIA_VISIBLE_DEVICES",
            "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_JOB_ID", "SLURM_STEP_ID",
            "SLURM_SCRIPT_CONTEXT")  # prolog_slurmd, epilog_slurmd ...: a prolog judges the whole node
MAX_GPUS = 64
_BDF_RE = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_V1_DEVICES_RE = re.compile(r"^[0-9]+:(?:[^:]*,)?devices(?:,[^:]*)?:(/.*)$")


def _cgroup(tree: Rooted) -> dict[str, Any]:
    """This process's cgroup file and, under cgroup v1, its devices controller's rules."""
    text = tree.read("proc/self/cgroup", limit=16384, strip=False)
    path = None
    for line in (text or "").splitlines():
        m = _V1_DEVICES_RE.match(line.strip())
        if m:
            path = m.group(1)
            break
    rel, listing = None, None
    if path is not None:
        for cand in (f"sys/fs/cgroup/devices{path.rstrip('/')}/devices.list",
                     "sys/fs/cgroup/devices/devices.list"):  # a container's cgroup namespace: its own root
            listing = tree.read(cand, limit=65536, strip=False)
            if listing is not None:
                rel = cand
                break
    return {"self": text, "devices_path": rel, "devices_list": listing}


def _driver_gpus(tree: Rooted) -> list[dict[str, Optional[str]]]:
    out = []
    for name in tree.listdir("proc/driver/nvidia/gpus")[:MAX_GPUS]:
        if _BDF_RE.match(name.lower()):
            out.append({"bdf": name.lower(), "information": tree.read(f"proc/driver/nvidia/gpus/{name}/information",
                                                                      limit=8192, strip=False)})
    return out


def probe(root: str = "/", env: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """The probe JSON (see the module docstring); never raises."""
    root = os.fspath(root)
    env = os.environ if env is None else env
    out: dict[str, Any] = {"probe": PROBE, "schema_version": SCHEMA_VERSION, "root": root, "ok": False,
                           "error": None, "env": {k: str(env[k]) for k in ENV_VARS if k in env},
                           "cgroup": {"self": None, "devices_path": None, "devices_list": None}, "driver_gpus": []}
    try:
        if not os.path.isdir(root):
            out["error"] = f"{root} is not a directory"
            return out
        tree = Rooted(root)
        out["cgroup"] = _cgroup(tree)
        out["driver_gpus"] = _driver_gpus(tree)
        out["ok"] = True
    except Exception as exc:  # the probe reports, never raises: a prolog must not crash on it
        out["error"] = f"gpu_scope probe failed: {type(exc).__name__}: {exc}"
    return out


def main(argv: Optional[list[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: python -m topodiag.live.gpu_scope_probe [ROOT]", file=sys.stderr)
        return 2
    result = probe(args[0] if args else "/")
    print(json.dumps(result, indent=1))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
