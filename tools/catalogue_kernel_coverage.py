"""Measure how much of the NVIDIA driver's and the kernel's fault-signalling messages the kernel_log
reader recognises: each message rendered as the kernel prints it (a dmesg stamp, the driver's prefix)
and read through topodiag's own path (the gate, the prefix split, the catalogues).

    python tools/catalogue_kernel_coverage.py --source <git dir of NVIDIA/open-gpu-kernel-modules> [--tag T]

Prints, for the tag (default: the newest): kernel-open's error-level NVRM messages (nv_printf /
NV_DEV_PRINTF / NV_DEV_PRINTF_STATUS at NV_DBG_ERRORS whose text starts with "NVRM"), how many are
recognised, how many get a class other than the generic gpu-driver-error, and the AER error names.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue_kernel_c import Git, calls, lines_of, load_curation  # noqa: E402
from catalogue_kernel_nvrm import _format, default_tags  # noqa: E402

from topodiag import catalogues  # noqa: E402
from topodiag.catalogues import fmt  # noqa: E402
from topodiag.parsers import _kernel_log_events as kev  # noqa: E402


def _read(line: str):
    ev = kev.Events()
    if not ev.gated(1, line):
        return None
    _device, message = kev.split(line)
    return catalogues.classify_for("kernel_log", message) if message else None


def nvrm(git: Git, tag: str) -> tuple[int, int, int, list]:
    total = hit = specific = 0
    missed = []
    for path in git.files(tag, r"NV_DBG_ERRORS", "kernel-open"):
        src = git.show(tag, path)
        for name, args, _line in calls(src, ("nv_printf", "NV_DEV_PRINTF", "NV_DEV_PRINTF_STATUS")):
            got = _format(name, args)
            if not got or got[0] != "error":
                continue
            first = lines_of(got[1])[0] if lines_of(got[1]) else ""
            if not first.startswith("NVRM"):
                continue
            total += 1
            m = _read("[  115.083711] " + fmt.example(first))
            if m is None:
                missed.append(first)
                continue
            hit += 1
            specific += m.entry.cls != "gpu-driver-error"
    return total, hit, specific, missed


def aer_names() -> tuple[int, int]:
    names = load_curation(Path(__file__).resolve().parent / "kernel_linux_messages.toml").get("aer_bits", {})
    ok = 0
    for name in names:
        ev = kev.Events()
        ev.line(1, "[ 1.0] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0")
        for line in (f"[ 1.1] pcieport 0000:00:01.0: AER:    [ 3] {name:<22}(First)", f"[ 1.1] pcieport 0000:00:01.0:    [ 3] {name}"):
            _device, message = kev.split(line)
            m = catalogues.classify_for("kernel_log", message) if ev.gated(2, line) else None
            ok += m is not None and m.entry.id.startswith("aer.bit.")
    return len(names) * 2, ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--tag")
    a = ap.parse_args(argv)
    git = Git(a.source)
    tag = a.tag or default_tags(git)[-1]
    total, hit, specific, missed = nvrm(git, tag)
    print(f"{tag}: kernel-open error-level NVRM messages: {total}; recognised {hit} ({100 * hit / max(total, 1):.1f}%); "
          f"with a specific class {specific} ({100 * specific / max(total, 1):.1f}%)")
    for m in missed[:20]:
        print(f"  missed: {m!r}")
    n, ok = aer_names()
    print(f"AER error names (new and old, with and without 'AER: '): {ok} of {n}")
    for p in ("nvrm", "aer", "mlx5", "iommu", "peermem"):
        cat = catalogues.load(p)
        print(f"{p}: {len(cat.entries)} entries, classes {dict(Counter(e.cls for e in cat.entries).most_common(6))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
