"""Parser notes as data: each note a parser gives has a stable id and its sentence in
topodiag/parsers/notes.toml, filled by parsers.base.note(source, id, **values).

The calls and the table are kept in step (every id a call names is there, with the fields the call
fills, and every entry is used); the rendered sentences are those the parsers wrote inline before
(written out here by hand). No parser writes a note as an inline sentence any more: the last test keeps
it so."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from topodiag.parsers.base import note, note_table

PARSERS = Path(__file__).resolve().parents[2] / "topodiag" / "parsers"


def _calls() -> list[tuple[str, str, set[str], str]]:
    """(source, note id, keyword names, where) for every note(...) call in the parsers."""
    out = []
    for path in sorted(PARSERS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id == "smi_note":  # the nvidia-smi family's one table: note("nvidia_smi", id, ...)
                out.append(("nvidia_smi", node.args[0].value, {k.arg for k in node.keywords}, f"{path.name}:{node.lineno}"))
            elif node.func.id == "note" and len(node.args) == 2 and isinstance(node.args[1], ast.Constant):
                first, second = node.args
                source = path.stem if isinstance(first, ast.Name) and first.id == "SOURCE" else first.value
                out.append((source, second.value, {k.arg for k in node.keywords}, f"{path.name}:{node.lineno}"))
    return out


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_call_names_an_entry_and_fills_its_fields():
    calls = _calls()
    assert len(calls) >= 12
    table = note_table()
    for source, note_id, keywords, where in calls:
        assert note_id in table.get(source, {}), f"{where}: no note {source}/{note_id} in notes.toml"
        assert _fields(table[source][note_id]) == keywords, f"{where}: {source}/{note_id} fills {sorted(keywords)}"


def test_every_entry_is_used():
    used = {(source, note_id) for source, note_id, _, _ in _calls()}
    listed = {(source, note_id) for source, notes in note_table().items() for note_id in notes}
    assert listed - used == set()


def test_ids_are_stable_names():
    for source, notes in note_table().items():
        for note_id in notes:
            assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", note_id), f"{source}/{note_id}"


# The sentences as the parsers wrote them inline before the table, by hand.
SENTENCES = [
    (("nvml", "remote-type-unknown", {"index": 2, "kinds": "bridge9"}),
     "GPU 2: NVLink remote device type(s) bridge9 not known to topodiag"),
    (("nvml", "level-name-mismatch", {"a": 0, "b": 5, "name": "SINGLE", "level": 50, "level_name": "SYSTEM"}),
     "pair 0-5: topology SINGLE does not match level 50 (SYSTEM); the level is used"),
    (("nvml", "p2p-code-unknown", {"a": 0, "b": 1, "codes": "ZZ"}),
     "pair 0-1: P2P code(s) ZZ are not in nvidia-smi's P2P legend"),
    (("nvml", "index-twice", {"indices": "0, 3"}), "GPU index(es) 0, 3 listed twice"),
    (("nvml", "pair-stray", {"pairs": "0-9"}), "pair(s) 0-9 name a GPU the probe does not list"),
    (("nvml", "not-ok-no-error", {}), "the probe says ok false but gives no error"),
    (("nccl_topo_xml", "attribute-invalid", {"tag": "gpu", "name": "dev", "raw": "x1", "what": "an integer"}),
     "<gpu> attribute dev='x1' is not an integer: null"),
    (("nccl_topo_xml", "text-before-line", {"line": 1}), "line 1: text before the XML skipped"),
    (("nccl_topo_xml", "text-before-lines", {"last": 4}), "lines 1-4: text before the XML skipped"),
    (("nccl_topo_xml", "text-after-root", {"line": 12}), "line 12: text after the root element's end tag skipped"),
    (("nccl_topo_xml", "affinity-invalid", {"numaid": 0, "affinity": "zz"}),
     "<cpu numaid=0> affinity 'zz' is not a CPU mask of comma-separated 32-bit hex words (at most 65536 CPUs): cpus null"),
    (("nccl_topo_xml", "not-modelled", {"what": "<nvs>"}), "<nvs> skipped (not part of the model)"),
    (("nccl_tests", "max-bytes-reduced", {"line": 7, "max_bytes": "4294967296"}),
     "line 7: maxBytes reduced to 4294967296 due to GPU memory limitation"),
    (("nccl_tests", "partial-row", {"line": 40}), "line 40: partial results row skipped (no size/count/type columns)"),
    (("nccl_tests", "row-cut-after-oop", {"line": 41}), "line 41: results row cut after the out-of-place columns"),
    (("nccl_tests", "rows-not-kept", {"total": 5000, "dropped": 1000, "cap": 4000}),
     "5000 results rows: 1000 that repeat a size already kept are not kept past the first 4000 "
     "(peak_busbw_gbps and the checks read the rows kept)"),
    (("nccl_tests", "lists-not-kept", {"dropped": 12, "cap": 1000}),
     "12 further per-line notes, NCCL WARN and failure lines past the first 1000 not kept"),
    (("nccl_tests", "several-tests", {"collectives": "all_reduce, all_gather"}),
     "the file holds runs of several tests: all_reduce, all_gather"),
    (("nccl_tests", "avg-summaries", {"count": 60, "avgs": "12.5, ? and 58 more"}),
     "60 result summaries: Avg bus bandwidth 12.5, ? and 58 more (avg_busbw_gbps is the first)"),
    (("nccl_tests", "several-libraries", {"versions": "2.18.3, 2.19.3"}),
     "runs used different NCCL libraries: 2.18.3, 2.19.3 (nccl_version is the first)"),
    (("nccl_tests", "runs-not-kept", {"not_kept": 3, "first": 8, "runs": 10, "rows": 75, "kept": 7}),
     "3 runs (from run 8 of 10) not kept, to keep memory bounded: their 75 results rows and the rank lines are "
     "counted, not judged; the first 7 runs are kept and judged run by run"),
    (("nccl_tests", "wrong-rows-not-kept", {"rows": 2, "line": 901}),
     "2 results rows with wrong results (#wrong > 0) in runs not kept, the first at line 901"),
    (("nccl_tests", "rank-lines-not-kept", {"dropped": 64}),
     '64 rank lines ("# Rank N ... on HOST device ...") not kept'),
    (("nccl_tests", "independent-rank0-runs", {"runs": 8}),
     "8 independent 1-rank runs: nccl-tests not built with MPI=1 (each process lists itself as Rank 0)"),
    (("nccl_tests", "busbw-zero-nranks-1", {"rows": 25, "algbw": 21.456}),
     "busbw is 0 in all 25 rows while algbw reaches 21.46 GB/s: NCCL reports nranks 1, so each process ran "
     "its own test (nccl-tests not built with MPI=1?)"),
    (("nccl_tests", "busbw-zero-1-rank", {"rows": 3, "algbw": 1.0}),
     "busbw is 0 in all 3 rows while algbw reaches 1.00 GB/s: 1-rank communicators, so each process ran "
     "its own test (nccl-tests not built with MPI=1?)"),
    (("nccl_tests", "rows-interleaved", {"distinct": 23, "rows": 46}),
     "results rows repeat message sizes out of order (23 distinct in 46 rows): output of several independent "
     "processes interleaved"),
    (("ib_records", "link-layer-inferred", {"line": 12, "ca": "mlx5_0", "port": 1, "ident": "0x5aa2e1fffedae626"}),
     "line 12: mlx5_0 port 1: no link layer printed; Ethernet inferred from base lid 0, SM lid 0 and the "
     "MAC-derived 0x5aa2e1fffedae626"),
    (("ib_records", "elided", {"line": 7, "text": "..."}), "line 7: '...' - lines were left out here"),
    (("ib_records", "masked-line", {"lines": "5", "field": "node GUID", "raw": "0x..."}),
     "line 5: node GUID redacted ('0x...'): read as null"),
    (("ib_records", "masked-lines", {"lines": "4, 9", "field": "LID", "raw": "xxx"}),
     "lines 4, 9: LID redacted ('xxx'): read as null"),
    (("ib_records", "redacted", {"line": 9, "key": "Node GUID", "raw": "...", "field": "node_guid"}),
     "line 9: Node GUID redacted ('...'): node_guid is null"),
    (("ib_records", "trace-line", {"lines": "3"}), "line 3: ibwarn debug trace (e.g. ibstat -d), not a failure"),
    (("ib_records", "trace-lines", {"lines": "1, 2, 3, 4, 5, 6, 7, 8 and 4 more"}),
     "lines 1, 2, 3, 4, 5, 6, 7, 8 and 4 more: ibwarn debug trace (e.g. ibstat -d), not a failure"),
    (("ibnetdiscover", "connection-end-unreadable", {"line": 14, "port": "3"}),
     "line 14: the end of port 3's line (peer description, lid, width/speed) is cut off or unreadable"),
    (("ibnetdiscover", "ports-line-end-unreadable", {"line": 6}),
     "line 6: the end of the ports-report line is cut off or unreadable"),
    (("ibnetdiscover", "line-too-long", {"line": 2, "length": 3004}),
     "line 2: 3004 characters, too long for ibnetdiscover; skipped"),
    (("ibnetdiscover", "connection-garbled", {"line": 20}), "line 20: connection line cut off or garbled; skipped"),
    (("ibnetdiscover", "connections-before-node", {"line": 1}),
     "line 1: connection lines before any node line (a fragment)"),
    (("ibnetdiscover", "topology-and-ports", {}),
     "the text holds both a topology and an `ibnetdiscover -p` ports report; both are kept"),
    (("iblinkinfo", "state-unreadable", {"line": 8}),
     "line 8: port line without a readable state/physical state; skipped"),
    (("iblinkinfo", "far-end-unreadable", {"line": 11, "port": "17"}),
     "line 11: the far end of port 17 is cut off or unreadable"),
    (("iblinkinfo", "line-too-long", {"line": 4, "length": 2100}),
     "line 4: 2100 characters, too long for a port line; skipped"),
    (("iblinkinfo", "port-line-garbled", {"line": 5}), "line 5: port line cut off or garbled; skipped"),
    (("iblinkinfo", "ports-before-node", {"line": 1}), "line 1: port lines before any node header (a fragment)"),
    (("rdma_link", "field-without-value", {"line": 3, "key": "netdev"}),
     "line 3: 'netdev' without a value (line cut short?)"),
    (("rdma_link", "field-twice", {"line": 2, "key": "state"}),
     "line 2: 'state' printed twice, the first value is kept"),
    (("rdma_link", "field-unknown", {"line": 2, "key": "foo"}), "line 2: unknown field 'foo' skipped"),
    (("rdma_link", "device-redacted", {"line": 1}), "line 1: device name redacted"),
    (("rdma_link", "json-elements-skipped", {"skipped": 2}), "2 JSON element(s) without ifname / port / state skipped"),
    (("rdma_link", "json-no-link", {}), "rdma -j link printed no link: no RDMA device is registered"),
    (("rdma_link", "port-printed-again", {"device": "mlx5_0", "port": 1, "times": 2, "lines": "1, 9"}),
     "mlx5_0/1 printed 2 times (lines 1, 9): several runs in one text; the last is taken as the port's current state"),
]


@pytest.mark.parametrize("call,sentence", SENTENCES, ids=lambda x: x[1] if isinstance(x, tuple) else None)
def test_each_note_renders_the_sentence_it_had(call, sentence):
    source, note_id, values = call
    assert note(source, note_id, **values) == sentence


def _inline_sentences(path: Path) -> list[int]:
    """Lines where a module writes a note as a sentence of its own: an append/extend to a list named
    *notes of a string or f-string, or a *_note function returning or gathering one."""
    def sentence(node: ast.AST) -> bool:
        return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)) \
            or (isinstance(node, ast.BinOp) and (sentence(node.left) or sentence(node.right)))

    def added(node: ast.AST, names: tuple[str, ...]) -> bool:  # names.append(sentence) / .extend
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and node.func.attr in ("append", "extend")):
            return False
        target = node.func.value
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        return name.endswith(names) and sentence(node.args[0])

    hits = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if added(node, ("notes",)):
            hits.add(node.lineno)
        elif isinstance(node, ast.FunctionDef) and node.name.endswith("_note"):  # its sentences, returned or gathered
            hits |= {r.lineno for r in ast.walk(node)
                     if (isinstance(r, ast.Return) and r.value is not None and sentence(r.value)) or added(r, ("",))}
    return sorted(hits)


def test_no_parser_writes_a_note_inline():
    inline = {f"{p.relative_to(PARSERS).as_posix()}:{n}" for p in PARSERS.rglob("*.py") for n in _inline_sentences(p)}
    assert inline == set(), f"write these notes in notes.toml and render them with note(): {sorted(inline)}"


def test_the_inline_check_sees_an_inline_sentence(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('def f(notes, n):\n    notes.append(f"line {n}: skipped")\n\n\n'
                      'def g_note(n):\n    return "line " + str(n)\n\n\n'
                      'def h_note(lines):\n    out = []\n    out.append(f"lines {lines}")\n    return out\n')
    assert _inline_sentences(module) == [2, 6, 11]
