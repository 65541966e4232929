"""Performance rules over nccl-tests output: PERF001 busbw-low, PERF002 nccl-tests-wrong, PERF003 busbw-collapse.

PERF001 judges each run's busbw at its largest message size (only >= `min_size_bytes`, 256 MB by
default: smaller sizes are latency-bound) against an expectation it states, with how it was derived:

- a platform profile (the `profile` input, else none: the pipeline detects it once from the GPU models, the "# Rank"
  lines when every node shows the profile's GPU count): in one node the profile's busbw for the
  collective; across nodes the NICs a node's GPUs can use (min(profile NICs, GPUs per node)) x the
  line rate (NCCL ring/tree all_reduce busbw across nodes tracks a node's total NIC bandwidth);
- else derived from knowledge: in one node the GPU's one-way NVLink bandwidth x the ring efficiency
  of the measured anchors (docs/architecture.md: 8xA100 ~230 of 300 GB/s, 8xH100 ~370 of 450 -> 0.77, the lower);
  across nodes the active IB ports of the topology x their rate.

Only all_reduce is judged (the anchors are all_reduce numbers); a run whose collective the banner
does not name is taken for all_reduce when its rows look like one (reducing op, root -1, count x type
size == size). Runs with one rank are left to PERF002.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Optional

from .. import catalogues, knowledge
from ..engine import Evidence, Severity, check, hit, when
from ._facts import plain

SOURCE = "nccl_tests"
MIN_SIZE_BYTES = 256 * 1024 * 1024
SHORT_MIN_BYTES = 64 * 1024 * 1024  # a run that stops below MIN_SIZE_BYTES is judged from here, if levelled
SHORT_MARGIN = 0.1  # ... with this much more tolerance
LEVEL_SPREAD = 0.10  # busbw of the last sizes within 10% of one another: levelled off
PLATEAU_GBPS = knowledge.PLATEAU_NO_MODEL_GBYTE_S  # levelled off below this with no GPU model known (knowledge/busbw.toml)
# Lower of the measured ring all_reduce anchors over per-GPU one-way NVLink (knowledge/busbw.toml).
NVLINK_RING_EFFICIENCY = knowledge.NVLINK_RING_EFFICIENCY

TYPE_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2, "fp16": 2,
    "int32": 4, "uint32": 4, "int": 4, "float": 4, "float32": 4,
    "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}


def _busbw(row: Mapping[str, Any]) -> Optional[float]:
    """The better of the row's out-of-place and in-place busbw (the numbers of the two), or None."""
    oop, ip = row.get("oop_busbw_gbps"), row.get("ip_busbw_gbps")
    if isinstance(oop, (int, float)):
        return max(oop, ip) if isinstance(ip, (int, float)) else oop
    return ip if isinstance(ip, (int, float)) else None


def _runs(nccl_tests: Mapping[str, Any]) -> dict[int, list[dict]]:
    runs: dict[int, list[dict]] = {}
    for row in nccl_tests.get("rows") or []:
        runs.setdefault(row.get("run") or 0, []).append(row)
    return runs


def _collective(nccl_tests: Mapping[str, Any], rows: list[dict]) -> Optional[str]:
    """The run's collective: the banner's name for a one-run file, else what the rows look like."""
    name = nccl_tests.get("collective")
    if name and (nccl_tests.get("runs") or 1) <= 1:
        try:
            return knowledge.normalize_collective(name)
        except ValueError:
            return None
    # No banner name, or several runs (the banner names the first only): all_reduce prints a
    # reducing op, root -1 and count = size / type size (all_gather/reduce_scatter count per rank).
    return "all_reduce" if _looks_like_all_reduce(rows) else None


def _looks_like_all_reduce(rows: list[dict]) -> bool:
    for row in rows:
        redop, root, typ = row.get("redop"), row.get("root"), str(row.get("type") or "").lower()
        size, count = row.get("size_bytes"), row.get("count")
        if not redop or redop == "none" or root not in (None, -1) or typ not in TYPE_BYTES:
            return False
        if not size or not count or count * TYPE_BYTES[typ] != size:
            return False
    return bool(rows)


