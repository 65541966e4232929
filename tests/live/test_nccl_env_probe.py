"""The nccl_env probe: only NCCL_* variables leave the process, and its JSON reads back as nccl_env."""

from __future__ import annotations

from topodiag.live import collection as live
from topodiag.parsers import detect, nccl_env


def _source():
    return next(s for s in live.PROBES if s.name == "nccl_env")


def test_probe_keeps_only_nccl_variables(monkeypatch):
    monkeypatch.setenv("NCCL_IB_HCA", "=mlx5_0:1")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-copy")
    rec = live._run_one(_source(), live.Options(), 2.0)
    assert rec.status == "ok" and rec.member == "probes/nccl_env.json"
    assert "do-not-copy" not in rec.text and "AWS_SECRET" not in rec.text
    assert detect(rec.text) == "nccl_env"
    assert nccl_env.parse(rec.text).env["NCCL_IB_HCA"] == "=mlx5_0:1"


def test_probe_without_nccl_variables_is_ok_and_empty(monkeypatch):
    import os

    for k in [k for k in os.environ if k.startswith("NCCL_")]:
        monkeypatch.delenv(k)
    rec = live._run_one(_source(), live.Options(), 2.0)
    assert rec.status == "ok" and nccl_env.parse(rec.text).env == {}


def test_the_prolog_does_not_run_it():
    assert not _source().prolog
    assert _source() not in live.selected(live.Options(prolog=True))


def test_redaction_covers_addresses_and_host_names_in_the_environment():
    from topodiag.bundle.redact import Redactor

    text = '{"probe": "nccl_env", "ok": true, "env": {"NCCL_COMM_ID": "10.1.2.3:12345", "NCCL_HOSTID": "gpu-node17"}}\n'
    out = Redactor(["gpu-node17"]).redact(text, "probes/nccl_env.json")
    assert "10.1.2.3" not in out and "gpu-node17" not in out
    assert nccl_env.parse(out).env.keys() == nccl_env.parse(text).env.keys()


def test_a_given_nccl_log_with_diag_lines_is_also_a_nccl_diag_entry(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("n1:5:5 [0] NCCL INFO NCCL version 2.31.1+cuda12.9\n"
                   "n1:5 NCCL DIAG [INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification\n")
    recs = live._user_files(live.Options(nccl_logs=(str(log),)))
    assert [(r.source, r.member) for r in recs] == [("nccl_debug", "logs/01-job.log"), ("nccl_diag", "logs/01-job.log")]
