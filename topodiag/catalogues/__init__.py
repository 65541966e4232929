"""What each producer can print, as data: one catalogue per producer, derived from its source.

A parser reads a tool's structure; what a line *means* comes from here. Each catalogue is a JSON
file in `data/` (written by a generator under `tools/` from the producer's source at its release
tags, plus hand-curated entries), each entry:

    id          stable name ("nccl.net_ib.completion_error")
    format      the producer's format string as its source writes it (or `pattern`, a regex, for a
                message with no format string); matched from the start of the message text the
                reader hands over (after the producer's own prefix: "NCCL WARN ", "NVRM: "...)
    level       the producer's level (WARN, INFO, err, ...)
    versions    {"first": tag, "last": tag} of the releases that print it (last null: still printed)
    where       [{"repo", "tag", "file", "line"}]: where the source prints it
    class       one of the vocabulary in classes.toml (network-unreachable, ib-verbs-failure, ...)
    severity    info | warning | error | critical (default: the class's)
    meaning, fix  one or two sentences each (default: the class's)
    rule        the rule code that reports it (default: the class's)
    consequence true when the line follows an earlier failure (named as such, never a second cause)
    fixed_in    for a known bug: the release that fixed it

    classify("nccl", "NET/IB : Got completion from peer 10.0.0.2<1234> with status=12 ...")
        -> Match(entry, producer) or None
    classify_for("nccl_debug", text)   the best match across every catalogue whose JSON lists the
                                       parser source "nccl_debug" in its "readers"

A catalogue file: {"producer", "title", "readers": [parser sources], "sources": [{"repo", "tags",
"generated_by"}], "entries": [...]}.

Leaf module: the standard library only (the parsers use it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

from . import fmt as _fmt

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
SEVERITIES = ("info", "warning", "error", "critical")
MAX_CACHE = 65536
MAX_TEXT = 4096  # a message is classified on its first 4 KiB (patterns stay linear on bounded text)
MIN_ANCHOR = 3  # fixed text shorter than this is no anchor: such an entry is tried on every line
KEY_CHARS = 40  # entries are indexed by up to this much of their fixed opening text (NVRM: has thousands)

# What looks like a failure in any producer's text: a line like this that no entry explains is
# reported as "unrecognised failure text" (never OK over it).
FAILURE_RE = re.compile(r"\b(?:WARN(?:ING)?|[Ee]rror|ERROR|[Ff]ail(?:ed|ure|s)?|FAIL(?:ED|URE)?|Last error|"
                        r"[Aa]bort(?:ed|ing)?|ABORT|[Ff]atal|FATAL|[Pp]anic|timed out|[Tt]imeout)\b|->\s*[1-9]\d*\b")


def looks_like_failure(text: str) -> bool:
    """True for text that reads like a failure (WARN, error, failed, failure, Last error, abort, a
    non-zero `-> N` return-code chain...)."""
    return FAILURE_RE.search(text[:4096]) is not None


@dataclass(frozen=True)
class Entry:
    id: str
    cls: str
    severity: str
    meaning: str
    fix: str
    rule: Optional[str]
    format: Optional[str]
    raw_pattern: Optional[str]  # the entry's own regex; else `pattern` is derived from `format` when first asked
    level: Optional[str]
    versions: dict
    where: tuple
    consequence: bool
    fixed_in: Optional[str]
    fixed_size: Optional[int] = field(default=None, compare=False, repr=False)  # `specificity`, once asked

    @property
    def specificity(self) -> int:
        """Fixed characters of the entry (its format's, else its own regex's): the most specific of
        several matches wins. Counted when first asked (a catalogue of thousands loads without it)."""
        if self.fixed_size is None:
            size = (_fmt.literal_size(self.format) if self.format
                    else len(re.sub(r"\\.|[^A-Za-z0-9 ]", "", self.raw_pattern or "")))
            object.__setattr__(self, "fixed_size", size)
        return self.fixed_size  # type: ignore[return-value]

    @property
    def pattern(self) -> str:
        """The regex of the entry: its own, or its format's (fmt.to_regex), derived once on first use."""
        if self.raw_pattern is None:
            object.__setattr__(self, "raw_pattern", _fmt.to_regex(self.format or ""))
        return self.raw_pattern  # type: ignore[return-value]

    def as_json(self) -> dict:
        return {"id": self.id, "class": self.cls, "severity": self.severity, "rule": self.rule,
                "consequence": self.consequence, "fixed_in": self.fixed_in,
                "where": list(self.where)[:1]}