_LAYOUTS: list = [None, {}, {}]  # the last result: its "# Rank" lines by run, the layouts made (read-only)


def _layout(nccl_tests: Mapping[str, Any], run: int) -> tuple[list[str], dict[str, int], list[str]]:
    """Hosts (in order), GPUs per host and GPU names of one run's "# Rank" lines (else of all of them).
    Each is made once per result: a log of thousands of runs costs one pass over its rank lines."""
    if _LAYOUTS[0] is not nccl_tests:
        by_run: dict[int, list] = {}
        for d in nccl_tests.get("devices") or []:
            by_run.setdefault(d.get("run") or 0, []).append(d)
        _LAYOUTS[:] = [nccl_tests, by_run, {}]
    key = run if run in _LAYOUTS[1] else None
    if key not in _LAYOUTS[2]:
        _LAYOUTS[2][key] = _layout_of(_LAYOUTS[1][run] if key is not None else list(nccl_tests.get("devices") or []))
    return _LAYOUTS[2][key]


def _layout_of(devices: list) -> tuple[list[str], dict[str, int], list[str]]:
    per_host: dict[str, int] = {}
    names = []
    for d in devices:
        host = d.get("host") or "?"
        per_host[host] = per_host.get(host, 0) + 1
        if d.get("model"):
            names.append(d["model"])
    return list(per_host), per_host, names


def _profile_for(profile, names: list[str], per_host: dict[str, int]):
    """The profile the run uses (given, or detected once by the pipeline from the GPU models, the
    nccl-tests rank lines included: topodiag/pipeline/platform.py choose_profile), and its label."""
    if profile is not None:
        return profile, f"profile {profile.name}"
    return None, ""


def _topology_nics(topology) -> tuple[int, float] | None:
    """(active IB ports, lowest rate Gb/s) from the topology, or None."""
    if topology is None:
        return None
    rates = []
    for _, port in topology.ib_ports():
        state = str(port.get("state") or "").lower()
        rate = port.get("rate_gbps")
        if isinstance(rate, (int, float)) and rate > 0 and (not state or "active" in state):
            rates.append(float(rate))
    return (len(rates), min(rates)) if rates else None


# An expectation: (expected busbw GB/s, how it was derived, None, {}) when one is known, else
# (None, None, the PERF001 message that says why not, its facts).

def _across_nodes(per_host: dict[str, int], prof, prof_label: str, topology) -> tuple:
    """Across nodes: the NICs a node's GPUs can use x their line rate, from the profile or the topology."""
    gpus_per_node = max(per_host.values())
    if prof is not None and prof.nics and prof.nic_rate_gbps:
        rails = min(prof.nics, gpus_per_node)
        per_nic = knowledge.gbit_to_gbyte(prof.nic_rate_gbps)
        return rails * per_nic, (f"{prof_label}: {rails} NIC(s) per node used by {gpus_per_node} GPU(s) x "
                                 f"{prof.nic_rate_gbps:g} Gb/s = {rails} x {per_nic:g} GB/s"), None, {}
    nics = _topology_nics(topology)
    if nics is None:
        return None, None, "no_nic_count", {}
    count, rate = nics
    rails = min(count, gpus_per_node)
    per_nic = knowledge.gbit_to_gbyte(rate)
    return rails * per_nic, (f"derived: {rails} active IB port(s) per node (topology) x {rate:g} Gb/s "
                             f"= {rails} x {per_nic:g} GB/s"), None, {}


