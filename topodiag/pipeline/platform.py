"""The model and the profile: the node's Topology, the platform profile (chosen once, here), the platform in words."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ..errors import ProfileError


def build_topology(gathered, host: Optional[str] = None):
    """The node's Topology from the parsed inputs (model/)."""
    from ..model import build

    return build(gathered.parsed, host=host or gathered.host)


def named_profile(name: str):
    """The profile called `name`; ProfileError (a usage error) when it is unknown or unreadable."""
    from ..profiles import load_profiles

    profiles = load_profiles()
    if name not in profiles:
        raise ProfileError(f"--profile: unknown profile {name!r}; one of: {', '.join(profiles)}")
    return profiles[name]


def gpu_models(topology) -> list[str]:
    """The GPU model names the model's GPUs carry."""
    return [m for g in topology.gpus() if (m := topology.node(g).get("model"))]


def _nccl_tests_layout(results) -> tuple[list[str], Optional[int]]:
    """GPU names and GPUs per node from the "# Rank ... on HOST device N ... NVIDIA ..." lines of the
    first nccl-tests run that has them (None per node when the nodes differ)."""
    from ..parsers.base import to_jsonable

    for result in results:  # the devices only: a big log's result holds thousands of rows
        raw = result.get("devices") if isinstance(result, dict) else getattr(result, "devices", ())
        devices = [d for d in (to_jsonable(d) for d in raw or ()) if isinstance(d, dict)]
        first = [d for d in devices if (d.get("run") or 0) == (devices[0].get("run") or 0)] if devices else []
        names = [d["model"] for d in first if d.get("model")]
        if names:
            per_host: dict[str, int] = {}
            for d in first:
                per_host[d.get("host") or "?"] = per_host.get(d.get("host") or "?", 0) + 1
            counts = set(per_host.values())
            return names, counts.pop() if len(counts) == 1 else None
    return [], None


def choose_profile(name: Optional[str], topology, nccl_tests: Iterable[Any] = ()) -> tuple[Any, str]:
    """The profile every rule uses, chosen once: the one named (--profile or the site config), else
    the one the GPU models match (the model's GPUs, else an nccl-tests run's rank lines, whose GPUs per
    node must match the profile's); and how it was chosen (the report's `profile`)."""
    if name:
        return named_profile(name), f"{name} (given)"
    from ..model.gpu_set import inventory

    models = gpu_models(topology)
    gpus = inventory(topology)["count"] or None  # one set by PCI bus id, never a sum of listings
    where = ""
    if not models:
        models, gpus = _nccl_tests_layout(nccl_tests)
        where = f" x{gpus} per node in an nccl-tests run" if models and gpus else ""
        if models and gpus is None:
            return None, "none (the nccl-tests nodes have different GPU counts)"
    if not models:
        return None, "none (the inputs name no GPU model)"  # without reading the profiles
    from ..profiles import detect_profile, load_profiles

    try:
        profiles = load_profiles()
    except ProfileError:
        return None, "none (profiles unreadable)"
    prof = detect_profile(models, profiles, gpu_count=gpus)
    if prof is None:
        return None, "none (no profile matches)"
    short = f"; {gpus} of its {prof.gpus} GPUs seen" if gpus and gpus < prof.gpus else ""
    return prof, f"{prof.name} (detected from {models[0]}{where}{short})"


# The rules that judge only against a profile, and what they would have judged.
PROFILE_ONLY = ("TOPO006 (GPUs missing against the platform's count)",
                "TOPO007 (topo -m NIC rows against its compute NICs)")


def describe_platform(topology, prof, nccl_tests: Iterable[Any] = ()) -> str:
    """The platform the inputs' hints describe, how sure that is and which hints decided it (GPU model from
    any source, an nccl-tests run's rank lines included; GPU and NIC counts; NV#/PCIe pairs; Grace GPU NUMA
    ids; NVSwitches; HCA models; PCIe generation), and, without a profile, the rules that did not judge."""
    import dataclasses

    from ..checks import design_hints
    from ..knowledge.platform import infer

    hints = design_hints(topology, prof)
    if not hints.gpu_models:
        models, per_node = _nccl_tests_layout(nccl_tests)
        if models:
            hints = dataclasses.replace(hints, gpu_models=tuple(models[:1]), gpu_count=hints.gpu_count or per_node,
                                        gpu_model_source="an nccl-tests run's rank lines (per node)")
    words = infer(hints).words()
    if prof is None:
        words += "; no profile, so not judged: " + ", ".join(PROFILE_ONLY)
    return words

