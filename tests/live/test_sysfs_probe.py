"""The sysfs probe over the recorded trees in fixtures/sysfs: the facts each tree's README states,
guarded reads (unreadable files, FIFOs, dangling, looping and escaping links), the snapshot of
what it read, and the fixture JSON the parser's tests use."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from topodiag.parsers import blank_provenance_header
from topodiag.live import sysfs_probe
from topodiag.live.sysfs_probe import probe, probe_json, write_snapshot
from tests.fixtures_index import FIXTURES, ROOT

TREES = FIXTURES / "sysfs"
TREE_NAMES = sorted(p.name for p in TREES.iterdir() if p.is_dir())


def run(name: str) -> dict:
    result = probe(str(TREES / name))
    assert result["ok"], result["error"]
    return result


def dev(result: dict, name: str) -> dict:
    return next(d for d in result["infiniband"] if d["name"] == name)


def test_every_tree_has_a_readme_saying_it_is_invented() -> None:
    assert len(TREE_NAMES) >= 5
    for name in TREE_NAMES:
        text = (TREES / name / "README").read_text()
        assert "Invented" in text and "fixtures/" in text, name


# -- (a) 8x ConnectX-7 NDR, GPUi and NICi under one PCIe switch -------------------------------------

def test_hgx_ndr_infiniband_values_from_ibstat() -> None:
    r = run("hgx-h100-cx7-ndr-8rail")
    assert [d["name"] for d in r["infiniband"]] == [f"mlx5_{i}" for i in range(8)]
    m0 = dev(r, "mlx5_0")
    assert (m0["node_type"], m0["node_type_raw"], m0["hca_type"], m0["fw_ver"], m0["hw_rev"]) == (
        "CA", "1: CA", "MT4129", "28.43.2026", "0x0")
    assert m0["node_guid"] == m0["sys_image_guid"] == "0xa088c2030074cfda"
    [port] = m0["ports"]
    assert (port["port"], port["state"], port["state_num"], port["state_raw"]) == (1, "Active", 4, "4: ACTIVE")
    assert (port["phys_state"], port["phys_state_num"], port["phys_state_raw"]) == ("LinkUp", 5, "5: LinkUp")
    assert (port["rate_gbps"], port["rate_raw"], port["active_width"], port["speed_name"]) == (
        400.0, "400 Gb/sec (4X NDR)", "4X", "NDR")
    assert (port["link_layer"], port["lid"], port["sm_lid"], port["lmc"], port["cap_mask"]) == (
        "InfiniBand", 50, 1, 0, "0xa751e848")
    assert port["port_guid"] == "0xa088c2030074cfda"
    # slot 1 holds the all-zero GID: left out, slot 0 keeps its index
    assert port["gids"] == [{"index": 0, "gid": "fe80:0000:0000:0000:a088:c203:0074:cfda", "type": "IB",
                             "type_raw": "IB/RoCE v1", "ndev": None}]
    assert dev(r, "mlx5_1")["ports"][0]["lid"] == 49
    assert dev(r, "mlx5_2")["node_guid"] == "0xa088c2030076b78c"
    assert r["hostname"] == "hgx-h100-01" and r["kernel_release"] == "5.15.0-105-generic"
    assert r["skipped"] == []


def test_hgx_pci_placement_from_topo_m() -> None:
    r = run("hgx-h100-cx7-ndr-8rail")
    gpus = [p for p in r["pci"] if p["kind"] == "gpu"]
    hcas = {p["rdma_devices"][0]: p for p in r["pci"] if p["kind"] == "hca"}
    assert len(gpus) == 8 and len(hcas) == 8
    for i, gpu in enumerate(gpus):
        nic = hcas[f"mlx5_{i}"]
        assert (gpu["vendor"], gpu["device"], gpu["class"], gpu["driver"]) == ("0x10de", "0x2330", "0x030200", "nvidia")
        assert (nic["vendor"], nic["device"], nic["driver"]) == ("0x15b3", "0x1021", "mlx5_core")
        # PIX: one switch (root complex, root port, upstream port shared), then different downstream ports
        assert gpu["path"][:3] == nic["path"][:3] and gpu["path"][3] != nic["path"][3]
        assert gpu["path"][0].startswith("pci0000:") and gpu["path"][-1] == gpu["bdf"]
        assert gpu["numa_node"] == nic["numa_node"] == (0 if i < 4 else 1)
        assert dev(r, f"mlx5_{i}")["pci_address"] == nic["bdf"]
        assert dev(r, f"mlx5_{i}")["numa_node"] == nic["numa_node"]
        for p in (gpu, nic):
            assert (p["current_link_speed"], p["current_link_speed_gts"], p["current_link_width"],
                    p["max_link_speed_gts"], p["max_link_width"]) == ("32.0 GT/s PCIe", 32.0, 16, 32.0, 16)
    assert [p["bdf"] for p in r["pci"]] == sorted(p["bdf"] for p in r["pci"])


# -- (b) RoCE -----------------------------------------------------------------------------------

def test_roce_cx7_ethernet_ports_and_a_disabled_cx6dx() -> None:
    r = run("roce-cx7-200g-cx6dx-disabled")
    assert [d["name"] for d in r["infiniband"]] == ["mlx5_0", "mlx5_1", "mlx5_10"]  # natural order
    p0 = dev(r, "mlx5_0")["ports"][0]
    assert (p0["state"], p0["phys_state"], p0["rate_gbps"], p0["link_layer"], p0["lid"], p0["cap_mask"]) == (
        "Active", "LinkUp", 200.0, "Ethernet", 0, "0x00010000")
    assert p0["port_guid"] == "0x5aa2e1fffedae626"  # ibstat's Port GUID
    assert [(g["index"], g["type"], g["type_raw"]) for g in p0["gids"]] == [
        (0, "RoCE v1", "IB/RoCE v1"), (1, "RoCE v2", "RoCE v2")]
    assert dev(r, "mlx5_1")["sys_image_guid"] == "0x58a2e10300dae626"
    assert dev(r, "mlx5_1")["node_guid"] == "0x58a2e10300dae627"
    m10 = dev(r, "mlx5_10")
    [p10] = m10["ports"]
    assert (m10["hca_type"], m10["fw_ver"]) == ("MT4125", "22.31.1014")
    assert (p10["state"], p10["state_num"], p10["phys_state"], p10["phys_state_num"]) == ("Down", 1, "Disabled", 3)
    assert p10["rate_gbps"] is None and p10["gids"] == [] and p10["lid"] is None
    pci = {p["bdf"]: p for p in r["pci"]}
    assert pci["0000:31:00.0"]["path"][:-1] == pci["0000:31:00.1"]["path"][:-1]  # one card, two functions
    assert pci["0000:b1:00.0"]["rdma_devices"] == ["mlx5_10"]


def test_roce_pod_gid_tables_from_show_gids() -> None:
    r = run("roce-pod-show-gids")
    assert [d["name"] for d in r["infiniband"]] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    gids = dev(r, "mlx5_0")["ports"][0]["gids"]
    assert [(g["index"], g["type"], g["ndev"]) for g in gids] == [
        (4, "RoCE v1", "net1"), (5, "RoCE v2", "net1"), (6, "RoCE v1", "net1"), (7, "RoCE v2", "net1")]
    assert gids[3]["gid"] == "0000:0000:0000:0000:0000:ffff:0a9c:8184"  # 10.156.129.132
    assert [g["index"] for g in dev(r, "mlx5_3")["ports"][0]["gids"]] == [4, 5]
    assert dev(r, "mlx5_3")["netdevs"] == [{"name": "net4", "operstate": "up"}]
    port = dev(r, "mlx5_2")["ports"][0]
    assert port["state"] is None and port["link_layer"] == "Ethernet" and port["port_guid"] is None
    assert all(p["kind"] == "hca" and p["vendor"] is None for p in r["pci"])


# -- (c) no HCA; (d) LinkUp but Initializing; (e) a GPU at x8 ------------------------------------------

def test_no_hca_host_is_ok_with_no_devices_and_lists_the_unbound_card() -> None:
    r = run("no-hca-mlx4-unbound")
    assert r["infiniband"] == [] and r["error"] is None and r["hostname"] == "node045"
    [nic] = r["pci"]
    assert (nic["kind"], nic["vendor"], nic["device"], nic["driver"], nic["rdma_devices"]) == (
        "nic", "0x15b3", "0x1003", None, [])
    assert (nic["current_link_speed"], nic["current_link_speed_gts"], nic["current_link_width"]) == ("8 GT/s", 8.0, 8)


def test_empty_infiniband_class_is_ok_with_no_devices(tmp_path) -> None:
    root = tmp_path / "root"
    shutil.copytree(TREES / "a100pcie-gpu1-x8", root, symlinks=True)
    (root / "sys/class/infiniband").mkdir(parents=True)
    r = probe(str(root))
    assert r["ok"] and r["infiniband"] == [] and len(r["pci"]) == 2


def test_azure_port_linkup_but_initializing() -> None:
    r = run("azure-ib-initializing-an0")
    ib0 = dev(r, "mlx5_ib0")
    [p] = ib0["ports"]
    assert (p["state"], p["state_num"], p["state_raw"], p["phys_state"]) == ("Initializing", 2, "2: INIT", "LinkUp")
    assert (p["lid"], p["sm_lid"], p["rate_gbps"], p["link_layer"]) == (65535, 361, 200.0, "InfiniBand")
    assert p["port_guid"] == "0x00155dfffd34072b"
    assert (ib0["node_guid"], ib0["sys_image_guid"]) == ("0x00155dfffe34072b", "0x0c42a10300a58684")
    assert ib0["numa_node"] is None  # numa_node -1
    assert ib0["pci_address"] == "0101:00:00.0"
    pci = {p["bdf"]: p for p in r["pci"]}
    assert pci["0101:00:00.0"]["path"] == ["pci0101:00", "0101:00:00.0"]  # from the Hyper-V root complex
    an0 = dev(r, "mlx5_an0")["ports"][0]
    assert (an0["state"], an0["lid"], an0["gids"], an0["rate_gbps"]) == ("Active", 0, [], None)


def test_gpu_trained_at_x8() -> None:
    r = run("a100pcie-gpu1-x8")
    assert r["infiniband"] == []
    gpu0, gpu1 = r["pci"]
    assert (gpu0["bdf"], gpu0["current_link_width"], gpu0["max_link_width"]) == ("0000:69:00.0", 16, 16)
    assert (gpu1["bdf"], gpu1["current_link_width"], gpu1["max_link_width"]) == ("0000:b1:00.0", 8, 16)
    assert gpu1["current_link_width_raw"] == "8" and gpu1["current_link_speed_gts"] == 16.0
    assert (gpu0["numa_node"], gpu1["numa_node"]) == (0, 1)


# -- not ok ----------------------------------------------------------------------------------------

def test_missing_root_or_sysfs_is_not_ok(tmp_path) -> None:
    r = probe(str(tmp_path / "nope"))
    assert not r["ok"] and "not a directory" in r["error"] and r["infiniband"] == []
    r = probe(str(tmp_path))
    assert not r["ok"] and "sys/ is missing" in r["error"]


# -- guarded reads -------------------------------------------------------------------------------

@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(TREES / "azure-ib-initializing-an0", root, symlinks=True)
    return root


def _port_dir(root: Path) -> Path:
    return (root / "sys/class/infiniband/mlx5_ib0/ports/1").resolve()


def test_a_directory_or_fifo_in_a_files_place_is_null(tree) -> None:
    port = _port_dir(tree)
    (port / "state").unlink()
    (port / "state").mkdir()
    (port / "rate").unlink()
    os.mkfifo(port / "rate")  # opened non-blocking and refused: never waits for a writer
    r = probe(str(tree))
    assert r["ok"]
    p = dev(r, "mlx5_ib0")["ports"][0]
    assert p["state"] is None and p["state_raw"] is None and p["rate_gbps"] is None
    assert p["lid"] == 65535  # the rest is read
    reasons = {s["path"].rsplit("/", 1)[-1]: s["reason"] for s in r["skipped"]}
    assert reasons == {"state": "not a regular file", "rate": "not a regular file"}


def test_an_unreadable_file_is_null(tree, monkeypatch) -> None:
    real_open = os.open

    def denying_open(path, flags, *args, **kwargs):
        if str(path).endswith("/ports/1/lid"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(sysfs_probe.os, "open", denying_open)
    r = probe(str(tree))
    assert r["ok"] and dev(r, "mlx5_ib0")["ports"][0]["lid"] is None
    assert {"path": "sys/class/infiniband/mlx5_ib0/ports/1/lid", "reason": "Permission denied"} in r["skipped"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file")
def test_a_mode_000_file_is_null(tree) -> None:
    lid = _port_dir(tree) / "lid"
    lid.chmod(0)
    r = probe(str(tree))
    assert dev(r, "mlx5_ib0")["ports"][0]["lid"] is None


def test_dangling_and_looping_links_do_not_crash(tree) -> None:
    cls = tree / "sys/class/infiniband"
    os.symlink("../../devices/nowhere/infiniband/mlx5_ib9", cls / "mlx5_ib9")
    os.symlink("mlx5_loop_b", cls / "mlx5_loop_a")
    os.symlink("mlx5_loop_a", cls / "mlx5_loop_b")
    r = probe(str(tree))
    assert r["ok"]
    for name in ("mlx5_ib9", "mlx5_loop_a", "mlx5_loop_b"):
        d = dev(r, name)
        assert d["ports"] == [] and d["node_guid"] is None and d["pci_address"] is None
    assert any(s["reason"] == "too many levels of symbolic links" for s in r["skipped"])


def test_links_leaving_the_root_are_not_followed(tmp_path, tree) -> None:
    outside = tmp_path / "outside" / "mlx5_evil"
    (outside / "ports/1").mkdir(parents=True)
    (outside / "node_guid").write_text("dead:beef:dead:beef\n")
    (outside / "ports/1/state").write_text("4: ACTIVE\n")
    cls = tree / "sys/class/infiniband"
    os.symlink("../../../../outside/mlx5_evil", cls / "mlx5_rel")  # climbs above the root
    os.symlink(str(outside), cls / "mlx5_abs")  # absolute, outside the root
    dev_dir = _port_dir(tree).parent.parent
    (dev_dir / "device").unlink()
    os.symlink(str(tmp_path / "outside"), dev_dir / "device")  # the PCI link of a real device
    r = probe(str(tree))
    assert r["ok"]
    for name in ("mlx5_rel", "mlx5_abs"):
        d = dev(r, name)
        assert d["node_guid"] is None and d["ports"] == []
        assert {"path": f"sys/class/infiniband/{name}", "reason": "link leaves the root"} in r["skipped"]
    ib0 = dev(r, "mlx5_ib0")
    assert ib0["pci_address"] is None and ib0["node_guid"] == "0x00155dfffe34072b"
    for entry in r["files_read"]:
        assert not entry[0].startswith(("/", "..")) and "outside" not in entry[0]
    assert "dead" not in json.dumps(probe_json(r))


def test_an_absolute_link_inside_the_root_is_followed(tree) -> None:
    link = tree / "sys/class/infiniband/mlx5_ib0"
    target = link.resolve()
    link.unlink()
    os.symlink(str(target), link)
    assert dev(probe(str(tree)), "mlx5_ib0")["node_guid"] == "0x00155dfffe34072b"


# -- files_read: a snapshot of exactly what was read ---------------------------------------------------

@pytest.mark.parametrize("name", TREE_NAMES)
def test_snapshot_of_files_read_probes_the_same(name, tmp_path) -> None:
    first = run(name)
    assert first["files_read"]
    for entry in first["files_read"]:
        assert len(entry) == 2 or (len(entry) == 3 and entry[1] == "->")
    write_snapshot(first["files_read"], str(tmp_path / "snap"))
    again = probe(str(tmp_path / "snap"))
    for r in (first, again):
        r.pop("root")
    assert probe_json(again) == probe_json(first)


def test_snapshot_refuses_paths_that_leave_its_directory(tmp_path) -> None:
    with pytest.raises(ValueError):
        write_snapshot([["../escape", "x\n"]], str(tmp_path / "snap"))
    with pytest.raises(ValueError):
        write_snapshot([["/etc/escape", "x\n"]], str(tmp_path / "snap"))


# -- the parser fixtures are this probe's output -----------------------------------------------------

@pytest.mark.parametrize("name", TREE_NAMES)
def test_fixture_json_is_what_the_probe_gives(name) -> None:
    path = FIXTURES / "sysfs_infiniband" / f"{name}.json"
    recorded = json.loads(blank_provenance_header(path.read_text()))
    live = probe_json(probe(str(TREES / name)))
    assert recorded.pop("root") == f"fixtures/sysfs/{name}"
    live.pop("root")
    assert live == recorded


def test_cli_prints_the_probe_json(capsys) -> None:
    assert sysfs_probe.main([str(TREES / "no-hca-mlx4-unbound")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["probe"] == "sysfs" and out["schema_version"] == 1 and "files_read" not in out
    assert sysfs_probe.main([str(TREES / "no-hca-mlx4-unbound"), "--files-read"]) == 0
    assert json.loads(capsys.readouterr().out)["files_read"]
    assert sysfs_probe.main(["/nonexistent-topodiag-root"]) == 1
    assert sysfs_probe.main(["a", "b"]) == 2


def test_module_runs_and_imports_cheaply() -> None:
    code = ("import sys, topodiag.live.sysfs_probe as p; "
            "print(sorted(m for m in ('networkx', 'rich', 'typer', 'pynvml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    out = subprocess.run([sys.executable, "-m", "topodiag.live.sysfs_probe", "fixtures/sysfs/a100pcie-gpu1-x8"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["pci"][1]["current_link_width"] == 8