def _in_node(collective: str, names: list[str], prof, prof_label: str) -> tuple:
    """In one node: the profile's busbw for the collective, else the GPU's one-way NVLink bandwidth x
    the ring efficiency of the measured anchors."""
    if prof is not None and collective in prof.busbw:
        exp = prof.busbw[collective]
        return exp.in_node_gbps, f"{prof_label}: {collective} busbw {exp.in_node_gbps:g} GB/s in one node", None, {}
    facts = knowledge.gpu_facts(names[0]) if names else None
    if facts is not None and facts.pcie_only:
        return _pcie_in_node(facts)
    if facts is None or facts.nvlink_one_way_gbyte_s is None:
        return None, None, "no_nvlink_bandwidth", {"gpu": names[0] if names else "unknown GPU"}
    one_way = facts.nvlink_one_way_gbyte_s
    expected = one_way * NVLINK_RING_EFFICIENCY
    return expected, (f"derived: {facts.model} NVLink {one_way:g} GB/s one-way per GPU x {NVLINK_RING_EFFICIENCY} "
                      f"ring efficiency (measured anchors) = {expected:.0f} GB/s"), None, {}


def _pcie_in_node(facts) -> tuple:
    """A node whose GPUs talk over PCIe by design (no NVLink, or NVLink only within bridged pairs, so a
    ring over all GPUs crosses PCIe): the GPU's one-way PCIe x16 figure x the P2P efficiency of the
    measured anchors, or x the host-staged efficiency on boards without GPU P2P (GeForce)."""
    staged = not facts.gpudirect_rdma
    expected = knowledge.pcie_busbw_gbyte_s(facts.pcie_gen, 16, staged=staged)
    if expected is None:
        return None, None, "no_nvlink_bandwidth", {"gpu": facts.model}
    one_way = knowledge.pcie_one_way_gbyte_s(facts.pcie_gen, 16)
    eff = knowledge.HOST_STAGED_EFFICIENCY if staged else knowledge.PCIE_P2P_EFFICIENCY
    path = "host-staged copies (no GPU P2P on this board)" if staged else "PCIe P2P"
    return expected, (f"derived: {facts.model} over {path}: PCIe Gen{facts.pcie_gen} x16 {one_way:g} GB/s one-way x "
                      f"{eff} (measured anchors, knowledge/busbw.toml) = {expected:.0f} GB/s"), None, {}


def _expectation(collective: str, hosts: list[str], per_host: dict[str, int], names: list[str],
                 profile, topology) -> tuple:
    """(expected busbw GB/s, how it was derived, None, {}), or (None, None, the not-judged message, its facts)."""
    if collective != "all_reduce":
        return None, None, "other_collective", {}
    prof, prof_label = _profile_for(profile, names, per_host)
    if not hosts:
        return None, None, "no_hosts", {}
    if len(hosts) > 1:
        return _across_nodes(per_host, prof, prof_label, topology)
    return _in_node(collective, names, prof, prof_label)


def _size(n: int) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n} B"


_as_dict = plain


def _hosts_from_topology(topology, nranks: int) -> Optional[tuple[list[str], dict[str, int], list[str]]]:
    """No "# Rank" lines: the run taken for one on the node the topology describes, when it fits."""
    if topology is None:
        return None
    models = [m for g in topology.gpus() if (m := topology.node(g).get("model"))]
    if not models or (nranks and nranks > len(topology.gpus())):
        return None
    host = topology.host() or "host:?"
    return [host.split(":", 1)[-1]], {host: nranks or len(models)}, models


@check("PERF001")
def perf001(nccl_tests, params, topology=None, profile=None) -> Iterator:
    """busbw at the largest size >= min_size_bytes below min_fraction of the stated expectation."""
    nccl_tests = _as_dict(nccl_tests)
    for run, rows in sorted(_runs(nccl_tests).items()):
        rows = [r for r in rows if r.get("size_bytes") and _busbw(r) is not None]
        if rows:
            found = _judge_run(nccl_tests, run, rows, params, topology, profile)
            if found is not None:
                yield found


def _run_layout(nccl_tests: Mapping[str, Any], run: int, topology):
    """(hosts, GPUs per host, GPU names, nranks, assumed): the run's "# Rank" lines, else the node the
    topology describes (assumed is then that layout)."""
    hosts, per_host, names = _layout(nccl_tests, run)
    nranks = nccl_tests.get("nranks") or sum(per_host.values())
    assumed = _hosts_from_topology(topology, nranks) if not hosts else None
    if assumed is not None:
        hosts, per_host, names = assumed
    return hosts, per_host, names, nranks, assumed


