"""Discovery of fixture pairs: fixtures/<source>/<name>.<ext> with <name>.expected.json beside it.

An expected file holds either the parser's JSON form, or {"parse_error": {"line_no": N,
"contains": "text"}} for an input that must be refused with that error.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"


@dataclass(frozen=True)
class Fixture:
    source: str
    path: Path
    expected_path: Path

    @property
    def id(self) -> str:
        return f"{self.source}/{self.path.name}"

    def text(self) -> str:
        return self.path.read_bytes().decode("utf-8", errors="replace")

    def expected(self) -> dict:
        return json.loads(self.expected_path.read_text())


def parser_fixtures() -> list[Fixture]:
    """Every fixture pair under fixtures/<source>/ (host scenarios in fixtures/hosts are not parser cases).
    The folder is listed once per test session (a module collecting per source called this dozens of times)."""
    return list(_parser_fixtures())


@functools.lru_cache(maxsize=1)
def _parser_fixtures() -> tuple[Fixture, ...]:
    out = []
    for src_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in ("hosts", "sysfs")):
        for path in sorted(src_dir.iterdir()):
            if path.name.endswith(".expected.json") or not path.is_file():
                continue
            exp = path.with_name(path.name.rsplit(".", 1)[0] + ".expected.json")
            if exp.exists():
                out.append(Fixture(src_dir.name, path, exp))
    return tuple(out)


def fixture_texts() -> list[str]:
    return [f.text() for f in parser_fixtures()]
