"""The streamed redaction's shortcuts give exactly what the Redactor's full passes give."""

from __future__ import annotations

import re

import pytest

from topodiag.bundle import redact_stream
from topodiag.bundle.redact import Redactor, _prompt_hosts, hostnames_in
from tests.fixtures_index import FIXTURES

HEAD = re.compile(r"^([^\n]*?:\d+:\d+[ \t]+\[[^\]\n]*\] )", re.M)
WRAPPERS = ("0: ", "12: ", "[155] ", "[1,0]<stdout>:", "[1,0]<stderr>: ", "[2026-04-28 14:14:48] ",
            "Thu Jun 18 14:28:58 2020[1,0]<stdout>:", "`")


def _logs() -> dict[str, str]:
    out = {}
    for folder in ("nccl_debug", "nccl_tests"):
        for p in sorted((FIXTURES / folder).glob("*")):
            if not p.name.endswith(".json"):
                out[f"logs/{p.name}"] = p.read_text(encoding="utf-8", errors="replace")
    return out


def _redactor(logs: dict[str, str]) -> Redactor:
    redactor = Redactor()
    redactor.add_hostnames(sorted(hostnames_in(logs)))
    return redactor


def test_lines_cut_at_their_prefix_equal_the_full_passes(tmp_path) -> None:
    """A line's wrapper, host and ':pid:tid [dev] ' are split off by one re.split and its message and
    host redacted apart, in batches: the same text as the Redactor's passes over the whole line, for
    every line of the NCCL fixtures, bare and wrapped as launchers and pastes wrap them."""
    logs = _logs()
    redactor = _redactor(logs)
    lines = list(dict.fromkeys(line.rstrip("\r") for text in logs.values() for line in text.split("\n")))
    heads = [line for line in lines if HEAD.match(line)]
    lines += [w + line for line in heads[:300] for w in WRAPPERS]
    split = sum(1 for line in lines if redact_stream._PREFIX_B.match(("\n" + line).encode()) is not None)
    assert split > 2000 and len(lines) > 4000
    src, dst = tmp_path / "in.log", tmp_path / "out.log"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    redact_stream.redact_file(str(src), str(dst), redactor.redact)
    assert dst.read_text(encoding="utf-8").split("\n")[:-1] == [redactor.redact(line + "\n")[:-1] for line in lines]
    for w in WRAPPERS[:5]:  # a wrapper split off is kept as it is: it holds no identifier
        assert redactor.redact(w) == w


def test_a_block_is_written_from_its_distinct_lines(tmp_path) -> None:
    """redact_file looks whole lines up: the output is the line-by-line redaction, CRLF and a last line
    without a newline included."""
    logs = _logs()
    redactor = _redactor(logs)
    text = "".join(logs.values())
    text = text + text.replace("\n", "\r\n") + "last line without a newline gpu01:1:2 [0] NCCL INFO x"
    src, dst = tmp_path / "in.log", tmp_path / "out.log"
    src.write_text(text, encoding="utf-8")
    redact_stream.redact_file(str(src), str(dst), redactor.redact)
    want = "".join(redactor.redact(line) for line in text.splitlines(keepends=True))
    assert dst.read_bytes().decode("utf-8") == want


def test_small_tables_and_blocks_give_the_same_text(tmp_path, monkeypatch) -> None:
    """Tables emptied when full (memory flat) and blocks cut anywhere change nothing in the output."""
    logs = _logs()
    text = "".join(logs.values()) * 2
    src = tmp_path / "in.log"
    src.write_text(text, encoding="utf-8")
    redactor = _redactor(logs)
    redact_stream.redact_file(str(src), str(tmp_path / "big.log"), redactor.redact)
    monkeypatch.setattr(redact_stream, "CACHE_ENTRIES", 50)
    monkeypatch.setattr(redact_stream, "CACHE_CHARS", 2000)
    monkeypatch.setattr(redact_stream, "BLOCK_BYTES", 5000)
    monkeypatch.setattr(redact_stream, "BATCH", 7)
    redact_stream.redact_file(str(src), str(tmp_path / "small.log"), redactor.redact)
    assert (tmp_path / "small.log").read_bytes() == (tmp_path / "big.log").read_bytes()


def test_a_batch_whose_line_count_changes_is_redacted_text_by_text() -> None:
    calls = []

    def redact(text: str) -> str:
        calls.append(text)
        return text.replace("AB\nCD", "ABCD")

    table = redact_stream.Table(redact)
    table.fill(["AB", "CD", "EF"])
    assert table.got == {"AB": "AB", "CD": "CD", "EF": "EF"}
    assert calls == ["AB\nCD\nEF\n", "AB\n", "CD\n", "EF\n"]


