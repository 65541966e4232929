"""What the passes of every identifier kind share: the placeholders a pass leaves where it replaced
something (two private-use characters, which no pattern of any pass matches, so nothing is redacted
twice: the 198.18.x.y inside a redacted ::ffff:198.18.x.y is not read again), and the helpers that
keep a token in its original's form (its case, its column, only one group of a match)."""

from __future__ import annotations

import re
from typing import Callable

Hold = Callable[[str], str]  # a token -> the placeholder that stands for it until the last pass is done

PH_HI, PH_LO, PH_SPAN = 0xF0000, 0x100000, 0xFFFE
PH = "[\U000F0000-\U000FFFFD][\U00100000-\U0010FFFD]"
PH_RE = re.compile(PH)
PUA_RE = re.compile("[\U000F0000-\U0010FFFF]")  # the placeholders' planes

HEX = "0-9A-Fa-f"
GUID_SLOT = rf"(?:0x[{HEX}]{{1,16}}|(?:0x)?{PH})"  # a GUID, printed or already held


def case(original: str, token: str) -> str:
    """The token in upper case when the original's hex letters were."""
    letters = [c for c in original if c in "abcdefABCDEF"]
    return token.upper() if letters and all(c.isupper() for c in letters) else token


def mixed(hexdigits: str) -> bool:
    """Hex letters and digits both (an all-f mask or a 16-digit number is no GUID)."""
    return any(c.isdigit() for c in hexdigits) and any(not c.isdigit() for c in hexdigits)


def sub_group(rx: re.Pattern, text: str, group: int, fn: Callable[[str], str]) -> str:
    """Replace only `group` of every match of rx by fn(its text); the rest of the match stays."""

    def repl(m: re.Match) -> str:
        a, b = m.start(group) - m.start(), m.end(group) - m.start()
        return m[0][:a] + fn(m[group]) + m[0][b:]

    return rx.sub(repl, text)


def fit(ws: str, original: str, token: str) -> str:
    """Whitespace + token, keeping a right-aligned column's end where the original's was."""
    if len(token) < len(original):
        return ws + token.rjust(len(original))
    extra = len(token) - len(original)
    if extra and ws.strip(" ") == "" and len(ws) > extra:
        return ws[: len(ws) - extra] + token
    return ws + token


def placeholders() -> tuple[Hold, Callable[[str], str]]:
    """(hold, restore): hold(token) gives the two characters that stand for token in the text;
    restore(text) puts every held token back in their place."""
    held: list[str] = []

    def hold(token: str) -> str:
        i = len(held)
        held.append(token)
        return chr(PH_HI + i // PH_SPAN) + chr(PH_LO + i % PH_SPAN)

    def restore(text: str) -> str:
        return PH_RE.sub(lambda m: held[(ord(m[0][0]) - PH_HI) * PH_SPAN + ord(m[0][1]) - PH_LO], text)

    return hold, restore
