"""Reports for the fleet tests, made by the check pipeline on fixtures/hosts/* (never committed)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "fixtures" / "hosts"
BASE_SCENARIO = HOSTS / "hgx-h100-healthy-assembled"
NCCL = ROOT / "fixtures" / "nccl_debug"
INVENTED_LOG = NCCL / "nccl-invented-one-host-socket-4node-01.log"  # invented: see its #@ header


def scenarios() -> list[Path]:
    return sorted(p for p in HOSTS.iterdir() if p.is_dir())


@pytest.fixture(scope="session")
def host_reports() -> dict[str, dict]:
    """scenario name -> the JSON report `topodiag check --from fixtures/hosts/NAME --format json` prints."""
    from topodiag.fleet.reports import bundle_report

    return {p.name: bundle_report(str(p)) for p in scenarios()}


@pytest.fixture(scope="session")
def base_report(host_reports) -> dict:
    """The healthy 8x H100 HGX node's report (35 fingerprint keys, no findings)."""
    return host_reports[BASE_SCENARIO.name]


def node(base: dict, host: str, **changes) -> dict:
    """A copy of `base` as node `host` (None: a report without host), its fingerprint changed:
    fp={key: value} sets values, drop=[key, ...] removes keys."""
    r = copy.deepcopy(base)
    r["host"] = host
    fp = r["fingerprint"]
    for key, value in changes.pop("fp", {}).items():
        fp[key] = value
    for key in changes.pop("drop", ()):
        fp.pop(key)
    assert not changes, changes
    return r


def write_jsonl(path: Path, reports: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in reports))
    return path
