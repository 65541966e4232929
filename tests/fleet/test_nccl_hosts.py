"""Per-host transports of multi-host NCCL_DEBUG logs (fixtures/nccl_debug), and the host that differs."""

from __future__ import annotations

from topodiag.fleet import run_fleet
from topodiag.fleet.nccl_hosts import compare_hosts, read_log

from .conftest import INVENTED_LOG, NCCL

INVENTED = INVENTED_LOG


def test_the_host_on_sockets_is_the_outlier():
    got = compare_hosts(read_log(str(INVENTED)), label="job.log")
    assert [o["text"] for o in got["outliers"]] == ["noded: NET/Socket, 3 others NET/IB/GDRDMA"]
    assert got["majority"] == {"network": "NET/IB/GDRDMA", "intra-node": "P2P/direct pointer"}
    assert {h["host"]: h["transports"] for h in got["hosts"]}["noded"] == {"NET/Socket": 2, "P2P/direct pointer": 1}
    assert all(h["judged"] == ["network", "intra-node"] and h["note"] == "" for h in got["hosts"])
    assert got["evidence"] == "sample" and not got["sample_capped"] and got["notes"] == []


def test_four_hosts_alike_have_no_outlier():
    got = compare_hosts(read_log(str(NCCL / "nccl-collnet-sharp-fallback-ib-gdrdma-01.log")))
    assert got["outliers"] == [] and got["hosts_in_log"] == 4
    assert got["majority"] == {"network": "NET/IBext_v8/GDRDMA", "collnet": "CollNet", "intra-node": "P2P/CUMEM"}
    assert got["sample_capped"]  # 20 distinct connection lines kept by the parser, every host in them


def test_hosts_missing_from_the_sample_are_said_not_judged():
    """64 EC2 instances all on sockets: 15 hosts in the excerpt, 10 of them with a connection line."""
    got = compare_hosts(read_log(str(NCCL / "nccl-socket-fallback-aws-noib-02-rings.log")))
    assert got["outliers"] == [] and got["majority"]["network"] == "NET/Socket"
    unjudged = [h for h in got["hosts"] if not h["judged"]]
    assert len(unjudged) == 5
    assert all(h["note"] == "not judged: no connection line of this host in the log" for h in unjudged)
    assert got["notes"] == ["5 of 15 hosts not judged: the log has no connection line of theirs"]


def test_two_hosts_are_too_few():
    got = compare_hosts({"hosts": ["a", "b"], "connections_sample": [
        {"line_no": 1, "text": "a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA"},
        {"line_no": 2, "text": "b:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/Socket/0"}]})
    assert got["outliers"] == [] and got["majority"]["network"] is None
    assert got["notes"] == ["network: only 2 hosts judged, too few to name a majority "
                            "(NET/IB/GDRDMA on 1, NET/Socket on 1)"]


def test_a_host_with_only_intra_node_lines_is_not_judged_on_the_network():
    sample = [{"line_no": i, "text": f"{h}:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0"}
              for i, h in enumerate("abc")]
    sample.append({"line_no": 9, "text": "d:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read"})
    got = compare_hosts({"hosts": list("abcd"), "connections_sample": sample})
    assert got["outliers"] == []
    assert {h["host"]: h["note"] for h in got["hosts"]}["d"].startswith("network transport not judged")


def test_transports_by_host_is_used_when_the_parser_gives_it():
    got = compare_hosts({"hosts": list("abcd"), "connections_sample": [],
                         "transports_by_host": {"a": {"NET/IB": 9}, "b": {"NET/IB": 9}, "c": {"NET/IB": 9},
                                                "d": {"NET/IB": 2, "NET/Socket": 7}}})
    assert got["evidence"] == "transports_by_host" and got["outliers"] == []  # d shows NET/IB too
    got = compare_hosts({"hosts": list("abcd"), "transports_by_host": {
        "a": {"NET/IB/GDRDMA": 9}, "b": {"NET/IB/GDRDMA": 9}, "c": {"NET/IB/GDRDMA": 9}, "d": {"NET/IB": 9}}})
    assert [o["text"] for o in got["outliers"]] == ["d: NET/IB, 3 others NET/IB/GDRDMA"]  # GDR off on d


def test_run_fleet_takes_nccl_logs_and_reports_a_bad_one_as_a_failure(tmp_path):
    bad = tmp_path / "empty.log"
    bad.write_text("no nccl here\n")
    result = run_fleet([], nccl_logs=[str(INVENTED), str(bad)])
    assert result.lines() == ["noded: NET/Socket, 3 others NET/IB/GDRDMA"] and result.has_outliers
    [f] = result.failures
    assert f.label == str(bad) and f.reason.startswith("NCCL log: ") and "\n" not in f.reason


def test_a_host_outside_a_full_sample_is_said_to_be_beyond_it():
    sample = [{"line_no": i, "text": f"{'abc'[i % 3]}:1:2 [0] NCCL INFO Channel {i:02d}/0 : 0[0] -> 1[0] "
                                     "[send] via NET/IB/0"} for i in range(20)]
    got = compare_hosts({"hosts": list("abcd"), "connections_sample": sample})
    assert got["sample_capped"] and got["outliers"] == []
    assert {h["host"]: h["note"] for h in got["hosts"]}["d"] == (
        "not judged: none of its connection lines among the 20 distinct ones the parser samples")
    assert got["notes"] == ["1 of 4 hosts not judged: their connection lines are not among the parser's sample"]
