"""Parser for a collected NCCL environment: the `NCCL_*` variables a job runs with.

    NCCL_IB_HCA=mlx5_0,mlx5_1                       (env | grep NCCL, printenv)
    export NCCL_SOCKET_IFNAME=eth0                  (a job script, `export -p`)
    declare -x NCCL_P2P_DISABLE="1"                 (bash `export -p` / `declare -x`)
    NCCL_DEBUG=INFO\\0NCCL_IB_HCA=mlx5_0\\0...       (/proc/<pid>/environ, NUL-separated, or through tr)
    {"probe": "nccl_env", "ok": true, "env": {"NCCL_IB_HCA": "mlx5_0"}}   (topodiag's live probe)

Other variables are counted, never kept (an environment carries tokens and passwords). Shell prompts,
fences, comments and blank lines are skipped; quotes around a value are removed (a quote left inside a
value is kept: NCCL would read it too). A variable set twice keeps its last value (what a shell does)
and the earlier one is listed in `overridden`.

JSON: {source: "nccl_env", form ("env" | "export" | "environ" | "probe"), env {NCCL_*: value}, lines
{NCCL_*: line number of the value kept}, overridden [{name, value, line_no}], other (how many non-NCCL
assignments were skipped), skipped (lines that were no assignment)}. ParseError when no NCCL_*
assignment is found (the probe's JSON may hold none: an environment without NCCL_* variables), or when
most lines are not assignments (not an environment listing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines
from .sniff.nccl_env import _PROMPT_RE, _assignment, sniff

INFO = ParserInfo(
    source="nccl_env",
    tool="env | grep ^NCCL_ (or /proc/<pid>/environ, a job script's exports)",
    description="the NCCL_* environment of a job: NCCL_IB_HCA, NCCL_SOCKET_IFNAME, P2P/IB/GDR/SHM switches, forced ALGO/PROTO",
    timeout_s=2.0,
    prolog_safe=True,  # reading os.environ: passive and instant (the live source still skips the prolog, whose
    probe="nccl_env",  # environment is not the job's)
)
SOURCE = INFO.source

MAX_VARS = 256


@dataclass(frozen=True)
class Overridden:
    name: str
    value: str
    line_no: int


@dataclass(frozen=True)
class NcclEnv:
    source: str
    form: str
    env: dict
    lines: dict
    overridden: tuple[Overridden, ...]
    other: int
    skipped: int


def _probe(text: str) -> Optional[NcclEnv]:
    """The live probe's JSON, or None when the text is not that JSON."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("probe") != "nccl_env" or not isinstance(data.get("env"), dict):
        return None
    env = {str(k): str(v) for k, v in data["env"].items() if str(k).startswith("NCCL_")}
    return NcclEnv(SOURCE, "probe", dict(sorted(env.items())), {k: None for k in sorted(env)}, (), 0, 0)


def parse(text: str) -> NcclEnv:
    probe = _probe(text)
    if probe is not None:
        return probe
    form = "environ" if "\0" in text else "env"
    env: dict[str, str] = {}
    where: dict[str, int] = {}
    overridden: list[Overridden] = []
    other = skipped = 0
    for n, line in enumerate(clean_lines(text), 1):
        for part in line.split("\0"):
            if not part.strip() or _PROMPT_RE.match(part):
                continue
            a = _assignment(part)
            if a is None:
                skipped += 1
                continue
            keyword, name, value = a
            if keyword and form == "env":
                form = "export"
            if not name.startswith("NCCL_"):
                other += 1
                continue
            if name in env and env[name] != value and len(overridden) < MAX_VARS:
                overridden.append(Overridden(name, env[name], where[name]))
            if name in env or len(env) < MAX_VARS:
                env[name], where[name] = value, n
    if not env:
        raise ParseError("expected NCCL_* environment variables (NAME=value lines, `export NAME=value`, "
                         "/proc/<pid>/environ): found none", len(text.splitlines()))
    if skipped > (len(env) + other) * 2:
        raise ParseError(f"expected an environment listing: {skipped} lines are no NAME=value assignment, "
                         f"only {len(env) + other} are", len(text.splitlines()))
    names = sorted(env)
    return NcclEnv(SOURCE, form, {k: env[k] for k in names}, {k: where[k] for k in names}, tuple(overridden),
                   other, skipped)
