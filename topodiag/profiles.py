"""Platform profiles (rules/profiles/*.toml): what a DGX H100, an HGX H200, a PCIe box... should show.

One TOML file per platform; the file stem is the profile name. Keys (units as the tools print them):

    name = "dgx-h100"                 must equal the file stem
    description = "..."
    match = ["H100"]                  GPU model substrings for auto-detection (case-insensitive, whole
    match_exclude = ["PCIe", "NVL"]   words: "B200" does not match "GB200"); optional exclusions
    gpus = 8
    gpu_pair_class = "NV18"           every GPU pair at this class or better (NV#, PIX ... SYS)
    nvlinks_per_gpu = 18              active NVLinks per GPU (0: none expected)
    nvlink_speed_gbps = 26.562        per-link one-way GB/s as `nvidia-smi nvlink -s` prints (optional)
    nics = 8                          compute NICs (optional)
    nic_rate_gbps = 400               Gb/s as `ibstat` prints (optional)
    link_layer = "InfiniBand"         or "Ethernet" (optional)
    gpu_nic_max_path = "PXB"          worst acceptable path from a GPU to its nearest NIC (optional)
    [busbw.all_reduce]                optional, per collective: nccl-tests busbw in GB/s
    in_node_gbps = 370.0              the baseline a run is judged against
    in_node_nvls_gbps = 480.0         optional: with NVLink SHARP
    source = "..."                    where the number comes from

Errors are ProfileError, one line naming the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from .errors import ProfileError

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from . import knowledge


def default_profiles_dir() -> Path:
    """`profiles/` of the shipped rules directory (topodiag/rules in a wheel, rules/ in a checkout)."""
    from .engine.catalog import default_rules_dir

    return default_rules_dir() / "profiles"

LINK_LAYERS = ("InfiniBand", "Ethernet")


@dataclass(frozen=True)
class BusbwExpectation:
    """nccl-tests busbw (GB/s) a healthy run of one collective reaches inside the node."""

    collective: str
    in_node_gbps: float
    source: str
    in_node_nvls_gbps: float | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    match: tuple[str, ...]
    gpus: int
    gpu_pair_class: str
    nvlinks_per_gpu: int
    match_exclude: tuple[str, ...] = ()
    nvlink_speed_gbps: float | None = None
    nics: int | None = None
    nic_rate_gbps: float | None = None
    link_layer: str | None = None
    gpu_nic_max_path: str | None = None
    busbw: Mapping[str, BusbwExpectation] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    path: Path | None = None

    def matches(self, gpu_name: str) -> bool:
        """True when the GPU model name holds one of `match` and none of `match_exclude` (whole words)."""
        return (any(_word_in(m, gpu_name) for m in self.match)
                and not any(_word_in(x, gpu_name) for x in self.match_exclude))


def _word_in(needle: str, haystack: str) -> bool:
    norm_needle = knowledge.normalize_gpu_name(needle) or needle.upper()
    pattern = r"(?<![A-Z0-9])" + re.escape(norm_needle) + r"(?![A-Z0-9])"
    return re.search(pattern, knowledge.normalize_gpu_name(haystack)) is not None


_ALLOWED = {"name", "description", "match", "match_exclude", "gpus", "gpu_pair_class", "nvlinks_per_gpu",
            "nvlink_speed_gbps", "nics", "nic_rate_gbps", "link_layer", "gpu_nic_max_path", "busbw"}
_REQUIRED = ("name", "description", "match", "gpus", "gpu_pair_class", "nvlinks_per_gpu")
_BUSBW_ALLOWED = {"in_node_gbps", "in_node_nvls_gbps", "source"}


class _Reader:
    def __init__(self, path: Path, data: dict[str, Any]):
        self.path, self.data = path, data

    def fail(self, key: str, problem: str) -> ProfileError:
        return ProfileError(f"{self.path}: key '{key}': {problem}")

    def string(self, key: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {value!r}")
        return value.strip()

    def strings(self, key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(key, f"expected a list of non-empty strings, got {value!r}")
        return tuple(v.strip() for v in value)

    def count(self, key: str, value: Any, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def number(self, key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise self.fail(key, f"expected a positive number, got {value!r}")
        return float(value)

    def path_class(self, key: str, value: Any, *, nvlink_ok: bool = True) -> str:
        text = self.string(key, value)
        try:
            cls = knowledge.normalize_path_class(text)
        except ValueError:
            raise self.fail(key, f"expected a topo path class (NV#, PIX, PXB, PHB, NODE, SYS), got {value!r}") from None
        if not nvlink_ok and knowledge.is_nvlink(cls):
            raise self.fail(key, f"expected a PCIe path class (PIX, PXB, PHB, NODE, SYS), got {value!r}")
        return cls


def _profile_from(path: Path, data: dict[str, Any]) -> Profile:
    r = _Reader(path, data)
    unknown = sorted(set(data) - _ALLOWED)
    if unknown:
        raise r.fail(unknown[0], f"unknown key (known: {', '.join(sorted(_ALLOWED))})")
    for key in _REQUIRED:
        if key not in data:
            raise r.fail(key, "missing (required)")
    name = r.string("name", data["name"])
    if name != path.stem:
        raise r.fail("name", f"{name!r} must equal the file name {path.stem!r}")
    match = r.strings("match", data["match"])
    if not match:
        raise r.fail("match", "needs at least one GPU model substring")
    pair_class = r.path_class("gpu_pair_class", data["gpu_pair_class"])
    nvlinks = r.count("nvlinks_per_gpu", data["nvlinks_per_gpu"])
    if knowledge.is_nvlink(pair_class) and nvlinks < knowledge.nvlink_count(pair_class):
        raise r.fail("nvlinks_per_gpu", f"{nvlinks} is fewer than the {pair_class} of gpu_pair_class")
    opt: dict[str, Any] = {}
    if "match_exclude" in data:
        opt["match_exclude"] = r.strings("match_exclude", data["match_exclude"])
    if "nvlink_speed_gbps" in data:
        opt["nvlink_speed_gbps"] = r.number("nvlink_speed_gbps", data["nvlink_speed_gbps"])
    if "nics" in data:
        opt["nics"] = r.count("nics", data["nics"])
    if "nic_rate_gbps" in data:
        opt["nic_rate_gbps"] = r.number("nic_rate_gbps", data["nic_rate_gbps"])
    if "link_layer" in data:
        layer = r.string("link_layer", data["link_layer"])
        if layer not in LINK_LAYERS:
            raise r.fail("link_layer", f"expected one of {', '.join(LINK_LAYERS)}, got {layer!r}")
        opt["link_layer"] = layer
    if "gpu_nic_max_path" in data:
        opt["gpu_nic_max_path"] = r.path_class("gpu_nic_max_path", data["gpu_nic_max_path"], nvlink_ok=False)
    if "busbw" in data:
        opt["busbw"] = MappingProxyType(_busbw_from(r, data["busbw"]))
    return Profile(name=name, description=r.string("description", data["description"]), match=match,
                   gpus=r.count("gpus", data["gpus"], minimum=1), gpu_pair_class=pair_class,
                   nvlinks_per_gpu=nvlinks, path=path, **opt)


def _busbw_from(r: _Reader, table: Any) -> dict[str, BusbwExpectation]:
    if not isinstance(table, dict):
        raise r.fail("busbw", f"expected a table of collectives, got {table!r}")
    out: dict[str, BusbwExpectation] = {}
    for coll, entry in table.items():
        key = f"busbw.{coll}"
        try:
            canonical = knowledge.normalize_collective(coll)
        except ValueError:
            raise r.fail(key, f"unknown collective (known: {', '.join(knowledge.BUSBW_FACTORS)})") from None
        if not isinstance(entry, dict):
            raise r.fail(key, f"expected a table with in_node_gbps and source, got {entry!r}")
        unknown = sorted(set(entry) - _BUSBW_ALLOWED)
        if unknown:
            raise r.fail(f"{key}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(_BUSBW_ALLOWED))})")
        for required in ("in_node_gbps", "source"):
            if required not in entry:
                raise r.fail(f"{key}.{required}", "missing (required)")
        nvls = entry.get("in_node_nvls_gbps")
        out[canonical] = BusbwExpectation(
            collective=canonical,
            in_node_gbps=r.number(f"{key}.in_node_gbps", entry["in_node_gbps"]),
            source=r.string(f"{key}.source", entry["source"]),
            in_node_nvls_gbps=None if nvls is None else r.number(f"{key}.in_node_nvls_gbps", nvls),
        )
    return out


def load_profile(path: str | Path) -> Profile:
    """Read and validate one profile file; ProfileError (file and key in the message) when invalid."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path}: not valid TOML: {exc}") from None
    return _profile_from(path, data)


