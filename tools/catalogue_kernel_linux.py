"""Generate topodiag/catalogues/data/{aer,mlx5,iommu}.json: the Linux kernel's own kernel-log messages
that topodiag reads (PCIe AER, the mlx5_core health reporter, Intel DMAR / AMD-Vi / arm-smmu faults).

    python tools/catalogue_kernel_linux.py [--source <linux git dir> --tags v6.8 ...] [--write]

The messages are kept as data in tools/kernel_linux_messages.toml (format strings as the kernel source
writes them, with the commit and function that print them): a Linux checkout is 8.6 GB, so the list
was transcribed from stored copies of the files. With --source, each curated format is looked up in
the named files at each tag (git show TAG:path) and the ones no tag prints are listed, as are the
format strings of those files' printing calls that the list lacks (so a new kernel's messages show
up). --write rewrites the three JSON files from the list.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue_kernel_c import Git, calls, diff_and_write, literal, load_curation, slug  # noqa: E402

MESSAGES = Path(__file__).resolve().parent / "kernel_linux_messages.toml"
TITLES = {"aer": "PCIe Advanced Error Reporting (drivers/pci/pcie/aer.c) in the kernel log",
          "mlx5": "mlx5_core (NVIDIA/Mellanox ConnectX) health reporter in the kernel log",
          "iommu": "IOMMU faults (Intel DMAR, AMD-Vi, arm-smmu) in the kernel log"}
PRINTERS = ("pci_err", "pci_info", "pci_warn", "pci_printk", "dev_err", "dev_info", "dev_warn", "pr_err",
            "pr_warn", "pr_info", "mlx5_core_err", "mlx5_core_warn", "mlx5_core_info")
KEEP = ("id", "format", "pattern", "class", "severity", "consequence", "level")


def _where(src: dict, function: str | None) -> dict:
    w = {"repo": src["repo"], "tag": src["commit"], "file": src["file"]}
    if function:
        w["function"] = function
    return w


def _entry(producer: str, raw: dict, sources: list) -> dict:
    e = {k: raw[k] for k in KEEP if k in raw}
    e["where"] = [_where(sources[raw.get("where", 0)], raw.get("function"))]
    return e


def _aer_bits(data: dict, sources: list) -> list[dict]:
    """One entry per error name, as the bit line prints it, with and without the "AER: " of dev_fmt."""
    out = []
    for name, (cls, bit, src) in data.get("aer_bits", {}).items():
        base = f"aer.bit.{slug(name)}"
        where = [_where(sources[src], "__aer_print_error" + (f" (bit {bit})" if bit >= 0 else ""))]
        out.append({"id": base, "format": f"AER: [%2d] {name}%s", "class": cls, "consequence": True,
                    "where": where})
        out.append({"id": base + ".bare", "format": f"[%2d] {name}%s", "class": cls, "consequence": True,
                    "where": where})
    return out


def _mlx5_syndromes(data: dict, sources: list) -> list[dict]:
    out = []
    for words, synd in data.get("mlx5_syndromes", {}).items():
        where = [_where(sources[0], f"hsynd_str ({synd})")]
        sev = {"High temperature": "error", "HW fatal error": "critical", "unrecoverable hardware error": "critical"}
        for kind, fmt in (("synd", f"synd 0x%x: {words}"), ("issue", f"Health issue observed, {words}, severity(%d) %s:")):
            e = {"id": f"mlx5.health.{kind}.{slug(words)}", "format": fmt, "class": "nic-health", "where": where}
            if words in sev:
                e["severity"] = sev[words]
            out.append(e)
    return out


def build(data: dict) -> dict[str, dict]:
    docs = {}
    for producer in ("aer", "mlx5", "iommu"):
        sources = data["sources"][producer]
        entries = [_entry(producer, raw, sources) for raw in data.get(producer, ())]
        if producer == "aer":
            entries += _aer_bits(data, sources)
        if producer == "mlx5":
            entries += _mlx5_syndromes(data, sources)
        docs[producer] = {"producer": producer, "title": TITLES[producer], "readers": ["kernel_log"],
                          "sources": [{"repo": s["repo"], "tags": [s["commit"]], "file": s["file"],
                                       "note": s.get("note", ""), "generated_by": "tools/catalogue_kernel_linux.py"}
                                      for s in sources],
                          "entries": sorted(entries, key=lambda e: e["id"])}
    return docs


def check(git: Git, tags: list[str], data: dict, docs: dict) -> None:
    """Which curated formats no tag's source prints, and which printed formats the list lacks."""
    for producer, doc in docs.items():
        printed: set[str] = set()
        for tag in tags:
            for src in data["sources"][producer]:
                text = git.show(tag, src["file"])
                for _name, args, _line in calls(text, PRINTERS):
                    fmt = next((literal(a, {}) for a in args if a.lstrip().startswith('"')), None)
                    if fmt:
                        printed.add(fmt.strip())
        ours = {re.sub(r"^(AER|DMAR|AMD-Vi): +", "", e.get("format") or "").strip() for e in doc["entries"]}
        for e in doc["entries"]:
            f = re.sub(r"^(AER|DMAR|AMD-Vi): +", "", e.get("format") or "").strip()
            if f and f not in printed and not e["id"].startswith(("aer.bit.", "mlx5.health.synd.", "mlx5.health.issue.")):
                print(f"? {producer} {e['id']}: not printed at {', '.join(tags)}: {f!r}")
        for f in sorted(printed - ours):
            print(f"+ {producer}: printed, not catalogued: {f!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", help="git dir of a Linux kernel repository, to check the list against")
    ap.add_argument("--tags", nargs="*", default=[], help="kernel tags to check (with --source)")
    ap.add_argument("--write", action="store_true", help="rewrite the three JSON files")
    a = ap.parse_args(argv)
    data = load_curation(MESSAGES)
    docs = build(data)
    if a.source:
        check(Git(a.source), a.tags or ["HEAD"], data, docs)
    for producer, doc in docs.items():
        diff_and_write(producer, doc, a.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
