"""The per-chunk line scan of the NCCL_DEBUG reader (reader.py `digest`): `tagged(chunk)`. Where the
install compiled topodiag/scan/_cscan.c (topodiag/scan/lines.py loads it), `tagged_c` builds it on
the compiled generic primitive `distinct_after` (the tags' texts and the line prefixes before them:
the pass over every line) and does the rest here (the counts, the WARN and mark lines, the per-QP
places); elsewhere `tagged_py` does it all, with the same values (tests/parsers/test_linescan.py
compares the two): from one split of the chunk at its NCCL elements (`_tagged_split`: INFO and WARN
tags with their texts, marks; the counts, places and prefixes taken from the pieces) where each line
holds one element at most, by a pass over the chunk for each output (`tagged_loop`) otherwise. A
chunk is bytes of whole lines as topodiag/scan/chunks.py cuts them, already normalised (CR and ANSI
codes out). What NCCL's lines mean is decided here and in kinds.py, never in C.
"""

from __future__ import annotations

import collections
import itertools
import operator
import re

from ...scan.lines import LATER_TEXT_MAX, TAGS_PER_LINE, compiled
from .facts import PREFIX_RE
from .prefix import first_prefix


def tagged_py(c: bytes) -> tuple[int, int, int, int, dict, dict, list, list, list]:
    """(lines, "NCCL INFO " count, "NCCL WARN" count, "NCCL TRACE" count, prefixes, messages, per_line,
    marks, warns): the count of "\\n" and of each tag anywhere (an INFO tag with its blank: the
    pieces the chunk is cut into already count it); the texts before the first "NCCL INFO " or
    "NCCL TRACE " of each line, distinct, in order of first appearance, as dict keys (values None),
    each as `prefix_key` gives it; the first TAGS_PER_LINE such tags of each line with their text to
    the end of the line (of a line's second tag and on: its first LATER_TEXT_MAX bytes at most): the
    distinct texts, from the tag on, in order of first appearance, each with [its count, the position
    of its first tag] (`messages`), except those whose text (past a "[Rank N] ")
    starts with "NET/IB: ", read line by line: the positions of their tags (`per_line`); the positions of
    the untagged marks (`_MARK_RE`: "NCCL failure", "NCCL error", "NCCL version", the "NCCL" of a
    "ProcessGroupNCCL" that starts no tag) with no "NCCL INFO", "NCCL WARN" or "NCCL TRACE" before them
    on their line (`marks`); the WARN lines (`warns`): the keys of the texts before the
    first "NCCL WARN" of each line (as the prefixes), and the texts from it to the end of the line,
    distinct, in order, each with [count, position of its first tag]. Read by `_tagged_split` where
    its conditions hold (nearly every chunk of a real log), by `tagged_loop` otherwise."""
    got = _tagged_split(c)
    return got if got is not None else tagged_loop(c)


def tagged_loop(c: bytes) -> tuple[int, int, int, int, dict, dict, list, list, list]:
    """`tagged_py` by its first, simpler way (a pass over the chunk for each output): what it does
    where `_tagged_split` declines a chunk, and the reference the tests hold that one to."""
    n_trace = c.count(b"NCCL TRACE")
    trace = n_trace > 0 and b"NCCL TRACE " in c  # (a pass over the chunk fewer where there is none)
    pieces = _TAG_SPLIT_RE.split(c) if trace else c.split(b"NCCL INFO ")
    messages, per_line, _ = _messages(c, pieces, trace)
    n_warn, w_before, w_after = _warns_py(c)
    n_info = c.count(b"NCCL INFO ") if trace else len(pieces) - 1
    return (c.count(b"\n"), n_info, n_warn, n_trace,
            _prefix_keys(c, pieces), messages, per_line, _marks(c), (_keys(w_before), w_after))


