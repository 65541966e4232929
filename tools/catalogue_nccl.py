#!/usr/bin/env python3
"""Re-extract the NCCL catalogue (and its net plugins') from a source checkout, at every release tag.

    python tools/catalogue_nccl.py --source /path/to/nccl.git [--producer nccl] [--tags v2.19.3-1 ...] [--write]
    python tools/catalogue_nccl.py --producer aws-ofi-nccl --source /path/to/aws-ofi-nccl.git --write
    python tools/catalogue_nccl.py --producer nccl-rdma-sharp-plugins --source /path/to/plugins.git --write

For every release tag (NCCL: v2.3 .. newest; the plugins: every release tag) it reads the sources with
`git show TAG:path` (no checkout), extracts each WARN(...) format string (NCCL_OFI_WARN for
aws-ofi-nccl, which prints "NET/OFI " before it) and the INFO(...) ones that signal a fault (their
format says failed / error / unable / could not / timeout, or is the NCCLCHECK "-> %d" chain), with
file:line, de-duplicates them by format string and records the releases that print each ({first,
last}: last null while the newest tag still prints it) and where ({repo, tag, file, line} at the
first tag and at the newest that prints it). NCCL's ncclGetErrorString texts and ncclResult_t names
are entries too. Each entry is classified by its file and wording (classify below); hand curation
(meaning/fix/severity/class/consequence/fixed_in, and entries with no format string) comes from
tools/nccl_curation.toml and is merged on every run, so re-generation never loses it.

Without --write it prints what is new or gone against the shipped JSON. The producers' code is read,
never copied: the catalogue holds messages and provenance only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from catalogue_nccl_extract import extract  # noqa: E402
from catalogue_nccl_rules import classify, is_fallback, is_fault_info  # noqa: E402

from topodiag.catalogues import fmt as _fmt  # noqa: E402

DATA = REPO / "topodiag" / "catalogues" / "data"
CURATION = HERE / "nccl_curation.toml"

PRODUCERS = {
    "nccl": {"repo": "NVIDIA/nccl", "title": "NCCL (NVIDIA Collective Communications Library)",
             "tag_re": r"^v2\.(\d+)\.(\d+)-(\d+)$", "min": (2, 3), "coverage_from": (4, 0), "dirs": ("src",),
             "macros": {"WARN": 0, "INFO": 1, "INFO_LOC": 1}, "prefix": ""},
    "aws-ofi-nccl": {"repo": "aws/aws-ofi-nccl", "title": "aws-ofi-nccl (NCCL net plugin over libfabric)",
                     "tag_re": r"^v(\d+)\.(\d+)\.(\d+)(?:-?aws)?$", "min": (0, 9), "dirs": ("src", "include"),
                     "macros": {"NCCL_OFI_WARN": 0, "NCCL_OFI_INFO": 1}, "prefix": "NET/OFI "},
    "nccl-rdma-sharp-plugins": {"repo": "Mellanox/nccl-rdma-sharp-plugins",
                                "title": "nccl-rdma-sharp-plugins (NCCL IB/UCX/SHARP net and collnet plugins)",
                                "tag_re": r"^v(\d+)\.(\d+)(?:\.(\d+))?$", "min": (1, 0), "dirs": ("src", "include"),
                                "macros": {"WARN": 0, "INFO": 1}, "prefix": "",
                                "head": "master"},  # HPC-X ships builds of master newer than the last tag
}
SOURCE_EXT = (".c", ".cc", ".cu", ".cpp", ".h", ".hpp", ".cuh", ".in")
MIN_LITERAL = 4  # a format with less fixed text ("%s", "%s:%d") says nothing by itself
RESULT_CLASS = {"ncclUnhandledCudaError": "cuda-failure", "ncclSystemError": "system-failure",
                "ncclInternalError": "internal-bug", "ncclInvalidArgument": "api-misuse",
                "ncclInvalidUsage": "api-misuse", "ncclRemoteError": "remote-failure",
                "ncclInProgress": "informational", "ncclTimeout": "timeout", "ncclSuccess": "informational"}


def git(src: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", src, *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def release_tags(src: str, spec: dict, only: list[str] | None) -> list[str]:
    rx = re.compile(spec["tag_re"])
    tags = []
    for t in git(src, "tag").split():
        m = rx.match(t)
        if m and tuple(int(x or 0) for x in m.groups()[:2]) >= spec["min"]:
            tags.append((tuple(int(x or 0) for x in m.groups()), t))
    tags.sort()
    # one tag per version: "v1.7.0-aws" and "v1.7.0" name the same release
    seen, out = set(), []
    for key, t in tags:
        if key not in seen:
            seen.add(key)
            out.append(t)
    out = [t for t in out if not only or t in only]
    if spec.get("head") and not only:
        out.append(spec["head"])
    return out


def blobs(src: str, tag: str, dirs: tuple) -> list[tuple[str, str]]:
    out = []
    for line in git(src, "ls-tree", "-r", tag, "--", *dirs).splitlines():
        meta, path = line.split("\t", 1)
        if path.endswith(SOURCE_EXT) and "/test" not in path and meta.split()[1] == "blob":
            out.append((path, meta.split()[2]))
    return out


def read_blobs(src: str, shas: list[str]) -> dict[str, str]:
    if not shas:
        return {}
    p = subprocess.run(["git", "--git-dir", src, "cat-file", "--batch"], input=("\n".join(shas) + "\n").encode(),
                       capture_output=True, check=True)
    out, data, pos = {}, p.stdout, 0
    for sha in shas:
        nl = data.index(b"\n", pos)
        size = int(data[pos:nl].split()[2])
        out[sha] = data[nl + 1:nl + 1 + size].decode("utf-8", "replace")
        pos = nl + 1 + size + 1
    return out


def result_strings(text: str) -> list[tuple[str, str, int]]:
    """ncclGetErrorString's texts: [(result name, text, line)] from the function's switch."""
    at = text.find("ncclGetErrorString(ncclResult_t code)")
    if at < 0:
        return []
    end = text.find("\n}", at)
    out = []
    for m in re.finditer(r"case (\w+)\s*:\s*(?:\n\s*)?return \"([^\"]+)\"", text[at:end]):
        out.append((m.group(1), m.group(2), text.count("\n", 0, at + m.start()) + 1))
    return out


def scan(src: str, producer: str, tags: list[str]) -> dict:
    """{format: {level, first, last, where_first, where_last, file}} over the tags."""
    spec = PRODUCERS[producer]
    cache: dict[str, list] = {}
    found: dict[str, dict] = {}
    seen_warn: set[str] = set()  # every WARN format of the releases the coverage is measured on
    for tag in tags:
        files = blobs(src, tag, spec["dirs"])
        todo = [sha for _, sha in files if sha not in cache]
        for sha, text in read_blobs(src, sorted(set(todo))).items():
            calls = [(m, spec["prefix"] + f, ln) for m, f, ln in extract(text, spec["macros"])]
            calls += [("RESULT:" + name, s, ln) for name, s, ln in result_strings(text)]
            cache[sha] = calls
        for path, sha in files:
            for macro, f, line in cache[sha]:
                level = "WARN" if macro.endswith("WARN") else ("INFO" if not macro.startswith("RESULT") else macro)
                if level == "INFO" and not is_fault_info(f):
                    continue
                if level == "WARN" and tag_at_least(tag, spec):
                    seen_warn.add(f.rstrip())
                if not macro.startswith("RESULT") and _fmt.literal_size(f.replace(spec["prefix"], "", 1)) < MIN_LITERAL:
                    continue
                f = f.rstrip()  # trailing blanks and newline: invisible in a log line
                rec = found.get(f)
                here = {"repo": spec["repo"], "tag": tag, "file": path, "line": line}
                if rec is None:
                    found[f] = {"level": level, "first": tag, "last": tag, "where_first": here, "where_last": here}
                else:
                    if rec["last"] != tag:
                        rec["last"], rec["where_last"] = tag, here
                    if level == "WARN" and rec["level"] == "INFO":
                        rec["level"] = "WARN"
    return found, seen_warn


def tag_at_least(tag: str, spec: dict) -> bool:
    """A release the coverage is measured on (NCCL: 2.4 and later; the plugins: every release)."""
    m = re.match(spec["tag_re"], tag)
    return m is None or tuple(int(x or 0) for x in m.groups()[:2]) >= spec.get("coverage_from", spec["min"])


def _slug(f: str) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z0-9]+", re.sub(r"%[-+ #0-9.]*[a-zA-Z]+", " ", f))
    return "_".join(w.lower() for w in words[:6]) or "fmt"


def entry_id(producer: str, f: str, where: dict) -> str:
    area = Path(where["file"]).stem.replace(".", "_").replace("-", "_")
    short = hashlib.sha1(f.encode()).hexdigest()[:6]
    return f"{producer.replace('-', '_')}.{area}.{_slug(f)}.{short}"


def load_curation() -> dict:
    try:
        import tomllib  # noqa: PLC0415
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]  # noqa: PLC0415
    with open(CURATION, "rb") as fh:
        return tomllib.load(fh)


CURATED = ("class", "severity", "meaning", "fix", "rule", "consequence", "fixed_in")


def curate(entry: dict, cur: list[dict]) -> dict:
    """Apply every curation rule that selects this entry (by exact format, or a regex `match` searched
    in the format), in file order: later rules win."""
    for c in cur:
        if c.get("producer", "nccl") != entry["_producer"]:
            continue
        f = entry.get("format") or ""
        if ("format" in c and c["format"] != f) or ("match" in c and not re.search(c["match"], f)):
            continue
        if "level" in c and c["level"] != entry.get("level"):
            continue
        for k in CURATED:
            if k in c:
                entry[k] = c[k]
        if "class" in c:
            entry["_fallback"] = False  # a person read it
    return entry


def build(producer: str, src: str, tags: list[str]) -> dict:
    spec = PRODUCERS[producer]
    found, seen_warn = scan(src, producer, tags)
    newest = tags[-1]
    cur = load_curation()
    entries = []
    for f, rec in sorted(found.items(), key=lambda kv: (kv[1]["where_first"]["file"], kv[1]["where_first"]["line"])):
        level = rec["level"]
        where = [rec["where_first"]] + ([rec["where_last"]] if rec["where_last"] is not rec["where_first"] else [])
        e = {"_producer": producer, "id": entry_id(producer, f, rec["where_first"]), "format": f, "level": level,
             "versions": {"first": rec["first"], "last": None if rec["last"] == newest else rec["last"]},
             "where": where}
        if level.startswith("RESULT:"):
            name = level.split(":", 1)[1]
            e.update({"level": "ncclGetErrorString", "class": RESULT_CLASS.get(name, "internal-bug"), "result": name,
                      "id": f"nccl.result.{name}.{hashlib.sha1(f.encode()).hexdigest()[:6]}"})
        else:
            e["class"], e["_fallback"] = classify(rec["where_first"]["file"], f, level), is_fallback(rec["where_first"]["file"], f)
            if level == "INFO":
                e["severity"] = "info"
        if "\n" in f:  # a log shows one line of it at a time: matched on its first line
            e["pattern"] = _fmt.to_regex(f.split("\n", 1)[0])
        entries.append(curate(e, cur.get("entry", [])))
    for extra in cur.get("extra", []):
        if extra.get("producer", "nccl") == producer:
            e = {k: v for k, v in extra.items() if k != "producer"}
            e["_producer"] = producer
            entries.append(e)
    generic = sum(1 for e in entries if e.pop("_fallback", False))
    for e in entries:
        e.pop("_producer", None)
    catalogued = sum(1 for f in seen_warn if f in found)
    coverage = {"from": next((t for t in tags if tag_at_least(t, spec)), tags[0]),
                "warn_formats_in_source": len(seen_warn), "warn_formats_catalogued": catalogued,
                "classified_by_fallback_only": generic,  # no wording rule and no curation: "internal-bug" by default
                "left_out": "formats with fewer than %d fixed characters (\"%%s\", \"%%s:%%d\")" % MIN_LITERAL}
    return {"producer": producer, "title": spec["title"], "readers": ["nccl_debug"],
            "sources": [{"repo": spec["repo"], "tags": [tags[0], newest], "tags_read": len(tags),
                         "generated_by": "tools/catalogue_nccl.py",
                         "curated_by": "tools/nccl_curation.toml", "coverage": coverage}],
            "entries": entries}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="a git directory (bare or not) of the producer")
    ap.add_argument("--producer", default="nccl", choices=sorted(PRODUCERS))
    ap.add_argument("--tags", nargs="*", help="only these tags (default: every release tag)")
    ap.add_argument("--write", action="store_true", help="rewrite the shipped JSON")
    a = ap.parse_args(argv)
    src = a.source if a.source.endswith(".git") or Path(a.source, "HEAD").exists() else str(Path(a.source, ".git"))
    tags = release_tags(src, PRODUCERS[a.producer], a.tags)
    if not tags:
        print("no release tags found", file=sys.stderr)
        return 2
    cat = build(a.producer, src, tags)
    path = DATA / f"{a.producer}.json"
    old = json.loads(path.read_text()) if path.exists() else {"entries": []}
    before = {e.get("format") or e.get("pattern") for e in old["entries"]}
    after = {e.get("format") or e.get("pattern") for e in cat["entries"]}
    for f in sorted(after - before):
        print(f"new:  {f!r}")
    for f in sorted(before - after):
        print(f"gone: {f!r}")
    print(f"{a.producer}: {len(tags)} tags {tags[0]} .. {tags[-1]}; {len(cat['entries'])} entries "
          f"({len(after - before)} new, {len(before - after)} gone)", file=sys.stderr)
    if a.write:
        DATA.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(cat, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
