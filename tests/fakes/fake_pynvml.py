"""A fake `pynvml` that replays a recorded NVML probe (record and replay, as DCGM's nvml-injection).

An invented stand-in for pynvml: it takes whatever the probe hands it, so it cannot see a call
that is wrong for the real library (issue 25: the fabric structure passed by value). Kept for the
older tests of tests/live/test_nvml_probe.py; new tests run the REAL pynvml over a fake
libnvidia-ml instead (tests/fakes/fake_libnvml.py; in a child process: tests/fakes/nvml_child.py).

    fake = FakeNvml.from_probe(json.loads(text))      # a probe JSON (fixtures/nvml/*.json)
    probe(nvml=fake) == the recorded probe            # the round trip

It has the functions and constants topodiag.live.nvml_probe calls, with pynvml's names, values
and error classes (NVMLError(value) -> the NVMLError_<Name> subclass, `.value`, NVML's text). A
call named in the probe's `unsupported` raises what it recorded; a recorded "n/a" without an entry
raises NVMLError_NotSupported; a function recorded as missing from pynvml is absent (None). Like
nvidia-ml-py 13.615.71 it defines NVML_P2P_CAPS_INDEX_READ as the tuple (0,) (a stray comma in
pynvml.py), and its nvmlDeviceGetP2PStatus refuses a non-int index as ctypes would.

Also: FakeNvml.init_failing(name) (nvmlInit raises), FakeNvml.zero_gpus(), fake.lose(index) (every
call about that GPU raises NVMLError_GpuIsLost from then on).
"""

from __future__ import annotations

import string
from types import SimpleNamespace
from typing import Any

NA = "n/a"
MISSING_FUNCTION = "not in this pynvml (nvidia-ml-py too old for it)"

# nvmlReturn_t, as pynvml (nvidia-ml-py 13.615.71) defines them.
ERROR_CODES = {
    "NVML_ERROR_UNINITIALIZED": 1, "NVML_ERROR_INVALID_ARGUMENT": 2, "NVML_ERROR_NOT_SUPPORTED": 3,
    "NVML_ERROR_NO_PERMISSION": 4, "NVML_ERROR_ALREADY_INITIALIZED": 5, "NVML_ERROR_NOT_FOUND": 6,
    "NVML_ERROR_INSUFFICIENT_SIZE": 7, "NVML_ERROR_INSUFFICIENT_POWER": 8, "NVML_ERROR_DRIVER_NOT_LOADED": 9,
    "NVML_ERROR_TIMEOUT": 10, "NVML_ERROR_IRQ_ISSUE": 11, "NVML_ERROR_LIBRARY_NOT_FOUND": 12,
    "NVML_ERROR_FUNCTION_NOT_FOUND": 13, "NVML_ERROR_CORRUPTED_INFOROM": 14, "NVML_ERROR_GPU_IS_LOST": 15,
    "NVML_ERROR_RESET_REQUIRED": 16, "NVML_ERROR_OPERATING_SYSTEM": 17, "NVML_ERROR_LIB_RM_VERSION_MISMATCH": 18,
    "NVML_ERROR_IN_USE": 19, "NVML_ERROR_MEMORY": 20, "NVML_ERROR_NO_DATA": 21,
    "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED": 22, "NVML_ERROR_INSUFFICIENT_RESOURCES": 23,
    "NVML_ERROR_FREQ_NOT_SUPPORTED": 24, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH": 25, "NVML_ERROR_DEPRECATED": 26,
    "NVML_ERROR_NOT_READY": 27, "NVML_ERROR_GPU_NOT_FOUND": 28, "NVML_ERROR_INVALID_STATE": 29,
    "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED": 30, "NVML_ERROR_UNKNOWN": 999,
}
# pynvml's NVMLError._errcode_to_string (the rest come from the library's nvmlErrorString).
ERROR_TEXTS = {
    1: "Uninitialized", 2: "Invalid Argument", 3: "Not Supported", 4: "Insufficient Permissions",
    5: "Already Initialized", 6: "Not Found", 7: "Insufficient Size", 8: "Insufficient External Power",
    9: "Driver Not Loaded", 10: "Timeout", 11: "Interrupt Request Issue", 12: "NVML Shared Library Not Found",
    13: "Function Not Found", 14: "Corrupted infoROM", 15: "GPU is lost", 16: "GPU requires restart",
    17: "The operating system has blocked the request.", 18: "RM has detected an NVML/RM version mismatch.",
    20: "Insufficient Memory", 999: "Unknown Error",
}

