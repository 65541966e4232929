"""A fake libnvidia-ml.so.1 under the REAL pynvml (nvidia-ml-py): C functions at the ctypes boundary.

    lib = FakeLibNvml(probe_json)          # replays a recorded NVML probe (fixtures/nvml/*.json)
    lib.install(monkeypatch)               # pynvml.nvmlLib = lib; pynvml's function cache emptied
    nvml_probe.probe(nvml=pynvml)          # the real pynvml wrappers call these functions

This is not a pynvml: pynvml's own Python code (its wrappers, structures, NVMLError classes,
constants) runs unchanged on top of it, exactly as on a node. Each function is a ctypes CFUNCTYPE
whose argument types follow NVML's C header nvml.h (CUDA 12.6 nvml.h, and nvmlGpuFabricInfo_v3_t
of the r570+ headers): an out-parameter is a pointer, and a structure handed over BY VALUE where
the header takes a pointer is refused with ctypes.ArgumentError. (The real library is loaded with
CDLL and has no argtypes: there the same mistake pushes the structure's bytes where NVML reads a
pointer, a SIGSEGV or garbage; ctypes' own POINTER(T) argtype would silently take the address, so
the checks here are stricter than POINTER(T).) Versioned structures are checked by their `version`
field as NVML does (NVML_STRUCT_VERSION: sizeof | version << 24): another version returns
NVML_ERROR_ARGUMENT_VERSION_MISMATCH.

The replay is data-driven: a recorded `unsupported` entry makes that C call return its NVML_ERROR_*
code; a value recorded "n/a" without an entry returns NVML_ERROR_NOT_SUPPORTED; a GPU in `lost`
answers NVML_ERROR_GPU_IS_LOST to every call; a GPU's `fabric` object (the probe's shape) is what
nvmlDeviceGetGpuFabricInfo(V) writes. Knobs: init_error (nvmlInitWithFlags fails), count_error,
missing (symbols the library lacks: pynvml raises FUNCTION_NOT_FOUND), fabric_versions (the
nvmlGpuFabricInfo versions the "driver" knows), crash_at / hang_at (a C call, by its probe key,
that kills the process with SIGSEGV / never returns: for the child-process tests).
`calls` lists every C call made, by probe key ("nvmlDeviceGetName(gpu=0)").
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from ctypes import (CFUNCTYPE, Structure, Union, c_char, c_double, c_int, c_longlong, c_uint, c_uint8,
                    c_ulong, c_ulonglong, c_ushort, c_void_p, sizeof)
from typing import Any, Callable

NA = "n/a"
SUCCESS, UNINITIALIZED, INVALID_ARGUMENT, NOT_SUPPORTED = 0, 1, 2, 3
INSUFFICIENT_SIZE, FUNCTION_NOT_FOUND, GPU_IS_LOST, ARGUMENT_VERSION_MISMATCH = 7, 13, 15, 25
# nvmlReturn_t names (nvml.h), for reading recorded `unsupported` texts.
CODES = {"NVML_ERROR_UNINITIALIZED": 1, "NVML_ERROR_INVALID_ARGUMENT": 2, "NVML_ERROR_NOT_SUPPORTED": 3,
         "NVML_ERROR_NO_PERMISSION": 4, "NVML_ERROR_NOT_FOUND": 6, "NVML_ERROR_INSUFFICIENT_SIZE": 7,
         "NVML_ERROR_DRIVER_NOT_LOADED": 9, "NVML_ERROR_TIMEOUT": 10, "NVML_ERROR_LIBRARY_NOT_FOUND": 12,
         "NVML_ERROR_FUNCTION_NOT_FOUND": 13, "NVML_ERROR_GPU_IS_LOST": 15, "NVML_ERROR_RESET_REQUIRED": 16,
         "NVML_ERROR_LIB_RM_VERSION_MISMATCH": 18, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH": 25,
         "NVML_ERROR_UNKNOWN": 999}
# nvmlErrorString for the codes pynvml has no text of its own for.
ERROR_STRINGS = {25: b"Argument version mismatch", 26: b"Deprecated", 27: b"Not Ready"}


# -- nvml.h types ---------------------------------------------------------------------------------
class PciInfo(Structure):  # nvmlPciInfo_t
    _fields_ = [("busIdLegacy", c_char * 16), ("domain", c_uint), ("bus", c_uint), ("device", c_uint),
                ("pciDeviceId", c_uint), ("pciSubSystemId", c_uint), ("busId", c_char * 32)]


class Value(Union):  # nvmlValue_t
    _fields_ = [("dVal", c_double), ("siVal", c_int), ("uiVal", c_uint), ("ulVal", c_ulong),
                ("ullVal", c_ulonglong), ("sllVal", c_longlong), ("usVal", c_ushort)]


class FieldValue(Structure):  # nvmlFieldValue_t
    _fields_ = [("fieldId", c_uint), ("scopeId", c_uint), ("timestamp", c_longlong), ("latencyUsec", c_longlong),
                ("valueType", c_int), ("nvmlReturn", c_int), ("value", Value)]


class FabricInfo(Structure):  # nvmlGpuFabricInfo_t; nvmlGpuFabricState_t is an unsigned char
    _fields_ = [("clusterUuid", c_uint8 * 16), ("status", c_int), ("cliqueId", c_uint), ("state", c_uint8)]


class FabricInfoV2(Structure):  # nvmlGpuFabricInfo_v2_t (= nvmlGpuFabricInfoV_t in the 12.x headers)
    _fields_ = [("version", c_uint), ("clusterUuid", c_uint8 * 16), ("status", c_int), ("cliqueId", c_uint),
                ("state", c_uint8), ("healthMask", c_uint)]


class FabricInfoV3(Structure):  # nvmlGpuFabricInfo_v3_t (r570+): healthSummary added
    _fields_ = FabricInfoV2._fields_ + [("healthSummary", c_uint8)]


def struct_version(struct: type, version: int) -> int:
    """NVML_STRUCT_VERSION(data, ver): sizeof(struct) | ver << 24."""
    return sizeof(struct) | version << 24


FABRIC_STRUCTS = {2: FabricInfoV2, 3: FabricInfoV3}


# -- argument types as the header declares them (the caller's side) --------------------------------
def _pointee(obj: Any) -> Any:
    """The object a pointer argument points to: byref(x) -> x, an array or pointer itself; None for
    anything that is not a pointer in C."""
    if type(obj).__name__ == "CArgObject":
        return getattr(obj, "_obj", None)
    if isinstance(obj, (ctypes.Array, ctypes._Pointer)):
        return obj
    return None


def out(c_name: str, size: int) -> type:
    """`T *` in nvml.h (T of `size` bytes; an array of them is fine): only a pointer is taken."""

    class Out(c_void_p):
        @classmethod
        def from_param(cls, obj: Any) -> Any:
            if isinstance(obj, ctypes._Pointer):
                return obj
            target = _pointee(obj)
            if target is None:
                raise TypeError(f"nvml.h takes a pointer ({c_name} *) here, got {type(obj).__name__} by value")
            if sizeof(target) < size:
                raise TypeError(f"{c_name} * needs {size} bytes, got {type(target).__name__} of {sizeof(target)}")
            return obj

    Out.__name__ = f"{c_name}*"
    return Out


class Device(c_void_p):
    """nvmlDevice_t (struct nvmlDevice_st *): the handle pynvml got from nvmlDeviceGetHandleByIndex."""

    @classmethod
    def from_param(cls, obj: Any) -> Any:
        if isinstance(obj, (ctypes._Pointer, c_void_p)):
            return obj
        raise TypeError(f"nvmlDevice_t expected, got {type(obj).__name__}")


UINT_P = out("unsigned int", 4)
INT_P = out("int", 4)
CHAR_P = out("char", 1)
ULONG_P = out("unsigned long", 8)
PCI_P = out("nvmlPciInfo_t", sizeof(PciInfo))
FIELD_P = out("nvmlFieldValue_t", sizeof(FieldValue))
FABRIC_P = out("nvmlGpuFabricInfo_t", sizeof(FabricInfo))
FABRIC_V_P = out("nvmlGpuFabricInfoV_t", 8)  # versioned: its size is checked through `version`
CALLEE = {c_uint: c_uint, c_int: c_int}  # what the C side receives; pointers: c_void_p


def _uuid_bytes(text: Any) -> bytes:
    digits = text.replace("-", "") if isinstance(text, str) else ""
    return bytes.fromhex(digits) if len(digits) == 32 else bytes(16)


def _mask_words(ids: list[int], words: int) -> list[int]:
    out_words = [0] * words
    for i in ids:
        if i // 64 < words:
            out_words[i // 64] |= 1 << (i % 64)
    return out_words


def _cpu_ids(text: str) -> list[int]:
    ids: list[int] = []
    for part in text.split(",") if text else ():
        lo, _, hi = part.partition("-")
        ids.extend(range(int(lo), int(hi or lo) + 1))
    return ids


def raw_bus_id(normalised: str) -> str:
    """"0000:18:00.0" -> NVML's "00000000:18:00.0"."""
    dom, bus, rest = normalised.split(":")
    dev, fn = rest.split(".")
    return f"{int(dom, 16):08X}:{int(bus, 16):02X}:{int(dev, 16):02X}.{int(fn, 16)}"


