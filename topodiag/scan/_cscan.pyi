# The compiled line scanner (_cscan.c), built where the install had a C compiler; lines.py loads it
# and falls back to the pure-Python twins (scan/lines.py untagged_py, parsers/nccl_debug/lines.py
# tagged_py), which give the same values. A chunk is bytes of whole lines.

TAGS_PER_LINE: int  # INFO/TRACE tags read per line
LATER_TEXT_MAX: int  # bytes of a line's second and later tag texts

def tagged(chunk: bytes, /) -> tuple[int, int, int, int, dict, dict, list, list, list]:
    """(lines, INFO, WARN, TRACE counts, prefixes, messages, per_line, marks, warns): see
    parsers/nccl_debug/lines.py tagged_py."""

def untagged(chunk: bytes, /) -> tuple[int, list[int], list[bytes]]:
    """(n, keep, picked): the lines without an NCCL INFO/TRACE tag: see scan/lines.py untagged_py."""