CONSTANTS = {
    "NVML_SUCCESS": 0,
    "NVML_FEATURE_DISABLED": 0, "NVML_FEATURE_ENABLED": 1,
    "NVML_NVLINK_MAX_LINKS": 36,
    "NVML_TOPOLOGY_INTERNAL": 0, "NVML_TOPOLOGY_SINGLE": 10, "NVML_TOPOLOGY_MULTIPLE": 20,
    "NVML_TOPOLOGY_HOSTBRIDGE": 30, "NVML_TOPOLOGY_NODE": 40, "NVML_TOPOLOGY_CPU": 40, "NVML_TOPOLOGY_SYSTEM": 50,
    "NVML_P2P_CAPS_INDEX_READ": (0,), "NVML_P2P_CAPS_INDEX_WRITE": 1, "NVML_P2P_CAPS_INDEX_NVLINK": 2,
    "NVML_P2P_CAPS_INDEX_ATOMICS": 3, "NVML_P2P_CAPS_INDEX_PROP": 4, "NVML_P2P_CAPS_INDEX_PCI": 4,
    "NVML_P2P_CAPS_INDEX_UNKNOWN": 5,
    "NVML_P2P_STATUS_OK": 0, "NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED": 1, "NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED": 1,
    "NVML_P2P_STATUS_GPU_NOT_SUPPORTED": 2, "NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED": 3,
    "NVML_P2P_STATUS_DISABLED_BY_REGKEY": 4, "NVML_P2P_STATUS_NOT_SUPPORTED": 5, "NVML_P2P_STATUS_UNKNOWN": 6,
    "NVML_NVLINK_DEVICE_TYPE_GPU": 0x00, "NVML_NVLINK_DEVICE_TYPE_IBMNPU": 0x01,
    "NVML_NVLINK_DEVICE_TYPE_SWITCH": 0x02, "NVML_NVLINK_DEVICE_TYPE_UNKNOWN": 0xFF,
    "NVML_AFFINITY_SCOPE_NODE": 0, "NVML_AFFINITY_SCOPE_SOCKET": 1,
    "NVML_VALUE_TYPE_UNSIGNED_INT": 1,
    "NVML_FI_DEV_NVLINK_SPEED_MBPS_L0": 84, "NVML_FI_DEV_NVLINK_SPEED_MBPS_L1": 85,
    "NVML_FI_DEV_NVLINK_SPEED_MBPS_L2": 86, "NVML_FI_DEV_NVLINK_SPEED_MBPS_L3": 87,
    "NVML_FI_DEV_NVLINK_SPEED_MBPS_L4": 88, "NVML_FI_DEV_NVLINK_SPEED_MBPS_L5": 89,
    "NVML_FI_DEV_NVLINK_SPEED_MBPS_L6": 132, "NVML_FI_DEV_NVLINK_SPEED_MBPS_L7": 133,
    "NVML_FI_DEV_NVLINK_SPEED_MBPS_L8": 134, "NVML_FI_DEV_NVLINK_SPEED_MBPS_L9": 135,
    "NVML_FI_DEV_NVLINK_SPEED_MBPS_L10": 136, "NVML_FI_DEV_NVLINK_SPEED_MBPS_L11": 137,
    "NVML_FI_DEV_NVLINK_GET_SPEED": 164,
    **ERROR_CODES,
}