@dataclass(frozen=True)
class Match:
    entry: Entry
    producer: str


@dataclass
class Catalogue:
    producer: str
    title: str
    sources: list
    entries: list
    readers: tuple = ()  # the parser sources whose text carries this producer's messages
    _by_prefix: dict = field(default_factory=dict)  # {length: {prefix: [entry]}}
    _by_anchor: list = field(default_factory=list)  # [(anchor, entry)]: no fixed prefix
    _cache: dict = field(default_factory=dict)
    _regex: dict = field(default_factory=dict)  # {entry id: compiled pattern}, compiled on first use

    def index(self) -> None:
        """Index the entries by their fixed opening text (or their longest fixed part). Patterns are
        compiled when first tried (`_match`): a catalogue of thousands of entries loads in milliseconds
        and a log compiles only the few its lines are candidates for."""
        for e in self.entries:
            prefix = _fixed_prefix(e)
            key = " ".join(prefix.split())[:KEY_CHARS]
            if len(key) >= MIN_ANCHOR:
                self._by_prefix.setdefault(len(key), {}).setdefault(key, []).append(e)
            else:
                anchors = sorted(_fmt.literal_parts(e.format), key=len) if e.format else []
                self._by_anchor.append((anchors[-1] if anchors else "", e))

    def _match(self, e: Entry, text: str) -> bool:
        """Whether `e`'s pattern matches `text` from its start (patterns are compiled when first
        tried: a catalogue of thousands of entries loads without compiling them all)."""
        rx = self._regex.get(e.id)
        if rx is None:
            rx = self._regex[e.id] = re.compile(e.pattern)
        return rx.match(text) is not None

    def classify(self, text: str) -> Optional[Match]:
        """The most specific entry whose pattern matches `text` from its start, or None."""
        text = text.strip()[:MAX_TEXT]
        hit = self._cache.get(text, False)
        if hit is not False:
            return hit
        best: Optional[Entry] = None
        norm = " ".join(text[:KEY_CHARS * 2].split())
        for length, table in self._by_prefix.items():
            for e in table.get(norm[:length], ()):
                if (best is None or e.specificity > best.specificity) and self._match(e, text):
                    best = e
        for anchor, e in self._by_anchor:
            if anchor in text and (best is None or e.specificity > best.specificity) and self._match(e, text):
                best = e
        hit = Match(best, self.producer) if best is not None else None
        if len(self._cache) >= MAX_CACHE:
            self._cache.clear()
        self._cache[text] = hit
        return hit


def _fixed_prefix(e: Entry) -> str:
    """The fixed text a message of this entry starts with ("" when it starts with a conversion)."""
    if e.format is None:
        return _regex_prefix(e.pattern)
    return _fmt.leading_literal(e.format)


_META = set(".^$*+?{}[]|()")


def _regex_prefix(pattern: str) -> str:
    """The literal text a regex's matches start with: plain characters and escaped punctuation up to
    the first metacharacter or class escape (a character a quantifier follows is left out)."""
    if _top_level_alternation(pattern):
        return ""  # "a|b": no one opening text
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            lit, step = pattern[i + 1], 2
        elif ch == "\\" or ch in _META:
            break
        else:
            lit, step = ch, 1
        if pattern[i + step:i + step + 1] in ("?", "*", "+", "{"):
            break  # optional or repeated: not part of every match
        out.append(lit)
        i += step
    return "".join(out)


def _top_level_alternation(pattern: str) -> bool:
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
        i += 1
    return False


@lru_cache(maxsize=None)
def classes() -> dict:
    """The class vocabulary (classes.toml): {name: {title, severity, meaning, fix, rule}}."""
    try:
        import tomllib  # noqa: PLC0415
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]  # noqa: PLC0415
    with open(HERE / "classes.toml", "rb") as fh:
        return tomllib.load(fh)


def producers() -> list[str]:
    """The catalogues shipped (the names of data/*.json)."""
    return sorted(p.stem for p in DATA.glob("*.json"))


