"""The NVML probe: what the driver itself says about the GPUs, their NVLinks and how pairs connect.

    probe()            -> dict (JSON-serialisable; never raises)
    python -m topodiag.live.nvml_probe      prints it (run it in a subprocess with a timeout:
                                               NVML can block for minutes on a wedged GPU)

pynvml (nvidia-ml-py) is imported lazily, inside probe(), so importing this module costs nothing
in a Slurm prolog. Tests run the real pynvml over a fake libnvidia-ml whose C functions are typed
as nvml.h declares them (tests/fakes/fake_libnvml.py), replaying recorded probes; older tests pass
a replaying stand-in module instead (tests/fakes/fake_pynvml.py), which cannot see a call that is
wrong for the real library. A call NVML refuses (NotSupported, FunctionNotFound, any NVMLError, or a function this
pynvml lacks) gives the value "n/a" and an `unsupported` entry; a GPU that reports
NVML_ERROR_GPU_IS_LOST is marked `lost` and not asked anything more.

Probe JSON, schema_version 1 (key order as written):
  probe "nvml", schema_version 1,
  ok          false when NVML could not be used at all (pynvml missing, nvmlInit or
              nvmlDeviceGetCount failed, or the probe's process died); gpus and pairs are then empty
  error       one line for a person (null when ok); error_name the NVML_ERROR_* name (or null)
  driver_version "570.133.20", cuda_driver_version "12.8", nvml_version "12.570.133.20"
  gpus [{index, name, uuid, serial,
         pci_bus_id      "0000:18:00.0" (domain 4 hex digits, lowercase), pci_bus_id_raw as NVML
                         gives it ("00000000:18:00.0"),
         numa_node       the CPU NUMA node the GPU is attached to, when its memory affinity names
                         exactly one (what `nvidia-smi topo -m` prints as NUMA Affinity), else "n/a"
         numa_affinity   [int]: every NUMA node of that affinity (nvmlDeviceGetMemoryAffinity)
         cpu_affinity    "0-47,96-143" (nvmlDeviceGetCpuAffinity, as topo -m prints it)
         gpu_numa_id     the GPU's own NUMA node (nvmlDeviceGetNumaNodeId): only where GPU memory
                         is a NUMA node (Grace Hopper/Blackwell); "n/a" elsewhere (topo -m: N/A)
         lost            true when NVML said NVML_ERROR_GPU_IS_LOST (fields not read stay "n/a")
         pcie {current_gen, max_gen, current_width, max_width},
         nvlinks [{link, active (bool), version (NVML's nvmlNvlinkVersion_t code: 2 = 2.0,
                   5 = 3.1, 6 = 4.0, 7 = 5.0; not the marketing generation), remote_pci_bus_id,
                   remote_device_type ("gpu" | "switch" | "ibmnpu" | "unknown"), speed_gbps (GB/s
                   one way, as nvidia-smi nvlink -s prints it)}]: links 0.. until NVML refuses a
                   link index; the remote fields and speed are null (not asked) on inactive links
         nvlink_end_error  the NVML_ERROR_* that ended the link walk (INVALID_ARGUMENT past the
                   GPU's last link, NOT_SUPPORTED on a GPU without NVLink), null when all
                   NVML_NVLINK_MAX_LINKS were read or the GPU was not reached
         fabric    (only when this pynvml has nvmlDeviceGetGpuFabricInfoV or
                   nvmlDeviceGetGpuFabricInfo; absent in probes of older pynvml, which readers
                   take as "not asked") {state ("Not Supported" | "Not Started" | "In Progress" |
                   "Completed"), status ("Success" or the NVML_ERROR_* name), clique_id, cluster_uuid
                   ("dc6e40c4-d722-..."), health_mask (int or null), health_summary ("Healthy" |
                   "Unhealthy" | "Limited Capacity" | "Not Supported" | null)}, or "n/a" when NVML
                   refused both calls (older drivers: FUNCTION_NOT_FOUND, NOT_SUPPORTED)}]
  pairs [{a, b (GPU indices, a < b), topology ("INTERNAL" | "SINGLE" | "MULTIPLE" | "HOSTBRIDGE" |
          "NODE" | "SYSTEM": the PCIe common ancestor, NVLink not considered), topology_level (NVML's
          number: 0, 10, 20, 30, 40, 50), p2p {read, write, nvlink, atomics}: the codes
          `nvidia-smi topo -p2p` prints: OK, CNS, GNS, TNS, NS, DR, U}]
  unsupported {"<call>(<args>)": "<NVML_ERROR_NAME>: <NVML's text>"}, e.g.
          {"nvmlDeviceGetSerial(gpu=0)": "NVML_ERROR_NOT_SUPPORTED: Not Supported"}

"n/a": NVML gave no value, either refusing the call (its `unsupported` entry says how: an NVML
error, another exception, or MISSING_FUNCTION) or because the GPU was lost or had no handle (then no
entry: the call was not made). null: not asked (an inactive link's far end) or, when ok is false,
not reached. The `python -m` form prints `dumps(probe())` and exits 0 (ok false is data too).

Live collection runs that form in a child process (`--progress`: each NVML call is announced on
stderr before it is made) under the source's timeout (topodiag/live/child.py). When the child dies
by a signal, is stopped at the timeout, or exits without its JSON, the parent writes the probe
itself: ok false, every field as when nvmlInit failed (error_name null), an `error` naming what
happened and the last NVML call the child began, and one more key, still schema_version 1 (probes
without it, as every probe the child printed itself, read as died null):
  died        {how ("signal" | "timeout" | "exit" | "output"), signal ("SIGSEGV" or null), rc (the
              exit status, negative for a signal, or null), last_call ("nvmlDeviceGetGpuFabricInfoV(gpu=0)",
              null when none was begun), seconds}, e.g. error "NVML probe died with signal 11
              (SIGSEGV) in nvmlDeviceGetGpuFabricInfoV(gpu=0)"
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~10 ms to import, and annotations here are never evaluated
    from typing import Any

SCHEMA_VERSION = 1
NA = "n/a"
PYNVML_MISSING = "pynvml not installed (pip install nvidia-ml-py)"
MISSING_FUNCTION = "not in this pynvml (nvidia-ml-py too old for it)"

# NVML topology levels (nvmlGpuTopologyLevel_t) by number.
TOPOLOGY_LEVELS = {0: "INTERNAL", 10: "SINGLE", 20: "MULTIPLE", 30: "HOSTBRIDGE", 40: "NODE", 50: "SYSTEM"}

# nvmlGpuP2PStatus_t -> the code `nvidia-smi topo -p2p` prints. NVML_P2P_STATUS_OK 0,
# CHIPSET_NOT_SUPPORTED 1, GPU_NOT_SUPPORTED 2, IOH_TOPOLOGY_NOT_SUPPORTED 3, DISABLED_BY_REGKEY 4,
# NOT_SUPPORTED 5, UNKNOWN 6 (and anything newer: U).
P2P_CODES = {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DR", 5: "NS", 6: "U"}
P2P_CAPS = ("read", "write", "nvlink", "atomics")  # NVML_P2P_CAPS_INDEX_<NAME.upper()>

# nvmlNvLinkDeviceType_t: NVML_NVLINK_DEVICE_TYPE_GPU 0, IBMNPU 1, SWITCH 2, UNKNOWN 0xFF.
REMOTE_DEVICE_TYPES = {0: "gpu", 1: "ibmnpu", 2: "switch", 0xFF: "unknown"}

# nvmlInit failures people meet, and what they mean.
INIT_REASONS = {
    "NVML_ERROR_LIBRARY_NOT_FOUND": "libnvidia-ml.so.1 is not there: no NVIDIA driver on this host, or it is not "
                                    "mounted into this container",
    "NVML_ERROR_DRIVER_NOT_LOADED": "the NVIDIA kernel module is not loaded (lsmod | grep nvidia; dmesg)",
    "NVML_ERROR_NO_PERMISSION": "this user may not open /dev/nvidia* (device permissions or cgroup)",
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": "libnvidia-ml and the loaded kernel module are different driver "
                                          "versions (driver upgraded without a reboot or module reload)",
    "NVML_ERROR_FUNCTION_NOT_FOUND": "libnvidia-ml is older than this pynvml expects",
    "NVML_ERROR_GPU_IS_LOST": "a GPU has fallen off the bus (dmesg: Xid 79)",
    "NVML_ERROR_IRQ_ISSUE": "the kernel module reports an interrupt problem (dmesg)",
    "NVML_ERROR_INSUFFICIENT_POWER": "a GPU's external power cable is not connected properly",
    "NVML_ERROR_TIMEOUT": "the driver did not answer in time",
}

# Bitmask sizes for the affinity calls: 64 x 64 CPUs, 4 x 64 NUMA nodes.
CPU_SET_WORDS = 64
NODE_SET_WORDS = 4
# Legacy per-link speed fields (NVML_FI_DEV_NVLINK_SPEED_MBPS_L0..L11), for drivers without GET_SPEED.
LEGACY_SPEED_LINKS = 12


# The fabric calls, newest first: (pynvml function, the pynvml structure it is handed by pointer).
# nvidia-ml-py 12.575 defines c_nvmlGpuFabricInfoV_t (v2) and c_nvmlGpuFabricInfo_t; 13.x adds _v3_t.
FABRIC_TRIES = (("nvmlDeviceGetGpuFabricInfoV", "c_nvmlGpuFabricInfo_v3_t"),
                ("nvmlDeviceGetGpuFabricInfoV", "c_nvmlGpuFabricInfoV_t"),
                ("nvmlDeviceGetGpuFabricInfo", "c_nvmlGpuFabricInfo_t"))


class _GpuLost(Exception):
    """Raised inside the per-GPU walk when NVML says NVML_ERROR_GPU_IS_LOST."""


def normalise_bus_id(raw: str) -> str:
    """NVML's "00000000:18:00.0" -> "0000:18:00.0": domain 4 hex digits (more if it needs them),
    lowercase. Text that is not a bus id comes back lowercased and stripped."""
    text = raw.strip().lower()
    parts = text.split(":")
    if len(parts) == 3 and "." in parts[2]:
        dev, _, fn = parts[2].partition(".")
        try:
            return f"{int(parts[0], 16):04x}:{int(parts[1], 16):02x}:{int(dev, 16):02x}.{int(fn, 16):x}"
        except ValueError:
            return text
    if len(parts) == 2 and "." in parts[1]:  # no domain: domain 0
        return normalise_bus_id("0:" + text)
    return text


def cpu_list(words: Any, bits: int = 64) -> str:
    """A bitmask (a sequence of `bits`-wide integers, lowest CPUs first) -> "0-47,96-143"."""
    ids = mask_ids(words, bits)
    ranges: list[str] = []
    start = prev = None
    for i in ids + [None]:
        if start is not None and (i is None or i != prev + 1):
            ranges.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return ",".join(ranges)


def mask_ids(words: Any, bits: int = 64) -> list[int]:
    """The set bits of a multi-word bitmask, as ids."""
    out: list[int] = []
    for w, word in enumerate(list(words)):
        word = int(word)
        b = 0
        while word:
            if word & 1:
                out.append(w * bits + b)
            word >>= 1
            b += 1
    return out


def _text(value: Any) -> Any:
    """bytes from older pynvml builds (or a ctypes char array) -> str."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return value