def _level_of(rows: list[dict], size: int, min_size: int, params) -> Optional[dict]:
    """Where busbw levels off: from min_size for a full run, from short_min_bytes for a short one."""
    start = min_size if size >= min_size else int(params.get("short_min_bytes", SHORT_MIN_BYTES))
    return _levelled(rows, start, float(params.get("level_spread", LEVEL_SPREAD)))


def _judge_run(nccl_tests: Mapping[str, Any], run: int, rows: list[dict], params, topology, profile):
    """One run's finding: too small to judge or no expectation (info), a plateau with nothing to
    compare (warning), or below the expectation (with a wider tolerance for a short levelled run)."""
    hosts, per_host, names, nranks, assumed = _run_layout(nccl_tests, run, topology)
    if nranks == 1 or all(_busbw(r) == 0 for r in rows):
        return None  # every rank alone: PERF002
    largest = max(rows, key=lambda r: r["size_bytes"])
    measured, size = _busbw(largest), largest["size_bytes"]
    collective = _collective(nccl_tests, rows) or "unknown collective"
    min_size = int(params.get("min_size_bytes", MIN_SIZE_BYTES))
    base = dict(evidence=[Evidence(SOURCE, None, largest.get("line_no"))], collective=collective,
                size=_size(size), busbw=f"{measured:g}", run=run + 1, min_size=_size(min_size))
    subjects = [f"host:{h}" for h in hosts[:8]] or ["nccl-tests"]
    level = _level_of(rows, size, min_size, params)
    short = size < min_size
    if short and level is None:
        return hit(subjects, severity=Severity.INFO, variant="too_small", **base)
    expected, how, not_judged, facts = _expectation(collective, hosts, per_host, names, profile, topology)
    if expected is None:
        return _plateau(subjects, base, level, nranks, not_judged, names, params) \
            or hit(subjects, severity=Severity.INFO, variant=not_judged, **base, **facts)
    fraction = float(params.get("min_fraction", 0.8)) - (float(params.get("short_margin", SHORT_MARGIN)) if short else 0)
    if measured >= fraction * expected:
        return None
    if assumed is not None:
        how += " (the output names no hosts: taken for a run inside the node the other inputs describe)"
    return hit(subjects, expectation=how, **base, expected=f"{expected:.0f}", how=how, min_fraction=round(fraction, 2),
               percent=f"{100 * measured / expected:.0f}", notes=when(short=short),
               level_from=_size(level["size_bytes"]) if level else "")


def _levelled(rows: list[dict], from_bytes: int, spread: float) -> Optional[dict]:
    """The first of the run's last (up to three) sizes at or above `from_bytes` when their busbw lies
    within `spread` of one another (max / min): where busbw has levelled off; None when it has not or
    fewer than two sizes are that large."""
    big = sorted((r for r in rows if r["size_bytes"] >= from_bytes), key=lambda r: r["size_bytes"])[-3:]
    if len(big) < 2:
        return None
    values = [_busbw(r) for r in big]
    low = min(values)
    return big[0] if low > 0 and max(values) / low <= 1 + spread else None


def _plateau(subjects: list[str], base: dict, level: Optional[dict], nranks: int, not_judged: str,
             names: list[str], params):
    """No expectation is known: still a warning when busbw levels off at a few GB/s with no GPU model to
    excuse it (no "# Rank" lines), far below the slowest NVLink class; None otherwise."""
    ceiling = float(params.get("plateau_gbps", PLATEAU_GBPS))
    unexplained = not_judged == "no_hosts" or (not_judged == "no_nvlink_bandwidth" and not names)
    if level is None or not unexplained or nranks == 1 or (_busbw(level) or 0) >= ceiling:
        return None
    model, one_way = knowledge.slowest_sxm_nvlink()
    return hit(subjects, severity=Severity.WARNING, variant="plateau", **base, level_from=_size(level["size_bytes"]),
               plateau=f"{ceiling:g}", slowest=model, slowest_busbw=f"{one_way * NVLINK_RING_EFFICIENCY:.0f}",
               expectation=f"busbw above {ceiling:g} GB/s once it levels off (below every NVLink class)")