def _entry(raw: dict, vocab: dict, producer: str) -> Entry:
    """The Entry of one raw catalogue entry, its unset fields from its class (`vocab`). Made without
    Entry's frozen __init__ (a setattr through `object` per field: a third of the time a catalogue of
    thousands took to load), its fields set at once; the same object as `Entry(...)` of them
    (tests/catalogues compare them)."""
    cls = raw["class"]
    if cls not in vocab:
        raise ValueError(f"catalogue {producer}: entry {raw.get('id')!r} has class {cls!r}, not in classes.toml")
    c = vocab[cls]
    get = raw.get
    fmt_text = get("format")
    severity = get("severity") or c["severity"]
    if severity not in SEVERITIES:
        raise ValueError(f"catalogue {producer}: entry {get('id')!r} has severity {severity!r}")
    e = _new_entry(Entry)
    e.__dict__.update(
        id=raw["id"], cls=cls, severity=severity, meaning=get("meaning") or c["meaning"],
        fix=get("fix") or c["fix"], rule=get("rule", c.get("rule")), format=fmt_text,
        raw_pattern=get("pattern") or (None if fmt_text else _EMPTY_PATTERN), level=get("level"),
        versions=get("versions") or {}, where=tuple(get("where") or ()),
        consequence=bool(get("consequence", False)), fixed_in=get("fixed_in"), fixed_size=None)
    return e


_new_entry = object.__new__
_EMPTY_PATTERN = _fmt.to_regex("")


@lru_cache(maxsize=None)
def load(producer: str) -> Catalogue:
    """One producer's catalogue, loaded once per process (ValueError on a malformed file)."""
    path = DATA / f"{producer}.json"
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    vocab = classes()
    cat = Catalogue(producer=raw.get("producer", producer), title=raw.get("title", producer),
                    sources=raw.get("sources", []), entries=[_entry(e, vocab, producer) for e in raw["entries"]],
                    readers=tuple(raw.get("readers", ())))
    cat.index()
    return cat


def classify(producer: str, text: str) -> Optional[Match]:
    """`load(producer).classify(text)`."""
    return load(producer).classify(text)


_READERS_RE = re.compile(r'^\{\s*(?:"(?:producer|title)"\s*:\s*"[^"\\]*"\s*,\s*)*"readers"\s*:\s*(\[[^\]]*\])')


@lru_cache(maxsize=None)
def readers_of(producer: str) -> tuple:
    """The "readers" of a producer's catalogue, read from the file's head (the generators write
    producer, title, readers first) without building its entries; a file laid out otherwise is loaded."""
    with open(DATA / f"{producer}.json", encoding="utf-8") as fh:
        m = _READERS_RE.match(fh.read(4096))
    return tuple(json.loads(m.group(1))) if m else load(producer).readers


@lru_cache(maxsize=None)
def for_reader(source: str) -> tuple:
    """The catalogues whose messages appear in `source`'s text (their JSON's "readers" names it):
    an NCCL_DEBUG log carries NCCL's and its net plugins' messages. Only those are loaded."""
    return tuple(load(p) for p in producers() if source in readers_of(p))


def classify_for(source: str, text: str) -> Optional[Match]:
    """The most specific match for `text` across every catalogue read by `source`, or None."""
    best: Optional[Match] = None
    for cat in for_reader(source):
        hit = cat.classify(text)
        if hit is not None and (best is None or hit.entry.specificity > best.entry.specificity):
            best = hit
    return best


def _ids(cats) -> dict:
    """{entry id: entry} of these catalogues (the first, in their order, where an id repeats)."""
    ids: dict = {}
    for cat in cats:
        for e in cat.entries:
            ids.setdefault(e.id, e)
    return ids


@lru_cache(maxsize=None)
def _by_id() -> dict:
    return _ids(load(p) for p in producers())


@lru_cache(maxsize=None)
def _ids_of(source: str) -> dict:
    return _ids(for_reader(source))


def entry_for(source: str, entry_id: Optional[str]) -> Optional[Entry]:
    """The entry with this id among the catalogues `source` reads (`for_reader`; the first, in their
    order, where ids repeat), or None: a rule reading back what a parser recorded, a dict lookup."""
    return _ids_of(source).get(entry_id) if entry_id else None


def entry_by_id(entry_id: str) -> Optional[Entry]:
    """The entry with this id in any shipped catalogue (how a rule reads back what a parser recorded)."""
    return _by_id().get(entry_id)