P2P_STATUS = {"OK": 0, "CNS": 1, "GNS": 2, "TNS": 3, "DR": 4, "NS": 5, "U": 6}
P2P_CAP_BY_INDEX = {0: "read", 1: "write", 2: "nvlink", 3: "atomics"}
REMOTE_TYPES = {"gpu": 0x00, "ibmnpu": 0x01, "switch": 0x02, "unknown": 0xFF}


class NVMLError(Exception):
    """pynvml's NVMLError: NVMLError(value) is an instance of the NVMLError_<Name> subclass."""

    _valClassMapping: dict[int, type] = {}

    def __new__(typ, value: Any = None, *args: Any):
        if typ is NVMLError:
            typ = NVMLError._valClassMapping.get(value, typ)
        obj = Exception.__new__(typ)
        obj.value = value
        obj.text = None
        return obj

    def __init__(self, *args: Any):
        super().__init__(*args)

    def __str__(self) -> str:
        return self.text or ERROR_TEXTS.get(self.value, f"NVML Error with code {self.value}")


def _make_error_classes() -> dict[str, type]:
    classes = {}
    for name, value in ERROR_CODES.items():
        cls_name = "NVMLError_" + string.capwords(name.replace("NVML_ERROR_", ""), "_").replace("_", "")

        def new(typ, *args, _value=value):
            return NVMLError.__new__(typ, _value)

        cls = type(cls_name, (NVMLError,), {"__new__": new})
        NVMLError._valClassMapping[value] = cls
        classes[cls_name] = cls
    return classes


ERROR_CLASSES = _make_error_classes()
globals().update(ERROR_CLASSES)


def error_from_reason(reason: str) -> BaseException:
    """The exception a recorded `unsupported` text stands for ("NVML_ERROR_X: text", or "Type: text")."""
    name, _, text = reason.partition(": ")
    if name in ERROR_CODES:
        err = NVMLError(ERROR_CODES[name])
        err.text = text or None
        return err
    if name.startswith("NVML_ERROR_") and name[11:].isdigit():
        err = NVMLError(int(name[11:]))
        err.text = text or None
        return err
    return type(name if name.isidentifier() else "RuntimeError", (Exception,), {})(text)


def nvml_error(name: str) -> NVMLError:
    return NVMLError(ERROR_CODES[name])


def bus_id_raw(normalised: str) -> str:
    """"0000:18:00.0" -> NVML's form "00000000:18:00.0" (8-digit domain, uppercase hex)."""
    dom, bus, rest = normalised.split(":")
    dev, fn = rest.split(".")
    return f"{int(dom, 16):08X}:{int(bus, 16):02X}:{int(dev, 16):02X}.{int(fn, 16)}"


