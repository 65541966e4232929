"""A stand-in for rdma-core's pyverbs (the parts topodiag's pyverbs probe calls), for tests.

`make(devices)` returns a module-like object with `device.get_device_list()`, `device.Context`
and `pyverbs_error.PyverbsRDMAError`, shaped as rdma-core's pyverbs/device.pyx: Device.name is
bytes, Device.guid is in host order, DeviceAttr.sys_image_guid is kept big-endian (as the C struct
holds it), GIDs are "xxxx:xxxx:...:xxxx" strings, query_gid_type answers 0 ("IB/RoCE v1") or 1
("RoCE v2") and raises PyverbsRDMAError for an empty slot, as the real binding does.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


class PyverbsError(Exception):
    pass


class PyverbsRDMAError(PyverbsError):
    pass


def be64(value: int) -> int:
    """A GUID as ibv_device_attr holds it (big-endian bytes read as a host integer)."""
    return int.from_bytes(value.to_bytes(8, "big"), sys.byteorder)


@dataclass
class FakePort:
    state: int = 4  # IBV_PORT_ACTIVE
    phys_state: int = 5  # LINK_UP
    link_layer: int = 1  # IBV_LINK_LAYER_INFINIBAND
    lid: int = 0
    sm_lid: int = 0
    lmc: int = 0
    port_cap_flags: int = 0
    active_width: int = 2  # 4X
    active_speed: int = 128  # NDR
    active_mtu: int = 5  # 4096
    max_mtu: int = 5
    gids: dict = field(default_factory=dict)  # index -> (gid, gid_type int or None)
    gid_tbl_len: int = 0
    fail: bool = False  # query_port raises


@dataclass
class FakeDevice:
    name: str
    guid: int
    fw_version: str = "28.43.2026"
    sys_image_guid: int = 0
    vendor_id: int = 0x02C9
    vendor_part_id: int = 4129
    hw_ver: int = 0
    node_type: int = 1
    transport_type: int = 0
    ports: list = field(default_factory=list)
    open_fails: bool = False


def make(devices=(), list_error: Exception | None = None):
    """A fake `pyverbs` package holding `devices` (FakeDevice); `list_error` is raised by
    get_device_list (PyverbsRDMAError('Failed to get devices list') is what a host with no
    RDMA device gives)."""
    by_name = {d.name: d for d in devices}
    closed: list[str] = []

    class Device:
        def __init__(self, d: FakeDevice):
            self.name = d.name.encode()
            self.guid = d.guid
            self.node_type = d.node_type
            self.transport_type = d.transport_type
            self.index = 0

    class Context:
        def __init__(self, **kwargs):
            name = kwargs.get("name")
            d = by_name.get(name)
            if d is None:
                raise PyverbsRDMAError(f"Failed to find device {name}")
            if d.open_fails:
                raise PyverbsRDMAError(f"Failed to open device {name}. Errno: 13, Permission denied")
            self._d = d

        def query_device(self):
            d = self._d
            return SimpleNamespace(fw_version=d.fw_version, node_guid=be64(d.guid),
                                   sys_image_guid=be64(d.sys_image_guid), vendor_id=d.vendor_id,
                                   vendor_part_id=d.vendor_part_id, hw_ver=d.hw_ver,
                                   phys_port_cnt=len(d.ports))

        def _port(self, port_num):
            if not 1 <= port_num <= len(self._d.ports):
                raise PyverbsRDMAError(f"Failed to query port {port_num}")
            return self._d.ports[port_num - 1]

        def query_port(self, port_num):
            p = self._port(port_num)
            if p.fail:
                raise PyverbsRDMAError(f"Failed to query port {port_num}")
            n = p.gid_tbl_len or (max(p.gids) + 1 if p.gids else 0)
            return SimpleNamespace(state=p.state, phys_state=p.phys_state, link_layer=p.link_layer,
                                   lid=p.lid, sm_lid=p.sm_lid, lmc=p.lmc, port_cap_flags=p.port_cap_flags,
                                   active_width=p.active_width, active_speed=p.active_speed,
                                   active_mtu=p.active_mtu, max_mtu=p.max_mtu, gid_tbl_len=n)

        def query_gid(self, port_num, index):
            gid = self._port(port_num).gids.get(index, (ZERO_GID, None))[0]
            return SimpleNamespace(gid=gid)

        def query_gid_type(self, port_num, index):
            kind = self._port(port_num).gids.get(index, (ZERO_GID, None))[1]
            if kind is None:
                raise PyverbsRDMAError(f"Failed to query gid type of port {port_num} and gid index {index}")
            return kind

        def close(self):
            closed.append(self._d.name)

    def get_device_list():
        if list_error is not None:
            raise list_error
        return [Device(d) for d in devices]

    device = SimpleNamespace(get_device_list=get_device_list, Context=Context)
    errors = SimpleNamespace(PyverbsRDMAError=PyverbsRDMAError, PyverbsError=PyverbsError)
    return SimpleNamespace(device=device, pyverbs_error=errors, closed=closed)


def h20_cx7_ndr():
    """The two complete CAs of fixtures/ibstat/ibstat-cx7-ndr-400-ib-active-h20-01.txt as pyverbs
    would report them (MT4129 = vendor 0x02c9 part 4129, fw 28.43.2026, Active / LinkUp, 4X NDR,
    lids 50 / 49, SM lid 1, LMC 0, cap mask 0xa751e848, GID 0 = fe80::<port GUID>). Invented
    beyond ibstat: the MTUs (4096) and a zero GID in slot 1."""
    devices = []
    for name, guid, lid in (("mlx5_0", 0xA088C2030074CFDA, 50), ("mlx5_1", 0xA088C2030074CBAA, 49)):
        iid = f"{guid:016x}"
        gid0 = "fe80:0000:0000:0000:" + ":".join(iid[i:i + 4] for i in range(0, 16, 4))
        port = FakePort(state=4, phys_state=5, link_layer=1, lid=lid, sm_lid=1, lmc=0,
                        port_cap_flags=0xA751E848, active_width=2, active_speed=128,
                        gids={0: (gid0, 0)}, gid_tbl_len=2)
        devices.append(FakeDevice(name, guid, fw_version="28.43.2026", sys_image_guid=guid,
                                  vendor_id=0x02C9, vendor_part_id=4129, ports=[port]))
    return make(devices)
