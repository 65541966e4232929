"""NCCL004 by catalogue class: each kind of error with its class's meaning and fix (from the entry that
explains the first line), lines that follow the first failure named as its consequence (not a second
cause), and no IB advice for WARNs of other classes. Inputs: the real fixtures of
fixtures/nccl_debug/nccl-catalogue-*.log (their #@ headers say what a person concluded)."""

from __future__ import annotations

from pathlib import Path

from topodiag import parsers
from topodiag.checks import nccl
from topodiag.engine import Severity

from .wording import worded as said

DEBUG = Path(__file__).resolve().parents[2] / "fixtures" / "nccl_debug"


def _hits(name: str) -> dict:
    r = parsers.get("nccl_debug").parse(parsers.blank_provenance_header((DEBUG / name).read_text()))
    return {h.values["what"]: h for h in nccl.nccl004(r)}


def test_socket_abort_is_the_cause_and_the_rest_its_consequences():
    found = _hits("nccl-catalogue-socket-connect-abort-proxy-chain-01.log")
    cause = found["network unreachable"]
    assert cause.variant == "classified" and cause.severity is None  # the rule's: error
    assert cause.values["cls"] == "network-unreachable" and cause.values["lines"] == "5"
    assert "NCCL_SOCKET_IFNAME" in said("NCCL004", cause)  # the entry's fix, not IB advice
    for what in ("remote failure", "connection closed by peer"):
        h = found[what]
        assert h.variant == "consequence" and h.severity == Severity.INFO
        assert h.values["cause_line"] == 5 and "not a second cause" in said("NCCL004", h)
    assert found["remote failure"].values["lines"] == "13, 20"


def test_no_ib_advice_for_other_classes():
    for name in ("nccl-catalogue-socket-connect-abort-proxy-chain-01.log", "nccl-catalogue-shm-cuda-invalid-argument-01.log",
                 "nccl-catalogue-nvls-cuda-invalid-argument-01.log"):
        for h in _hits(name).values():
            text = said("NCCL004", h)
            assert "perfquery" not in text and "peermem" not in text, (name, text)


def test_shm_segment_names_dev_shm():
    found = _hits("nccl-catalogue-shm-cuda-invalid-argument-01.log")
    shm = found["resource exhausted"]
    assert shm.values["lines"] == "10, 14" and "/dev/shm" in said("NCCL004", shm)
    assert "--shm-size" in shm.values["fix"]


def test_ib_completion_keeps_its_decoded_status_and_gains_the_class_fix():
    found = _hits("nccl-catalogue-ib-async-event-wq-error-status9-01.log")
    comp = found["IB completion error"]
    assert comp.variant == "ib_completion" and "status 9" in said("NCCL004", comp)
    assert comp.values["cls"] == "ib-verbs-failure"
    assert found["ib verbs failure"].values["lines"] == "5, 7, 9"


def test_plugin_fallback_warns_are_warnings_with_the_plugin_fix():
    found = _hits("nccl-collnet-sharp-fallback-ib-gdrdma-01.log")
    [h] = found.values()
    assert h.severity == Severity.WARNING and h.values["cls"] == "plugin-failure"
    assert "SHARP" in said("NCCL004", h)


def test_unrecognised_warns_are_not_nccl004s():
    assert _hits("nccl-catalogue-fastsocket-plugin-unknown-warn-01.log") == {}


def test_a_known_bug_names_the_release_that_fixed_it():
    """NCCL 2.19's unnamed async event (2.28.3 names RoCE link flaps): the entry's fixed_in is said when
    the log's NCCL is older, not when it is newer. Lines invented for the test in NCCL's form."""
    warn = "h1:1:2 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_0:1 unknown event type (18)\n"
    old = parsers.get("nccl_debug").parse("NCCL version 2.19.3+cuda12.2\n" + warn)
    [h] = nccl.nccl004(old)
    assert h.notes == ("fixed_in",) and "v2.28.3-1" in said("NCCL004", h) and "2.19.3" in said("NCCL004", h)
    new = parsers.get("nccl_debug").parse("NCCL version 2.29.2+cuda12.8\n" + warn)
    [h] = nccl.nccl004(new)
    assert h.notes == ()