def _quiet(call: str) -> None:
    pass


class _Probe:
    def __init__(self, nvml: Any, say: Any = _quiet):
        self.nvml = nvml
        self.say = say  # told each NVML call before it is made (the child's progress: live/child.py)
        self.unsupported: dict[str, str] = {}
        self.error_type = getattr(nvml, "NVMLError", None)
        if not (isinstance(self.error_type, type) and issubclass(self.error_type, BaseException)):
            self.error_type = None
        self.error_names = {}
        for name in dir(nvml):
            if name.startswith("NVML_ERROR_"):
                value = getattr(nvml, name, None)
                if isinstance(value, int):
                    self.error_names.setdefault(value, name)
        self.lost_code = getattr(nvml, "NVML_ERROR_GPU_IS_LOST", 15)

    # -- calls --------------------------------------------------------------------------------
    def error_name(self, code: Any) -> str:
        return self.error_names.get(code, f"NVML_ERROR_{code}")

    def error_text(self, exc: BaseException) -> str:
        try:
            return str(exc).replace("\n", " ").strip()
        except Exception:  # pynvml's __str__ asks the library, which may be gone
            return f"NVML error {getattr(exc, 'value', '?')}"

    def reason(self, exc: BaseException) -> tuple[str, bool]:
        """(the `unsupported` text for an exception, whether it says the GPU is lost)."""
        if self.error_type is not None and isinstance(exc, self.error_type):
            code = getattr(exc, "value", None)
            return f"{self.error_name(code)}: {self.error_text(exc)}", code == self.lost_code
        return f"{type(exc).__name__}: {self.error_text(exc)}", False

    def code_reason(self, code: Any) -> str:
        """The `unsupported` text for an NVML return code (field values report per-field codes)."""
        text = ""
        if self.error_type is not None:
            try:
                text = self.error_text(self.error_type(code))
            except Exception:
                text = ""
        return f"{self.error_name(code)}: {text or f'NVML error {code}'}"

    def call(self, name: str, args: tuple, key_args: str, *, gpu_walk: bool = False) -> Any:
        """nvml.<name>(*args), or "n/a" with an `unsupported` entry. In a GPU's walk, a lost GPU
        raises _GpuLost (after the entry is written)."""
        key = f"{name}({key_args})"
        fn = getattr(self.nvml, name, None)
        if not callable(fn):
            self.unsupported[key] = MISSING_FUNCTION
            return NA
        self.say(key)
        try:
            return fn(*args)
        except Exception as exc:
            text, lost = self.reason(exc)
            self.unsupported[key] = text
            if lost and gpu_walk:
                raise _GpuLost() from None
            return NA

    def const(self, name: str, default: Any = None) -> Any:
        value = getattr(self.nvml, name, default)
        if isinstance(value, tuple) and len(value) == 1:  # pynvml 13: NVML_P2P_CAPS_INDEX_READ = 0,
            value = value[0]
        return value

    # -- the probe ----------------------------------------------------------------------------
    def run(self) -> dict:
        out = _empty()
        init = getattr(self.nvml, "nvmlInit", None)
        try:
            if not callable(init):
                raise AttributeError("this pynvml has no nvmlInit")
            self.say("nvmlInit()")
            init()
        except Exception as exc:
            return _failed(out, "nvmlInit", *self.failure(exc))
        try:
            return self.collect(out)
        finally:
            try:
                self.say("nvmlShutdown()")
                self.nvml.nvmlShutdown()
            except Exception:
                pass

    def failure(self, exc: BaseException) -> tuple[str | None, str]:
        """(error_name, one line) for an exception that stops the probe."""
        if self.error_type is not None and isinstance(exc, self.error_type):
            name = self.error_name(getattr(exc, "value", None))
            why = INIT_REASONS.get(name)
            return name, f"{name} ({self.error_text(exc)})" + (f": {why}" if why else "")
        return None, f"{type(exc).__name__}: {self.error_text(exc)}"

    def collect(self, out: dict) -> dict:
        out["unsupported"] = self.unsupported
        out["driver_version"] = _text(self.call("nvmlSystemGetDriverVersion", (), ""))
        cuda = self.call("nvmlSystemGetCudaDriverVersion", (), "")
        out["cuda_driver_version"] = f"{cuda // 1000}.{cuda % 1000 // 10}" if isinstance(cuda, int) else NA
        out["nvml_version"] = _text(self.call("nvmlSystemGetNVMLVersion", (), ""))
        try:
            self.say("nvmlDeviceGetCount()")
            count = self.nvml.nvmlDeviceGetCount()
            count = int(count)
        except Exception as exc:
            return _failed(out, "nvmlDeviceGetCount", *self.failure(exc))
        handles: list[Any] = []
        for i in range(count):
            gpu, handle = self.gpu(i)
            out["gpus"].append(gpu)
            handles.append(handle)
        for a in range(count):
            for b in range(a + 1, count):
                out["pairs"].append(self.pair(a, b, handles[a], handles[b]))
        out["ok"] = True
        return out

    def gpu(self, i: int) -> tuple[dict, Any]:
        g: dict[str, Any] = {
            "index": i, "name": NA, "uuid": NA, "serial": NA, "pci_bus_id": NA, "pci_bus_id_raw": NA,
            "numa_node": NA, "numa_affinity": NA, "cpu_affinity": NA, "gpu_numa_id": NA, "lost": False,
            "pcie": {"current_gen": NA, "max_gen": NA, "current_width": NA, "max_width": NA},
            "nvlinks": [], "nvlink_end_error": None,
        }
        handle: Any = NA
        at = f"gpu={i}"
        try:
            handle = self.call("nvmlDeviceGetHandleByIndex", (i,), at, gpu_walk=True)
            if handle is NA:
                return g, NA
            for field, fn in (("name", "nvmlDeviceGetName"), ("uuid", "nvmlDeviceGetUUID"),
                              ("serial", "nvmlDeviceGetSerial")):
                g[field] = _text(self.call(fn, (handle,), at, gpu_walk=True))
            pci = self.call("nvmlDeviceGetPciInfo", (handle,), at, gpu_walk=True)
            if pci is not NA:
                raw = _text(getattr(pci, "busId", b"") or getattr(pci, "busIdLegacy", b""))
                if isinstance(raw, str) and raw:
                    g["pci_bus_id_raw"] = raw
                    g["pci_bus_id"] = normalise_bus_id(raw)
            scope = self.const("NVML_AFFINITY_SCOPE_NODE", 0)
            mem = self.call("nvmlDeviceGetMemoryAffinity", (handle, NODE_SET_WORDS, scope), at, gpu_walk=True)
            if mem is not NA:
                nodes = mask_ids(mem)
                g["numa_affinity"] = nodes
                g["numa_node"] = nodes[0] if len(nodes) == 1 else NA
            cpus = self.call("nvmlDeviceGetCpuAffinity", (handle, CPU_SET_WORDS), at, gpu_walk=True)
            if cpus is not NA:
                g["cpu_affinity"] = cpu_list(cpus)
            g["gpu_numa_id"] = self.call("nvmlDeviceGetNumaNodeId", (handle,), at, gpu_walk=True)
            for field, fn in (("current_gen", "nvmlDeviceGetCurrPcieLinkGeneration"),
                              ("max_gen", "nvmlDeviceGetMaxPcieLinkGeneration"),
                              ("current_width", "nvmlDeviceGetCurrPcieLinkWidth"),
                              ("max_width", "nvmlDeviceGetMaxPcieLinkWidth")):
                g["pcie"][field] = self.call(fn, (handle,), at, gpu_walk=True)
            self.nvlinks(i, handle, g)
            fabric = self.fabric(handle, at)
            if fabric is not None:
                g["fabric"] = fabric
        except _GpuLost:
            g["lost"] = True
            return g, NA
        return g, handle

    def fabric(self, handle: Any, at: str) -> Any:
        """The GPU's NVLink fabric registration: nvmlDeviceGetGpuFabricInfoV with the newest versioned
        structure this pynvml defines (c_nvmlGpuFabricInfo_v3_t, else c_nvmlGpuFabricInfoV_t: v2; a
        driver that knows only v2 answers ARGUMENT_VERSION_MISMATCH to v3, and v2 is asked), else the
        older nvmlDeviceGetGpuFabricInfo (c_nvmlGpuFabricInfo_t). pynvml hands its argument straight
        to the C function, which takes a pointer: the structure goes by ctypes.byref (by value it is
        a SIGSEGV or garbage). None when this pynvml has neither call (the key is then left out, as
        in probes written before it); "n/a" when NVML refused them (older drivers: FUNCTION_NOT_FOUND,
        pre-Hopper GPUs: NOT_SUPPORTED). An attempt that a later one replaces leaves no entry."""
        tries = [(fn, struct) for fn, struct in FABRIC_TRIES
                 if callable(getattr(self.nvml, fn, None)) and isinstance(getattr(self.nvml, struct, None), type)]
        if not tries:
            return None
        from ctypes import byref  # noqa: PLC0415  (only where a GPU is asked: the import is not paid for otherwise)

        mismatch = self.const("NVML_ERROR_ARGUMENT_VERSION_MISMATCH", 25)
        refused: set[str] = set()
        for fn, struct in tries:
            if fn in refused:  # that function was refused outright: another structure will not help
                continue
            key = f"{fn}({at})"
            try:
                info = getattr(self.nvml, struct)()
            except Exception:
                continue
            if self.call(fn, (handle, byref(info)), at, gpu_walk=True) is not NA:
                for other, _ in tries:
                    self.unsupported.pop(f"{other}({at})", None)
                return self.fabric_facts(info)
            if not self.unsupported.get(key, "").startswith(f"{self.error_name(mismatch)}:"):
                refused.add(fn)
        return NA

    def fabric_facts(self, info: Any) -> dict:
        states = {0: "Not Supported", 1: "Not Started", 2: "In Progress", 3: "Completed"}
        summaries = {0: "Not Supported", 1: "Healthy", 2: "Unhealthy", 3: "Limited Capacity"}
        state = getattr(info, "state", None)
        status = getattr(info, "status", None)
        uuid_bytes = bytes(getattr(info, "clusterUuid", b"") or b"")[:16]
        h = uuid_bytes.hex()
        mask = getattr(info, "healthMask", None)
        summary = getattr(info, "healthSummary", None)
        return {"state": states.get(state, f"state {state}") if isinstance(state, int) else NA,
                "status": "Success" if status == 0 else self.error_name(status) if isinstance(status, int) else NA,
                "clique_id": getattr(info, "cliqueId", NA),
                "cluster_uuid": f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}" if len(h) == 32 else NA,
                "health_mask": mask if isinstance(mask, int) else None,
                "health_summary": summaries.get(summary) if isinstance(summary, int) else None}

    def nvlinks(self, i: int, handle: Any, g: dict) -> None:
        max_links = self.const("NVML_NVLINK_MAX_LINKS", 18)
        max_links = max_links if isinstance(max_links, int) and 0 < max_links <= 256 else 18
        state_fn = getattr(self.nvml, "nvmlDeviceGetNvLinkState", None)
        if not callable(state_fn):
            self.unsupported[f"nvmlDeviceGetNvLinkState(gpu={i}, link=0)"] = MISSING_FUNCTION
            return
        ending = {self.const("NVML_ERROR_NOT_SUPPORTED", 3), self.const("NVML_ERROR_INVALID_ARGUMENT", 2)}
        for link in range(max_links):
            at = f"gpu={i}, link={link}"
            try:
                self.say(f"nvmlDeviceGetNvLinkState({at})")
                state = state_fn(handle, link)
            except Exception as exc:
                text, lost = self.reason(exc)
                code = getattr(exc, "value", None) if self.error_type and isinstance(exc, self.error_type) else None
                if lost:
                    self.unsupported[f"nvmlDeviceGetNvLinkState({at})"] = text
                    raise _GpuLost() from None
                if code not in ending:  # not the end of the links: something to report
                    self.unsupported[f"nvmlDeviceGetNvLinkState({at})"] = text
                g["nvlink_end_error"] = self.error_name(code) if code is not None else text
                return
            active = bool(state)
            entry: dict[str, Any] = {"link": link, "active": active, "version": NA, "remote_pci_bus_id": None,
                                     "remote_device_type": None, "speed_gbps": None}
            entry["version"] = self.call("nvmlDeviceGetNvLinkVersion", (handle, link), at, gpu_walk=True)
            if active:
                pci = self.call("nvmlDeviceGetNvLinkRemotePciInfo", (handle, link), at, gpu_walk=True)
                entry["remote_pci_bus_id"] = NA
                if pci is not NA:
                    raw = _text(getattr(pci, "busId", b"") or getattr(pci, "busIdLegacy", b""))
                    if isinstance(raw, str) and raw:
                        entry["remote_pci_bus_id"] = normalise_bus_id(raw)
                kind = self.call("nvmlDeviceGetNvLinkRemoteDeviceType", (handle, link), at, gpu_walk=True)
                entry["remote_device_type"] = NA if kind is NA else REMOTE_DEVICE_TYPES.get(kind, "unknown")
                entry["speed_gbps"] = self.link_speed(i, handle, link)
            g["nvlinks"].append(entry)

    def field(self, i: int, handle: Any, link: int, field_name: str, scope: int) -> Any:
        """One NVML field value (an int), or "n/a" with an `unsupported` entry."""
        key = f"nvmlDeviceGetFieldValues(gpu={i}, link={link}, field={field_name})"
        fid = self.const(field_name)
        if not isinstance(fid, int):
            self.unsupported[key] = MISSING_FUNCTION
            return NA
        values = self.call("nvmlDeviceGetFieldValues", (handle, [(fid, scope)]), f"gpu={i}, link={link}, "
                           f"field={field_name}", gpu_walk=True)
        if values is NA:
            return NA
        try:
            value = values[0]
            ret = int(getattr(value, "nvmlReturn", 0))
            if ret != 0:
                self.unsupported[key] = self.code_reason(ret)
                if ret == self.lost_code:
                    raise _GpuLost()
                return NA
            vtype = int(getattr(value, "valueType", 1))
            member = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}.get(vtype,
                                                                                                              "uiVal")
            return getattr(value.value, member)
        except _GpuLost:
            raise
        except Exception as exc:
            self.unsupported[key] = self.reason(exc)[0]
            return NA

    def link_speed(self, i: int, handle: Any, link: int) -> Any:
        """Per-link speed in GB/s (NVML gives MB/s): NVML_FI_DEV_NVLINK_GET_SPEED for the link, else
        the legacy per-link field on drivers that lack it."""
        mbps = self.field(i, handle, link, "NVML_FI_DEV_NVLINK_GET_SPEED", link)
        if mbps is NA and link < LEGACY_SPEED_LINKS:
            mbps = self.field(i, handle, link, f"NVML_FI_DEV_NVLINK_SPEED_MBPS_L{link}", 0)
        if isinstance(mbps, (int, float)) and not isinstance(mbps, bool):
            return round(mbps / 1000.0, 3)
        return NA

    def pair(self, a: int, b: int, ha: Any, hb: Any) -> dict:
        p: dict[str, Any] = {"a": a, "b": b, "topology": NA, "topology_level": NA,
                             "p2p": {cap: NA for cap in P2P_CAPS}}
        if ha is NA or hb is NA:
            return p
        at = f"a={a}, b={b}"
        level = self.call("nvmlDeviceGetTopologyCommonAncestor", (ha, hb), at)
        if isinstance(level, int):
            p["topology_level"] = level
            p["topology"] = TOPOLOGY_LEVELS.get(level, "UNKNOWN")
        for cap in P2P_CAPS:
            cname = f"NVML_P2P_CAPS_INDEX_{cap.upper()}"
            index = self.const(cname)
            if not isinstance(index, int):
                self.unsupported[f"nvmlDeviceGetP2PStatus({at}, caps={cname})"] = MISSING_FUNCTION
                continue
            status = self.call("nvmlDeviceGetP2PStatus", (ha, hb, index), f"{at}, caps={cname}")
            if isinstance(status, int):
                p["p2p"][cap] = P2P_CODES.get(status, "U")
        return p