def load_profiles(dir: str | Path | None = None) -> dict[str, Profile]:  # noqa: A002 (the API's name)
    """Every *.toml profile in `dir` (default rules/profiles/ of the checkout), by name, sorted."""
    directory = default_profiles_dir() if dir is None else Path(dir)
    if not directory.is_dir():
        raise ProfileError(f"{directory}: profile directory not found")
    return {p.name: p for p in (load_profile(f) for f in sorted(directory.glob("*.toml")))}


# A node may have lost GPUs and still be the platform its profile describes: up to this many fewer
# than the profile's (and more than half of them), so a 4-GPU board is never taken for an 8-GPU node.
MAX_MISSING_GPUS = 2


def count_fits(gpu_count: int, profile_gpus: int) -> bool:
    """Whether `gpu_count` GPUs can be a node of a `profile_gpus`-GPU profile: all of them, or at most
    MAX_MISSING_GPUS lost (TOPO006 then says so), never half or fewer."""
    return profile_gpus - MAX_MISSING_GPUS <= gpu_count <= profile_gpus and 2 * gpu_count > profile_gpus


def detect_profile(gpu_names: Iterable[str], profiles: Mapping[str, Profile] | None = None, *,
                   gpu_count: int | None = None) -> Profile | None:
    """The profile every named GPU matches (None when none, or when the GPUs are not all alike).

    `gpu_names` may repeat one model per GPU; blanks are ignored. With `gpu_count`, a profile for a
    different number of GPUs does not match (a 4-GPU H100 board is not a DGX H100), except a node
    that lost one or two of its GPUs (7 H100 SXM: a DGX H100 missing one, `count_fits`); a profile
    whose count is met exactly wins over one the node would fall short of. When several profiles
    match, the one with the longest matching substring wins, then the name.
    """
    names = [n for n in gpu_names if isinstance(n, str) and n.strip()]
    if not names:
        return None
    if profiles is None:
        profiles = load_profiles()
    candidates = []
    for prof in profiles.values():
        if gpu_count is not None and not count_fits(gpu_count, prof.gpus):
            continue
        if all(prof.matches(n) for n in names):
            longest = max(len(m) for m in prof.match if any(_word_in(m, n) for n in names))
            short = 0 if gpu_count is None else prof.gpus - gpu_count
            candidates.append((short, -longest, prof.name, prof))
    return min(candidates, key=lambda c: c[:3])[3] if candidates else None