def _rank_zero_alone(devices: list[dict]) -> set:
    """(host, pid) of the processes whose run lists Rank 0 only: each ran its own 1-rank test."""
    ranks_by_run: dict[int, set] = {}
    for d in devices:
        ranks_by_run.setdefault(d.get("run") or 0, set()).add(d.get("rank"))
    return {(d.get("host"), d.get("pid")) for d in devices if ranks_by_run.get(d.get("run") or 0) == {0}}


def _banners_before_results(nccl_tests: Mapping[str, Any], rows: list[dict]) -> int:
    """How many banners were printed with neither a device list nor a result row before the next one:
    with MPI only rank 0 prints the banner, so banners back to back come from processes that each
    started a test of their own (nccl-tests #213: two 8-GPU nodes, two banners, then one node's
    devices). Sequential runs in one file always have their rows between banners."""
    runs = int(nccl_tests.get("runs") or 1)
    if runs < 2:
        return 0
    used = {r.get("run") or 0 for r in rows} | {d.get("run") or 0 for d in nccl_tests.get("devices") or []}
    return sum(1 for i in range(runs - 1) if i not in used)


def _all_zero_one_rank(nccl_tests: Mapping[str, Any], rows: list[dict]) -> bool:
    return bool(rows) and all(_busbw(r) == 0 for r in rows if _busbw(r) is not None) and nccl_tests.get("nranks") == 1


def _separate_banners(nccl_tests: Mapping[str, Any], rows: list[dict], subjects: list[str]):
    empty = _banners_before_results(nccl_tests, rows)
    if not empty:
        return None
    return hit(subjects, variant="alone_banners", processes=empty + 1,
               evidence=[Evidence(SOURCE, None, (rows[0].get("line_no") if rows else None))])


def _every_rank_alone(nccl_tests: Mapping[str, Any], rows: list[dict], subjects: list[str]):
    """busbw 0 with nranks 1, or processes on several hosts each its own Rank 0: no MPI build or launch;
    else banners printed back to back by processes that each ran their own test."""
    zero = _all_zero_one_rank(nccl_tests, rows)
    alone = _rank_zero_alone(nccl_tests.get("devices") or [])
    split = len(alone) > 1 and len({h for h, _ in alone}) > 1
    if not (zero or split):
        return _separate_banners(nccl_tests, rows, subjects)
    return hit(subjects, variant="alone_zero_and_split" if zero and split else "alone_zero" if zero else "alone_split",
               processes=len(alone), evidence=[Evidence(SOURCE, None, (rows[0].get("line_no") if rows else None))])


_SEVERITY = {"info": 0, "warning": 1, "error": 2, "critical": 3}


def _entry(entry_id: Optional[str]):
    """The catalogue entry a failure line was classified as (its meaning and fix), or None."""
    return catalogues.entry_for(SOURCE, entry_id)


def _cause(failures: list[dict]) -> dict:
    """The failure line to name: the first that is not the consequence of another (a call trace)."""
    for f in failures:
        e = _entry(f.get("entry"))
        if e is None or not e.consequence:
            return f
    return failures[0]


