"""The attack pass's N4g-N4i: three patterns quadratic on "a prefix of a real line, then a long run".

- N4g: DRIVER_RE `cudaDriverVersion\\s*:?\\s*([0-9]+)`: the two blank runs competed over 64 K tabs (55 s).
- N4h: PREFIX_RE `([^\\s:...]+):pid:tid [dev]` searched from every start of a long host-character run
  (`é` + 128 KiB of `a` + ` NCCL INFO hello`; with the compiled scanner too, which hands non-ASCII
  prefixes to Python): now found from the fixed tail, walking back over the host once. The same for
  the pure-Python scanner's bytes form (ASCII prefixes).
- N4i: kernel_log `_FAULT_DEV_RE` began with `(?:\\S+ )?`, which rescanned a long token from every start
  (41 s for 64 K `a` after `AMD-Vi: IO_PAGE_FAULT`); the optional token captured nothing and is gone.
Each is timed as a growth ratio in CPU time (tests/parsers/test_adversarial_time.py's `_timed`), and
the new prefix finders are held to the regexes they replace on generated prefixes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.parsers.test_adversarial_time import _timed
from topodiag import parsers
from topodiag.parsers.nccl_debug import lines as _linescan
from topodiag.parsers.nccl_debug.facts import DRIVER_RE, PREFIX_RE, find_prefix

KB = 1024


def test_n4g_driver_version_over_blanks_is_linear():
    _timed("DRIVER_RE", DRIVER_RE.search, lambda k: "h:1:1 [0] NCCL INFO cudaDriverVersion" + "\t" * int(64 * KB * k))
    assert DRIVER_RE.search("cudaDriverVersion 12040").group(1) == "12040"
    assert DRIVER_RE.search("CUDA Driver version : 12020").group(1) == "12020"
    assert DRIVER_RE.search("cudaDriverVersion:\t11080").group(1) == "11080"


def test_n4h_prefix_after_a_long_host_run_is_linear():
    _timed("find_prefix", find_prefix, lambda k: "\u00e9" + "a" * int(128 * KB * k) + " ")
    _timed("nccl_debug.parse", parsers.get("nccl_debug").parse,
           lambda k: "\u00e9" + "a" * int(128 * KB * k) + " NCCL INFO hello\n")
    _timed("prefix_key", _linescan.prefix_key, lambda k: b"a" * int(128 * KB * k) + b" ")


_PIECES = st.lists(st.sampled_from(["h", "node-1", ":", "12", "3", " ", "\t", "[", "]", "[0]", "'", "`", "x",
                                    "\u00e9", ":1:2 [3]", "host:7:8 [0]", "::", "\u2028"]), max_size=14)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_PIECES)
def test_find_prefix_is_prefix_re(pieces):
    text = "".join(pieces)
    m = PREFIX_RE.search(text)
    assert find_prefix(text) == ((m.group(1), m.group(2)) if m else None)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_PIECES)
def test_bytes_prefix_is_prefix_b(pieces):
    raw = "".join(pieces).encode("ascii", "ignore")
    m = _linescan.PREFIX_B.search(raw)
    want = None if m is None else (raw if len(m.group(2)) > 9 else (m.group(1), int(m.group(2))))
    assert _linescan.prefix_key(raw) == want


def test_n4i_iommu_fault_device_after_a_long_token_is_linear():
    kernel = parsers.get("kernel_log")
    _timed("kernel_log.parse", kernel.parse,
           lambda k: "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1\n[ 2.0] AMD-Vi: IO_PAGE_FAULT " + "a" * int(64 * KB * k) + "\n")
    fault = re.compile(r"AMD-Vi")  # the real line still gives its device
    text = "[ 2.0] pci 0000:41:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0000 address=0x0 flags=0x0020]\n"
    result = kernel.parse(text)
    assert fault.search(text) and [f.pci for f in result.iommu_faults] == ["0000:41:00.0"]


# kernel_log's elision pattern, as it was: `\.{3,}` then `[ \t.]*` both take dots (quadratic on a long
# run of dots that does not end the line: 3 s for 32 K dots then `x`, found by the cut sweep)
_OLD_ELISION = re.compile(r"^[ \t]*(?:\[[ \t.]*\.\.\.[ \t.]*\]|\.{3,}|\u2026)[ \t.]*$")


def test_kernel_log_elision_lines_are_read_in_linear_time():
    kernel = parsers.get("kernel_log")
    _timed("kernel_log.sniff", kernel.sniff, lambda k: "." * int(32 * KB * k) + "x")
    from topodiag.parsers.kernel_log import _elision

    for line in ("...", "  ...  ", "[...]", "[    ....    ]", " [ ... ] ..", "\u2026", "..", "[..]", "[...] x",
                 "....x", "[...][...]", "\t...\t", "[...]]"):
        assert _elision(line) is bool(_OLD_ELISION.match(line)), line


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from([".", " ", "\t", "[", "]", "\u2026", "x", "..."]), max_size=10))
def test_elision_is_the_old_pattern(pieces):
    from topodiag.parsers.kernel_log import _elision

    line = "".join(pieces)
    assert _elision(line) is bool(_OLD_ELISION.match(line))
