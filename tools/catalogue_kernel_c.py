"""Shared helpers of the kernel-log catalogue generators (tools/catalogue_kernel_*.py): C source ->
the format strings of chosen print calls, a git source reader, ids, curation and the diff/write step.

Not imported by topodiag at run time (the catalogues are data); the standard library only.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "topodiag" / "catalogues" / "data"
CURATED = ("class", "severity", "meaning", "fix", "rule", "consequence", "fixed_in")

_STR_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")


class Git:
    """A bare git directory read with `git show TAG:path` / `git grep` (no checkout)."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir

    def run(self, *args: str) -> str:
        out = subprocess.run(["git", "--git-dir", self.git_dir, *args], capture_output=True, text=True,
                             errors="replace", check=False)
        return out.stdout

    def tags(self) -> list[str]:
        return self.run("tag").split()

    def show(self, tag: str, path: str) -> str:
        return self.run("show", f"{tag}:{path}")

    def files(self, tag: str, pattern: str, pathspec: str) -> list[str]:
        return sorted({line.split(":", 1)[1] for line in self.run("grep", "-l", "-E", pattern, tag, "--", pathspec).split()
                       if ":" in line})


def unescape(s: str) -> str:
    """A C string literal's body as the program prints it (\\n, \\t, \\", \\\\)."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "", "0": ""}.get(m[1], m[1]), s)


def call_args(src: str, start: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose '(' is at `start` (strings and comments respected)."""
    depth, i, args, cur = 0, start, [], []
    while i < len(src):
        c = src[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < len(src) and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            cur.append(src[i:j + 1])
            i = j + 1
            continue
        if src.startswith("/*", i):
            i = src.find("*/", i) + 2 if src.find("*/", i) >= 0 else len(src)
            continue
        if src.startswith("//", i):
            i = src.find("\n", i) if src.find("\n", i) >= 0 else len(src)
            continue
        if c in "([{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args, i + 1
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    return args, len(src)


def literal(arg: str, macros: dict[str, str]) -> str | None:
    """The text of an argument made of adjacent string literals and known macros, or None."""
    out, pos = [], 0
    arg = arg.strip()
    while pos < len(arg):
        if arg[pos].isspace():
            pos += 1
            continue
        m = _STR_RE.match(arg, pos)
        if m:
            out.append(unescape(m[1]))
            pos = m.end()
            continue
        m = _IDENT_RE.match(arg, pos)
        if m and m[0] in macros:
            out.append(macros[m[0]])
            pos = m.end()
            continue
        if m and out:  # an unknown macro inside the literal run: some text
            out.append("%s")
            pos = m.end()
            continue
        return None
    return "".join(out) if out else None


def calls(src: str, names: tuple[str, ...]):
    """(name, args, line) for each call of one of `names` in the C text."""
    rx = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\s*\(")
    for m in rx.finditer(src):
        line_start = src.rfind("\n", 0, m.start()) + 1
        head = src[line_start:m.start()].lstrip()
        if head.startswith("#") or head.startswith("//") or head.startswith("*"):
            continue  # a macro definition or a comment
        args, _ = call_args(src, m.end() - 1)
        yield m[1], args, src.count("\n", 0, m.start()) + 1


def slug(text: str, words: int = 7) -> str:
    text = re.sub(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[a-zA-Z]", " ", text)
    parts = re.findall(r"[a-z0-9]+", text.lower())
    return "_".join(parts[:words]) or "message"


def lines_of(fmt: str) -> list[str]:
    """A format that prints several lines: each line's format (blank ones left out)."""
    return [p.strip() for p in fmt.split("\n") if p.strip()]


def load_curation(path: Path) -> dict:
    if not path.exists():
        return {}
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def curate(entry: dict, curation: dict) -> dict:
    """The entry with its class etc. from the curation file: [[match]] rules in order (a regex over
    the format), then [entries."<id>"] overrides."""
    for rule in curation.get("match", ()):
        if re.search(rule["regex"], entry.get("format") or entry.get("pattern") or ""):
            for k in CURATED:
                if k in rule:
                    entry[k] = rule[k]
            break
    for k, v in curation.get("entries", {}).get(entry["id"], {}).items():
        entry[k] = v
    entry.setdefault("class", curation.get("default_class", "informational"))
    return entry


def diff_and_write(producer: str, doc: dict, write: bool) -> int:
    """Print what is new or gone against the shipped JSON; --write rewrites it."""
    path = DATA / f"{producer}.json"
    old = json.loads(path.read_text()) if path.exists() else {"entries": []}
    before = {e["id"]: e.get("format") or e.get("pattern") for e in old["entries"]}
    after = {e["id"]: e.get("format") or e.get("pattern") for e in doc["entries"]}
    new = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    changed = sorted(k for k in set(after) & set(before) if after[k] != before[k])
    for k in new:
        print(f"+ {k}: {after[k]!r}")
    for k in gone:
        print(f"- {k}: {before[k]!r}")
    for k in changed:
        print(f"~ {k}: {before[k]!r} -> {after[k]!r}")
    print(f"{producer}: {len(after)} entries ({len(new)} new, {len(gone)} gone, {len(changed)} changed)",
          file=sys.stderr)
    if write:
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    return 0
