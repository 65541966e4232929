"""benchmarks/inputs.py builds the inputs the budgets of issue 29 are measured on: each class must be
the text it names. The progress-bar class (`nccl_progress`) holds tqdm redraws as tqdm writes them to
a file (a carriage return before each, blanks after one shorter than the one before; one line in 20
ends with tqdm.write's cleared bar and a logging callback's message): a bar 10 cells wide that never passes 100%, `n/total` with n <= total (its step once ran on
unbounded, and by the 1 GB mark each redraw was a bar of thousands of full blocks: 150 KB lines of
U+2588 that no progress bar writes, with grep's baseline three times quicker than on any NCCL log).
The 10-cell form is what a job's log file holds (tqdm without a terminal, as public threads quote it:
"  0%|          | 0/10 [00:00<?, ?it/s]", "100%|██████████| 10/10 [...]"); the terminal form, as wide
as the console with partial blocks ("███▉"), is not generated here."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import inputs  # noqa: E402

# tqdm's default meter without a terminal: "{desc}: {percentage:3.0f}%|{bar:10}| {n}/{total} [...]"
REDRAW = re.compile(r"Epoch [0-9]: {1,3}([0-9]{1,3})%\|(.{10})\| ([0-9]+)/([0-9]+) \[[0-9:]+<[0-9:]+, [0-9.]+it/s, "
                    r"loss=[0-9.]+\]")


def test_tqdm_redraws_stay_within_their_loop():
    for step in (0, 1, 999, 1000, 1001, 7 * 60000 + 3, 10 ** 7):
        m = REDRAW.fullmatch(inputs._tqdm(step))
        assert m is not None, inputs._tqdm(step)
        pct, bar, n, total = int(m[1]), m[2], int(m[3]), int(m[4])
        assert 0 <= n <= total == 1000 and pct == n * 100 // total <= 100
        assert bar == "\u2588" * (pct // 10) + " " * (10 - pct // 10)


def test_nccl_progress_is_nccl_lines_with_bars_and_training_lines(tmp_path):
    path = tmp_path / "progress.log"
    inputs.nccl_progress(path, 3 << 20)  # past the step (~143 blocks) where the old bars passed 100%
    data = path.read_bytes()
    assert len(data) >= 3 << 20
    lines = data.decode("utf-8").split("\n")
    bars = [ln for ln in lines if ln.startswith("\rEpoch ")]
    assert len(bars) > 1000
    longest = written = 0
    for line in bars:
        redraws = line.split("\r")
        if len(redraws) == 15:  # tqdm.write: the bar cleared (blanks over the last redraw), the message
            assert redraws[13] == " " * len(redraws[12].rstrip(" ")) and redraws[14].startswith("{'loss': ")
            redraws = redraws[:13]
            written += 1
        # one tqdm line: twelve redraws, each after a carriage return (the line's first piece empty),
        # padded with blanks over a longer one before it, as tqdm's status printer writes them
        assert len(redraws) == 13 and redraws[0] == ""
        for before, r in zip(redraws[1:], redraws[2:]):
            bar = r.rstrip(" ")
            assert len(r) == max(len(bar), len(before.rstrip(" ")))
        for r in redraws[1:]:
            m = REDRAW.fullmatch(r.rstrip(" "))
            assert m is not None, r
            assert int(m[1]) <= 100 and int(m[3]) <= int(m[4])
        longest = max(longest, len(line))
    assert longest < 1400  # twelve redraws of ~80 characters: no line of thousands of bar cells
    assert len(bars) // 25 < written < len(bars) // 15  # one line in 20 with a logging callback's line
    assert sum(1 for ln in lines if ln.startswith("step ")) == len(bars)
    assert sum(1 for ln in lines if " NCCL INFO " in ln) > len(bars)
    assert any(re.match(r"\[2025-01-07 [0-9:]{8}\] \S+:[0-9]+:[0-9]+ \[", ln) for ln in lines)  # a launcher's stamp
