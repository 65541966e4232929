"""Host scenarios: `fixtures/hosts/<name>/` in the bundle layout (topodiag/sources/bundle.py), with
`fixtures/hosts/<name>.expected.json` beside it (what `check` must report, written by hand from the
members' `#@ expected:` lines).

Make one from saved outputs (the members keep their `#@` provenance header):

    python -m tests.host_fixture NAME --host HOST --note "where the outputs came from" \\
        nvidia_smi_topo_m=fixtures/nvidia_smi_topo_m/x.txt nccl_debug=fixtures/nccl_debug/y.log

then write NAME.expected.json: {"description", "exit_code", "findings": [{"code", "severity",
"subjects" (those the finding must name, a subset)}]}. The test runs `check` on the directory and
wants exactly those (code, severity) pairs, nothing more.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / "fixtures" / "hosts"

# The command each source's output comes from, for the manifest's argv.
ARGV = {
    "nvidia_smi_topo_m": ["nvidia-smi", "topo", "-m"],
    "nvidia_smi_topo_p2p": ["nvidia-smi", "topo", "-p2p", "rw"],
    "nvidia_smi_nvlink_s": ["nvidia-smi", "nvlink", "-s"],
    "nvidia_smi_nvlink_e": ["nvidia-smi", "nvlink", "-e"],
    "nvidia_smi_nvlink_c": ["nvidia-smi", "nvlink", "-c"],
    "nvidia_smi_nvlink_info": ["nvidia-smi", "nvlink", "-info"],
    "ibstat": ["ibstat"],
    "ibstatus": ["ibstatus"],
    "ibv_devinfo": ["ibv_devinfo", "-v"],
    "show_gids": ["show_gids"],
    "kernel_log": ["dmesg"],
    "iblinkinfo": ["iblinkinfo"],
    "ibnetdiscover": ["ibnetdiscover"],
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make(name: str, host: str, notes: list[str], members: list[tuple[str, Path]]) -> Path:
    root = HOSTS / name
    if root.exists():
        shutil.rmtree(root)
    (root / "commands").mkdir(parents=True)
    sources = []
    seen: dict[str, int] = {}
    for source, path in members:
        seen[source] = seen.get(source, 0) + 1
        suffix = "" if seen[source] == 1 else f"-{seen[source]}"
        member = f"commands/{source}{suffix}{path.suffix or '.txt'}"
        shutil.copyfile(path, root / member)
        sources.append({"source": source, "status": "ok", "member": member, "argv": ARGV.get(source, []),
                        "rc": 0, "duration_s": None, "timed_out": False, "sha256": sha256(root / member),
                        "reason": ""})
        notes.append(f"{member}: copy of {path.relative_to(ROOT)}")
    manifest = {"schema_version": 1, "tool": {"name": "topodiag", "version": "fixture"}, "host": host,
                "created": None, "redacted": False, "notes": notes, "sources": sources}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return root


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.host_fixture")
    ap.add_argument("name")
    ap.add_argument("--host", required=True)
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("members", nargs="+", metavar="SOURCE=FILE")
    args = ap.parse_args(argv)
    members = []
    for m in args.members:
        source, _, file = m.partition("=")
        members.append((source, (ROOT / file).resolve()))
    print(make(args.name, args.host, list(args.note), members))
    return 0


if __name__ == "__main__":
    sys.exit(main())