def _empty() -> dict:
    return {"probe": "nvml", "schema_version": SCHEMA_VERSION, "ok": False, "error": None, "error_name": None,
            "driver_version": None, "cuda_driver_version": None, "nvml_version": None,
            "gpus": [], "pairs": [], "unsupported": {}}


def _failed(out: dict, call: str, error_name: str | None, line: str) -> dict:
    out["ok"] = False
    out["error_name"] = error_name
    out["error"] = f"{call} failed: {line}"
    return out


def blank() -> dict:
    """The probe JSON of a probe that collected nothing (ok false, no error yet)."""
    return _empty()


def probe(nvml: Any = None, say: Any = _quiet) -> dict:
    """Ask NVML about this node's GPUs; a dict in the schema above. Never raises. `say(call)` is
    told each NVML call before it is made."""
    try:
        if nvml is None:
            try:
                say("import pynvml")
                import pynvml as nvml  # noqa: PLC0415  (lazy: the prolog path does not pay for it)
            except ImportError:
                out = _empty()
                out["error"] = PYNVML_MISSING
                return out
        return _Probe(nvml, say).run()
    except Exception as exc:  # a bug here, or a pynvml that is broken in a new way
        out = _empty()
        out["error"] = f"the NVML probe failed: {type(exc).__name__}: {exc}"
        return out


