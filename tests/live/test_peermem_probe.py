"""The peermem probe: files only (prolog-safe), null for what is not there, and what GDR001 makes of it:
a container without /proc/modules is "not visible" (an info), never a failed source nor a missing module."""

from __future__ import annotations

import json

import topodiag.live.collection as live
from topodiag.checks import gdr
from topodiag.live import peermem_probe
from topodiag.parsers import peermem

MODULES = ("nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)\n"
           "nvidia 56598528 147 nvidia_uvm,nvidia_peermem, Live 0x0000000000000000 (POE)\n"
           "ib_core 442368 9 rdma_cm,ib_ipoib,nvidia_peermem, Live 0x0000000000000000\n")
OPEN = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024\n"


def _root(tmp_path, modules=None, peers=None, version=None, release="6.8.0-90-generic\n"):
    for rel, text in (("proc/modules", modules), ("proc/driver/nvidia/version", version),
                      ("proc/sys/kernel/osrelease", release)):
        if text is not None:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    if peers is not None:
        d = tmp_path / "sys/kernel/mm/memory_peers"
        d.mkdir(parents=True)
        for p in peers:
            (d / p).mkdir()
    return str(tmp_path)


def _parsed(root: str):
    return peermem.parse(json.dumps(peermem_probe.probe(root), indent=1))


def test_a_loaded_module(tmp_path):
    p = _parsed(_root(tmp_path, MODULES, ["nv_mem"], OPEN))
    assert (p.peer_module, p.peer_absent, p.modules_visible, p.memory_peers) == ("nvidia_peermem", False, True, ("nv_mem",))
    assert (p.open_modules, p.driver_version, p.kernel_release, p.dmabuf_possible) == (True, "565.57.01", "6.8.0-90-generic", True)
    assert gdr.gdr001(p) is None


def test_no_module_but_the_dmabuf_path_is_an_info(tmp_path):
    p = _parsed(_root(tmp_path, MODULES.replace("nvidia_peermem", "nvidia_uvm"), None, OPEN))
    assert p.peer_absent is True and p.dmabuf_possible is True
    h = gdr.gdr001(p)
    assert h.variant == "dmabuf_path" and str(h.severity).lower().endswith("info")
    assert h.values["facts"] == "the open GPU kernel modules; kernel 6.8.0-90-generic (>= 5.12)"


def test_no_module_no_dmabuf_with_rdma_hcas_is_an_error(tmp_path):
    from topodiag.model import Topology

    class Topo(Topology):  # a real model (GDR001 infers the platform from it) with one RDMA port
        def __init__(self):
            super().__init__()
            self.add_node("host:gpu07", "host", name="gpu07")

        def host(self):
            return "host:gpu07"

        def ib_ports(self):
            return [("nic:mlx5_0", {"port": 1})]

    p = _parsed(_root(tmp_path, MODULES.replace("nvidia_peermem", "nvidia_uvm"), None,
                      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.135  Fri Jan 10 20:00:00 UTC 2025\n",
                      "5.15.0-126-generic\n"))
    assert p.dmabuf_possible is False
    h = gdr.gdr001(p, topology=Topo())
    assert h.variant == "default" and h.severity is None and h.notes == ("dmabuf_no",)
    assert h.values["how"] == "this host's RDMA HCAs" and list(h.subjects) == ["host:gpu07"]


def test_a_container_without_proc_modules_is_not_visible_not_failed(tmp_path):
    out = peermem_probe.probe(_root(tmp_path, None, None, OPEN))
    assert out["ok"] is True and out["modules"] is None and "/proc/modules" in out["not_visible"]
    rec = live._from_probe(next(s for s in live.PROBES if s.name == "peermem"), out, 0.01)
    assert rec.status == "ok"
    p = peermem.parse(rec.text)
    assert p.modules_visible is False and p.peer_absent is None
    assert gdr.gdr001(p) is None  # nothing says the host would use GPUDirect RDMA: nothing to say

    class Profile:
        name, link_layer = "dgx-h100", "InfiniBand"

    h = gdr.gdr001(p, profile=Profile())
    assert h.variant == "not_visible" and str(h.severity).lower().endswith("info")


def test_memory_peers_alone_say_loaded(tmp_path):
    p = _parsed(_root(tmp_path, None, ["nv_mem"], None))
    assert p.peer_absent is False and gdr.gdr001(p) is None


def test_a_file_that_leads_out_of_the_root_is_not_read(tmp_path):
    """A recorded tree is read under its root only (topodiag/live/rooted.py, as the sysfs and counters
    probes read): /proc/modules as a link to a file outside is "not visible", never read."""
    outside = tmp_path / "outside.txt"
    outside.write_text(MODULES)
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "modules").symlink_to(outside)
    got = peermem_probe.probe(str(root))
    assert got["modules"] is None and "/proc/modules" in got["not_visible"]


def test_a_probe_json_of_the_wrong_types_is_refused_at_its_line():
    """A field the probe writes as text (or a list of names) holding something else is not read as
    "not visible": the file is not the probe's output."""
    import pytest

    from topodiag.parsers import ParseError

    with pytest.raises(ParseError) as exc:
        peermem.parse('{"probe": "peermem", "schema_version": 1, "ok": true, "modules": 5}')
    assert exc.value.line_no == 1 and "modules: expected a string or null, found int" in exc.value.message
    with pytest.raises(ParseError) as exc:
        peermem.parse('{"probe": "peermem",\n "memory_peers": ["nv_mem", 3]}')
    assert exc.value.line_no == 2 and "memory_peers: expected a list of names or null, found a list holding int" in exc.value.message
