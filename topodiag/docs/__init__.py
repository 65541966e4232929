"""The generated parts of README.md and man/topodiag.1: `python -m topodiag.docs` rewrites them.

Each generated part sits between two marker lines and is rewritten whole; nothing outside them is
touched:

    README.md          <!-- generated: NAME -->  ...  <!-- end generated: NAME -->
    man/topodiag.1     .\\" generated: NAME        ...  .\\" end generated: NAME

    sources   the parsers: which there are, each one's tool and how live collection gets it (from
              the parsers' INFO), with the words of `sources.toml` beside this file
    rules     the rule catalog: code, severity, slug, title, the action a finding asks for
    exit-codes  the exit-code table (topodiag/exit_codes.py MEANINGS)

`python -m topodiag.docs --check` writes nothing and exits 1 when a part is stale (the tests run
the same comparison). A source without its words in sources.toml, or words for a source no parser
reads, is an error that names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

SOURCES_TOML = Path(__file__).with_name("sources.toml")


class DocsError(ValueError):
    """A marker or a source's words are missing (one line)."""


@dataclass(frozen=True)
class Markers:
    begin: str  # with {name}
    end: str


README_MARKERS = Markers("<!-- generated: {name} -->", "<!-- end generated: {name} -->")
MAN_MARKERS = Markers('.\\" generated: {name}', '.\\" end generated: {name}')


def _live(info) -> str:
    """How live collection gets a source: it runs a command, a probe reads it, or only files give it."""
    return "command" if info.argv else "probe" if info.probe else "files"


def _roff(text: str) -> str:
    return text.replace("\\", "\\e").replace("-", "\\-")


def _source_words() -> list[tuple[object, dict]]:
    """(INFO, its words) for every parser, in sources.toml's order; DocsError for one missing either way."""
    from ..parsers import infos

    words = tomllib.loads(SOURCES_TOML.read_text(encoding="utf-8"))
    by_source = {info.source: info for info in infos()}
    missing = sorted(set(by_source) - set(words))
    extra = sorted(set(words) - set(by_source))
    if missing or extra:
        raise DocsError(f"{SOURCES_TOML.name}: " + "; ".join(
            ([f"no words for {', '.join(missing)} (add a [SOURCE] table: readme_notes, readme_fields, man)"]
             if missing else []) + ([f"words for {', '.join(extra)}, which no parser reads"] if extra else [])))
    return [(by_source[name], table) for name, table in words.items()]


def readme_sources() -> str:
    rows = ["| source | tool | live | main JSON fields |", "|---|---|---|---|"]
    for info, words in _source_words():
        notes = f" {words['readme_notes']}" if words.get("readme_notes") else ""
        rows.append(f"| `{info.source}` | `{info.tool}`{notes} | {_live(info)} | {words['readme_fields']} |")
    return "\n".join(rows)


def man_sources() -> str:
    out = []
    for info, words in _source_words():
        text = f" {_roff(words['man'])}" if words.get("man") else ""
        out += [".TP", f".B {info.source}", f"\\fB{_roff(info.tool)}\\fR; live: \\fI{_live(info)}\\fR.{text}"]
    return "\n".join(out)


def _rules():
    from ..engine.catalog import load_catalog

    return list(load_catalog(examples=False))


def _severity(rule) -> str:
    return str(rule.severity)  # the name: info, warning, error, critical


def readme_rules() -> str:
    rows = ["| code | severity | slug | title | action |", "|---|---|---|---|---|"]
    for rule in _rules():
        title = rule.title.replace("|", "\\|")
        rows.append(f"| `{rule.code}` | {_severity(rule)} | `{rule.slug}` | {title} | {rule.action} |")
    return "\n".join(rows)


def man_rules() -> str:
    out = []
    for rule in _rules():
        out += [".TP", f".B {rule.code}", f"{_roff(rule.slug)} ({_severity(rule)}; {_roff(rule.action)}): {_roff(rule.title)}"]
    return "\n".join(out)


def readme_exit_codes() -> str:
    from ..exit_codes import MEANINGS

    return "\n".join(["| code | meaning |", "|---|---|"] + [f"| {int(c)} | {m} |" for c, m in MEANINGS.items()])


def man_exit_codes() -> str:
    from ..exit_codes import MEANINGS

    out = []
    for code, meaning in MEANINGS.items():
        out += [".TP", f".B {int(code)}", _roff(re.sub(r"`([^`]*)`", r"\1", meaning)) + "."]
    return "\n".join(out)


SECTIONS: dict[str, dict[str, Callable[[], str]]] = {
    "README.md": {"sources": readme_sources, "rules": readme_rules, "exit-codes": readme_exit_codes},
    "man/topodiag.1": {"sources": man_sources, "rules": man_rules, "exit-codes": man_exit_codes},
}
MARKERS = {"README.md": README_MARKERS, "man/topodiag.1": MAN_MARKERS}


def rewrite(text: str, sections: dict[str, str], markers: Markers, where: str = "") -> str:
    """`text` with the lines between each section's markers replaced by its content."""
    for name, content in sections.items():
        begin, end = markers.begin.format(name=name), markers.end.format(name=name)
        pattern = re.compile(rf"^{re.escape(begin)}\n(.*?)^{re.escape(end)}$", re.M | re.S)
        found = pattern.findall(text)
        if len(found) != 1:
            raise DocsError(f"{where}: expected one '{begin}' ... '{end}' pair, found {len(found)}")
        text = pattern.sub(lambda _m: f"{begin}\n{content}\n{end}", text)
    return text


def generated(root: Path) -> dict[str, tuple[str, str]]:
    """file (relative to root) -> (its text now, its text with every generated part fresh)."""
    out = {}
    for rel, sections in SECTIONS.items():
        text = (root / rel).read_text(encoding="utf-8")
        out[rel] = (text, rewrite(text, {n: make() for n, make in sections.items()}, MARKERS[rel], rel))
    return out


def stale(root: Path) -> list[str]:
    """The files whose generated parts are not what `python -m topodiag.docs` would write."""
    return [rel for rel, (now, fresh) in generated(root).items() if now != fresh]


def main(argv: "list[str] | None" = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m topodiag.docs", description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                    help="the repository (default: the one this package is in)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a part is stale")
    args = ap.parse_args(argv)
    try:
        files = generated(args.root)
    except (DocsError, OSError) as exc:
        print(f"topodiag.docs: {exc}")
        return 2
    changed = [rel for rel, (now, fresh) in files.items() if now != fresh]
    for rel in changed:
        if args.check:
            print(f"{rel}: generated parts are stale (run python -m topodiag.docs)")
        else:
            (args.root / rel).write_text(files[rel][1], encoding="utf-8")
            print(f"{rel}: generated parts rewritten")
    return 1 if args.check and changed else 0
