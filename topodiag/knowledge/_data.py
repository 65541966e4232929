"""Read the knowledge data files (TOML beside this module), once each. Standard library only."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def table(name: str) -> dict[str, Any]:
    """The parsed `name`.toml of this package (read-only by convention: callers copy what they keep)."""
    with (HERE / f"{name}.toml").open("rb") as fh:
        return tomllib.load(fh)


def data_files() -> list[str]:
    """The names of the data files shipped (pcie, nvlink, ib, gpus, busbw, xid, clouds)."""
    return sorted(p.stem for p in HERE.glob("*.toml"))
