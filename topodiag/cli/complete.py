"""Shell completion of option values (typer `autocompletion=`): `--fail-on` levels, rule codes and
families, tags, parser sources, profiles, formats. Each function takes what was typed so far and
returns the values that start with it; it never raises (a broken catalog completes nothing)."""

from __future__ import annotations

from typing import Callable, Iterable, List

LEVELS = ("info", "warning", "error", "critical", "never")
FORMATS = ("text", "json", "prometheus", "html")


def _starting(values: Iterable[str], incomplete: str) -> List[str]:
    typed = (incomplete or "").rsplit(",", 1)  # comma-separated lists: complete the last item
    prefix = typed[0] + "," if len(typed) == 2 else ""
    last = typed[-1].lower()
    return [prefix + v for v in dict.fromkeys(values) if v.lower().startswith(last)]


def _safely(values: Callable[[], Iterable[str]]) -> List[str]:
    try:
        return list(values())
    except Exception:  # noqa: BLE001  completion must never break the shell
        return []


def levels(incomplete: str = "") -> List[str]:
    return _starting(LEVELS, incomplete)


def formats(incomplete: str = "") -> List[str]:
    return _starting(FORMATS, incomplete)


def _rule_names() -> List[str]:
    from ..engine import load_catalog

    catalog = load_catalog(examples=False)
    return [r.code for r in catalog] + list(catalog.families()) + [r.slug for r in catalog]


def rules(incomplete: str = "") -> List[str]:
    return _starting(_safely(_rule_names), incomplete)


def _tags() -> List[str]:
    from ..engine import load_catalog

    return sorted({t for r in load_catalog(examples=False) for t in r.tags})


def tags(incomplete: str = "") -> List[str]:
    return _starting(_safely(_tags), incomplete)


def _families() -> List[str]:
    from ..engine import load_catalog

    return list(load_catalog(examples=False).families())


def families(incomplete: str = "") -> List[str]:
    return _starting(_safely(_families), incomplete)


def _profiles() -> List[str]:
    from ..profiles import load_profiles

    return sorted(load_profiles())


def profiles(incomplete: str = "") -> List[str]:
    return _starting(_safely(_profiles), incomplete)


def _sources() -> List[str]:
    from ..parsers import names

    return list(names())


def sources(incomplete: str = "") -> List[str]:
    return _starting(_safely(_sources), incomplete)
