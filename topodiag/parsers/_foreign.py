"""Lines of other programs in a tool's output, found at the cost of finding them and never parsed:
a training job's tqdm bars ("Epoch 3:  45%|####5     | 450/1000 [00:12<00:15, 36.10it/s]", redrawn
with carriage returns, each redraw a line) and lines longer than any tool prints (a config dump, a
one-line log). One substring test and one length test a line; a line in which the reader's failure
pattern matches is read as usual (a failure printed on a bar's line)."""

from __future__ import annotations

LONG_LINE = 8192  # characters: no nccl-tests line is this long


def skip(reader, line_no: int, s: str, may_fail: bool, fail_re) -> bool:
    """Whether the reader skips `s`: a blank line, or another program's line (counted in
    `reader.foreign`); the first text line is recorded (`reader.first_text`) as the reader would."""
    if not s:
        return True
    if reader.first_text is None:
        reader.first_text = (line_no, s)
    if ("%|" not in s and len(s) <= LONG_LINE) or (may_fail and fail_re.search(s[:LONG_LINE])):
        return False
    reader.foreign += 1
    return True


def notes(reader) -> list[str]:
    """The one note on the lines skipped, if any were."""
    if not reader.foreign:
        return []
    return [f"{reader.foreign} lines of other programs skipped unread (progress bars, lines of more than "
            f"{LONG_LINE} characters)"]