# Every NCCL element a line scan reads, found in one pass (`_tagged_split`): an INFO or TRACE tag with
# its text to the end of its line, a WARN likewise, a bare TRACE (then the chunk is read by
# `tagged_loop`), an untagged mark (the "NCCL" of a "ProcessGroupNCCL" among them, where nothing above
# starts there: `_MARK_RE`). Leftmost-first: a tag or mark inside an INFO/TRACE/WARN text is in that
# text. (All start with the literal "NCCL", so `re` looks for that first: the watchdog's word costs
# the split 0.3 ms a 4 MiB chunk, where looking for it apart cost the merge a pass, ~3 ms.)
_ELEMENT_RE = re.compile(rb"(NCCL(?: (?:INFO [^\n]*|TRACE [^\n]*|WARN[^\n]*|TRACE|failure|error|version)"
                         rb"|(?<=ProcessGroupNCCL)))")
_I, _W, _T = 73, 87, 84  # an element's sixth byte: "I" (INFO), "W" (WARN), "T" (TRACE); marks: "f", "e", "v"
_TAGS = (_I, _T, _W)
_TAG_KINDS = (b"I", b"T", b"W")  # (the same, as a one-byte slice: a "ProcessGroupNCCL" mark is 4 bytes long)


def _tagged_split(c: bytes):
    """`tagged_py`'s values from one `_ELEMENT_RE.split` of the chunk ([text, element, text, ...,
    text]), or None where the chunk is not one this way reads as `tagged_loop` does: it reads a chunk
    whose elements stand alone -- no INFO/TRACE text holds a second "NCCL INFO " or "NCCL TRACE", or
    "NCCL WARN"; no WARN text holds "NCCL INFO " or "NCCL TRACE"; no bare TRACE (not followed by a
    blank); no mark with "NCCL INFO" in the text before it or an INFO/TRACE/WARN element after it on
    its line; no "ProcessGroupNCCL" mark that is the "NCCL" of an "NCCL INFO" (" INFO" after it: no
    blank after that, or it would be a tag). Then (the reasons): "NCCL INFO ", "NCCL WARN" and "NCCL
    TRACE" never overlap an element's edge (no suffix of one is a prefix of "NCCL "; where one starts
    at a watchdog's "NCCL", it is the element there), so every one of them starts an element
    or lies in an INFO/TRACE/WARN text: every "NCCL TRACE" is a TRACE tag (the loop's TRACE mode where
    there is one), the INFO/TRACE elements are the tags, one a line; each WARN element is its line's
    first WARN with its text (`_warns_py`'s match) and counts the WARNs in it; each mark element has
    no tag before it on its line and every untagged mark is one (`_marks`). A tag's or WARN's text
    runs to its line's end, so the text before such an element holds its line's start: its last line
    is the element's prefix."""
    parts = _ELEMENT_RE.split(c)  # (element k is parts[2k + 1], the text before it parts[2k])
    n = len(parts) // 2
    counts = collections.Counter(itertools.islice(parts, 1, None, 2))
    special, n_warn, n_trace = _special(counts)
    if special is None:
        return None
    nets: list = []
    marks: list = []
    w_before: dict = {}
    skip: list = []  # the WARN and mark elements: the text before them is no INFO prefix
    if special:
        for k in itertools.compress(range(n), map(special.__contains__, itertools.islice(parts, 1, None, 2))):
            kind = parts[2 * k + 1][5:6]
            if kind == b"I" or kind == b"T":
                nets.append(k)
                continue
            skip.append(k)
            if kind == b"W":
                w_before.setdefault(parts[2 * k].rpartition(b"\n")[2], None)
                continue
            if b"NCCL INFO" in parts[2 * k] or (b"\n" not in parts[2 * k + 2] and 2 * k + 3 < len(parts)
                                                and parts[2 * k + 3][5:6] in _TAG_KINDS) \
                    or kind == b"" and parts[2 * k + 2].startswith(b" INFO"):  # ("ProcessGroupNCCL INFOx")
                return None
            marks.append(k)
    firsts = _firsts(parts, counts)
    at = dict(zip(*_places(parts, sorted(set(firsts).union(nets, marks)))))
    texts = list(map(parts.__getitem__, map((1).__add__, map((2).__mul__, firsts))))
    n_lines, raw = _info_prefixes(parts, skip, len(c))
    # (the split's list let go before the lists and tuples of the values are made: while it lives,
    # each collection of the young generation that those set off walks its hundred thousand items)
    del parts
    messages: dict = {}
    w_after: dict = {}
    for k, t in zip(firsts, texts):
        if t[5] == _W:
            w_after[t] = [counts[t], at[k]]
        elif t not in special:
            messages[t] = [counts[t], at[k]]
    return (n_lines, n - len(skip) - n_trace, n_warn, n_trace, _keys(raw), messages,
            [at[k] for k in nets], [at[k] for k in marks], (_keys(w_before), w_after))