def _mask(ids: list[int], words: int) -> list[int]:
    out = [0] * words
    for i in ids:
        out[i // 64] |= 1 << (i % 64)
    return out


def _cpu_ids(text: str) -> list[int]:
    ids: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        ids.extend(range(int(lo), int(hi or lo) + 1))
    return ids


class Handle:
    def __init__(self, index: int):
        self.index = index

    def __repr__(self) -> str:
        return f"<fake nvmlDevice_t {self.index}>"


class FakeNvml:
    """The pynvml module, as a recorded probe saw it."""

    NVMLError = NVMLError

    def __init__(self, probe: dict):
        self.recorded = probe
        self.gpus: list[dict] = list(probe.get("gpus") or [])
        self.pairs = {(p["a"], p["b"]): p for p in probe.get("pairs") or []}
        self.unsupported: dict[str, str] = dict(probe.get("unsupported") or {})
        self.lost: set[int] = set()
        self.calls: list[str] = []
        self.init_error: BaseException | None = None
        self.count_error: BaseException | None = None
        self.initialised = 0
        for name, value in CONSTANTS.items():
            setattr(self, name, value)
        for name, cls in ERROR_CLASSES.items():
            setattr(self, name, cls)
        self.field_names = {v: k for k, v in CONSTANTS.items() if k.startswith("NVML_FI_DEV_")}
        for key, reason in self.unsupported.items():
            if reason == MISSING_FUNCTION:  # that function (or constant) was not in the pynvml recorded
                fn, _, args = key.partition("(")
                named = dict(a.split("=", 1) for a in args.rstrip(")").split(", ") if "=" in a)
                setattr(self, named.get("field") or named.get("caps") or fn, None)

    # -- builders -----------------------------------------------------------------------------
    @classmethod
    def from_probe(cls, probe: dict) -> "FakeNvml":
        fake = cls(probe)
        if not probe.get("ok", True):
            error = str(probe.get("error") or "")
            name = probe.get("error_name")
            err: BaseException = nvml_error(name) if name in ERROR_CODES else RuntimeError(error)
            if error.startswith("nvmlDeviceGetCount"):
                fake.count_error = err
            elif error.startswith("nvmlInit"):
                fake.init_error = err
            else:
                raise ValueError(f"a probe that failed before NVML ({error!r}) cannot be replayed")
        return fake

    @classmethod
    def init_failing(cls, name: str = "NVML_ERROR_DRIVER_NOT_LOADED") -> "FakeNvml":
        fake = cls({"gpus": [], "pairs": [], "unsupported": {}})
        fake.init_error = nvml_error(name)
        return fake

    @classmethod
    def zero_gpus(cls, driver: str = "570.133.20", cuda: str = "12.8") -> "FakeNvml":
        return cls({"driver_version": driver, "cuda_driver_version": cuda, "nvml_version": f"12.{driver}",
                    "gpus": [], "pairs": [], "unsupported": {}})

    def lose(self, index: int) -> "FakeNvml":
        """From now on every call about GPU `index` raises NVMLError_GpuIsLost."""
        self.lost.add(index)
        return self

    # -- replay -------------------------------------------------------------------------------
    def _reply(self, name: str, key_args: str, value: Any, gpus: tuple[int, ...] = ()) -> Any:
        key = f"{name}({key_args})"
        self.calls.append(key)
        if not self.initialised:
            raise nvml_error("NVML_ERROR_UNINITIALIZED")
        if any(g in self.lost for g in gpus):
            raise nvml_error("NVML_ERROR_GPU_IS_LOST")
        if key in self.unsupported:
            raise error_from_reason(self.unsupported[key])
        if value is None or value == NA:
            raise nvml_error("NVML_ERROR_NOT_SUPPORTED")
        return value

    def _gpu(self, handle: Handle) -> dict:
        return self.gpus[handle.index]

    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit()")
        if self.init_error is not None:
            raise self.init_error
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.calls.append("nvmlShutdown()")
        if not self.initialised:
            raise nvml_error("NVML_ERROR_UNINITIALIZED")
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return self._reply("nvmlSystemGetDriverVersion", "", self.recorded.get("driver_version"))

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        text = self.recorded.get("cuda_driver_version")
        value = NA
        if isinstance(text, str) and text != NA:
            major, _, minor = text.partition(".")
            value = int(major) * 1000 + int(minor or 0) * 10
        return self._reply("nvmlSystemGetCudaDriverVersion", "", value)

    def nvmlSystemGetNVMLVersion(self) -> str:
        return self._reply("nvmlSystemGetNVMLVersion", "", self.recorded.get("nvml_version"))

    def nvmlDeviceGetCount(self) -> int:
        self.calls.append("nvmlDeviceGetCount()")
        if self.count_error is not None:
            raise self.count_error
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Handle:
        if not 0 <= index < len(self.gpus):
            raise nvml_error("NVML_ERROR_INVALID_ARGUMENT")
        return self._reply("nvmlDeviceGetHandleByIndex", f"gpu={index}", Handle(index), (index,))

    def _device(self, name: str, handle: Handle, field: str) -> Any:
        return self._reply(name, f"gpu={handle.index}", self._gpu(handle).get(field), (handle.index,))

    def nvmlDeviceGetName(self, handle: Handle) -> str:
        return self._device("nvmlDeviceGetName", handle, "name")

    def nvmlDeviceGetUUID(self, handle: Handle) -> str:
        return self._device("nvmlDeviceGetUUID", handle, "uuid")

    def nvmlDeviceGetSerial(self, handle: Handle) -> str:
        return self._device("nvmlDeviceGetSerial", handle, "serial")

    def nvmlDeviceGetNumaNodeId(self, handle: Handle) -> int:
        return self._device("nvmlDeviceGetNumaNodeId", handle, "gpu_numa_id")

    def nvmlDeviceGetPciInfo(self, handle: Handle) -> SimpleNamespace:
        raw = self._gpu(handle).get("pci_bus_id_raw")
        value = NA if raw in (None, NA) else SimpleNamespace(busId=raw.encode(), busIdLegacy=raw[-16:].encode())
        return self._reply("nvmlDeviceGetPciInfo", f"gpu={handle.index}", value, (handle.index,))

    def nvmlDeviceGetMemoryAffinity(self, handle: Handle, node_set_size: int, scope: int) -> list[int]:
        nodes = self._gpu(handle).get("numa_affinity")
        value = NA if not isinstance(nodes, list) else _mask(nodes, node_set_size)
        return self._reply("nvmlDeviceGetMemoryAffinity", f"gpu={handle.index}", value, (handle.index,))

    def nvmlDeviceGetCpuAffinity(self, handle: Handle, cpu_set_size: int) -> list[int]:
        cpus = self._gpu(handle).get("cpu_affinity")
        value = NA if cpus in (None, NA) else _mask(_cpu_ids(cpus), cpu_set_size)
        return self._reply("nvmlDeviceGetCpuAffinity", f"gpu={handle.index}", value, (handle.index,))

    def _pcie(self, name: str, handle: Handle, field: str) -> int:
        return self._reply(name, f"gpu={handle.index}", (self._gpu(handle).get("pcie") or {}).get(field),
                           (handle.index,))

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: Handle) -> int:
        return self._pcie("nvmlDeviceGetCurrPcieLinkGeneration", handle, "current_gen")

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: Handle) -> int:
        return self._pcie("nvmlDeviceGetMaxPcieLinkGeneration", handle, "max_gen")

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: Handle) -> int:
        return self._pcie("nvmlDeviceGetCurrPcieLinkWidth", handle, "current_width")

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: Handle) -> int:
        return self._pcie("nvmlDeviceGetMaxPcieLinkWidth", handle, "max_width")

    def _link(self, handle: Handle, link: int) -> dict | None:
        links = self._gpu(handle).get("nvlinks") or []
        return links[link] if 0 <= link < len(links) else None

    def nvmlDeviceGetNvLinkState(self, handle: Handle, link: int) -> int:
        entry = self._link(handle, link)
        key_args = f"gpu={handle.index}, link={link}"
        if entry is None:
            key = f"nvmlDeviceGetNvLinkState({key_args})"
            if key not in self.unsupported and handle.index not in self.lost:
                self.calls.append(key)
                end = self._gpu(handle).get("nvlink_end_error") or "NVML_ERROR_INVALID_ARGUMENT"
                raise error_from_reason(end)
            return self._reply("nvmlDeviceGetNvLinkState", key_args, NA, (handle.index,))
        return self._reply("nvmlDeviceGetNvLinkState", key_args, 1 if entry["active"] is True else 0,
                           (handle.index,))

    def _link_value(self, name: str, handle: Handle, link: int, field: str) -> Any:
        entry = self._link(handle, link)
        if entry is None:
            raise nvml_error("NVML_ERROR_INVALID_ARGUMENT")
        return self._reply(name, f"gpu={handle.index}, link={link}", entry.get(field), (handle.index,))

    def nvmlDeviceGetNvLinkVersion(self, handle: Handle, link: int) -> int:
        return self._link_value("nvmlDeviceGetNvLinkVersion", handle, link, "version")

    def nvmlDeviceGetNvLinkRemotePciInfo(self, handle: Handle, link: int) -> SimpleNamespace:
        entry = self._link(handle, link) or {}
        bdf = entry.get("remote_pci_bus_id")
        value = NA if bdf in (None, NA) else SimpleNamespace(busId=bus_id_raw(bdf).encode(), busIdLegacy=b"")
        return self._reply("nvmlDeviceGetNvLinkRemotePciInfo", f"gpu={handle.index}, link={link}", value,
                           (handle.index,))

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, handle: Handle, link: int) -> int:
        entry = self._link(handle, link) or {}
        value = REMOTE_TYPES.get(entry.get("remote_device_type"), NA)
        return self._reply("nvmlDeviceGetNvLinkRemoteDeviceType", f"gpu={handle.index}, link={link}", value,
                           (handle.index,))

    def nvmlDeviceGetFieldValues(self, handle: Handle, field_ids: list) -> list[SimpleNamespace]:
        out = []
        for item in field_ids:
            fid, scope = item if isinstance(item, tuple) else (item, 0)
            name = self.field_names.get(fid, f"field {fid}")
            link = int(name.rsplit("_L", 1)[1]) if "_SPEED_MBPS_L" in name else scope
            key = f"nvmlDeviceGetFieldValues(gpu={handle.index}, link={link}, field={name})"
            self.calls.append(key)
            if handle.index in self.lost:
                raise nvml_error("NVML_ERROR_GPU_IS_LOST")
            entry = self._link(handle, link) or {}
            speed = entry.get("speed_gbps")
            ret, value = 0, 0
            if key in self.unsupported:
                err = error_from_reason(self.unsupported[key])
                ret = getattr(err, "value", ERROR_CODES["NVML_ERROR_UNKNOWN"])
            elif "NVLINK" in name and "SPEED" in name and isinstance(speed, (int, float)):
                value = round(speed * 1000)
            else:
                ret = ERROR_CODES["NVML_ERROR_NOT_SUPPORTED"]
            out.append(SimpleNamespace(fieldId=fid, scopeId=scope, nvmlReturn=ret, valueType=1,
                                       value=SimpleNamespace(uiVal=value, ulVal=value, ullVal=value, dVal=float(value),
                                                             sllVal=value, siVal=value, usVal=value)))
        return out

    def nvmlDeviceGetTopologyCommonAncestor(self, a: Handle, b: Handle) -> int:
        pair = self.pairs.get((a.index, b.index)) or {}
        return self._reply("nvmlDeviceGetTopologyCommonAncestor", f"a={a.index}, b={b.index}",
                           pair.get("topology_level"), (a.index, b.index))

    def nvmlDeviceGetP2PStatus(self, a: Handle, b: Handle, index: Any) -> int:
        if not isinstance(index, int):  # what ctypes says when handed pynvml's (0,)
            raise TypeError(f"argument 3: wrong type {type(index).__name__}")
        cap = P2P_CAP_BY_INDEX.get(index)
        cname = f"NVML_P2P_CAPS_INDEX_{cap.upper()}" if cap else f"NVML_P2P_CAPS_INDEX_{index}"
        pair = self.pairs.get((a.index, b.index)) or {}
        status = (pair.get("p2p") or {}).get(cap)
        return self._reply("nvmlDeviceGetP2PStatus", f"a={a.index}, b={b.index}, caps={cname}",
                           P2P_STATUS.get(status, NA) if status is not None else NA, (a.index, b.index))
