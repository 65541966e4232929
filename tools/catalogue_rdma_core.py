"""Extract rdma-core's failure and warning messages into two catalogues:

  rdma-core.json          libibverbs (init.c, device.c, dynamic_driver.c) and ibv_devinfo
                          (libibverbs/examples/devinfo.c): what ibv_devinfo / ibv_devices print
  infiniband-diags.json   infiniband-diags (ibstat.c, iblinkinfo.c, ibnetdiscover.c,
                          ibdiag_common.c, scripts/ibstatus) and libibumad (umad.c, sysfs.c):
                          what ibstat / ibstatus / iblinkinfo / ibnetdiscover print

    python tools/catalogue_rdma_core.py --source <rdma-core checkout or bare git dir> [--tags ...] [--write]

Messages are taken from the calls that print them (fprintf(stderr, ...), perror, the IBWARN /
IBPANIC / IBEXIT / IBND_ERROR macros, ibstatus' `fatal`) at each tag (git show TAG:path), with the macros'
own prefixes expanded as the tool prints them ("ibpanic: [%d] %s: <fmt>: %m" with %m as %s;
IBEXIT: "%s: iberror: failed: <fmt>"; IBND_ERROR: "%s:%u; <fmt>" (file:line); libibverbs' PFX "libibverbs: "). Only fault-signalling
messages are kept (usage and help text are not). Classes and fixes come from
tools/rdma_core_curation.toml; prints what is new or gone against the shipped JSON; --write
rewrites it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _catalogue_common as cc  # noqa: E402

REPO = "linux-rdma/rdma-core"
TAGS = ["v24.0", "v30.0", "v40.0", "v50.0", "v57.0", "v64.0"]
VERBS_FILES = ["libibverbs/init.c", "libibverbs/device.c", "libibverbs/dynamic_driver.c",
               "libibverbs/examples/devinfo.c"]
DIAGS_FILES = ["infiniband-diags/ibstat.c", "infiniband-diags/iblinkinfo.c", "infiniband-diags/ibnetdiscover.c",
               "infiniband-diags/ibdiag_common.c", "infiniband-diags/ibdiag_sa.c", "libibumad/umad.c",
               "libibumad/sysfs.c", "libibmad/rpc.c", "libibnetdisc/ibnetdisc.c"]
SCRIPTS = ["infiniband-diags/scripts/ibstatus"]
MACROS = {"PFX": "libibverbs: ", "SYS_INFINIBAND": "/sys/class/infiniband", "IB_UMAD_ABI_VERSION": "%d"}

# call name -> (index of the format argument, prefix, suffix, level)
CALLS = {
    "fprintf": (1, "", "", "stderr"),
    "perror": (0, "", ": %s", "stderr"),
    "IBWARN": (0, "ibwarn: [%d] %s: ", "", "ibwarn"),
    "IBPANIC": (0, "ibpanic: [%d] %s: ", ": %s", "ibpanic"),
    "IBEXIT": (0, "%s: iberror: failed: ", "", "iberror"),
    "IBND_ERROR": (0, "%s:%u; ", "", "ibnd_error"),
}
CALL_RE = re.compile(r"\b(fprintf|perror|IBWARN|IBPANIC|IBEXIT|IBND_ERROR)\s*\(")
FAULT_RE = re.compile(r"fail|error|warn|fatal|can't|cannot|couldn't|could not|unable|invalid|no |not found|"
                      r"wasn't|mismatch|unsupported|not supported|denied|missing|bad ", re.I)


def extract_c(text: str, path: str, producer: str) -> list[dict]:
    out = []
    for m in CALL_RE.finditer(text):
        if text[max(0, m.start() - 8):m.start()].rstrip().endswith("define"):
            continue  # the macro's own definition
        args = cc.call_args(text, m.end() - 1)
        if args is None:
            continue
        idx, prefix, suffix, level = CALLS[m.group(1)]
        parts = cc.split_args(args)
        if m.group(1) == "fprintf" and (not parts or parts[0] != "stderr"):
            continue
        if len(parts) <= idx:
            continue
        body = cc.string_of(parts[idx], MACROS)
        if body is None or not FAULT_RE.search(body):
            continue
        fmt = (prefix + body.replace("%m", "%s").rstrip("\n") + suffix).strip()
        if len(fmt) < 8 or "\n" in fmt.strip():
            continue
        line = text.count("\n", 0, m.start()) + 1
        out.append({"format": fmt, "level": level, "file": path, "line": line})
    return out


def extract_ibstatus(text: str, path: str) -> list[dict]:
    """ibstatus is a shell script: `fatal "..."` prints "Fatal error: " and its arguments."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        m = re.search(r'(?:^|[|;&(]|\s)fatal\s+(?:"([^"]*)"|([^;)`]*))', line)
        if m and not line.lstrip().startswith(("fatal()", "#")):
            body = re.sub(r"\$\{?[A-Za-z0-9_]+\}?|\$\*", "%s", (m.group(1) or m.group(2) or "").strip())
            out.append({"format": "Fatal error:  " + body, "level": "fatal", "file": path, "line": n})
    return out


def name(producer: str, rec: dict, taken: dict) -> str:
    stem = Path(rec["file"]).stem.replace("-", "_")
    base = f"{producer.replace('-', '_')}.{stem}.{cc.slug(rec['format'], 8)}"
    i, ident = 1, base
    while taken.get(ident, rec["format"]) != rec["format"]:
        i += 1
        ident = f"{base}_{i}"
    taken[ident] = rec["format"]
    return ident


def extract(gdir: str, tags: list[str]) -> dict[str, dict[str, list[dict]]]:
    """{producer: {tag: [records]}}."""
    out: dict[str, dict[str, list[dict]]] = {"rdma-core": {}, "infiniband-diags": {}}
    taken: dict[str, dict] = {"rdma-core": {}, "infiniband-diags": {}}
    for tag in tags:
        for producer, files in (("rdma-core", VERBS_FILES), ("infiniband-diags", DIAGS_FILES + SCRIPTS)):
            recs = []
            for path in files:
                text = cc.show(gdir, tag, path)
                if text is None:
                    continue
                found = extract_ibstatus(text, path) if path in SCRIPTS else extract_c(text, path, producer)
                for r in found:
                    r["id"] = name(producer, r, taken[producer])
                    recs.append(r)
            out[producer][tag] = recs
    return out


HEADS = {
    "rdma-core": ("rdma-core libibverbs and ibv_devinfo: failure and warning messages",
                  ["ibv_devinfo", "ibstat", "ibstatus", "iblinkinfo", "ibnetdiscover"]),
    "infiniband-diags": ("infiniband-diags (ibstat, ibstatus, iblinkinfo, ibnetdiscover) and libibumad: failure and warning messages",
                         ["ibstat", "ibstatus", "iblinkinfo", "ibnetdiscover", "ib_counters"]),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="an rdma-core checkout or bare git dir")
    ap.add_argument("--tags", nargs="*", default=TAGS)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    gdir = cc.git_dir(args.source)
    missing = [t for t in args.tags if t not in set(cc.tags(gdir))]
    if missing:
        cc.fail(f"no such tags in {args.source}: {missing}")
    curation = cc.load_curation(Path(__file__).resolve().parent / "rdma_core_curation.toml")
    for producer, by_tag in extract(gdir, args.tags).items():
        title, readers = HEADS[producer]
        entries = cc.curate(cc.build(by_tag, args.tags, REPO), curation, "tool-error")
        entries = [e for e in entries if e["id"].startswith(producer.replace("-", "_") + ".") or e.get("producer") == producer]
        cat = {"producer": producer, "title": title, "readers": readers,
               "sources": [{"repo": REPO, "tags": args.tags, "generated_by": "tools/catalogue_rdma_core.py"}],
               "entries": entries}
        cc.report_and_write(producer, cat, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
