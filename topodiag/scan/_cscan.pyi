# The compiled line scanner (_cscan.c), built where the install had a C compiler; scan/lines.py loads
# it and falls back to the pure-Python twins (scan/lines.py lines_without_py, distinct_after_py),
# which give the same values. Two generic primitives: they know bytes, lines and the needles given,
# nothing of any producer. A chunk is bytes of whole lines; needles: a tuple of 1 to 8 non-empty
# bytes without a newline, sharing a first byte (ValueError otherwise).

def lines_without(chunk: bytes, needles: tuple[bytes, ...], /) -> tuple[int, list[int], list[bytes]]:
    """(n, keep, picked): the lines as chunk.split(b"\\n") cuts them (none after a final newline): their
    count; the indices of the non-empty lines holding none of the needles, and of those that end in a
    needle (the line's last byte in "!".."~" is the needle's last such byte, the needle's later bytes
    follow); those lines."""

def distinct_after(chunk: bytes, needles: tuple[bytes, ...], per_line: int, later_max: int, /
                   ) -> tuple[int, int, dict[bytes, None], dict[bytes, list[int]]]:
    """(lines, found, before, after): the count of "\\n"; the needles found left to right without
    overlap (at one place the tuple's first that matches); the text before each line's first needle,
    distinct, in order; the first `per_line` needles of each line with their text to the end of the
    line (later ones: `later_max` bytes at most), distinct, in order: {text: [count, first position]}."""

def kernel_keys(text: str, ends: bool = False, /) -> tuple | None:
    """(n, distinct, tags) of the kernel log's line keys (_kernel_log_keys._KEY_RE's five groups) of
    an ASCII str's lines: their count; [(key, tag, count, tag)] of each distinct key in order of first
    appearance (a tag: the index of the key's first line); each line's tag as native uint32 bytes.
    With `ends`, two more: each line's end (its "\n"'s place, or the text's length) as native uint32
    bytes, and the longest line's length. None for a str that is not ASCII; TypeError for anything but
    a str."""
