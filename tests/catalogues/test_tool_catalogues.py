"""The node tools' catalogues (rdma-core, infiniband-diags, nvidia-smi, fabricmanager, nvbandwidth):
every entry, rendered as the tool prints it, is classified by the parser that reads it; the
rdma-core extraction holds ibv_devinfo's and ibstat's error formats at the newest tag."""

from __future__ import annotations

import pytest

from topodiag import catalogues
from topodiag.catalogues import fmt
from topodiag.parsers import _tool_failures, get, to_jsonable

TOOLS = ("rdma-core", "infiniband-diags", "nvidia-smi", "fabricmanager", "nvbandwidth")


@pytest.mark.parametrize("producer", TOOLS)
def test_every_entry_is_classified_by_its_readers(producer):
    import json

    raw = {r["id"]: r for r in json.loads((catalogues.DATA / f"{producer}.json").read_text())["entries"]}
    cat = catalogues.load(producer)
    missed = []
    for e in cat.entries:
        line = fmt.example(e.format) if e.format else raw[e.id]["example"]
        for reader in cat.readers:
            err = _tool_failures.classify(reader, 7, line)
            if err.class_ is None or (err.entry != e.id and catalogues.classify_for(reader, line).entry.specificity < e.specificity):
                missed.append((reader, e.id, line))
    assert not missed, missed[:5]


@pytest.mark.parametrize("producer, needle", [
    ("rdma-core", "No IB devices found"), ("rdma-core", "Failed to get IB devices list: %s"),
    ("rdma-core", "Failed to open device"), ("rdma-core", "Failed to query port %u props"),
    ("rdma-core", "libibverbs: Warning: couldn't load driver '%s': %s"),
    ("rdma-core", "libibverbs: Warning: no userspace device-specific driver found for %s"),
    ("infiniband-diags", "ibpanic: [%d] %s: can't init UMAD library: %s"),
    ("infiniband-diags", "ibwarn: [%d] %s: stat of IB device '%s' failed"),
    ("infiniband-diags", "Fatal error:  device '%s': sys files not found (%s)"),
])
def test_rdma_core_formats_at_the_newest_tag(producer, needle):
    cat = catalogues.load(producer)
    hits = [e for e in cat.entries if e.format == needle]
    assert hits, f"{needle!r} not extracted"
    assert hits[0].versions.get("last") is None  # still printed at the newest tag extracted
    assert hits[0].cls != "tool-error"  # curated, not generic


def test_ibstat_panic_of_older_releases_is_kept_with_its_range():
    e = next(e for e in catalogues.load("infiniband-diags").entries
             if e.format == "ibpanic: [%d] %s: stat of IB device '%s' failed: %s")
    assert e.versions == {"first": "v30.0", "last": "v50.0"}  # IBWARN from v57.0 on


@pytest.mark.parametrize("source, text, cls", [
    ("nvidia_smi_topo_m", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
     "Make sure that the latest NVIDIA driver is installed and running.", "tool-driver-unreachable"),
    ("nvidia_smi_nvlink_s", "Failed to initialize NVML: Unknown Error", "tool-driver-unreachable"),
    ("nvidia_smi_topo_p2p", "No devices were found", "tool-no-device"),
    ("nvidia_smi_q", "Unable to determine the device handle for GPU0000:65:00.0: Unknown Error", "gpu-lost"),
])
def test_a_text_that_is_only_nvidia_smis_failure_parses(source, text, cls):
    result = to_jsonable(get(source).parse(f"$ nvidia-smi\n{text}\n"))
    errors = result.get("errors")
    assert [e["class"] for e in errors] == [cls]
    assert result["unrecognised"] == []


def test_an_unexplained_failure_line_is_unrecognised():
    result = get("nvidia_smi_q").parse("Failed to frobnicate the widget: Unknown thing\n")
    assert [e.text for e in result.unrecognised] == ["Failed to frobnicate the widget: Unknown thing"]


def test_a_text_with_no_failure_is_still_refused():
    from topodiag.parsers import ParseError

    with pytest.raises(ParseError):
        get("nvidia_smi_topo_m").parse("Sorry, the page you requested could not be found.\n")