def _failure_hit(failures: list[dict], rows: list[dict], subjects: list[str], total: int = 0):
    """The test failed: its first cause, what its class means and what to do; an error (critical when a
    line's entry says so), a warning when every line only says an option was ignored or changed."""
    f = _cause(failures)
    e = _entry(f.get("entry"))
    worst = max(_SEVERITY.get(x.get("severity") or "error", 2) for x in failures)
    severity = (Severity.WARNING, Severity.WARNING, Severity.ERROR, Severity.CRITICAL)[worst]
    others = [x for x in failures if x is not f][:4]
    return hit(subjects, severity=severity, variant="test_failure" if rows else "test_failure_no_rows",
               count=max(total, len(failures)), line_no=f["line_no"], first=f["text"].strip()[:160],
               cls=f.get("class") or "not catalogued",
               meaning=e.meaning if e else "no catalogue entry explains this line (SYS004 names it)",
               fix=e.fix if e else "read the line and the lines before it",
               evidence=[Evidence(SOURCE, None, x["line_no"]) for x in [f] + others])


def _failures(nccl_tests: Mapping[str, Any], rows: list[dict], subjects: list[str]) -> Iterator:
    """Out-of-bounds validation FAILED, and the other failure lines (CUDA/NCCL failures, timeouts,
    usage errors, aborts): the first cause, its class, meaning and fix."""
    oob = nccl_tests.get("out_of_bounds")
    if (oob or 0) > 0 or nccl_tests.get("out_of_bounds_ok") is False:
        lines = [f["line_no"] for f in nccl_tests.get("failures") or [] if "Out of bounds" in f.get("text", "")]
        yield hit(subjects, variant="validation_failed", out_of_bounds=oob,
                  evidence=[Evidence(SOURCE, None, lines[0] if lines else None)])
    failures = [f for f in nccl_tests.get("failures") or [] if "Out of bounds" not in f.get("text", "")]
    if failures:
        yield _failure_hit(failures, rows, subjects, nccl_tests.get("failures_total") or 0)


def _wrong(rows: list[dict], subjects: list[str]):
    """Rows with a non-zero #wrong: the first of them, or None."""
    wrong = [r for r in rows if (r.get("oop_wrong") or 0) > 0 or (r.get("ip_wrong") or 0) > 0]
    if not wrong:
        return None
    return hit(subjects, rows=len(wrong), size=_size(wrong[0]["size_bytes"]), out_of_place=wrong[0].get("oop_wrong"),
               in_place=wrong[0].get("ip_wrong"), evidence=[Evidence(SOURCE, None, x.get("line_no")) for x in wrong[:5]])


def _no_rows(nccl_tests: Mapping[str, Any], subjects: list[str]):
    """The banner ("# nThread ..."), then neither a row nor anything else PERF002 reports. (A fragment
    that starts after the banner, inside the rank lines of an NCCL_DEBUG log excerpt, is not judged:
    it says nothing about whether the run measured.)"""
    ranks = len({d.get("rank") for d in nccl_tests.get("devices") or []})
    return hit(subjects, variant="no_rows", ranks=ranks, evidence=[Evidence(SOURCE, None, None)])


@check("PERF002")
def perf002(nccl_tests) -> Iterator:
    """Wrong results, out-of-bounds FAILED, failure lines, every rank alone (busbw 0 / many "Rank 0"),
    or no result row at all (never a clean empty result)."""
    nccl_tests = _as_dict(nccl_tests)
    subjects = sorted({f"host:{d['host']}" for d in nccl_tests.get("devices") or [] if d.get("host")})[:8] \
        or ["nccl-tests"]
    rows = nccl_tests.get("rows") or []
    found = [_wrong(rows, subjects), *_failures(nccl_tests, rows, subjects), _every_rank_alone(nccl_tests, rows, subjects)]
    found = [h for h in found if h is not None]
    if not rows and not found and nccl_tests.get("parameters"):  # its banner, then nothing measured
        found.append(_no_rows(nccl_tests, subjects))
    yield from found


def _collapse(rows: list[dict], fraction: float, min_size: int) -> Optional[tuple[dict, dict, dict]]:
    """(peak row, last row, first row after the peak below fraction of it) when the run's largest size
    (>= min_size) falls below fraction of a smaller size's peak; else None."""
    rows = sorted(rows, key=lambda r: r["size_bytes"])
    last = rows[-1]
    if last["size_bytes"] < min_size:
        return None
    peak = max(rows[:-1], key=_busbw, default=None)
    if peak is None or not _busbw(peak) or _busbw(last) >= fraction * _busbw(peak):
        return None
    falls = next(r for r in rows if r["size_bytes"] > peak["size_bytes"] and _busbw(r) < fraction * _busbw(peak))
    return peak, last, falls


