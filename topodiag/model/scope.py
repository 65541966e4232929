"""Which of the node's GPUs this job step or container can see, from the gpu_scope probe's record
(topodiag/parsers/gpu_scope.py): `visible(scope, busids)`.

In order, the first that applies restricts the set (the node's GPUs in PCI bus id order):
1. the cgroup v1 device rules (`devices.list`): /dev/nvidia<minor> allowed for reading or writing,
   each minor mapped to its bus id by the driver's `Device Minor` (/proc/driver/nvidia/gpus); a rule
   for every device (`a *:* rwm`) or every NVIDIA minor (`c 195:* rwm`) restricts nothing;
2. Slurm's allocation, SLURM_STEP_GPUS else SLURM_JOB_GPUS: global GPU ids, the node's GPUs in PCI
   bus id order (the order `AutoDetect=nvml` and nvidia-smi number them; a gres.conf that lists
   `File=/dev/nvidia[0-7]` by hand numbers them by device minor instead, and its cgroup rules, step
   1, then decide);
3. the container's NVIDIA_VISIBLE_DEVICES (host indices in the same order, or UUIDs; "all" restricts
   nothing, "none" / "void" hides every GPU);
then CUDA_VISIBLE_DEVICES (else GPU_DEVICE_ORDINAL) selects among what is left: indices into it in
PCI bus id order (CUDA_DEVICE_ORDER=PCI_BUS_ID; CUDA's default, fastest first, is the same order on
a node of one GPU model), or UUIDs (a unique prefix is enough); as CUDA does, the list stops at
the first entry that names no GPU (Slurm's "NoDevFiles": none).

The environment's selections (2, 3 and CUDA's) are the job's, not the node's: a Slurm prolog or
epilog (SLURM_SCRIPT_CONTEXT prolog_* / epilog_*) runs with the next job's variables but outside its
cgroup and judges the whole node, so there they restrict nothing.
"""

from __future__ import annotations

from typing import Any, Optional

NVIDIA_MAJOR = 195
FIRST_CONTROL_MINOR = 254  # nvidia-modeset (254) and nvidiactl (255) are no GPU
NO_RESTRICTION: tuple[None, str] = (None, "")


def _cgroup_minors(rules: Any) -> Optional[set[int]]:
    """The NVIDIA minors the device rules allow; None when they allow every one (or there are none)."""
    if rules is None:
        return None
    allowed: set[int] = set()
    for r in rules:
        if not ({"r", "w"} & set(r.access)):
            continue  # mknod only ("c *:* m" in Docker's defaults)
        if r.type == "a" or (r.type == "c" and r.major in (None, NVIDIA_MAJOR) and r.minor is None):
            return None
        if r.type == "c" and r.major == NVIDIA_MAJOR and r.minor is not None and r.minor < FIRST_CONTROL_MINOR:
            allowed.add(r.minor)
    return allowed


def _by_uuid(entry: str, order: list[str], uuids: dict[str, str]) -> Optional[str]:
    found = [bdf for uuid, bdf in uuids.items() if uuid.lower().startswith(entry.lower()) and bdf in order]
    return found[0] if len(found) == 1 else None


def select(value: str, order: list[str], uuids: dict[str, str], stop_at_bad: bool) -> list[str]:
    """The bus ids a comma-separated list of indices into `order` or UUIDs names."""
    out: list[str] = []
    for entry in (e.strip() for e in value.split(",")):
        bdf = None
        if entry.isdigit() and len(entry) < 4:
            bdf = order[int(entry)] if int(entry) < len(order) else None
        elif entry.upper().startswith("GPU-") and len(entry) > 4:
            bdf = _by_uuid(entry, order, uuids)
        if bdf is None:
            if stop_at_bad:
                break
            continue
        if bdf not in out:
            out.append(bdf)
    return out


def _env_selection(env: dict, order: list[str], uuids: dict[str, str]) -> tuple[Optional[list[str]], str]:
    for var in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "NVIDIA_VISIBLE_DEVICES"):
        value = env.get(var)
        if value is None or value.strip().lower() == "all":
            continue
        if value.strip().lower() in ("none", "void", ""):
            return [], f"{var}={value}"
        return select(value, order, uuids, stop_at_bad=False), f"{var}={value}"
    return None, ""


def in_prolog(env: dict) -> bool:
    return env.get("SLURM_SCRIPT_CONTEXT", "").startswith(("prolog", "epilog"))


def visible(scope: Any, busids: list[str]) -> tuple[Optional[list[str]], str]:
    """(the bus ids of `busids` this process can see, how that was decided), or (None, "") when
    nothing restricts it. `scope` is a parsed gpu_scope record."""
    order = sorted(set(busids))
    minors = {g.bdf: g.minor for g in scope.driver_gpus if g.minor is not None}
    uuids = {g.uuid: g.bdf for g in scope.driver_gpus if g.uuid}
    env = {} if in_prolog(scope.env) else dict(scope.env)
    seen: Optional[list[str]] = None
    how: list[str] = []
    allowed = _cgroup_minors(scope.device_rules)
    if allowed is not None and minors:
        seen = [b for b in order if minors.get(b) in allowed]
        how.append("the cgroup's device rules allow " + (", ".join(f"/dev/nvidia{m}" for m in sorted(allowed)) or "no GPU"))
    else:
        seen, said = _env_selection(env, order, uuids)
        if said:
            how.append(said)
    for var in ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"):
        if var in env and not (how and how[0].endswith(f"={env[var]}")):  # not Slurm's global ids again
            seen = select(env[var], seen if seen is not None else order, uuids, stop_at_bad=True)
            how.append(f"{var}={env[var]}")
            break
    if seen is None or set(seen) == set(order):
        return NO_RESTRICTION
    return seen, "; ".join(how)
