"""What the catalogue generators share: reading a producer's git repository at a tag, C string
literals, curation overrides, the JSON merge and the new/gone report.

A generator extracts (id, format, level, file, line) records per tag, then `build` folds them into
entries with versions {first, last} and provenance, applies the curation file (TOML: [[match]]
tables with `id` or `format` regexes and the hand-curated fields) and `report`/`write` compare
with or rewrite the shipped JSON. Run from the repository root; only the standard library.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "topodiag" / "catalogues" / "data"
CURATED = ("class", "severity", "meaning", "fix", "rule", "consequence", "fixed_in")

# integer-width macros of <inttypes.h> -> the conversion they stand for
INTTYPES = {f"PRI{c}{w}": (("l" if w == "64" else "") + c) for c in "diuxX" for w in ("8", "16", "32", "64")}


def git_dir(source: str) -> str:
    """The git dir of a checkout or a bare mirror."""
    p = Path(source)
    return str(p / ".git") if (p / ".git").exists() else str(p)


def show(gdir: str, tag: str, path: str) -> str | None:
    """A file's text at a tag, or None when the tag does not have it."""
    out = subprocess.run(["git", "--git-dir", gdir, "show", f"{tag}:{path}"], capture_output=True)
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def tags(gdir: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", gdir, "tag"], capture_output=True, text=True, check=True)
    return out.stdout.split()


_LIT = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r"}


def c_unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESC.get(m.group(1), m.group(1)), body)


def call_args(text: str, start: int) -> str | None:
    """The argument text of a call whose '(' is at `start`, up to its matching ')' (strings and
    character constants skipped), or None when it does not close within 2000 characters."""
    depth, i, end = 0, start, min(len(text), start + 2000)
    while i < end:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < end and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
        i += 1
    return None


def split_args(args: str) -> list[str]:
    """Top-level comma-separated arguments."""
    out, depth, cur, i = [], 0, [], 0
    while i < len(args):
        c = args[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < len(args) and args[j] != c:
                j += 2 if args[j] == "\\" else 1
            cur.append(args[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur))
    return [a.strip() for a in out]


def string_of(arg: str, macros: dict[str, str]) -> str | None:
    """A C argument made of string literals and string macros -> its text (None when it holds no
    literal: a variable format). An unknown macro between literals reads as %s."""
    if '"' not in arg:
        return None
    out = []
    for tok in re.finditer(r'"((?:[^"\\\n]|\\.)*)"|([A-Za-z_][A-Za-z0-9_]*)', arg):
        if tok.group(1) is not None:
            out.append(c_unescape(tok.group(1)))
        elif tok.group(2) in INTTYPES:
            out.append(INTTYPES[tok.group(2)])
        elif tok.group(2) in macros:
            out.append(macros[tok.group(2)])
        else:
            out.append("%s")
    return "".join(out)


def slug(text: str, n: int = 6) -> str:
    words = re.findall(r"[a-z0-9]+", re.sub(r"%[-+ #0]*\d*(?:\.\d+)?[hlLqjzt]*[a-zA-Z]", " ", text.lower()))
    return "_".join(words[:n]) or "message"


def build(records: dict[str, list[dict]], tag_order: list[str], repo: str) -> list[dict]:
    """{tag: [record]} -> entries: one per id, versions from the first to the last tag that prints it
    (last null when the newest tag still does), where = the newest tag's file:line."""
    by_id: dict[str, dict] = {}
    seen: dict[str, list[str]] = {}
    for tag in tag_order:
        for r in records.get(tag, []):
            seen.setdefault(r["id"], [])
            if tag not in seen[r["id"]]:
                seen[r["id"]].append(tag)
            by_id[r["id"]] = {"id": r["id"], "format": r["format"], "level": r.get("level"),
                              "where": [{"repo": repo, "tag": tag, "file": r["file"], "line": r["line"]}]}
    newest = tag_order[-1]
    for i, e in by_id.items():
        tags_ = seen[i]
        e["versions"] = {"first": tags_[0], "last": None if tags_[-1] == newest else tags_[-1]}
    return sorted(by_id.values(), key=lambda e: e["id"])


def load_curation(path: Path) -> list[dict]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    with open(path, "rb") as fh:
        return tomllib.load(fh).get("match", [])


def curate(entries: list[dict], curation: list[dict], default_class: str) -> list[dict]:
    """Each entry takes the curated fields of the first [[match]] whose `id` or `format` regex finds
    it; an entry nothing matches keeps `default_class`. Curated extra entries (`add = true`, with
    their own id/format/pattern/where) are appended."""
    out = []
    for e in entries:
        e = dict(e)
        e["class"] = default_class
        for m in curation:
            if m.get("add"):
                continue
            if ("id" in m and re.search(m["id"], e["id"])) or ("format" in m and re.search(m["format"], e["format"])):
                e.update({k: v for k, v in m.items() if k in CURATED})
                break
        out.append(e)
    known = {e["id"] for e in out}
    for m in curation:
        if m.get("add") and m["id"] not in known:
            out.append({k: v for k, v in m.items() if k != "add"})
    return out


def report_and_write(producer: str, catalogue: dict, write: bool) -> int:
    path = DATA / f"{producer}.json"
    old = json.loads(path.read_text()) if path.exists() else {"entries": []}
    before = {e["id"] for e in old["entries"]}
    after = {e["id"] for e in catalogue["entries"]}
    for i in sorted(after - before):
        print(f"{producer}: new  {i}")
    for i in sorted(before - after):
        print(f"{producer}: gone {i}")
    print(f"{producer}: {len(after)} entries ({len(after - before)} new, {len(before - after)} gone)")
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(catalogue, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


def fail(msg: str) -> None:
    print(msg, file=sys.stderr)
    raise SystemExit(2)
