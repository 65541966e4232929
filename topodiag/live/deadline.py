"""The --deadline every command takes, checked without importing live collection (a `check --from`
of saved files checks its --deadline too, and must not pay for the tool runner's imports)."""

from __future__ import annotations

import math
from typing import Any

MAX_DEADLINE_S = 86400.0  # a day: more is a mistake (and overflows the thread and select waits)


def check_deadline(deadline_s: Any) -> float:
    """A deadline is a finite number of seconds, > 0 and at most a day; UsageError (one line) otherwise
    (nan, inf, 0 and negatives are refused, never taken as "no deadline")."""
    from ..errors import UsageError

    try:
        value = float(deadline_s)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(deadline_s, bool) or not math.isfinite(value) or value <= 0 or value > MAX_DEADLINE_S:
        raise UsageError(f"--deadline: must be a number of seconds above 0 and at most {MAX_DEADLINE_S:g} "
                         f"(got {deadline_s!r})")
    return value
