"""The nvidia-smi parsers' note table: every note sentence they write comes from one template with a
stable id, and the sentences read as they did before the table (checked by hand against the inputs)."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from tests.fixtures_index import FIXTURES
from topodiag.parsers import blank_provenance_header
from topodiag.parsers._nvidia_smi_records import NOTES, note_id, smi_note
from topodiag.parsers import (nvidia_smi_nvlink_c, nvidia_smi_nvlink_e, nvidia_smi_nvlink_gt, nvidia_smi_nvlink_info,
                              nvidia_smi_nvlink_s, nvidia_smi_q, nvidia_smi_topo_m, nvidia_smi_topo_p2p)

PARSERS = (nvidia_smi_nvlink_c, nvidia_smi_nvlink_e, nvidia_smi_nvlink_gt, nvidia_smi_nvlink_info,
           nvidia_smi_nvlink_s, nvidia_smi_q, nvidia_smi_topo_m, nvidia_smi_topo_p2p)
PARSER_DIR = Path(nvidia_smi_q.__file__).parent


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


@pytest.mark.parametrize("note_id_", sorted(NOTES))
def test_each_template_renders_and_is_recognised_by_its_id(note_id_: str) -> None:
    values = {f: f"<{f}-{i}>" for i, f in enumerate(_fields(NOTES[note_id_]))}
    sentence = smi_note(note_id_, **values)
    assert "{" not in sentence and all(v in sentence for v in values.values())
    assert note_id(sentence) == note_id_


def test_no_parser_of_the_family_writes_a_note_sentence_of_its_own() -> None:
    offenders = []
    for path in sorted(PARSER_DIR.glob("nvidia_smi_*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"notes\.(?:append|extend)\(\s*f?[\"']", line):
                offenders.append(f"{path.name}:{n}")
    assert offenders == []


def test_rendered_sentences_are_the_ones_read_before() -> None:
    # the texts as the parsers wrote them inline before the table
    assert smi_note("elision-marker", line=7, marker="[...]") == "line 7: elision marker '[...]': output not shown in full"
    assert (smi_note("topo-no-row", devices="NIC1", which="NIC1")
            == "no matrix row for NIC1: links of NIC1 come from the other rows only")
    assert smi_note("p2p-row-cut", label="GPU3", line=6, n=2, total=4) == "row GPU3 (line 6) has 2 of 4 cells (cut?)"
    assert (smi_note("other-mode-skipped", line=3, mode="`nvidia-smi nvlink -c` (capabilities)", what="link status")
            == "line 3: `nvidia-smi nvlink -c` (capabilities) lines skipped: not link status")


def test_topo_m_notes_of_an_invented_matrix_by_id() -> None:
    # header at line 4; rows GPU0 (5), GPU1 (6), GPU2 (7, cut after 3 cells), NIC0 (8); no NIC1 row; the
    # NIC Legend also names NIC5 (checked by hand in the fixture)
    path = FIXTURES / "nvidia_smi_topo_m" / "topo-invented-mirror-disagree-short-row-crlf-01.txt"
    notes = nvidia_smi_topo_m.parse(blank_provenance_header(path.read_text())).notes
    assert [note_id(n) for n in notes] == ["topo-row-cut", "topo-no-row", "topo-nic-stray", "topo-mirror-disagrees",
                                           "topo-no-cell"]
    assert notes[0] == "row GPU2 (line 7) has 3 of 5 path cells and no affinity values: the rest is missing (cut?)"
    assert notes[3] == "GPU0-GPU1: row GPU0 says NV4 (line 5), row GPU1 says NV2 (line 6): kept NV4"
    assert notes[4] == "no cell for 1 pair(s): GPU2-NIC1"


def _notes(module, text: str) -> tuple[str, ...]:
    try:
        return tuple(getattr(module.parse(text), "notes", ()))
    except Exception:
        return ()


@pytest.mark.parametrize("module", PARSERS, ids=lambda m: m.SOURCE)
def test_every_note_on_the_fixtures_comes_from_the_table(module) -> None:
    texts = [blank_provenance_header(p.read_text(errors="replace"))
             for folder in FIXTURES.glob("nvidia_smi_*") for p in folder.glob("*.txt")]
    notes = [n for text in texts for n in _notes(module, text)]
    unknown = [n for n in notes if note_id(n) is None]
    assert unknown == []
