"""The site config (`check --config site.toml`): what a site expects, per host pattern, NHC-style.

    profile = "dgx-h100"                 # for every host (a --profile on the command line wins)

    [rules.TOPO003]                      # or [rules.gpu-nic-far]
    severity = "error"                   # enabled, severity, params as the rule defines them

    [[hosts]]                            # every block whose pattern matches the host applies,
    match = "gpu[001-064]"               # in file order, a later one over an earlier one
    profile = "hgx-h200"
    [hosts.rules.IB002.params]
    expected_rate_gbps = 200

    [slurm]                              # prolog --mark-offline (the command line's options win)
    scontrol = "/opt/slurm/bin/scontrol" # else PATH, then the standard places (actions/slurm.py)
    drain_limit = 8                      # topodiag drains at most min(8, 10% of the nodes, at least 1)
    drain_limit_percent = 10

    [[hosts]]
    match = "login*"                     # a glob (gpu*, *.rack3) or a node range gpu[001-064,100], as NHC,
    rules.NCCL001.enabled = false        # Slurm and ClusterShell write them (engine/host_pattern.py)

Errors are ConfigError (the runner's), one line naming the file and the key. Rule names and params are checked
against the catalog by the runner (engine.runner.resolve_config).
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from ..bundle.shown import shown
from .host_pattern import Glob, PatternError, from_regex
from .runner import ConfigError  # a config that does not fit: one line, file and key

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # a site config is a few KB
TOP_KEYS = ("profile", "rules", "hosts", "slurm")
# [slurm]: where prolog --mark-offline finds scontrol and sinfo (Slurm runs a prolog with no PATH) and
# the drain limit (actions/drain_limit.py); the command line's --scontrol / --drain-limit* win.
SLURM_KEYS = ("scontrol", "sinfo", "bin_dirs", "drain_limit", "drain_limit_percent")
HOST_KEYS = ("match", "profile", "rules")


@dataclass(frozen=True)
class HostPattern:
    """One `match` of a [[hosts]] block: a glob with node ranges (engine/host_pattern.py); an old
    `/regex/` is read as the glob it translates to, or refused in one line that says how to write it."""

    text: str
    glob: Glob = field(repr=False, compare=False, default=None)  # type: ignore[assignment]

    @classmethod
    def parse(cls, text: str, where: str) -> "HostPattern":
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where}: match: expected a host pattern (a glob such as gpu* or a range gpu[001-064])")
        text = text.strip()
        try:
            if len(text) > 1 and text.startswith("/") and text.endswith("/"):
                return cls(text, Glob.parse(from_regex(text[1:-1])))
            return cls(text, Glob.parse(text))
        except PatternError as exc:
            raise ConfigError(f"{where}: match: {shown(text)}: {exc}") from None

    def matches(self, host: str) -> bool:
        return self.glob.matches(host)


@dataclass(frozen=True)
class SiteConfig:
    path: str
    profile: Optional[str] = None
    rules: Mapping[str, Any] = field(default_factory=dict)
    hosts: tuple[tuple[HostPattern, Optional[str], Mapping[str, Any]], ...] = ()
    slurm: Mapping[str, Any] = field(default_factory=dict)  # [slurm], checked (SLURM_KEYS)

    def for_host(self, host: Optional[str]) -> tuple[dict[str, Any], Optional[str], list[str]]:
        """(the rules config for this host, its profile, the patterns that matched it)."""
        rules = {k: _copy(v) for k, v in self.rules.items()}
        profile = self.profile
        matched = []
        for pattern, prof, block_rules in self.hosts:
            if host is None or not pattern.matches(host):
                continue
            matched.append(pattern.text)
            profile = prof or profile
            for key, table in block_rules.items():
                base = rules.setdefault(key, {})
                for k, v in table.items():
                    if k == "params" and isinstance(v, Mapping) and isinstance(base.get("params"), dict):
                        base["params"].update(v)
                    else:
                        base[k] = _copy(v)
        return rules, profile, matched


def _copy(v: Any) -> Any:
    return {k: _copy(x) for k, x in v.items()} if isinstance(v, Mapping) else v


def load(path: str) -> SiteConfig:
    """Read and check a site config; ConfigError (one line) for what cannot be used."""
    try:
        # O_NONBLOCK: a FIFO (or a device) given as the config does not block the open; it is refused
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise ConfigError(f"{path}: cannot read the config: not a regular file")
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: cannot read the config: larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MB")
        data = tomllib.loads(raw.decode("utf-8"))
    except ConfigError:
        raise
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:  # not UTF-8 text (a binary file)
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 text ({type(exc).__name__})") from None
    for key in data:
        if key not in TOP_KEYS:
            raise ConfigError(f"{path}: {key}: unknown key (known: {', '.join(TOP_KEYS)})")
    profile = _profile(data.get("profile"), f"{path}: profile")
    rules = _rules(data.get("rules", {}), f"{path}: rules")
    blocks = data.get("hosts", [])
    if not isinstance(blocks, list):
        raise ConfigError(f"{path}: hosts: expected [[hosts]] tables (match, profile, rules)")
    hosts = []
    for i, block in enumerate(blocks):
        where = f"{path}: hosts[{i}]"
        if not isinstance(block, dict):
            raise ConfigError(f"{where}: expected a table with match, profile, rules")
        for key in block:
            if key not in HOST_KEYS:
                raise ConfigError(f"{where}: {key}: unknown key (known: {', '.join(HOST_KEYS)})")
        if "match" not in block:
            raise ConfigError(f"{where}: match: missing (a host pattern such as gpu[001-064])")
        hosts.append((HostPattern.parse(block["match"], where), _profile(block.get("profile"), f"{where}: profile"),
                      _rules(block.get("rules", {}), f"{where}: rules")))
    return SiteConfig(path=path, profile=profile, rules=rules, hosts=tuple(hosts),
                      slurm=_slurm(data.get("slurm", {}), f"{path}: slurm"))


def _slurm(value: Any, where: str) -> dict[str, Any]:
    """[slurm]: scontrol / sinfo (absolute paths), bin_dirs (absolute folders), drain_limit (nodes,
    an integer >= 0), drain_limit_percent (0 to 100)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be a table (scontrol, sinfo, bin_dirs, drain_limit, drain_limit_percent)")
    for key, v in value.items():
        if key not in SLURM_KEYS:
            raise ConfigError(f"{where}.{key}: unknown key (known: {', '.join(SLURM_KEYS)})")
        if key in ("scontrol", "sinfo") and not (isinstance(v, str) and os.path.isabs(v)):
            raise ConfigError(f"{where}.{key}: must be an absolute path (like /opt/slurm/bin/{key})")
        if key == "bin_dirs" and not (isinstance(v, list) and all(isinstance(d, str) and os.path.isabs(d) for d in v)):
            raise ConfigError(f"{where}.bin_dirs: must be a list of absolute folders (like [\"/opt/slurm/bin\"])")
        if key == "drain_limit" and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ConfigError(f"{where}.drain_limit: must be a whole number of nodes >= 0 (0: never drain)")
        if key == "drain_limit_percent" and (isinstance(v, bool) or not isinstance(v, (int, float))
                                             or not 0 <= v <= 100):
            raise ConfigError(f"{where}.drain_limit_percent: must be a number from 0 to 100")
    return value


def _profile(value: Any, where: str) -> Optional[str]:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(f"{where}: must be a profile name (like dgx-h100)")
    return value


def _rules(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(t, dict) for t in value.values()):
        raise ConfigError(f"{where}: must be [rules.CODE] tables (enabled, severity, params)")
    for code, table in value.items():
        params = table.get("params")
        if isinstance(params, dict):
            for name, v in params.items():
                _threshold(v, f"{where}.{code}.params.{name}")
    return value


def _threshold(value: Any, where: str) -> None:
    """Every rule parameter that is a number is a threshold, a count or a fraction, all >= 0: nan (every
    comparison false: the rule silently never fires), inf and negatives are refused, naming the key.
    Lists are checked item by item."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            _threshold(item, f"{where}[{i}]")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and math.isnan(value):
        raise ConfigError(f"{where}: nan is not a number (it would turn the rule off); give a number >= 0")
    if isinstance(value, float) and math.isinf(value):
        raise ConfigError(f"{where}: {value} is not a usable threshold; give a finite number >= 0")
    if value < 0:
        raise ConfigError(f"{where}: {value} is negative; give a number >= 0")