def _special(counts: dict):
    """(the distinct elements read one by one: NET/IB INFO/TRACE texts, WARN texts, marks; the count
    of "NCCL WARN"; that of the TRACE tags), or (None, 0, 0) where `_tagged_split` does not read the
    chunk."""
    special = set()
    n_warn = n_trace = 0
    for t in counts:
        if len(t) == 4:  # a "ProcessGroupNCCL" mark
            special.add(t)
            continue
        kind = t[5]
        if kind == _I or kind == _T:
            m = 10 if kind == _I else 11  # (the tag's length)
            if kind == _T:
                if m > len(t):  # a bare TRACE
                    return None, 0, 0
                n_trace += counts[t]
            if t.find(b"NCCL ", m) >= 0 and (t.find(b"NCCL INFO ", m) >= 0 or b"NCCL WARN" in t
                                              or t.find(b"NCCL TRACE", m) >= 0):
                return None, 0, 0
            if t.startswith(b"NET/IB: ", m) or t.startswith(b"[Rank ", m) and _NET_IB_TEXT_RE.match(t):
                special.add(t)
        elif kind == _W:
            if b"NCCL INFO " in t or b"NCCL TRACE" in t:
                return None, 0, 0
            n_warn += counts[t] * t.count(b"NCCL WARN")
            special.add(t)
        else:
            special.add(t)
    return special, n_warn, n_trace


def _firsts(parts: list, counts: dict) -> list:
    """The index of the first of each distinct INFO/TRACE/WARN element, in order (each `index` walks on from
    the last: one walk over the list; no text between elements is an element); marks left out."""
    out = []
    at = 0
    for t in counts:
        at = parts.index(t, at + 1)
        if len(t) > 5 and t[5] in _TAGS:
            out.append(at >> 1)
    return out


def _places(parts: list, ks: list) -> tuple[list, list]:
    """(ks, the places in the chunk of these elements): element k starts after the texts and elements
    before it, parts[:2k + 1] (ks ascending; their lengths summed a stretch at a time, no list of them)."""
    places = []
    lens = map(len, parts)
    pos, j = 0, 0
    for k in ks:
        e = 2 * k + 1
        pos += sum(itertools.islice(lens, e - j))
        j = e
        places.append(pos)
    return ks, places


# Texts between the elements this long on average (a chunk's bytes over its INFO elements) are mostly
# other programs' lines (a training job's progress bars between the NCCL lines): each is then cut at
# its last newline and its newlines counted where it lies, not first made distinct -- the Counter
# hashes every byte of texts that seldom repeat (the progress-bar log: 6.4 -> 5.2 ms a 4 MiB chunk at
# ~280 bytes a text; at ~100, the log, it is 6.8 against 9.0 the other way).
LONG_TEXTS = 200