def test_scan_finds_the_hosts_of_every_prefix_shape(tmp_path) -> None:
    src = tmp_path / "in.log"
    src.write_text("bare01:1:2 [0] NCCL INFO a\n"
                   "0: wrapped02:1:2 [1] NCCL INFO b\n"
                   "[1,0]<stdout>:mpi03:1:2 [1] NCCL INFO c\n"
                   "[2026-04-28 14:14:48] stamped04:3:4 [2] NCCL INFO d\n"
                   "#  Rank  0 Group  0 Pid  12 on dev05 device  0 [0x1b] NVIDIA H100\n"
                   "root@prompt06:~# ./all_reduce_perf\n"
                   "plain text 07:1:2 no prefix\n", encoding="utf-8")
    got = redact_stream.scan(str(src), _prompt_hosts)
    assert got == {"bare01", "wrapped02", "mpi03", "stamped04", "dev05", "prompt06"}


@pytest.mark.parametrize("data", [b"node1:1:2 [0] NCCL INFO x\n\xff\n", b"node1:1:2 [0] x\n\0\n"])
def test_a_member_that_is_not_text_is_refused(tmp_path, data) -> None:
    src = tmp_path / "in.log"
    src.write_bytes(data)
    with pytest.raises(redact_stream.RedactionError):
        redact_stream.scan(str(src), _prompt_hosts)


def test_ib_node_description_hosts_are_found_and_redacted() -> None:
    """Switch and HCA names of IB node descriptions (iblinkinfo, ibnetdiscover) are host names; the NCCL
    topology XML's host_hash is a hash (not reversible to a name) and stays."""
    from topodiag.bundle.redact import _desc_host

    assert _desc_host('"MF0;sw-ib-01:MQM8700/U1"') == "sw-ib-01"
    assert _desc_host('"node-17 HCA-1"') == "node-17"
    assert _desc_host('"MT4129 ConnectX7   Mellanox Technologies"') is None
    r = Redactor(["sw-ib-01", "node-17"])
    line = ('0x7cfe900300a0f1e8 "node-17 HCA-1" 12 1[  ] ==( 4X 25.78125 Gbps Active/  LinkUp)==>'
            ' 3 9[  ] "MF0;sw-ib-01:MQM8700/U1" ( )\n<cpu host_hash="0xceea43a840550885" numaid="0"/>\n')
    out = r.redact(line)
    assert "sw-ib-01" not in out and "node-17" not in out
    assert '"MF0;' + r.mapping()["sw-ib-01"] + ':MQM8700/U1"' in out and 'host_hash="0xceea43a840550885"' in out


def test_a_member_scanned_in_two_processes_gives_the_same_hosts(tmp_path, monkeypatch) -> None:
    """The second half of a big member is scanned in a worker: the set is the one-process set, and a
    binary second half is refused as a binary member is."""
    logs = _logs()
    src = tmp_path / "in.log"
    src.write_text("".join(logs.values()) * 2, encoding="utf-8")
    monkeypatch.setattr(redact_stream, "PARALLEL_SCAN_BYTES", None)
    one = redact_stream.scan(str(src), _prompt_hosts)
    monkeypatch.setattr(redact_stream, "PARALLEL_SCAN_BYTES", 1)
    assert redact_stream._halves(str(src)) is not None
    assert redact_stream.scan(str(src), _prompt_hosts) == one and len(one) > 20
    src.write_bytes(src.read_bytes() + b"x\n\0\n")
    with pytest.raises(redact_stream.RedactionError):
        redact_stream.scan(str(src), _prompt_hosts)


def test_bodies_between_prefixes_are_redacted_line_by_line(tmp_path) -> None:
    """A body (a prefixed line's message and the unprefixed lines after it) is one table entry,
    redacted line by line: the output is the line-by-line redaction, at the first line of a block
    with and without a prefix."""
    redactor = Redactor(["gpu-a01", "gpu-a02"])
    text = ("#  Rank  0 Group  0 Pid  1 on gpu-a01 device  0 [0x1b] NVIDIA H100\n"
            "gpu-a01:11:12 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n"
            "   8   2   float   sum   -1   20.1   0.00   0.00   0\n"
            "gpu-a02:13:14 [1] NCCL INFO connect to gpu-a01<39761>\n") * 3
    src, dst = tmp_path / "in.log", tmp_path / "out.log"
    for body in (text, "gpu-a02:1:1 [0] NCCL INFO x\n" + text):
        src.write_text(body, encoding="utf-8")
        redact_stream.redact_file(str(src), str(dst), redactor.redact)
        got = dst.read_text(encoding="utf-8")
        assert got == "".join(redactor.redact(line) for line in body.splitlines(keepends=True))
        assert "gpu-a0" not in got and "10.1.2.3" not in got


def test_a_second_big_member_is_scanned_in_two_processes_too(tmp_path, monkeypatch) -> None:
    """The worker of the first member's scan is waited for once idle, so its pool's thread ends and
    the next member can fork again (a fork needs this process to run one thread)."""
    import threading

    logs = _logs()
    src = tmp_path / "in.log"
    src.write_text("".join(logs.values()), encoding="utf-8")
    monkeypatch.setattr(redact_stream, "PARALLEL_SCAN_BYTES", 1)
    if redact_stream._halves(str(src)) is None:
        pytest.skip("no fork, one CPU, or threads left running by earlier tests: one process")
    redact_stream.scan(str(src), _prompt_hosts)
    assert threading.active_count() == 1 and redact_stream._halves(str(src)) is not None
