"""A big directory read in two processes (topodiag/fleet/split.py) gives exactly the one-process
result: the same nodes in the same order, so the same outliers, duplicates, failures and names
(issue 11). The threshold is lowered here so that a few hundred reports take the two-process path."""

from __future__ import annotations

import json
import shutil
import math
from array import array
from pathlib import Path

import pytest

from topodiag.fleet import run_fleet, split
from topodiag.fleet.reports import BUNDLE, NodeReport
from topodiag.fleet.tally import Tally
from topodiag.scan.workers import fork_ok

from .conftest import BASE_SCENARIO, node

N = 300


def _fleet_dir(root: Path, base: dict) -> Path:
    """N indented report files, and among them: a bundle (first, so in this process's half), outliers
    in both halves, a host name claimed by a file of each half and by two files of the second half,
    a cut-off report, a `parse` output, a JSON-lines file of two reports and a node with findings."""
    d = root / "reports"
    d.mkdir()
    shutil.copytree(BASE_SCENARIO, d / "a-bundle")  # a copy: fleet follows no link in a directory
    for i in range(1, N + 1):
        host, fp = f"node{i:03d}", {}
        if i == 20:
            fp = {"nic:mlx5_0.firmware": "28.39.1002"}
        elif i == 250:
            fp = {"nic:mlx5_1.port1.rate_gbps": 200.0}
        elif i == 270:
            host = "node030"  # node030.json says it too: one file of each half
        elif i in (280, 290):
            host = "clone"
        r = node(base, host, fp=fp)
        if i == 285:
            r["findings"] = [{"code": "IB001", "severity": "error"}, {"code": "GPU003", "severity": "warning"}]
        text = json.dumps(r, indent=2) + "\n"
        if i == 260:
            text = text[: len(text) // 2]  # cut off
        elif i == 265:
            text = json.dumps({"source": "ibstat", "cas": []}, indent=2)
        (d / f"node{i:03d}.json").write_text(text)
    two = [node(base, "node275a"), node(base, "node275b", fp={"gpu:6.numa": 0})]
    (d / "node275.jsonl").write_text("".join(json.dumps(r) + "\n" for r in two))
    return d


def _run(paths: list[str], monkeypatch, min_files: int) -> tuple[dict, list[bool]]:
    merged: list[bool] = []
    real = Tally.merge

    def spy(self, part):
        merged.append(real(self, part))
        return merged[-1]

    with monkeypatch.context() as m:
        m.setattr(split, "MIN_FILES", min_files)
        m.setattr(Tally, "merge", spy)
        return run_fleet(paths).to_dict(), merged


needs_fork = pytest.mark.skipif(not fork_ok(), reason="needs fork and two usable CPUs")


@needs_fork
def test_two_processes_give_the_one_process_result(tmp_path, base_report, monkeypatch):
    d = str(_fleet_dir(tmp_path, base_report))
    one, merged = _run([d], monkeypatch, 10**9)
    assert merged == []
    two, merged = _run([d], monkeypatch, 50)
    assert merged == [True]  # the worker's half was merged, not read again here
    assert two == one
    # what the directory holds came out, as the one-process reader says it
    assert one["nodes"] == N - 2 + 2 + 1  # the files less the two failures, two JSON lines, the bundle
    assert [o["line"].split(":")[0] for o in one["outliers"]] == ["node020", "node250", "node275b"]
    assert [f["input"].rsplit("/", 1)[-1] for f in one["failures"]] == ["node260.json:1", "node265.json:1"]
    assert one["failures"][0]["reason"].startswith("the report is not complete")
    assert one["failures"][1]["reason"].startswith("a `topodiag parse` output")
    assert [(x["host"], len(x["sources"])) for x in one["duplicates"]] == [("clone", 2), ("node030", 2)]
    assert [n["node"] for n in one["nodes_with_findings"]] == ["node285"]


@needs_fork
def test_the_same_directory_twice_counts_once_either_way(tmp_path, base_report, monkeypatch):
    """The second reading's half is all re-reads: merging it would skip `add`'s judgement, so it is
    read here one report at a time."""
    d = str(_fleet_dir(tmp_path, base_report))
    one, _ = _run([d, d], monkeypatch, 10**9)
    two, merged = _run([d, d], monkeypatch, 50)
    assert merged == [True, False]
    assert two == one and len(one["inputs_read_twice"]) == N + 1


@needs_fork
def test_a_worker_that_dies_leaves_its_half_to_this_process(tmp_path, base_report, monkeypatch):
    d = str(_fleet_dir(tmp_path, base_report))
    one, _ = _run([d], monkeypatch, 10**9)
    monkeypatch.setattr(split, "_tally_part", _boom)
    two, merged = _run([d], monkeypatch, 50)
    assert merged == [] and two == one


def _boom(*args):
    raise RuntimeError("worker died")


def test_no_worker_pool_reads_both_halves_here(tmp_path, base_report, monkeypatch):
    d = str(_fleet_dir(tmp_path, base_report))
    one, _ = _run([d], monkeypatch, 10**9)
    monkeypatch.setattr(split, "halves", lambda path: _halves_anyway(path))
    monkeypatch.setattr("topodiag.scan.workers.one_worker_pool", lambda: None)
    two, merged = _run([d], monkeypatch, 50)
    assert merged == [] and two == one


def _halves_anyway(path):
    from topodiag.fleet.reports import dir_entries

    paths, kinds = dir_entries(path)
    cut = len(paths) // 2
    return (paths[:cut], kinds[:cut]), (paths[cut:], kinds[cut:])


def test_small_directories_and_no_fork_stay_in_one_process(tmp_path, base_report, monkeypatch):
    d = str(_fleet_dir(tmp_path, base_report))
    monkeypatch.setattr(split, "MIN_FILES", 50)
    monkeypatch.setattr("topodiag.scan.workers.fork_ok", lambda: False)
    assert split.halves(d) is None
    monkeypatch.setattr("topodiag.scan.workers.fork_ok", lambda: True)
    head, tail = split.halves(d)
    assert len(head[0]) + len(tail[0]) == N + 2 and BUNDLE not in tail[1] and head[1][0] == BUNDLE
    monkeypatch.setattr(split, "MIN_FILES", N + 3)
    assert split.halves(d) is None
    assert split.halves(str(BASE_SCENARIO)) is None  # a bundle
    assert split.halves(str(tmp_path / "none")) is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").symlink_to(d, target_is_directory=True)
    assert split.halves("-") is None  # standard input


def test_the_workers_half_starts_after_the_last_bundle(tmp_path, monkeypatch):
    d = tmp_path / "mixed"
    d.mkdir()
    for i in range(100):
        (d / f"n{i:03d}.json").write_text("{}")
    (d / "n070.tar.gz").write_bytes(b"")  # a bundle archive, judged in this process
    monkeypatch.setattr(split, "MIN_FILES", 40)
    monkeypatch.setattr("topodiag.scan.workers.fork_ok", lambda: True)
    head, tail = split.halves(str(d))
    assert head[0][-1].endswith("n070.tar.gz") and head[1][-1] == BUNDLE and len(tail[0]) == 29
    monkeypatch.setattr(split, "MIN_FILES", 60)  # 29 left for the worker: not worth it
    assert split.halves(str(d)) is None


def _state(t: Tally) -> dict:
    """Everything a Tally holds, dict order included."""
    out = {}
    for k, v in vars(t).items():
        if k == "keys":
            v = [(key, [(val, list(arr)) for val, arr in vals.items()]) for key, vals in v.items()]
        elif isinstance(v, dict):
            v = list(v.items())
        elif isinstance(v, (bytearray, array)):
            v = list(v)
        out[k] = v
    return out


def _r(label, host=None, worst=None, origin=None, **fp):
    return NodeReport(label, host, fp, ("IB001",) if worst else (), worst, origin)


def test_merge_is_add_in_order():
    """A Tally filled apart and merged holds what adding every report in order gives: indices, dict
    orders, name and host clashes (one across the halves, one inside the part, third and fourth
    claimants of a clash), re-reads inside the part, keys and values first seen in the part,
    1/True/1.0 and NaN."""
    first = [_r("a", "h1", a=1, b="x"), _r("b", "h2", a=2), _r("c", "h2", a=1, nan=math.nan),
             _r("x", None, "warning", a=True), _r("l", "h3"), _r("m", "h3")]
    second = [_r("d", "h1", a=1.0, c=[1, 2]), _r("e", "h9", "error", b="y"), _r("f", "h9", a=3),
              _r("e", "h9", "critical", b="z"), _r("g", "h2", nan=math.nan, c=[1, 2]), _r("h", None, origin="7"),
              _r("i", "h8"), _r("e", "h9", None, b="w"), _r("j", "h1"), _r("k", "h2", a=2),
              _r("n", "h3")]
    whole = Tally()
    for r in first + second:
        whole.add(r)
    here, part = Tally(), Tally()
    for r in first:
        here.add(r)
    for r in second:
        part.add(r)
    assert here.merge(part) is True
    assert _state(here) == _state(whole)
    whole.finish()
    here.finish()
    assert _state(here) == _state(whole) and here.duplicates


def test_merge_refuses_a_part_with_a_source_already_counted():
    here, part = Tally(), Tally()
    here.add(_r("a", "h1", a=1))
    part.add(_r("b", "h2", a=1))
    part.add(_r("a", "h1", "error", a=2))
    before = _state(here)
    assert here.merge(part) is False
    assert _state(here) == before


@pytest.mark.parametrize("shape", ["plain", "crlf", "bom", "blank lines first", "trailing spaces", "tab indent",
                                   "over 64 KiB", "bad utf-8", "compact", "two concatenated", "array", "empty",
                                   "not a report", "cut off", "trailing text"])
def test_a_report_file_read_in_one_go_is_what_the_line_reader_gives(tmp_path, base_report, shape):
    """`_read_file` reads a regular file holding one indented report in one go (reports.py,
    `_one_report_file`); anything else it leaves to the line reader. Either way, the same items."""
    from topodiag.fleet.reports import _one_report_file, _read_file

    r = node(base_report, "n1")
    text = json.dumps(r, indent=2) + "\n"
    data = {
        "plain": text.encode(),
        "crlf": text.replace("\n", "\r\n").encode(),
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "blank lines first": b"\n  \n\t\n" + text.encode(),
        "trailing spaces": text.replace("{\n", "{   \n", 1).encode(),
        "tab indent": json.dumps(r, indent="\t").encode(),
        "over 64 KiB": json.dumps(dict(r, padding=["x" * 100] * 800), indent=2).encode(),
        "bad utf-8": text.replace('"n1"', '"n\\u00e9"').encode().replace(b"\\u00e9", b"\xe9"),
        "compact": json.dumps(r).encode(),
        "two concatenated": (text + json.dumps(node(base_report, "n2"), indent=2)).encode(),
        "array": json.dumps([r], indent=2).encode(),
        "empty": b"",
        "not a report": json.dumps({"schema_version": 2}, indent=2).encode(),
        "cut off": text[: len(text) // 2].encode(),
        "trailing text": (text + "garbage\n").encode(),
    }[shape]
    p = tmp_path / "n1.json"
    p.write_bytes(data)
    fast = list(_read_file(str(p), True))
    assert fast == list(_read_file(str(p), False))
    in_one_go = ("plain", "crlf", "bom", "blank lines first", "trailing spaces", "tab indent", "over 64 KiB")
    assert (_one_report_file(str(p)) is not None) == (shape in in_one_go)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
def test_the_one_go_read_never_blocks_on_a_fifo(tmp_path):
    """A FIFO where a report file was listed is never opened blocking: the listing says it is not a
    regular file (SPECIAL), and the one-go read passes it over."""
    import os

    from topodiag.fleet.reports import SPECIAL, _one_report_file, dir_entries

    os.mkfifo(tmp_path / "n1.json")
    assert _one_report_file(str(tmp_path / "n1.json")) is None
    assert dir_entries(str(tmp_path)) == ([str(tmp_path / "n1.json")], bytearray([SPECIAL]))
