"""nccl_env, nccl_diag, p2p_bandwidth_latency and nvbandwidth: what the fixture pairs do not show
(sniffing against neighbours, forms of input, bad input with its line number)."""

from __future__ import annotations

import json

import pytest

from topodiag.parsers import ParseError, detect, detect_all, nccl_diag, nccl_env, nvbandwidth, p2p_bandwidth_latency


# -- nccl_env ------------------------------------------------------------------------------------

def test_env_forms_environ_export_declare_and_continuations():
    r = nccl_env.parse("NCCL_DEBUG=INFO\0NCCL_IB_HCA=mlx5_0\0PATH=/usr/bin\0")
    assert r.form == "environ" and r.env == {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5_0"} and r.other == 1
    r = nccl_env.parse('declare -x NCCL_P2P_DISABLE="1"\nexport NCCL_ALGO=\'Ring\'\n-x NCCL_PROTO=Simple \\\n')
    assert r.form == "export" and r.env == {"NCCL_ALGO": "Ring", "NCCL_P2P_DISABLE": "1", "NCCL_PROTO": "Simple"}


def test_env_keeps_the_last_value_and_lists_the_overridden_one():
    r = nccl_env.parse("NCCL_IB_HCA=mlx5_0\nNCCL_IB_HCA=mlx5_1\n")
    assert r.env["NCCL_IB_HCA"] == "mlx5_1" and r.lines["NCCL_IB_HCA"] == 2
    assert [(o.name, o.value, o.line_no) for o in r.overridden] == [("NCCL_IB_HCA", "mlx5_0", 1)]


def test_env_never_keeps_other_variables():
    r = nccl_env.parse("AWS_SECRET_ACCESS_KEY=abc\nNCCL_DEBUG=INFO\nHOME=/root\n")
    assert list(r.env) == ["NCCL_DEBUG"] and r.other == 2
    assert "abc" not in json.dumps(r.__dict__, default=str)


def test_env_probe_json_with_and_without_variables():
    r = nccl_env.parse(json.dumps({"probe": "nccl_env", "ok": True, "env": {"NCCL_IB_HCA": "=mlx5_0", "PATH": "x"}}))
    assert r.form == "probe" and r.env == {"NCCL_IB_HCA": "=mlx5_0"}
    assert nccl_env.parse('{"probe": "nccl_env", "ok": true, "env": {}}').env == {}
    assert nccl_env.sniff('{"probe": "nccl_env", "ok": true, "env": {}}') == 0.9


def test_env_errors_name_the_last_line():
    with pytest.raises(ParseError) as e:
        nccl_env.parse("PATH=/bin\nHOME=/root\n")
    assert "NCCL_" in e.value.message and e.value.line_no == 2
    with pytest.raises(ParseError) as e:
        nccl_env.parse("NCCL_DEBUG=INFO\nthis is prose\nmore prose\nand more\n")
    assert "environment listing" in e.value.message


def test_an_nccl_log_is_not_an_environment():
    log = "n1:1:1 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0\nn1:1:1 [0] NCCL INFO Using network IB\n"
    assert nccl_env.sniff(log) == 0.0 and detect(log) == "nccl_debug"


# -- nccl_diag -----------------------------------------------------------------------------------

def test_diag_source_format_summary_and_setup_failure():
    r = nccl_diag.parse("h:1 NCCL DIAG [INFO] p2p: 54/56 directed GPU P2P edges verified (skipped indirect=2)\n"
                        "h:1 NCCL DIAG [INFO] p2p: setup failed on rank 3 result=2\n")
    assert [(s.passed, s.tested, s.skipped_indirect, s.ok) for s in r.summaries] == [(54, 56, 2, False)]
    assert [(f.kind, f.src_rank) for f in r.failures] == [("setup failed", 3)]
    assert nccl_diag.parse("h:1 NCCL DIAG [OK]   p2p: all 56 directed GPU P2P edges verified\n").summaries[0].ok


def test_diag_in_a_log_is_read_as_both_sources():
    text = ("n1:5:5 [0] NCCL INFO NCCL version 2.31.1+cuda12.9\n"
            "n1:5 NCCL DIAG [INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification\n")
    assert {s for s, _ in detect_all(text)} >= {"nccl_debug", "nccl_diag"}


def test_diag_without_diag_lines_is_refused():
    with pytest.raises(ParseError) as e:
        nccl_diag.parse("n1:5:5 [0] NCCL INFO Using network IB\n")
    assert e.value.line_no == 2


# -- p2p_bandwidth_latency -----------------------------------------------------------------------

P2P = """[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
Device: 0, NVIDIA H100 80GB HBM3, pciBusID: 18, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA H100 80GB HBM3, pciBusID: 2a, pciDeviceID: 0, pciDomainID:0
Device=0 CAN Access Peer Device=1
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 1500.0 370.1
     1 371.2 1501.0
P2P=Enabled Latency (P2P Writes) Matrix (us)
   GPU     0      1
     0   2.10   2.50
     1   2.40   2.11

   CPU     0      1
     0   3.10   2.90
     1   2.95   3.00
"""


def test_p2p_latency_matrix_holds_a_gpu_and_a_cpu_table():
    r = p2p_bandwidth_latency.parse(P2P)
    kinds = [(m.kind, m.p2p, m.mode, m.side, len(m.rows)) for m in r.matrices]
    assert kinds == [("bandwidth", "enabled", "writes", "gpu", 2), ("latency", "enabled", "writes", "gpu", 2),
                     ("latency", "enabled", "writes", "cpu", 2)]
    assert r.matrix("bandwidth", "uni", "enabled").value(1, 0) == 371.2
    assert [d.pci_bus for d in r.devices] == ["18", "2a"] and r.access[0].can


def test_p2p_cut_row_drops_its_last_number():
    r = p2p_bandwidth_latency.parse("Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D 0 1 2 3\n  0 900.1 20.5 3\n")
    assert r.matrices[0].rows[0].values == (900.1, 20.5, None)


def test_p2p_other_text_is_refused_with_its_last_line():
    with pytest.raises(ParseError) as e:
        p2p_bandwidth_latency.parse("hello\nworld\n")
    assert e.value.line_no == 3


# -- nvbandwidth ---------------------------------------------------------------------------------

def test_nvbandwidth_waived_and_na():
    r = nvbandwidth.parse("nvbandwidth Version: v0.2\nDevice 0: NVIDIA GeForce RTX 2080 Ti\n"
                          "Device 1: NVIDIA GeForce RTX 2080 Ti\n\nWaiving device_to_device_memcpy_write_ce.\n")
    assert [(t.name, t.waived) for t in r.testcases] == [("device_to_device_memcpy_write_ce", True)]
    assert [d.model for d in r.devices] == ["NVIDIA GeForce RTX 2080 Ti"] * 2


def test_nvbandwidth_is_not_p2p_and_the_reverse():
    nv = "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n 0 1\n0 25.1 25.2\n"
    assert detect(nv) == "nvbandwidth" and p2p_bandwidth_latency.sniff(nv) == 0.0
    assert nvbandwidth.sniff(P2P) == 0.0


def test_nvbandwidth_other_text_is_refused():
    with pytest.raises(ParseError) as e:
        nvbandwidth.parse("\n\nnothing here\n")
    assert e.value.line_no == 4


@pytest.mark.parametrize("folder", ["nccl_env", "nccl_diag", "p2p_bandwidth_latency", "nvbandwidth"])
def test_crlf_and_ansi_pastes_read_alike(folder):
    from pathlib import Path

    from topodiag.parsers import blank_provenance_header, get, to_jsonable

    root = Path(__file__).resolve().parents[2] / "fixtures" / folder
    for path in sorted(p for p in root.iterdir() if p.suffix in (".txt", ".log")):
        text = blank_provenance_header(path.read_text())
        crlf = text.replace("\n", "\r\n")
        ansi = "\n".join("\x1b[0m" + ln for ln in text.split("\n"))
        want = to_jsonable(get(folder).parse(text))
        assert to_jsonable(get(folder).parse(crlf)) == want, path.name
        assert to_jsonable(get(folder).parse(ansi)) == want, path.name