@check("PERF003")
def perf003(nccl_tests, params) -> Iterator:
    """busbw at a run's largest sizes falls well below the peak it reached at a smaller size.

    A healthy nccl-tests curve rises and flattens: the largest sizes are the best (within noise and
    the odd in-place outlier, which is why each row counts as the better of out-of-place and
    in-place). A curve that peaks and then drops means large messages take a slower path (host
    staging, a NIC or rail without GPUDirect RDMA, an exhausted buffer or memory registration), which
    needs no baseline to see."""
    nccl_tests = _as_dict(nccl_tests)
    fraction = float(params.get("max_drop_fraction", 0.6))
    min_size = int(params.get("min_size_bytes", 64 * 1024 * 1024))
    runs: dict[int, list[dict[str, Any]]] = {}
    for row in nccl_tests.get("rows") or []:
        if _busbw(row) is not None:
            runs.setdefault(row.get("run") or 0, []).append(row)
    for run, rows in sorted(runs.items()):
        found = _collapse(rows, fraction, min_size)
        if found is None:
            continue
        peak, last, falls = found
        hosts, _, _ = _layout(nccl_tests, run)
        yield hit([f"host:{h}" for h in hosts[:8]] or ["nccl-tests"], run=run + 1,
                  collective=nccl_tests.get("collective") or "nccl-tests",
                  peak=f"{_busbw(peak):g}", peak_size=_size(peak["size_bytes"]),
                  last=f"{_busbw(last):g}", last_size=_size(last["size_bytes"]),
                  ratio=f"{_busbw(last) / _busbw(peak):.0%}", from_size=_size(falls["size_bytes"]),
                  evidence=[Evidence(SOURCE, None, peak.get("line_no")), Evidence(SOURCE, None, falls.get("line_no"))])


# -- the public face of the nccl-tests arithmetic: what plan/ and compare/ use (nothing private) ----

def as_dict(result) -> dict:
    """A parsed nccl-tests result (the parser's records or their JSON) as plain dicts."""
    return _as_dict(result)


def rows_by_run(nccl_tests: Mapping[str, Any]) -> dict[int, list[dict]]:
    """The result rows of each run of one output (run number -> rows)."""
    return _runs(nccl_tests)


def best_busbw(row: Mapping[str, Any]) -> Optional[float]:
    """A row's busbw, GB/s: the larger of out-of-place and in-place (None: neither given)."""
    return _busbw(row)


def collective_of(nccl_tests: Mapping[str, Any], rows: list[dict]) -> Optional[str]:
    """A run's collective (all_reduce, all_gather, ...), from the banner or what its rows look like."""
    return _collective(nccl_tests, rows)


def rank_layout(nccl_tests: Mapping[str, Any], run: int) -> tuple[list[str], dict[str, int], list[str]]:
    """(hosts, GPUs per host, GPU names) from a run's "# Rank" lines."""
    return _layout(nccl_tests, run)


def run_layout(nccl_tests: Mapping[str, Any], run: int, topology):
    """(hosts, GPUs per host, GPU names, nranks, assumed): the rank lines, else the topology's node."""
    return _run_layout(nccl_tests, run, topology)


def expected_busbw(collective: str, hosts: list[str], per_host: dict[str, int], names: list[str],
                   profile, topology) -> tuple:
    """PERF001's expectation: (GB/s, how it was derived, None, {}), or (None, None, why not judged, facts)."""
    return _expectation(collective, hosts, per_host, names, profile, topology)


def size_words(n: int) -> str:
    """A message size as people write it: 256 MiB, 8 GiB, 512 B."""
    return _size(n)