def _info_prefixes(parts: list, skip: list, size: int = 0) -> tuple[int, dict]:
    """(the count of "\\n" in the chunk, the last lines of the texts before the INFO/TRACE elements
    (those of `skip`, WARN and marks, left out), distinct, in order). The newlines are all in the texts between
    the elements: each distinct text's counted once, or each text's where they are long (`size`: the
    chunk's length; LONG_TEXTS)."""
    n_lines = parts[-1].count(b"\n")
    if skip:
        pre: list = []
        j = 0
        for k in skip:
            pre += parts[j:2 * k:2]
            j = 2 * k + 2
        pre += parts[j:-1:2]
        n_lines += sum(map(bytes.count, map(parts.__getitem__, map((2).__mul__, skip)), itertools.repeat(b"\n")))
    else:
        pre = parts[0:-1:2]
    if size >= LONG_TEXTS * len(pre):
        n_lines += sum(map(bytes.count, pre, itertools.repeat(b"\n")))
        return n_lines, dict.fromkeys(map(operator.itemgetter(2), map(bytes.rpartition, pre, itertools.repeat(b"\n"))))
    counts = collections.Counter(pre)
    n_lines += sum(map(operator.mul, counts.values(), map(bytes.count, counts, itertools.repeat(b"\n"))))
    return n_lines, dict.fromkeys(map(operator.itemgetter(2), map(bytes.rpartition, counts, itertools.repeat(b"\n"))))


_INFO_ONLY = (b"NCCL INFO ",)
_WARN_ONLY = (b"NCCL WARN",)
_TRACE_ONLY = (b"NCCL TRACE",)
_INFO_TRACE = (b"NCCL INFO ", b"NCCL TRACE ")


def tagged_c(c: bytes) -> tuple[int, int, int, int, dict, dict, list, list, list]:
    """`tagged_py`'s values, the pass over every line made by the compiled `distinct_after` (the texts
    from each line's first TAGS_PER_LINE tags on, and the text before its first tag)."""
    n_trace = compiled.distinct_after(c, _TRACE_ONLY, 0, 0)[1]  # (a count: memmem, quicker than bytes.count)
    trace = n_trace > 0 and b"NCCL TRACE " in c
    n_lines, found, before, messages = compiled.distinct_after(c, _INFO_TRACE if trace else _INFO_ONLY,
                                                              TAGS_PER_LINE, LATER_TEXT_MAX)
    per_line: list = []
    nets = [t for t in messages if _NET_IB_TEXT_RE.match(t)]
    if nets:  # read line by line (by place): out of the texts, their tags' places found
        for t in nets:
            del messages[t]
        per_line = _net_ib_places(c, trace)
    _, n_warn, w_before, w_after = compiled.distinct_after(c, _WARN_ONLY, 1, 0)
    n_info = c.count(b"NCCL INFO ") if trace else found
    return (n_lines, n_info, n_warn, n_trace, _keys(before), messages, per_line, _marks(c),
            (_keys(w_before), w_after))


def _net_ib_places(c: bytes, trace: bool) -> list:
    """The places of the tags whose text (past a "[Rank N] ") starts with "NET/IB: ", among the first
    TAGS_PER_LINE tags of their line."""
    out = []
    pos = c.find(b"NET/IB: ")
    while pos >= 0:  # (each "NET/IB: ", then the tag before it: a few of a chunk's lines hold one)
        m = _NET_IB_BACK_RE.search(c, max(0, pos - 30), pos)
        pos = c.find(b"NET/IB: ", pos + 8)
        if m is None:
            continue
        at = m.start()
        ls = c.rfind(b"\n", 0, at) + 1
        if c.count(b"NCCL INFO ", ls, at) + (c.count(b"NCCL TRACE ", ls, at) if trace else 0) < TAGS_PER_LINE:
            out.append(at)
    return out


def _prefix_keys(c: bytes, pieces: list) -> dict:
    """The prefixes of `tagged_py`, with C-level passes: the chunk cut at its tags (`pieces`: at each
    "NCCL INFO ", or at each INFO/TRACE tag when it holds "NCCL TRACE "), the text after each piece's
    last newline, each distinct one read by `_keys`. (A `findall` of plain `host:pid:tid [dev] ` line
    starts over the whole chunk was tried first until it was measured: 32 ms a 4 MiB chunk where it
    held, 64 where a few launcher-prefixed lines made it fail, against 22-35 ms for this path alone.)"""
    if pieces is None:
        pieces = _TAG_SPLIT_RE.split(c)
    if len(pieces) < 2:
        return {}
    # piece i ends with the text before tag i on its line; tag i is its line's first when piece i
    # holds a newline (or i is 0)
    raw = {pieces[0].rpartition(b"\n")[2]: None}
    # (one lazy pass: the (head, "\n", tail) of each piece that holds a newline, its tail kept)
    parts = map(bytes.rpartition, itertools.islice(pieces, 1, len(pieces) - 1), itertools.repeat(b"\n"))
    raw.update(dict.fromkeys(map(operator.itemgetter(2), filter(operator.itemgetter(1), parts))))
    return _keys(raw)


