"""The streamed redaction's shortcuts give exactly what the Redactor's full passes give."""

from __future__ import annotations

import re

from topodiag.bundle import redact_stream
from topodiag.bundle.redact import Redactor, hostnames_in
from tests.fixtures_index import FIXTURES

HEAD = re.compile(r"^([^\n]*?:\d+:\d+[ \t]+\[[^\]\n]*\] )", re.M)


def _logs() -> dict[str, str]:
    out = {}
    for folder in ("nccl_debug", "nccl_tests"):
        for p in sorted((FIXTURES / folder).glob("*")):
            if not p.name.endswith(".json"):
                out[f"logs/{p.name}"] = p.read_text(encoding="utf-8", errors="replace")
    return out


def test_a_prefix_redacted_in_parts_equals_the_full_passes() -> None:
    """A prefix's wrapper and host are redacted apart (pid and tid are numbers): the same text as the
    Redactor's passes over the whole prefix, for every distinct prefix of the NCCL fixtures, wrapped
    as launchers and pastes wrap them."""
    logs = _logs()
    redactor = Redactor()
    redactor.add_hostnames(sorted(hostnames_in(logs)))
    heads = {h for text in logs.values() for h in HEAD.findall(text)}
    wrapped = {w + h for h in list(heads)[:200] for w in ("0: ", "[1,0]<stdout>:", "[2026-04-28 14:14:48] ",
                                                          "Thu Jun 18 14:28:58 2020[1,0]<stdout>:", "`")}
    heads |= wrapped
    assert len(heads) > 300
    cache = redact_stream.LineCache(redactor.redact)
    split = 0
    for head in sorted(heads):
        got = cache._prefix_of(head)
        if got is None:
            continue
        split += redact_stream._PREFIX_PARTS_RE.match(head) is not None
        assert got == redactor.redact(head), head
    assert split > 300


def test_a_block_is_written_from_its_distinct_lines(tmp_path) -> None:
    """redact_file looks whole lines up: the output is the line-by-line redaction, CRLF and a last line
    without a newline included."""
    logs = _logs()
    redactor = Redactor()
    redactor.add_hostnames(sorted(hostnames_in(logs)))
    text = "".join(logs.values())
    text = text + text.replace("\n", "\r\n") + "last line without a newline gpu01:1:2 [0] NCCL INFO x"
    src, dst = tmp_path / "in.log", tmp_path / "out.log"
    src.write_text(text, encoding="utf-8")
    redact_stream.redact_file(str(src), str(dst), redactor.redact)
    want = "".join(redactor.redact(line) for line in text.splitlines(keepends=True))
    assert dst.read_bytes().decode("utf-8") == want