# What pynvml's NVMLError says for NVML_ERROR_LIBRARY_NOT_FOUND (nvidia-ml-py, _nvmlErrcodeToString).
LIBRARY_NOT_FOUND_TEXT = "NVML Shared Library Not Found"


def _no_library(say: Any = _quiet) -> dict | None:
    """The probe of a node without libnvidia-ml.so.1, made without importing pynvml (~25 ms of a
    child's ~40): the dlopen pynvml's nvmlInit would make, tried first. The same JSON as probe()
    gives there; None where the library loads, pynvml is missing (probe() says so) or already
    imported (its library may be loaded, or replaced in tests), or on Windows."""
    import sys

    if sys.platform[:3] == "win" or "pynvml" in sys.modules:
        return None
    from importlib.util import find_spec

    if find_spec("pynvml") is None:
        return None
    import ctypes

    say("nvmlInit()")
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        name = "NVML_ERROR_LIBRARY_NOT_FOUND"
        return _failed(_empty(), "nvmlInit", name, f"{name} ({LIBRARY_NOT_FOUND_TEXT}): {INIT_REASONS[name]}")
    return None


def dumps(data: dict) -> str:
    """The probe as JSON text: a link, a pair, an `unsupported` entry per line (readable, diffable)."""
    import json

    def emit(value: Any, indent: str) -> str:
        flat = json.dumps(value)
        if not isinstance(value, (dict, list)) or len(flat) <= 160 or not value:
            return flat
        inner = indent + " "
        if isinstance(value, dict):
            items = [f"{inner}{json.dumps(k)}: {emit(v, inner)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + indent + "}"
        items = [inner + emit(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"

    return emit(data, "") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the probe JSON on stdout; exit 0 whenever it was printed (ok false is data, not a failure).
    With --progress, each NVML call is announced on stderr before it is made (live/child.py)."""
    import sys

    from .child import say, wants_progress

    tell = say if wants_progress(argv) else _quiet
    sys.stdout.write(dumps(_no_library(tell) or probe(say=tell)))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