def _keys(raw: dict) -> dict:
    """What stands for each of these distinct line prefixes (dict keys, none holding a newline), as
    `prefix_key` gives it, in order, distinct, the None ones left out: ASCII ones read by one `findall`
    over them all (`_found_keys`); otherwise each ASCII prefix's pid and tid set to 0 before it is read
    (so that thousands of pid/tid prefixes are read as the few they stand for)."""
    if not raw:
        return {}
    joined = b"\n".join(raw)
    if joined.isascii():
        found = _PREFIX_FOUND_B.findall(joined)
        if len(found) == len(raw):  # (one finding a line: always; the check costs nothing)
            return _found_keys(found, raw)
        return _keys_of(raw)
    canon = dict.fromkeys(_PID_TID_B.sub(b":0:0", r) if r.isascii() else r for r in raw)
    keys = list(map(prefix_key, canon))
    if any(k.__class__ is bytes and k.isascii() for k in keys):  # handed back as they are: each raw text
        keys = list(map(prefix_key, raw))
    return dict.fromkeys(k for k in keys if k is not None)


def _found_keys(found: list, raw) -> dict:
    """`_keys` of these ASCII texts from `_PREFIX_FOUND_B`'s finding in each: (host, device digits) of
    the first `host:pid:tid [dev]` in it, as `prefix_key` finds it, or (b"", b"") where it holds none
    (key None, left out). The distinct findings are converted once, in order; a device number of over 9
    digits (a text `prefix_key` hands back as it is) sends them all to `_keys_of`."""
    pairs = dict.fromkeys(found)
    pairs.pop(_NO_PREFIX, None)
    devices = list(map(operator.itemgetter(1), pairs))
    if max(map(len, devices), default=0) > 9:
        return _keys_of(raw)
    return dict.fromkeys(zip(map(operator.itemgetter(0), pairs), map(int, devices)))


def _keys_of(texts) -> dict:
    """`_keys` by its definition: `prefix_key` of each text, distinct, in order, the None ones left out."""
    return dict.fromkeys(k for k in map(prefix_key, texts) if k is not None)


_NO_PREFIX = (b"", b"")


def _messages(c: bytes, pieces: list, trace: bool) -> tuple[dict, list, bool]:
    """`messages` and `per_line` of `tagged_py`, the chunk cut at its tags (`pieces`; at "NCCL INFO "
    only unless `trace`). A chunk whose lines hold one tag each at most (the rule: `findall` of the
    tag's text to the end of the line then finds every tag) takes C-level passes: the texts in order,
    each tag's place from the lengths of the pieces and tags before it; any other chunk, a loop over
    its tags. The third value says which."""
    messages: dict = {}
    if pieces is not None:
        texts = (_TAGGED_TEXT_RE if trace else _TEXT_RE).findall(c)
        if len(texts) == len(pieces) - 1:
            # each tag's length: "NCCL INFO " 10, "NCCL TRACE " 11 (its sixth byte a "T", 84)
            tags = (map(operator.add, map((84).__eq__, map(operator.itemgetter(5), texts)), itertools.repeat(10))
                    if trace else itertools.repeat(10, len(texts)))
            # tag i is at the length of the pieces and tags before it: placed only where needed (the
            # first tag of each text, and the NET/IB tags)
            ends = list(itertools.accumulate(map(len, pieces[:-1])))
            counts = collections.Counter(texts)
            nets = {t for t in counts if _NET_IB_TEXT_RE.match(t)}  # read line by line: by place
            if trace:
                tag_lens = list(itertools.accumulate(tags, initial=0))
                place = lambda i: ends[i] + tag_lens[i]  # noqa: E731
            else:
                place = lambda i: ends[i] + 10 * i  # noqa: E731
            per_line: list = []
            if nets:
                per_line = list(map(place, itertools.compress(range(len(texts)), map(nets.__contains__, texts))))
            at = -1
            for text, count in counts.items():  # (in order of first appearance: each `index` walks on from the last)
                if text not in nets:
                    at = texts.index(text, at + 1)
                    messages[text] = [count, place(at)]
            return messages, per_line, True
    per_line = []
    prev, on_line = 0, 0
    for m in _TAG_RE.finditer(c):
        at = m.start()
        if c.find(b"\n", prev, at) >= 0:  # a new line
            on_line = 0
        prev = at
        on_line += 1
        if on_line > TAGS_PER_LINE:
            continue
        eol = c.find(b"\n", at)
        if eol < 0:
            eol = len(c)
        text = c[at:eol] if on_line == 1 or eol - at <= LATER_TEXT_MAX else c[at:at + LATER_TEXT_MAX]
        if _NET_IB_RE.match(c, m.end()):
            per_line.append(at)
        elif text in messages:
            messages[text][0] += 1
        else:
            messages[text] = [1, at]
    return messages, per_line, False


