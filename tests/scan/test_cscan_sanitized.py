"""The C line scanner (topodiag/scan/_cscan.c) parses untrusted logs: built here under AddressSanitizer
and UndefinedBehaviorSanitizer, it is fed random chunks made of the tags' pieces and of random bytes,
in a child process (20,000 chunks a seed), with needles of every shape, and must neither trip a sanitizer nor differ from its
pure-Python twins (nor the NCCL scans built on it from theirs); and with the kernel log's line keys,
built so that every key hashes alike (each compared in full), it is fed texts of kernel-log lines
(tests/parsers/test_kernel_keys.py's) and must give the regex's keys. A sweep
of seconds (`pytest -m slow`); skipped where there is no C compiler, no Python headers or no
sanitizer runtime."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "topodiag" / "scan" / "_cscan.c"

CHILD = r"""
import random, sys
sys.path.insert(0, sys.argv[1])
import _cscan
from topodiag.parsers.nccl_debug import lines as nl
from topodiag.scan import lines as sl
nl.compiled = _cscan  # the NCCL scan built on this (sanitized) build, against the pure twins

PIECES = [b"NCCL INFO ", b" NCCL INFO ", b"NCCL INFO", b" NCCL TRACE ", b"NCCL TRACE", b"NCCL WARN", b"NCCL ",
          b"NCCL", b"\n", b"\n\n", b" ", b"\t", b"\x00", b"\xff", b"\x80", b"x", b"host:1:2 [0] ", b"INFO ",
          b"~", b"!", b"\x7f", b"\x1f", b"NCCL INFO NCCL INFO ", b":", b"7", b"[3]", b"h", b"\xc3\xa9",
          b"[Rank 3] ", b"[Rank ", b"NET/IB: ", b"NCCL failure", b"NCCL error", b"NCCL version", b"error",
          b"Channel 00 : 0[0] -> 1[1] via P2P", b"CCL WARN", b"WARN", b"h1:12:34 [0] ", b"a:1:2:3 [4] ",
          b"h:1:2 [1234567890] ", b"NET/IB: Dev 0 Port 1 qpn 5 mtu 5 LID 3", b"y" * 5000]
NEEDLES = [(b"NCCL INFO ",), (b"NCCL INFO ", b"NCCL TRACE "), (b"NCCL",), (b" ",), (b"x", b"xx"), (b"\xff\x00",),
           (b"y" * 4000, b"y"), (b"N", b"NCCL WARN", b"NCCL", b"NC", b"NCC", b"N\x7f", b"N ", b"NCCL version")]
rng = random.Random(int(sys.argv[2]))
for i in range(int(sys.argv[3])):
    if i % 4 == 3:
        c = bytes(rng.getrandbits(8) for _ in range(rng.randrange(64)))
    else:
        c = b"".join(rng.choice(PIECES) for _ in range(rng.randrange(24)))
    a, b = nl.tagged_c(c), nl.tagged_py(c)
    assert a[:4] == b[:4] and list(a[4]) == list(b[4]) and list(a[5].items()) == list(b[5].items()) \
        and a[6:8] == b[6:8] and list(a[8][0]) == list(b[8][0]) and list(a[8][1].items()) == list(b[8][1].items()), c
    assert _cscan.lines_without(c, sl.TAGS) == sl.untagged_py(c), c
    if i % 2:
        needles = rng.choice(NEEDLES)
    else:  # random needles sharing a first byte, none with a newline
        first = rng.choice(b"N x\xff\x00")
        needles = tuple(bytes([first]) + bytes(rng.choice(b"NCL IFO\xff\x00 x") for _ in range(rng.randrange(4)))
                        for _ in range(rng.randrange(1, 9)))
    per_line, later = rng.randrange(6), rng.randrange(6000)
    assert _cscan.lines_without(c, needles) == sl.lines_without_py(c, needles), (c, needles)
    x, y = _cscan.distinct_after(c, needles, per_line, later), sl.distinct_after_py(c, needles, per_line, later)
    assert x[:2] == y[:2] and list(x[2]) == list(y[2]) and list(x[3].items()) == list(y[3].items()), (c, needles)
from topodiag.parsers import _kernel_log_block as kb
from tests.parsers.test_kernel_keys import random_text, structured_text
for i in range(int(sys.argv[3]) // 4):  # the kernel log's line keys, every key hashed alike
    t = random_text(rng) if i % 2 else structured_text(rng)
    n, distinct, raw = _cscan.kernel_keys(t)
    assert (n, distinct, list(memoryview(raw).cast("I"))) == (lambda d: (d[0], d[1], list(d[2])))(kb.digest_py(t)), t
    n2, distinct2, raw2, ends, longest = _cscan.kernel_keys(t, True)  # and each line's end
    cut = [k for k, ch in enumerate(t) if ch == "\n"] + [len(t)]
    assert (n2, distinct2, raw2) == (n, distinct, raw) and list(memoryview(ends).cast("I")) == cut, t
    assert longest == max(map(len, t.split("\n"))), t
print("ok")
"""


def _runtime(name: str, cc: str) -> str | None:
    try:
        out = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out if os.path.isabs(out) and os.path.exists(out) else None


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sanitizer runtimes are preloaded (Linux)")
def test_the_scanner_under_asan_and_ubsan(tmp_path) -> None:
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if shutil.which(cc[0]) is None:
        pytest.skip("no C compiler")
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        pytest.skip("no Python headers")
    asan, ubsan = _runtime("libasan.so", cc[0]), _runtime("libubsan.so", cc[0])
    if asan is None or ubsan is None:
        pytest.skip("no sanitizer runtime")
    out = tmp_path / ("_cscan" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    built = subprocess.run(cc + ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                                 "-DTOPODIAG_KEYS_COLLIDE",
                                 "-fno-sanitize-recover=undefined", "-shared", "-fPIC", "-I", include,
                                 str(SOURCE), "-o", str(out)], capture_output=True, text=True, timeout=300)
    if built.returncode != 0:
        pytest.skip(f"the sanitized build failed: {built.stderr.strip()[-300:]}")
    env = dict(os.environ, PYTHONPATH=str(ROOT), LD_PRELOAD=f"{asan} {ubsan}",
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=86",  # CPython's own allocations are not leaks
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87", TOPODIAG_PURE="1")
    for seed in (1, 2):
        done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), str(seed), "20000"], capture_output=True,
                              text=True, env=env, timeout=600)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
        assert "AddressSanitizer" not in done.stderr and "runtime error" not in done.stderr, done.stderr[-3000:]
