#!/usr/bin/env python3
"""Re-extract nccl-tests' failure messages from its source, at each release tag.

    python tools/catalogue_nccl_tests.py --source <nccl-tests git dir> [--tags v2.19.6 ...]
        [--nccl-source <nccl git dir> [--nccl-tags v2.4.8-1 ...]] [--write]
    python tools/catalogue_nccl_tests.py --check        # no source, no network

nccl-tests prints its failures with printf: the CUDACHECK / NCCLCHECK / TESTCHECK macros of
src/common.h ("%s: Test CUDA failure %s:%d '%s'", "%s: Test NCCL failure %s:%d '%s / %s'",
" .. %s pid %d: Test failure %s:%d"), the timeout of src/common.cu, usage errors ("invalid size
specified for 'minbytes'", "Invalid number of GPUs: ..."), and options it ignores. This script reads
every printf / fprintf(stderr, ...) / PRINT(...) format of src/ and verifiable/ at each tag (`git show
TAG:path`, no checkout), keeps those that signal a fault (FAULT_RE), and records each with the tags
that print it and where (file:line at the newest). Lines the source builds from a generic format (the
summary's "# %-20s : %d %s" with "Out of bounds values" and FAILED) and the ncclGetErrorString texts
an NCCL failure line quotes (NCCL's src/init.cc, read with --nccl-source) are curated entries in
tools/nccl_tests_curation.toml, located in the source by an anchor string for their provenance.

Without --write it prints what is new or gone against the shipped JSON (exit 1 when anything is).
--write rewrites topodiag/catalogues/data/nccl-tests.json, merging the curated fields (class,
severity, meaning, fix, rule, consequence) of tools/nccl_tests_curation.toml by entry id.
--check (no source): every failure format recorded for the newest tag in the JSON's "sources" has an
entry, and each entry's rendered example classifies as itself (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from topodiag.catalogues import fmt  # noqa: E402

OUT = ROOT / "topodiag" / "catalogues" / "data" / "nccl-tests.json"
CURATION = Path(__file__).resolve().parent / "nccl_tests_curation.toml"
REPO = "NVIDIA/nccl-tests"
NCCL_REPO = "NVIDIA/nccl"
FILES_RE = re.compile(r"^(?:src/[^/]+\.(?:cu|h|cc)|verifiable/[^/]+\.(?:cu|h))$")
# a call that prints: printf( / std::printf( / PRINT( / fprintf(stderr, (the format comes next)
CALL_RE = re.compile(r"(?<![A-Za-z0-9_])(?:std::)?(?:printf|PRINT|fprintf\s*\(\s*stderr\s*,)\s*(?:\()?")
# what a fault-signalling format says (the others are the banner, the table, debug dumps)
FAULT_RE = re.compile(
    r"failure|FAILED|[Ii]nvalid|Unable|[Ee]rror|[Tt]imeout|requires|not supported|[Ii]ncompatible|must be|"
    r"is needed|not a power|Ignoring|Disabling|defaulting|Please check|not enabled|Unrecognized|#wrong|want=")
DEBUG_RE = re.compile(r"^(?:prepareInput2|prepareExpected2|verifyPrepared|verifyInline2|bits\(|  coef=|type=)")


def git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def release_tags(gitdir: str) -> list[str]:
    tags = [t for t in git(gitdir, "tag").split() if re.match(r"^v\d+\.\d+\.\d+$", t)]
    return sorted(tags, key=lambda t: tuple(int(x) for x in t[1:].split(".")))


def _literal(src: str, i: int) -> tuple[str, int] | None:
    """The C string literal at src[i] ('"'): (its text, escapes kept as printf sees them, the end)."""
    out, i = [], i + 1
    while i < len(src):
        c = src[i]
        if c == "\\":
            nxt = src[i + 1]
            if nxt == "\n":  # a line continuation inside the literal
                i += 2
                continue
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}.get(nxt, "\\" + nxt))
            i += 2
            continue
        if c == '"':
            return "".join(out), i + 1
        if c == "\n":
            return None
        out.append(c)
        i += 1
    return None


def formats_of(src: str) -> list[tuple[str, int, str]]:
    """[(format, line, first argument's literal or "")] of every print call of a C/CUDA file whose
    format is one or more adjacent string literals (macro continuations and comments between them
    skipped)."""
    out = []
    for m in CALL_RE.finditer(src):
        line_start = src.rfind("\n", 0, m.start()) + 1
        if src[line_start:m.start()].lstrip().startswith("//"):
            continue
        i, parts = m.end(), []
        while i < len(src):
            ws = re.match(r"(?:\s|\\\n|//[^\n]*\n|/\*.*?\*/)*", src[i:], re.S)
            i += ws.end()
            if i < len(src) and src[i] == '"':
                lit = _literal(src, i)
                if lit is None:
                    break
                parts.append(lit[0])
                i = lit[1]
                continue
            break
        if not parts:
            continue
        arg = ""
        rest = re.match(r"\s*,\s*(?:\\\n\s*)?\"([^\"\n]*)\"", src[i:])
        if rest:
            arg = rest.group(1)
        out.append(("".join(parts), src.count("\n", 0, m.start()) + 1, arg))
    return out


def is_fault(text: str) -> bool:
    return bool(FAULT_RE.search(text)) and not DEBUG_RE.match(text.lstrip())


def extract(gitdir: str, tags: list[str]) -> dict[str, dict]:
    """{format: {"versions": {"first", "last"}, "where": [{repo, tag, file, line}], "tags": [...]}}."""
    found: dict[str, dict] = {}
    for tag in tags:
        files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", tag).split("\n") if FILES_RE.match(f)]
        for path in files:
            src = git(gitdir, "show", f"{tag}:{path}")
            for text, line, _ in formats_of(src):
                if not is_fault(text):
                    continue
                rec = found.setdefault(text, {"tags": [], "where": None})
                if tag not in rec["tags"]:
                    rec["tags"].append(tag)
                rec["where"] = {"repo": REPO, "tag": tag, "file": path, "line": line}  # the newest tag's
    return found


def anchor_where(gitdir: str, repo: str, tags: list[str], anchor: str, under: str) -> tuple[list[str], dict | None]:
    """The tags whose source (files under `under`) holds `anchor`, and where at the newest of them."""
    seen, where = [], None
    for tag in tags:
        try:
            hits = git(gitdir, "grep", "-n", "-F", anchor, tag, "--", under)
        except subprocess.CalledProcessError:  # no match
            continue
        first = hits.split("\n", 1)[0]
        _, path, line, _ = first.split(":", 3)
        seen.append(tag)
        where = {"repo": repo, "tag": tag, "file": path, "line": int(line)}
    return seen, where


def slug(text: str) -> str:
    words = re.findall(r"[A-Za-z]+", " ".join(fmt.literal_parts(text)))
    return "_".join(w.lower() for w in words[:7]) or "format"


def load_curation() -> dict:
    try:
        import tomllib  # noqa: PLC0415
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]  # noqa: PLC0415
    with open(CURATION, "rb") as fh:
        return tomllib.load(fh)


CURATED_FIELDS = ("class", "severity", "meaning", "fix", "rule", "consequence", "fixed_in")


def build(found: dict[str, dict], tags: list[str], curation: dict, extra: list[dict]) -> dict:
    """The catalogue JSON: one entry per extracted format (its id, curated fields by id, else the
    default class), then the curated pattern entries (`extra`, provenance already found)."""
    by_id = curation.get("entries", {})
    entries, ids = [], set()
    for text in sorted(found, key=lambda t: (found[t]["where"]["file"], found[t]["where"]["line"], t)):
        rec = found[text]
        eid = "nccl_tests." + slug(text)
        n = 2
        while eid in ids:
            eid, n = f"nccl_tests.{slug(text)}_{n}", n + 1
        ids.add(eid)
        cur = by_id.get(eid, {})
        newest = rec["tags"][-1]
        entry = {"id": eid, "format": text, "level": "stderr" if cur.get("stderr") else None,
                 "versions": {"first": rec["tags"][0], "last": None if newest == tags[-1] else newest},
                 "where": [rec["where"]]}
        entry["class"] = cur.get("class", curation.get("default_class", "benchmark-failure"))
        entry.update({k: cur[k] for k in CURATED_FIELDS if k in cur and k != "class"})
        entries.append({k: v for k, v in entry.items() if v is not None})
    entries.extend(extra)
    unknown = sorted(set(by_id) - ids)
    if unknown:
        print(f"curation names no extracted entry: {', '.join(unknown)}", file=sys.stderr)
    newest_formats = sorted(t for t, r in found.items() if tags[-1] in r["tags"])
    return {
        "producer": "nccl-tests",
        "title": "nccl-tests (all_reduce_perf, ...): failure lines of the test binaries",
        "readers": ["nccl_tests"],
        "sources": [{"repo": REPO, "tags": tags, "generated_by": "tools/catalogue_nccl_tests.py",
                     "formats": newest_formats, "formats_tag": tags[-1]}],
        "entries": entries,
    }


def curated_extra(curation: dict, gitdir: str | None, tags: list[str], nccl_gitdir: str | None,
                  nccl_tags: list[str], shipped: dict) -> list[dict]:
    """The curated pattern entries, each located in its producer's source by its anchor (or, with no
    checkout of that producer, with the provenance the shipped JSON recorded)."""
    old = {e["id"]: e for e in shipped.get("entries", [])}
    out = []
    for raw in curation.get("extra", []):
        e = {k: v for k, v in raw.items() if k not in ("anchor", "under", "producer_repo")}
        nccl = raw.get("producer_repo") == NCCL_REPO
        src, src_tags = (nccl_gitdir, nccl_tags) if nccl else (gitdir, tags)
        if src:
            seen, where = anchor_where(src, NCCL_REPO if nccl else REPO, src_tags, raw["anchor"], raw.get("under", "src"))
            if where is None:
                raise SystemExit(f"curated entry {raw['id']}: anchor {raw['anchor']!r} not found at {src_tags}")
            e["where"] = [where]
            e["versions"] = {"first": seen[0], "last": None if seen[-1] == src_tags[-1] else seen[-1]}
        elif raw["id"] in old:
            e["where"], e["versions"] = old[raw["id"]]["where"], old[raw["id"]].get("versions", {})
        else:
            raise SystemExit(f"curated entry {raw['id']}: no provenance (give --source / --nccl-source)")
        out.append(e)
    return out


def diff(new: dict, shipped: dict) -> list[str]:
    a = {e["id"]: e.get("format") or e.get("pattern") for e in shipped.get("entries", [])}
    b = {e["id"]: e.get("format") or e.get("pattern") for e in new["entries"]}
    lines = [f"new: {i}: {b[i]!r}" for i in b if i not in a]
    lines += [f"gone: {i}: {a[i]!r}" for i in a if i not in b]
    lines += [f"changed: {i}: {a[i]!r} -> {b[i]!r}" for i in a if i in b and a[i] != b[i]]
    return lines


def check(shipped: dict) -> list[str]:
    """What --check finds wrong: a recorded newest-tag format with no entry, an entry whose example
    does not classify as itself."""
    from topodiag import catalogues  # noqa: PLC0415

    problems = []
    formats = {e.get("format") for e in shipped["entries"]}
    for src in shipped.get("sources", []):
        for text in src.get("formats", []):
            if text not in formats:
                problems.append(f"format of {src.get('formats_tag')} not catalogued: {text!r}")
    cat = catalogues.load("nccl-tests")
    for e in cat.entries:
        if e.format is None:
            continue
        hit = cat.classify(fmt.example(e.format))
        if hit is None or hit.entry.specificity < e.specificity:
            problems.append(f"{e.id}: its example is not classified as itself")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--source", help="nccl-tests git dir (a bare mirror is fine)")
    ap.add_argument("--tags", nargs="*", help="release tags to read (default: every vX.Y.Z tag)")
    ap.add_argument("--nccl-source", help="NCCL git dir, for the ncclGetErrorString texts' provenance")
    ap.add_argument("--nccl-tags", nargs="*", default=["v2.4.8-1", "v2.8.4-1", "v2.12.12-1", "v2.13.4-1", "v2.14.3-1",
                                                       "v2.18.3-1", "v2.23.4-1", "v2.30.7-1"])
    ap.add_argument("--write", action="store_true", help="rewrite the shipped JSON")
    ap.add_argument("--check", action="store_true", help="check the shipped JSON against its recorded formats")
    args = ap.parse_args(argv)
    shipped = json.loads(OUT.read_text()) if OUT.exists() else {}
    if args.check and not args.source:
        problems = check(shipped)
        for p in problems:
            print(p)
        print(f"{len(shipped.get('entries', []))} entries; {len(problems)} problem(s)")
        return 1 if problems else 0
    if not args.source:
        ap.error("--source is required (or --check alone)")
    tags = args.tags or release_tags(args.source)
    curation = load_curation()
    found = extract(args.source, tags)
    extra = curated_extra(curation, args.source, tags, args.nccl_source, args.nccl_tags, shipped)
    new = build(found, tags, curation, extra)
    changes = diff(new, shipped)
    for line in changes:
        print(line)
    print(f"{len(found)} failure formats over {len(tags)} tags ({tags[0]} .. {tags[-1]}); "
          f"{len(new['entries'])} entries; {len(changes)} change(s)")
    if args.write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n")
        return 0
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main())