def _marks(c: bytes) -> list:
    """`marks` of `tagged_py`: each mark checked against the text before it on its line (from the
    previous mark on, when that is on the same line: linear)."""
    marks: list = []
    prev, tagged = -1, False
    places = [m.start() for m in _MARK_RE.finditer(c)] if b"NCCL" in c else []  # (no two overlap)
    for at in places:
        if prev >= 0 and c.find(b"\n", prev, at) < 0:  # the same line as the previous mark
            seg = c[prev:at + 1]
        else:
            seg = c[c.rfind(b"\n", max(prev, 0), at) + 1:at + 1]
            tagged = False
        # (to at + 1: "NCCL WARN" may end in the "N" that starts the mark)
        tagged = tagged or b"NCCL INFO" in seg or b"NCCL WARN" in seg or b"NCCL TRACE" in seg
        if not tagged:
            marks.append(at)
        prev = at
    return marks


def _warns_py(c: bytes) -> tuple[int, dict, dict]:
    """The compiled `distinct_after(c, (b"NCCL WARN",), 1, 0)`'s count, `before` and `after`, in
    Python: the count of "NCCL WARN" (bytes.count's), the text before each line's first one, and its
    text from there to the end of the line (one match a line: the match runs to the line's end),
    distinct, in order, each with [count, position of its first tag]."""
    before: dict = {}
    after: dict = {}
    n = 0
    for m in _WARN_TEXT_RE.finditer(c):
        text, at = m.group(), m.start()
        n += text.count(b"NCCL WARN")
        before.setdefault(c[c.rfind(b"\n", 0, at) + 1:at], None)
        got = after.get(text)
        if got is None:
            after[text] = [1, at]
        else:
            got[0] += 1
    return n, before, after


def warn_lines(c: bytes) -> list:
    """(position, line start, line end, line index in the chunk) of the first "NCCL WARN" of each line:
    what the reader reads line by line while the lists WARN lines join are not full."""
    out: list = []
    line_no, counted = 0, 0
    pos = c.find(b"NCCL WARN")
    while pos >= 0:
        ls = c.rfind(b"\n", 0, pos) + 1
        line_no += c.count(b"\n", counted, ls)
        counted = ls
        eol = c.find(b"\n", pos)
        if eol < 0:
            eol = len(c)
        out.append((pos, ls, eol, line_no))
        pos = c.find(b"NCCL WARN", eol)
    return out


_TAG_RE = re.compile(rb"NCCL (?:INFO|TRACE) ")
# The untagged marks: "NCCL failure", "NCCL error", "NCCL version", and the "NCCL" of "ProcessGroupNCCL"
# (PyTorch's c10d lines) where `_ELEMENT_RE` finds no tag or mark starting there.
_MARK_RE = re.compile(rb"NCCL(?: (?:failure|error|version)"
                      rb"|(?<=ProcessGroupNCCL)(?! (?:INFO |TRACE|WARN|failure|error|version)))")