class _Library:
    """What CDLL("libnvidia-ml.so.1") is to pynvml: its symbols as attributes, AttributeError for others."""

    def __init__(self, functions: dict[str, Any], owner: Any):
        self._functions = functions
        self._owner = owner  # keeps the callbacks the functions jump to alive

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._functions:
            raise AttributeError(f"libnvidia-ml.so.1: undefined symbol: {name}")
        return self._functions[name]


class FakeLibNvml:
    """The library as a recorded probe's node would answer (see the module docstring)."""

    FIELD_NAMES = {84: "L0", 85: "L1", 86: "L2", 87: "L3", 88: "L4", 89: "L5", 132: "L6", 133: "L7", 134: "L8",
                   135: "L9", 136: "L10", 137: "L11"}
    GET_SPEED = 164  # NVML_FI_DEV_NVLINK_GET_SPEED
    P2P_CAPS = {0: "read", 1: "write", 2: "nvlink", 3: "atomics"}
    P2P_STATUS = {"OK": 0, "CNS": 1, "GNS": 2, "TNS": 3, "DR": 4, "NS": 5, "U": 6}
    REMOTE = {"gpu": 0, "ibmnpu": 1, "switch": 2, "unknown": 0xFF}
    FABRIC_STATES = {"Not Supported": 0, "Not Started": 1, "In Progress": 2, "Completed": 3}
    SUMMARIES = {"Not Supported": 0, "Healthy": 1, "Unhealthy": 2, "Limited Capacity": 3}

    def __init__(self, probe: dict, *, init_error: str | None = None, count_error: str | None = None,
                 lost: tuple[int, ...] = (), missing: tuple[str, ...] = (), fabric_versions: tuple[int, ...] = (2, 3),
                 crash_at: str | None = None, hang_at: str | None = None):
        self.probe = probe
        self.gpus: list[dict] = list(probe.get("gpus") or [])
        self.pairs = {(p["a"], p["b"]): p for p in probe.get("pairs") or []}
        self.unsupported: dict[str, str] = dict(probe.get("unsupported") or {})
        self.init_error, self.count_error = init_error, count_error
        if probe.get("ok") is False and probe.get("error_name") in CODES:  # a recorded failure replays as one
            failed = str(probe.get("error") or "")
            if failed.startswith("nvmlInit"):
                self.init_error = self.init_error or probe["error_name"]
            elif failed.startswith("nvmlDeviceGetCount"):
                self.count_error = self.count_error or probe["error_name"]
        self.lost = set(lost) | {g["index"] for g in self.gpus if g.get("lost") is True}
        self.missing = set(missing)
        self.fabric_versions = fabric_versions
        self.crash_at, self.hang_at = crash_at, hang_at
        self.calls: list[str] = []
        self.initialised = 0
        self._handles = (c_char * (16 * max(len(self.gpus), 1)))()  # real memory, never read
        self._base = ctypes.addressof(self._handles)
        self._strings: dict[int, Any] = {}
        self._keep: list[Any] = []
        self.functions: dict[str, Any] = {}
        for name, argtypes, impl in self._table():
            if name not in self.missing:
                self.functions[name] = self._export(argtypes, impl)
        self.lib = _Library(self.functions, self)

    def install(self, monkeypatch: Any, pynvml: Any = None) -> Any:
        """Make the real pynvml use this library (restored when the test ends); returns pynvml."""
        if pynvml is None:
            import pynvml
        monkeypatch.setattr(pynvml, "nvmlLib", self.lib)
        monkeypatch.setattr(pynvml, "_nvmlGetFunctionPointer_cache", {})
        monkeypatch.setattr(pynvml.NVMLError, "_errcode_to_string", dict(pynvml.NVMLError._errcode_to_string))
        return pynvml

    def install_for_good(self, pynvml: Any) -> None:
        """The same without undo, in a child process that exits after the probe."""
        pynvml.nvmlLib = self.lib
        pynvml._nvmlGetFunctionPointer_cache.clear()

    def _export(self, argtypes: tuple, impl: Callable[..., int]) -> Any:
        callee = CFUNCTYPE(c_void_p if impl.__name__ == "nvmlErrorString" else c_int,
                           *(CALLEE.get(t, c_void_p) for t in argtypes))(impl)
        caller = CFUNCTYPE(c_int, *argtypes)(ctypes.cast(callee, c_void_p).value)
        self._keep.append(callee)
        return caller

    # -- the C functions ----------------------------------------------------------------------------
    def _table(self) -> list[tuple[str, tuple, Callable[..., int]]]:
        D = Device
        return [
            ("nvmlInitWithFlags", (c_uint,), self.nvmlInitWithFlags),
            ("nvmlShutdown", (), self.nvmlShutdown),
            ("nvmlErrorString", (c_int,), self.nvmlErrorString),
            ("nvmlSystemGetDriverVersion", (CHAR_P, c_uint), self.text_fn("nvmlSystemGetDriverVersion", "driver_version")),
            ("nvmlSystemGetNVMLVersion", (CHAR_P, c_uint), self.text_fn("nvmlSystemGetNVMLVersion", "nvml_version")),
            ("nvmlSystemGetCudaDriverVersion", (INT_P,), self.nvmlSystemGetCudaDriverVersion),
            ("nvmlDeviceGetCount_v2", (UINT_P,), self.nvmlDeviceGetCount_v2),
            ("nvmlDeviceGetHandleByIndex_v2", (c_uint, out("nvmlDevice_t", 8)), self.nvmlDeviceGetHandleByIndex_v2),
            ("nvmlDeviceGetName", (D, CHAR_P, c_uint), self.gpu_text("nvmlDeviceGetName", "name")),
            ("nvmlDeviceGetUUID", (D, CHAR_P, c_uint), self.gpu_text("nvmlDeviceGetUUID", "uuid")),
            ("nvmlDeviceGetSerial", (D, CHAR_P, c_uint), self.gpu_text("nvmlDeviceGetSerial", "serial")),
            ("nvmlDeviceGetPciInfo_v3", (D, PCI_P), self.nvmlDeviceGetPciInfo_v3),
            ("nvmlDeviceGetMemoryAffinity", (D, c_uint, ULONG_P, c_uint), self.nvmlDeviceGetMemoryAffinity),
            ("nvmlDeviceGetCpuAffinity", (D, c_uint, ULONG_P), self.nvmlDeviceGetCpuAffinity),
            ("nvmlDeviceGetNumaNodeId", (D, UINT_P), self.gpu_uint("nvmlDeviceGetNumaNodeId", ("gpu_numa_id",))),
            ("nvmlDeviceGetCurrPcieLinkGeneration", (D, UINT_P),
             self.gpu_uint("nvmlDeviceGetCurrPcieLinkGeneration", ("pcie", "current_gen"))),
            ("nvmlDeviceGetMaxPcieLinkGeneration", (D, UINT_P),
             self.gpu_uint("nvmlDeviceGetMaxPcieLinkGeneration", ("pcie", "max_gen"))),
            ("nvmlDeviceGetCurrPcieLinkWidth", (D, UINT_P),
             self.gpu_uint("nvmlDeviceGetCurrPcieLinkWidth", ("pcie", "current_width"))),
            ("nvmlDeviceGetMaxPcieLinkWidth", (D, UINT_P),
             self.gpu_uint("nvmlDeviceGetMaxPcieLinkWidth", ("pcie", "max_width"))),
            ("nvmlDeviceGetNvLinkState", (D, c_uint, UINT_P), self.nvmlDeviceGetNvLinkState),
            ("nvmlDeviceGetNvLinkVersion", (D, c_uint, UINT_P), self.nvmlDeviceGetNvLinkVersion),
            ("nvmlDeviceGetNvLinkRemotePciInfo_v2", (D, c_uint, PCI_P), self.nvmlDeviceGetNvLinkRemotePciInfo_v2),
            ("nvmlDeviceGetNvLinkRemoteDeviceType", (D, c_uint, UINT_P), self.nvmlDeviceGetNvLinkRemoteDeviceType),
            ("nvmlDeviceGetFieldValues", (D, c_int, FIELD_P), self.nvmlDeviceGetFieldValues),
            ("nvmlDeviceGetTopologyCommonAncestor", (D, D, UINT_P), self.nvmlDeviceGetTopologyCommonAncestor),
            ("nvmlDeviceGetP2PStatus", (D, D, c_uint, UINT_P), self.nvmlDeviceGetP2PStatus),
            ("nvmlDeviceGetGpuFabricInfo", (D, FABRIC_P), self.nvmlDeviceGetGpuFabricInfo),
            ("nvmlDeviceGetGpuFabricInfoV", (D, FABRIC_V_P), self.nvmlDeviceGetGpuFabricInfoV),
        ]

    # -- replay helpers -----------------------------------------------------------------------------
    def _enter(self, key: str, gpus: tuple[int, ...] = ()) -> int:
        """Log the call; SUCCESS, or the code the recording (or a lost GPU, or no nvmlInit) gives."""
        self.calls.append(key)
        if key == self.crash_at:
            os.kill(os.getpid(), signal.SIGSEGV)
        if key == self.hang_at:
            time.sleep(3600)
        if not self.initialised:
            return UNINITIALIZED
        if any(g in self.lost for g in gpus):
            return GPU_IS_LOST
        reason = self.unsupported.get(key)
        if reason is not None:
            name = reason.split(":", 1)[0]
            return CODES.get(name, int(name[11:]) if name[11:].isdigit() else NOT_SUPPORTED)
        return SUCCESS

    def _gpu(self, handle: int | None) -> int | None:
        offset = (handle or 0) - self._base
        return offset // 16 if 0 <= offset < 16 * len(self.gpus) and offset % 16 == 0 else None

    def _put(self, addr: int, ctype: Any, value: Any) -> int:
        if value is None or value == NA:
            return NOT_SUPPORTED
        ctype.from_address(addr).value = value
        return SUCCESS

    def _text(self, addr: int, length: int, value: Any) -> int:
        if not isinstance(value, str) or value == NA:
            return NOT_SUPPORTED
        data = value.encode()
        if len(data) + 1 > length:
            return INSUFFICIENT_SIZE
        ctypes.memmove(addr, data + b"\0", len(data) + 1)
        return SUCCESS

    def _device_call(self, name: str, handle: int | None, extra: str = "") -> tuple[int, int | None]:
        i = self._gpu(handle)
        if i is None:
            self.calls.append(f"{name}(bad handle)")
            return INVALID_ARGUMENT, None
        return self._enter(f"{name}(gpu={i}{extra})", (i,)), i

    # -- system ----------------------------------------------------------------------------------
    def nvmlInitWithFlags(self, flags: int) -> int:
        self.calls.append("nvmlInit()")
        if self.init_error:
            return CODES[self.init_error]
        self.initialised += 1
        return SUCCESS

    def nvmlShutdown(self) -> int:
        self.calls.append("nvmlShutdown()")
        if not self.initialised:
            return UNINITIALIZED
        self.initialised -= 1
        return SUCCESS

    def nvmlErrorString(self, code: int) -> int:
        if code not in self._strings:
            self._strings[code] = ctypes.create_string_buffer(ERROR_STRINGS.get(code, b"Unknown Error"))
        return ctypes.addressof(self._strings[code])

    def text_fn(self, name: str, field: str) -> Callable[[int, int], int]:
        def fn(addr: int, length: int) -> int:
            return self._enter(f"{name}()") or self._text(addr, length, self.probe.get(field))
        return fn

    def nvmlSystemGetCudaDriverVersion(self, addr: int) -> int:
        text = self.probe.get("cuda_driver_version")
        value = None
        if isinstance(text, str) and text != NA:
            major, _, minor = text.partition(".")
            value = int(major) * 1000 + int(minor or 0) * 10
        return self._enter("nvmlSystemGetCudaDriverVersion()") or self._put(addr, c_int, value)

    def nvmlDeviceGetCount_v2(self, addr: int) -> int:
        self.calls.append("nvmlDeviceGetCount()")
        if self.count_error:
            return CODES[self.count_error]
        return self._put(addr, c_uint, len(self.gpus)) if self.initialised else UNINITIALIZED

    def nvmlDeviceGetHandleByIndex_v2(self, index: int, addr: int) -> int:
        if index >= len(self.gpus):
            return INVALID_ARGUMENT
        return self._enter(f"nvmlDeviceGetHandleByIndex(gpu={index})", (index,)) or \
            self._put(addr, c_void_p, self._base + 16 * index)

    # -- per GPU ---------------------------------------------------------------------------------
    def gpu_text(self, name: str, field: str) -> Callable[[int, int, int], int]:
        def fn(handle: int, addr: int, length: int) -> int:
            ret, i = self._device_call(name, handle)
            return ret or self._text(addr, length, self.gpus[i].get(field))
        return fn

    def gpu_uint(self, name: str, path: tuple[str, ...]) -> Callable[[int, int], int]:
        def fn(handle: int, addr: int) -> int:
            ret, i = self._device_call(name, handle)
            if ret:
                return ret
            value: Any = self.gpus[i]
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            return self._put(addr, c_uint, value)
        return fn

    def _pci(self, addr: int, bus_id: Any) -> int:
        if not isinstance(bus_id, str) or bus_id == NA:
            return NOT_SUPPORTED
        raw = bus_id if len(bus_id.split(":")[0]) == 8 else raw_bus_id(bus_id)
        pci = PciInfo.from_address(addr)
        pci.busId, pci.busIdLegacy = raw.encode(), raw[4:].encode()
        pci.domain, pci.bus = int(raw.split(":")[0], 16), int(raw.split(":")[1], 16)
        pci.device = int(raw.split(":")[2].split(".")[0], 16)
        return SUCCESS

    def nvmlDeviceGetPciInfo_v3(self, handle: int, addr: int) -> int:
        ret, i = self._device_call("nvmlDeviceGetPciInfo", handle)
        return ret or self._pci(addr, self.gpus[i].get("pci_bus_id_raw"))

    def _words(self, addr: int, words: list[int]) -> int:
        for k, word in enumerate(words):
            c_ulong.from_address(addr + 8 * k).value = word
        return SUCCESS

    def nvmlDeviceGetMemoryAffinity(self, handle: int, size: int, addr: int, scope: int) -> int:
        ret, i = self._device_call("nvmlDeviceGetMemoryAffinity", handle)
        nodes = self.gpus[i].get("numa_affinity") if not ret else None
        return ret or (self._words(addr, _mask_words(nodes, size)) if isinstance(nodes, list) else NOT_SUPPORTED)

    def nvmlDeviceGetCpuAffinity(self, handle: int, size: int, addr: int) -> int:
        ret, i = self._device_call("nvmlDeviceGetCpuAffinity", handle)
        cpus = self.gpus[i].get("cpu_affinity") if not ret else None
        return ret or (self._words(addr, _mask_words(_cpu_ids(cpus), size)) if isinstance(cpus, str) and cpus != NA
                       else NOT_SUPPORTED)

    # -- NVLink ----------------------------------------------------------------------------------
    def _link(self, i: int, link: int) -> dict | None:
        links = self.gpus[i].get("nvlinks") or []
        return links[link] if 0 <= link < len(links) else None

    def nvmlDeviceGetNvLinkState(self, handle: int, link: int, addr: int) -> int:
        ret, i = self._device_call("nvmlDeviceGetNvLinkState", handle, f", link={link}")
        if ret:
            return ret
        entry = self._link(i, link)
        if entry is None:  # past the GPU's last link: what ended the recorded walk
            return CODES.get(self.gpus[i].get("nvlink_end_error") or "", INVALID_ARGUMENT)
        return self._put(addr, c_uint, 1 if entry.get("active") is True else 0)

    def _link_value(self, name: str, handle: int, link: int) -> tuple[int, dict]:
        ret, i = self._device_call(name, handle, f", link={link}")
        entry = self._link(i, link) if not ret else None
        return (ret or (INVALID_ARGUMENT if entry is None else SUCCESS)), entry or {}

    def nvmlDeviceGetNvLinkVersion(self, handle: int, link: int, addr: int) -> int:
        ret, entry = self._link_value("nvmlDeviceGetNvLinkVersion", handle, link)
        return ret or self._put(addr, c_uint, entry.get("version"))

    def nvmlDeviceGetNvLinkRemotePciInfo_v2(self, handle: int, link: int, addr: int) -> int:
        ret, entry = self._link_value("nvmlDeviceGetNvLinkRemotePciInfo", handle, link)
        return ret or self._pci(addr, entry.get("remote_pci_bus_id"))

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, handle: int, link: int, addr: int) -> int:
        ret, entry = self._link_value("nvmlDeviceGetNvLinkRemoteDeviceType", handle, link)
        return ret or self._put(addr, c_uint, self.REMOTE.get(entry.get("remote_device_type")))

    def nvmlDeviceGetFieldValues(self, handle: int, count: int, addr: int) -> int:
        i = self._gpu(handle)
        if i is None or count < 0:
            return INVALID_ARGUMENT
        for k in range(count):
            fv = FieldValue.from_address(addr + k * sizeof(FieldValue))
            legacy = self.FIELD_NAMES.get(fv.fieldId)
            link = int(legacy[1:]) if legacy else fv.scopeId
            name = f"NVML_FI_DEV_NVLINK_SPEED_MBPS_{legacy}" if legacy else (
                "NVML_FI_DEV_NVLINK_GET_SPEED" if fv.fieldId == self.GET_SPEED else f"field {fv.fieldId}")
            ret = self._enter(f"nvmlDeviceGetFieldValues(gpu={i}, link={link}, field={name})", (i,))
            if ret == GPU_IS_LOST:
                return ret
            speed = (self._link(i, link) or {}).get("speed_gbps")
            if not ret and not isinstance(speed, (int, float)):
                ret = NOT_SUPPORTED
            fv.nvmlReturn, fv.valueType = ret, 1  # NVML_VALUE_TYPE_UNSIGNED_INT
            fv.value.uiVal = 0 if ret else round(speed * 1000)
        return SUCCESS

    # -- pairs -----------------------------------------------------------------------------------
    def _pair_call(self, name: str, h1: int, h2: int, extra: str = "") -> tuple[int, dict]:
        a, b = self._gpu(h1), self._gpu(h2)
        if a is None or b is None:
            return INVALID_ARGUMENT, {}
        return self._enter(f"{name}(a={a}, b={b}{extra})", (a, b)), self.pairs.get((a, b)) or {}

    def nvmlDeviceGetTopologyCommonAncestor(self, h1: int, h2: int, addr: int) -> int:
        ret, pair = self._pair_call("nvmlDeviceGetTopologyCommonAncestor", h1, h2)
        return ret or self._put(addr, c_uint, pair.get("topology_level"))

    def nvmlDeviceGetP2PStatus(self, h1: int, h2: int, caps: int, addr: int) -> int:
        cap = self.P2P_CAPS.get(caps)
        ret, pair = self._pair_call("nvmlDeviceGetP2PStatus", h1, h2,
                                    f", caps=NVML_P2P_CAPS_INDEX_{(cap or str(caps)).upper()}")
        status = (pair.get("p2p") or {}).get(cap)
        return ret or self._put(addr, c_uint, self.P2P_STATUS.get(status) if isinstance(status, str) else None)

    # -- fabric ----------------------------------------------------------------------------------
    def _fill_fabric(self, info: Any, fabric: Any) -> int:
        if not isinstance(fabric, dict):
            return NOT_SUPPORTED
        info.state = self.FABRIC_STATES.get(fabric.get("state"), 0)
        status = fabric.get("status")
        info.status = 0 if status == "Success" else CODES.get(status, NOT_SUPPORTED)
        info.cliqueId = fabric.get("clique_id") if isinstance(fabric.get("clique_id"), int) else 0
        ctypes.memmove(info.clusterUuid, _uuid_bytes(fabric.get("cluster_uuid")), 16)
        if hasattr(info, "healthMask") and isinstance(fabric.get("health_mask"), int):
            info.healthMask = fabric["health_mask"]
        if hasattr(info, "healthSummary"):
            info.healthSummary = self.SUMMARIES.get(fabric.get("health_summary"), 0)
        return SUCCESS

    def nvmlDeviceGetGpuFabricInfo(self, handle: int, addr: int) -> int:
        ret, i = self._device_call("nvmlDeviceGetGpuFabricInfo", handle)
        return ret or self._fill_fabric(FabricInfo.from_address(addr), self.gpus[i].get("fabric"))

    def nvmlDeviceGetGpuFabricInfoV(self, handle: int, addr: int) -> int:
        ret, i = self._device_call("nvmlDeviceGetGpuFabricInfoV", handle)
        if ret:
            return ret
        version = c_uint.from_address(addr).value
        struct = next((FABRIC_STRUCTS[v] for v in self.fabric_versions
                       if struct_version(FABRIC_STRUCTS[v], v) == version), None)
        if struct is None:
            return ARGUMENT_VERSION_MISMATCH
        return self._fill_fabric(struct.from_address(addr), self.gpus[i].get("fabric"))
