"""The nvbandwidth catalogue (topodiag/catalogues/data/nvbandwidth.json): its waive and failure lines.

nvbandwidth writes its messages with C++ streams, not format strings, so each entry here gives
the format of what the stream prints (`format`, printf-style, %s for a streamed value) and a
needle: the literal that prints it in the source. For each tag the generator finds the needle
(git grep in the checkout at the tag) and records where it is and which releases print it.

    python tools/catalogue_nvbandwidth.py --source <nvbandwidth checkout or bare git dir> [--tags ...] [--write]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _catalogue_common as cc  # noqa: E402

REPO = "NVIDIA/nvbandwidth"
TAGS = ["v0.1", "v0.2", "v0.3", "v0.4", "v0.5", "v0.6", "v0.7", "v0.8"]

# (id, format as printed, needle in the source, class, severity or None, meaning or None)
MESSAGES = [
    ("nvbandwidth.waiving", "Waiving %s.", '"Waiving "', "p2p-unavailable", None,
     "nvbandwidth skipped the testcase: its filter refused the system (for a device_to_device test: fewer than two GPUs, or GPU pairs without peer access)."),
    # printed as status << ": " << msg with msg usually empty: "Waived: " whose trailing blank pastes lose
    ("nvbandwidth.waived", "Waived:%s", 'NVB_WAIVED("Waived")', "p2p-unavailable", None,
     "nvbandwidth skipped a testcase (the plain-text output does not name it): its filter refused the system (for a device_to_device test: fewer than two GPUs, or GPU pairs without peer access)."),
    ("nvbandwidth.testcase_error", "Error: %s", 'NVB_ERROR_STATUS("Error")', "benchmark-failure", None,
     "A testcase threw an error while it ran (a CUDA or NVML call failed): its results are missing."),
    ("nvbandwidth.testcase_not_found", "ERROR: %s", 'addTestcase(testcaseID, "ERROR", s)', "tool-usage", None,
     "nvbandwidth was asked for a testcase it does not have."),
    ("nvbandwidth.invalid_arguments", "ERROR: Invalid Arguments %s", '"ERROR: Invalid Arguments "', "tool-usage", None, None),
    ("nvbandwidth.prefix_no_match", "Specified list of testcase prefixes did not match any testcases",
     '"Specified list of testcase prefixes did not match any testcases"', "tool-usage", None, None),
    ("nvbandwidth.cuda_error", "[%s] %s in expression %s", '"] " << errDescStr << " in expression "', "cuda-failure", None,
     "A CUDA driver call failed inside nvbandwidth (the bracket names the CUresult): a GPU fault (see the kernel log's Xid), out of memory, or peer access refused."),
    ("nvbandwidth.cuda_error_old", "[%s] %s", '"[" << errNameStr << "] " << errDescStr;', "cuda-failure", None,
     "A CUDA driver call failed inside nvbandwidth (the bracket names the CUresult): a GPU fault, out of memory, or peer access refused."),
    ("nvbandwidth.nvml_error", "NVML_ERROR: [%s]", '"NVML_ERROR: ["', "tool-error", None,
     "An NVML call failed inside nvbandwidth (the bracket names the NVML error)."),
    ("nvbandwidth.assert", "ASSERT in expression %s", '"ASSERT in expression "', "internal-bug", None,
     "A check inside nvbandwidth failed and it aborted (for a pattern check: a copy between the GPUs returned wrong data, a fault on that path or in the driver): the testcase measured nothing."),
]


def locate(gdir: str, tag: str, needle: str) -> tuple[str, int] | None:
    out = subprocess.run(["git", "--git-dir", gdir, "grep", "-n", "-F", needle, tag, "--", "*.cpp", "*.h"],
                         capture_output=True, text=True)
    for line in out.stdout.splitlines():
        _, path, n, _ = line.split(":", 3)
        if not path.startswith("json/"):
            return path, int(n)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--tags", nargs="*", default=TAGS)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    gdir = cc.git_dir(args.source)
    records: dict[str, list[dict]] = {}
    for tag in args.tags:
        records[tag] = []
        for ident, fmt, needle, *_ in MESSAGES:
            found = locate(gdir, tag, needle)
            if found:
                records[tag].append({"id": ident, "format": fmt, "level": "stdout", "file": found[0], "line": found[1]})
    entries = cc.build(records, args.tags, REPO)
    curated = {m[0]: m for m in MESSAGES}
    for e in entries:
        _, _, _, cls, severity, meaning = curated[e["id"]]
        e["class"], e["rule"] = cls, "PERF008"
        if severity:
            e["severity"] = severity
        if meaning:
            e["meaning"] = meaning
    cat = {"producer": "nvbandwidth", "title": "nvbandwidth: waived testcases and failures",
           "readers": ["nvbandwidth"],
           "sources": [{"repo": REPO, "tags": args.tags, "generated_by": "tools/catalogue_nvbandwidth.py"}],
           "entries": entries}
    return cc.report_and_write("nvbandwidth", cat, args.write)


if __name__ == "__main__":
    raise SystemExit(main())