_TAG_SPLIT_RE = _TAG_RE
_NET_IB_RE = re.compile(rb"(?:\[Rank [0-9]{1,9}\] )?NET/IB: ")
_NET_IB_TEXT_RE = re.compile(rb"NCCL (?:INFO|TRACE) (?:\[Rank [0-9]{1,9}\] )?NET/IB: ")
# a tag, and "[Rank N] " after it where there is one, ending where a "NET/IB: " starts
_NET_IB_BACK_RE = re.compile(rb"NCCL (?:INFO|TRACE) (?:\[Rank [0-9]{1,9}\] )?\Z")
_TEXT_RE = re.compile(rb"NCCL INFO [^\n]*")
_WARN_TEXT_RE = re.compile(rb"NCCL WARN[^\n]*")
_TAGGED_TEXT_RE = re.compile(rb"NCCL (?:INFO|TRACE) [^\n]*")
# an ASCII prefix's ":pid:tid" before a blank (PREFIX_RE's \s over text). Neither run can be the host
# PREFIX_RE finds (a host is followed by ":digits:digits" and a blank) nor hold one, so with both set to
# 0 it finds the same host and device
_PID_TID_B = re.compile(rb":[0-9]+:[0-9]+(?=[\t\n\x0b\x0c\r\x1c-\x1f ])")


# nccl_debug/facts.py PREFIX_RE over ASCII bytes, made from its pattern: \s of text is
# [\t\n\v\f\r\x1c-\x1f ] over ASCII, and over bytes only what is written out here
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f "
PREFIX_B = re.compile(PREFIX_RE.pattern.replace(r"[^\s", "[^" + _SPACE).replace(r"\s+", "[" + _SPACE + "]+").encode())
assert "\\s" not in PREFIX_B.pattern.decode(), "PREFIX_RE holds a \\s this translation does not know"


# The first prefix of each line (re.M) as `prefix_key` finds it, or nothing there: one finding a line,
# whatever it holds (a timestamp or launcher text before the prefix, no prefix at all). A host is a
# run of _HOST_B started where no host character stands before it (the lookbehind) and taken whole
# (the look-ahead and its back-reference: an atomic group, which `re` lacks before Python 3.11), so
# each line is read once, whatever runs of host characters it holds; the first `:pid:tid [dev]`
# after a whole run is the first tail with a host before it, the one `first_prefix` stops at. (The
# blanks of the tail are _SPACE without the newline: a prefix holds none.)
_HOST_B = rb"[^" + _SPACE.encode() + rb":\[\]`'\"]"
_PREFIX_FOUND_B = re.compile(rb"^(?:[^\n]*?(?<!" + _HOST_B + rb")(?=(" + _HOST_B + rb"+))\1:[0-9]+:[0-9]+"
                             rb"[\t\x0b\x0c\r\x1c-\x1f ]+\[([0-9]+)\])?[^\n]*", re.M)


def prefix_key(pre: bytes):
    """What stands for a line prefix: for ASCII, the (host bytes, device) that PREFIX_RE finds first in
    it, or None when it finds none; otherwise (or with a device number of over 9 digits) the bytes."""
    if not pre.isascii():
        return pre
    m = _find_prefix_b(pre)
    if m is None:
        return None
    if len(m[1]) > 9:
        return pre
    return m[0], int(m[1])


_PREFIX_TAIL_B = re.compile(rb":[0-9]+:[0-9]+[" + _SPACE.encode() + rb"]+\[([0-9]+)\]")
_NOT_HOST_B = frozenset(b":[]`'\"" + bytes(range(0x1c, 0x20)) + b" \t\n\x0b\x0c\r")


def _find_prefix_b(pre: bytes):
    """(host, device digits) of the first match of PREFIX_B in `pre` (ASCII), found from the fixed
    tail and a walk back over the host: linear, where PREFIX_B.search is quadratic on a long host run."""
    return first_prefix(pre, _PREFIX_TAIL_B, _NOT_HOST_B.__contains__)


tagged = tagged_c if compiled is not None else tagged_py
