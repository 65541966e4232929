"""Nominal interconnect numbers (PCIe, NVLink, InfiniBand, topo path classes, busbw) and GPU facts.

Frozen data plus small pure functions; no imports that cost. Every number comes from
docs/domain.md (the table is named next to it); the few that do not (GA102 bridge speed,
per-SKU link counts of export and PCIe parts, gather/scatter busbw factors) say where they come from.

Units are in the names: `_gbyte_s` is GB/s (bytes), `_gbit_s` is Gb/s (bits). The two names the
tools themselves use keep their tool's unit: `printed_gbps` / `nvlink_speed_gbps` are GB/s as
`nvidia-smi nvlink -s` prints them, `rate_gbps` is Gb/s as `ibstat` prints it.
Functions return None where the tables have no number (an unknown PCIe generation, a path class
whose platform is not known); they raise ValueError for text that is not what they read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Callable, Mapping

# --------------------------------------------------------------------------------------------------
# PCIe. docs/domain.md "PCIe (x16)": gen -> one-way / bidirectional GB/s for an x16 link.

PCIE_X16_GBYTE_S: Mapping[int, tuple[float, float]] = MappingProxyType({
    3: (16.0, 32.0),
    4: (32.0, 64.0),
    5: (64.0, 128.0),
})

# Transfer rate per lane (GT/s) as NCCL's topology XML (link_speed="16.0 GT/s PCIe") and sysfs
# (current_link_speed) print it -> generation. PCI-SIG signalling rates; generations 1, 2 and 6 are
# recognised but have no bandwidth row in docs/domain.md (pcie_one_way_gbyte_s returns None for them).
PCIE_GTS_TO_GEN: Mapping[float, int] = MappingProxyType({
    2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6,
})

_GTS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GT/?s\b", re.I)
_GEN_RE = re.compile(r"^\s*(?:PCIe\s*)?Gen\s*(\d)\s*$", re.I)


def pcie_gen_from_link_speed(speed: str | float | None) -> int | None:
    """"16.0 GT/s PCIe", "32.0 GT/s", "8 GT/s", 16.0 (GT/s) or "Gen4" -> 4; None when not a known rate."""
    if speed is None:
        return None
    if isinstance(speed, (int, float)) and not isinstance(speed, bool):
        gts = float(speed)
    else:
        text = str(speed)
        m = _GEN_RE.match(text)
        if m:
            gen = int(m.group(1))
            return gen if gen in PCIE_GTS_TO_GEN.values() else None
        m = _GTS_RE.match(text)
        if not m:
            return None
        gts = float(m.group(1))
    for rate, gen in PCIE_GTS_TO_GEN.items():
        if abs(gts - rate) < 0.05:
            return gen
    return None


def pcie_one_way_gbyte_s(gen: int | None, width: int = 16) -> float | None:
    """Nominal one-way GB/s of a PCIe link: the x16 figure scaled by width/16 (x8 = half, x4 = quarter)."""
    if gen not in PCIE_X16_GBYTE_S:
        return None
    if width <= 0:
        raise ValueError(f"PCIe link width must be positive, got {width}")
    return PCIE_X16_GBYTE_S[gen][0] * width / 16


def pcie_bidir_gbyte_s(gen: int | None, width: int = 16) -> float | None:
    """Nominal bidirectional GB/s of a PCIe link (twice the one-way figure)."""
    one_way = pcie_one_way_gbyte_s(gen, width)
    return None if one_way is None else 2 * one_way


# --------------------------------------------------------------------------------------------------
# NVLink. docs/domain.md "NVLink": version, arch, per link (bidir), links per GPU, per GPU (bidir), and the
# per-link one-way speed `nvidia-smi nvlink -s` prints (25.781 V100/A100, 25 A100 on newer drivers
# as the A100 fixture shows, 26.562 H100, about 50 / 53.125 B200 / GB200).

@dataclass(frozen=True)
class NvlinkGen:
    """One NVLink generation as docs/domain.md tables it."""

    version: int                      # 2, 3, 4, 5 (NVLink 2.0 ...)
    arch: str                         # "Volta", "Ampere", "Hopper", "Blackwell"
    gpus: tuple[str, ...]             # GPUs of this generation (docs/domain.md and the brief)
    per_link_bidir_gbyte_s: float
    links_per_gpu: int                # on the flagship SXM part; export SKUs have fewer (GpuFacts)
    per_gpu_bidir_gbyte_s: float
    printed_speeds_gbps: tuple[float, ...]  # per-link one-way GB/s values nvlink -s prints when healthy

    @property
    def per_link_one_way_gbyte_s(self) -> float:
        return self.per_link_bidir_gbyte_s / 2

    @property
    def per_gpu_one_way_gbyte_s(self) -> float:
        return self.per_gpu_bidir_gbyte_s / 2

    @property
    def nominal_printed_gbps(self) -> float:
        """The speed a healthy link prints (the highest known value; messages quote it)."""
        return max(self.printed_speeds_gbps)


NVLINK_GENS: Mapping[int, NvlinkGen] = MappingProxyType({
    2: NvlinkGen(2, "Volta", ("V100",), 50.0, 6, 300.0, (25.781,)),
    3: NvlinkGen(3, "Ampere", ("A100", "A800"), 50.0, 12, 600.0, (25.0, 25.781)),
    4: NvlinkGen(4, "Hopper", ("H100", "H200", "H800", "H20"), 50.0, 18, 900.0, (26.562,)),
    5: NvlinkGen(5, "Blackwell", ("B200", "GB200", "B300", "GB300"), 100.0, 18, 1800.0, (50.0, 53.125)),
})

# GA102 (RTX A6000, A5000, RTX 3090) NVLink 3 bridge: 4 links, nvlink -s prints 14.062 GB/s each
# (fixture nvlink-s-rtxa6000-bridge-inactive-gpu-01); NVIDIA states 112.5 GB/s bidirectional per
# GPU for the bridge (4 x 14.0625 x 2). Not a docs/domain.md row.
GA102_BRIDGE_SPEED_GBPS = 14.062
GA102_BRIDGE_LINKS = 4
GA102_BRIDGE_ONE_WAY_GBYTE_S = 14.0625  # unrounded per-link figure: 4 x 14.0625 x 2 = 112.5

# How far below the nominal printed speed a link may read and still count as full speed. Printed
# values are rounded signalling rates (25.781 vs 25, 26.562): a link trained down reads about half.
NVLINK_SPEED_REL_TOL = 0.03

_NVLINK_VERSION_RE = re.compile(r"^\s*(?:nvlink\s*)?(\d)(?:\.0)?\s*$", re.I)


def nvlink_gen(generation: int | float | str | NvlinkGen) -> NvlinkGen:
    """4, 4.0, "4.0", "NVLink4", "nvlink 4.0" -> NVLINK_GENS[4]; ValueError for anything else."""
    if isinstance(generation, NvlinkGen):
        return generation
    version: int | None = None
    if isinstance(generation, bool):
        version = None
    elif isinstance(generation, int):
        version = generation
    elif isinstance(generation, float) and generation.is_integer():
        version = int(generation)
    elif isinstance(generation, str):
        m = _NVLINK_VERSION_RE.match(generation)
        version = int(m.group(1)) if m else None
    if version not in NVLINK_GENS:
        raise ValueError(f"unknown NVLink generation {generation!r} (known: 2.0, 3.0, 4.0, 5.0)")
    return NVLINK_GENS[version]


def nvlink_nominal_speed_gbps(generation: int | float | str | NvlinkGen, *, bridge: bool = False) -> float:
    """Per-link one-way GB/s a healthy link of this generation prints in `nvidia-smi nvlink -s`."""
    gen = nvlink_gen(generation)
    if bridge and gen.version == 3:
        return GA102_BRIDGE_SPEED_GBPS
    return gen.nominal_printed_gbps


def nvlink_speed_ok(printed_gbps: float, generation: int | float | str | NvlinkGen, *,
                    bridge: bool = False, rel_tol: float = NVLINK_SPEED_REL_TOL) -> bool:
    """True when a per-link speed printed by nvlink -s is at the generation's nominal (within rel_tol).

    Compared with the lowest healthy value the generation prints (25 for NVLink 3 on newer drivers,
    50 for NVLink 5), so driver rounding never reads as low. `bridge=True` judges a GA102 NVLink 3
    bridge (14.062 GB/s nominal). Faster than nominal is not low.
    """
    gen = nvlink_gen(generation)
    floor = GA102_BRIDGE_SPEED_GBPS if (bridge and gen.version == 3) else min(gen.printed_speeds_gbps)
    return printed_gbps >= floor * (1 - rel_tol)


# --------------------------------------------------------------------------------------------------
# InfiniBand. docs/domain.md "Between nodes": per lane Gb/s, 4x link Gb/s, bytes (GB/s of the 4x link).

@dataclass(frozen=True)
class IbRate:
    name: str
    lane_gbit_s: float
    link_4x_gbit_s: float
    link_4x_gbyte_s: float


IB_RATES: Mapping[str, IbRate] = MappingProxyType({
    "EDR": IbRate("EDR", 25.0, 100.0, 12.5),
    "HDR": IbRate("HDR", 50.0, 200.0, 25.0),
    "NDR": IbRate("NDR", 100.0, 400.0, 50.0),
    "XDR": IbRate("XDR", 200.0, 800.0, 100.0),
})

# Measured anchors, docs/architecture.md "Numbers the rules use": NDR 400G loopback ~399 Gb/s (~50 GB/s) per
# NIC; HDR ~24 GB/s.
IB_MEASURED_GBYTE_S: Mapping[str, float] = MappingProxyType({"NDR": 50.0, "HDR": 24.0})

IB_RATE_REL_TOL = 0.05  # iblinkinfo prints 25.78125 Gb/s per EDR lane: 3 % above the nominal 25


def ib_rate_name(rate_gbps: float | None, lanes: int = 4) -> str | None:
    """Link rate in Gb/s (ibstat "Rate: 400") -> "NDR"; None for rates outside the table (FDR 56...).

    The name is that of the per-lane speed rate/lanes; ibstat prints only the total, so the default
    assumes a 4x link: a 2x HDR port ("HDR100", Rate 100) reads as EDR unless lanes=2 is given.
    """
    if rate_gbps is None or lanes <= 0 or rate_gbps <= 0:
        return None
    per_lane = rate_gbps / lanes
    for rate in IB_RATES.values():
        if abs(per_lane - rate.lane_gbit_s) <= rate.lane_gbit_s * IB_RATE_REL_TOL:
            return rate.name
    return None


def gbit_to_gbyte(gbit_s: float) -> float:
    """Gb/s (perftest, ibstat) -> GB/s (nccl-tests): divide by 8."""
    return gbit_s / 8


# --------------------------------------------------------------------------------------------------
# Path classes of `nvidia-smi topo -m`. docs/domain.md "`nvidia-smi topo -m` link classes (best to worst)".

PATH_CLASSES: tuple[str, ...] = ("NV#", "PIX", "PXB", "PHB", "NODE", "SYS")
PATH_ALIASES: Mapping[str, str] = MappingProxyType({"SOC": "SYS"})  # older drivers print SOC
PCIE_PATH_CLASSES = frozenset({"PIX", "PXB", "PHB", "NODE", "SYS"})

_NV_RE = re.compile(r"^NV(\d{1,3})$")


def normalize_path_class(path_type: str) -> str:
    """"nv18" -> "NV18", "SOC" -> "SYS", " PIX " -> "PIX"; ValueError for anything else (X included)."""
    text = str(path_type).strip().upper()
    text = PATH_ALIASES.get(text, text)
    if text in PCIE_PATH_CLASSES or _NV_RE.match(text):
        return text
    raise ValueError(f"not a topo path class: {path_type!r} (expected NV#, PIX, PXB, PHB, NODE, SYS or SOC)")


def is_path_class(path_type: str) -> bool:
    try:
        normalize_path_class(path_type)
    except ValueError:
        return False
    return True


def is_nvlink(path_type: str) -> bool:
    """True for NV# classes ("NV18", "NV4"); False for the PCIe classes and for non-classes."""
    return bool(_NV_RE.match(str(path_type).strip().upper()))


def nvlink_count(path_type: str) -> int:
    """"NV18" -> 18; 0 for a PCIe class; ValueError for what is not a path class."""
    cls = normalize_path_class(path_type)
    m = _NV_RE.match(cls)
    return int(m.group(1)) if m else 0


def path_rank(path_type: str) -> int:
    """0 (NV#, best) .. 5 (SYS, worst), as docs/domain.md orders the classes; SOC ranks as SYS."""
    cls = normalize_path_class(path_type)
    return 0 if _NV_RE.match(cls) else PATH_CLASSES.index(cls)


def path_sort_key(path_type: str) -> tuple[int, int]:
    """Sort key best first that also orders NV# by link count: NV18 < NV12 < NV2 < PIX < ... < SYS."""
    return (path_rank(path_type), -nvlink_count(path_type))


def path_nominal_gbyte_s(path_type: str, *, nvlink_generation: int | float | str | NvlinkGen | None = None,
                         pcie_gen: int | None = None, pcie_width: int = 16,
                         bidir: bool = False, bridge: bool = False) -> float | None:
    """Rough nominal bandwidth of one GPU pair's path, for the "why" math (one-way unless bidir).

    NV#: count x per-link of the NVLink generation (NV18 on Hopper: 18 x 25 = 450 GB/s one-way).
    PIX/PXB: the platform's PCIe link (x16 of pcie_gen). PHB/NODE/SYS: also the PCIe link, now
    through the CPU. SYS additionally crosses the socket interconnect (QPI/UPI/xGMI), whose bandwidth
    docs/domain.md does not give: the PCIe figure is used as an upper bound, and real SYS traffic usually
    gets less (cross-socket P2P is often disabled and staged through host memory). So the number
    understates how bad SYS is, never overstates it. None when the generation needed is unknown.
    `bridge=True` with NVLink 3 uses the GA102 bridge's 14.0625 GB/s per link (NV4 = 56.25 one-way).
    """
    cls = normalize_path_class(path_type)
    if _NV_RE.match(cls):
        if nvlink_generation is None:
            return None
        gen = nvlink_gen(nvlink_generation)
        per_link = gen.per_link_one_way_gbyte_s
        if bridge and gen.version == 3:
            per_link = GA102_BRIDGE_ONE_WAY_GBYTE_S
        if bidir:
            per_link *= 2
        return nvlink_count(cls) * per_link
    if bidir:
        return pcie_bidir_gbyte_s(pcie_gen, pcie_width)
    return pcie_one_way_gbyte_s(pcie_gen, pcie_width)


# --------------------------------------------------------------------------------------------------
# GPU model facts. NVLink generation and arch from docs/domain.md "NVLink"; link counts of the flagship
# SXM parts from the same table; the others from NVIDIA's product pages (noted per entry).

@dataclass(frozen=True)
class GpuFacts:
    """What a GPU model should show: NVLink generation and links, PCIe generation."""

    model: str                        # canonical label, e.g. "H100 SXM"
    arch: str                         # "Hopper"
    form_factor: str                  # "SXM" | "PCIe" | "superchip" | "SoC"
    nvlink_generation: int | None     # 2..5; None: no GPU-GPU NVLink
    nvlinks: int                      # links per GPU by design (0: none)
    nvlinks_accepted: tuple[int, ...]  # active-link counts that are by design (bridge absent = 0)
    nvlink_bridge: bool               # NVLink only through a bridge between cards (pairs / quads)
    nvlink_speed_gbps: float | None   # lowest per-link one-way GB/s nvlink -s prints on a healthy link
    pcie_gen: int | None              # host PCIe generation of the GPU
    note: str = ""                    # what is uncertain or surprising

    @property
    def nvlink_bidir_gbyte_s(self) -> float | None:
        """Per-GPU NVLink bidirectional GB/s: links x per-link (GA102 bridge: links x 2 x printed)."""
        if self.nvlink_generation is None or self.nvlinks == 0:
            return None
        if self.nvlink_bridge and self.nvlink_speed_gbps == GA102_BRIDGE_SPEED_GBPS:
            return self.nvlinks * 2 * GA102_BRIDGE_ONE_WAY_GBYTE_S
        return self.nvlinks * NVLINK_GENS[self.nvlink_generation].per_link_bidir_gbyte_s

    @property
    def nvlink_one_way_gbyte_s(self) -> float | None:
        bidir = self.nvlink_bidir_gbyte_s
        return None if bidir is None else bidir / 2


def _sxm(model: str, gen: int, links: int | None = None, pcie: int | None = None,
         accepted: tuple[int, ...] | None = None, note: str = "", form: str = "SXM") -> GpuFacts:
    g = NVLINK_GENS[gen]
    n = g.links_per_gpu if links is None else links
    return GpuFacts(model, g.arch, form, gen, n, accepted or (n,), False, min(g.printed_speeds_gbps), pcie, note)


def _bridged(model: str, gen: int, links: int, pcie: int, note: str, speed: float | None = None) -> GpuFacts:
    g = NVLINK_GENS[gen]
    sp = speed if speed is not None else min(g.printed_speeds_gbps)
    return GpuFacts(model, g.arch, "PCIe", gen, links, (0, links), True, sp, pcie, note)


def _no_nvlink(model: str, arch: str, pcie: int | None, note: str = "", form: str = "PCIe") -> GpuFacts:
    return GpuFacts(model, arch, form, None, 0, (0,), False, None, pcie, note)


# Ordered most specific first; each pattern is searched in the normalised name (upper case, '-' and
# '_' as spaces, "NVIDIA"/"Tesla"/"GeForce" prefixes dropped).
_GPU_TABLE: tuple[tuple[str, GpuFacts], ...] = (
    (r"\bGB300\b", _sxm("GB300", 5, pcie=6, form="superchip",
                        note="Grace-Blackwell Ultra; NVL72 NVLink domain; PCIe Gen6 has no docs/domain.md row")),
    (r"\bGB200\b", _sxm("GB200", 5, pcie=5, form="superchip",
                        note="Grace-Blackwell superchip; NVL72 NVLink domain (72 GPUs); nvlink -s prints 53.125")),
    (r"\bGH200\b", _sxm("GH200", 4, pcie=5, form="superchip",
                        note="Grace-Hopper superchip: an H100-class GPU joined to its Grace CPU by NVLink-C2C; "
                             "GPU-NIC paths read SYS in topo -m by design")),
    (r"\bGB10\b", _no_nvlink("GB10", "Blackwell", None, form="SoC",
                             note="DGX Spark SoC: GPU-CPU NVLink-C2C only, no GPU-GPU NVLink; host PCIe n/a")),
    (r"\bB300\b", _sxm("B300", 5, pcie=6, note="Blackwell Ultra; PCIe Gen6 has no docs/domain.md row")),
    (r"\bB200\b", _sxm("B200", 5, pcie=5, note="nvlink -s prints about 50 (53.125 seen on GB200)")),
    (r"\bH200\b.*\bNVL\b", _bridged("H200 NVL", 4, 18, 5,
                                   "PCIe card; NVIDIA states 900 GB/s over a 2- or 4-way NVLink bridge")),
    (r"\bH200\b", _sxm("H200 SXM", 4, pcie=5)),
    (r"\bH20\b", _sxm("H20", 4, pcie=5, note="China export SKU; NVIDIA states 900 GB/s NVLink (18 links)")),
    (r"\bH800\b.*\bPCIE\b", _bridged("H800 PCIe", 4, 8, 5,
                                     "China export SKU; NVIDIA states 400 GB/s NVLink bridge (8 links)")),
    (r"\bH800\b", _sxm("H800 SXM", 4, links=8, pcie=5, accepted=(8, 18),
                       note="China export SKU: NVIDIA states 400 GB/s NVLink (8 links, nvlink -s fixture); "
                            "one H800 host's topo -m shows NV18, so 18 is accepted too")),
    (r"\bH100\b.*\bNVL\b", _bridged("H100 NVL", 4, 12, 5,
                                   "PCIe card pair; NVIDIA states 600 GB/s over 3 NVLink bridges (12 links)")),
    (r"\bH100\b.*\bPCIE\b", _bridged("H100 PCIe", 4, 12, 5,
                                    "PCIe card: NVLink only through the bridge (NVIDIA states 600 GB/s = 12 of "
                                    "18 links); without a bridge 0 active links is by design")),
    (r"\bH100\b", _sxm("H100 SXM", 4, pcie=5)),
    (r"\bA800\b.*\bPCIE\b", _bridged("A800 PCIe", 3, 8, 4,
                                    "China export SKU; NVIDIA states 400 GB/s NVLink bridge for 2 GPUs (8 links)")),
    (r"\bA800\b", _sxm("A800 SXM4", 3, links=8, pcie=4,
                       note="China export SKU: NVLink cut to 400 GB/s = 8 links (topo -m shows NV8)")),
    (r"\bA100\b.*\bPCIE\b", _bridged("A100 PCIe", 3, 12, 4,
                                    "PCIe card; NVIDIA states 600 GB/s over NVLink bridges for 2 GPUs (12 links); "
                                    "without a bridge 0 active links is by design")),
    (r"\bA100\b", _sxm("A100 SXM4", 3, pcie=4,
                       note="nvlink -s prints 25.781 (older drivers) or 25 (newer drivers)")),
    (r"\bV100S?\b.*\bPCIE\b", _no_nvlink("V100 PCIe", "Volta", 3)),
    (r"\bV100\b.*\bSXM3\b", _sxm("V100 SXM3", 2, pcie=3, note="DGX-2: 6 links into NVSwitch")),
    (r"\bV100\b", _sxm("V100 SXM2", 2, pcie=3,
                       note="SXM2 (also DGXS); DGX-1 hybrid cube-mesh: not every pair is NVLinked")),
    (r"\bRTX A6000\b|\bRTX A5000\b|\bRTX 3090\b", GpuFacts(
        "GA102 (RTX A6000 class)", "Ampere", "PCIe", 3, GA102_BRIDGE_LINKS, (0, GA102_BRIDGE_LINKS), True,
        GA102_BRIDGE_SPEED_GBPS, 4, "NVLink 3 bridge between 2 cards: 4 links at 14.062 GB/s (112.5 GB/s bidir)")),
    (r"\bRTX 6000 ADA\b|\bRTX 4090\b|\bL40S?\b|\bL4\b|\bRTX [0-9]000 ADA\b",
     _no_nvlink("Ada (RTX 6000 Ada / L40 class)", "Ada Lovelace", 4, note="no NVLink")),
    (r"\bRTX 5090\b|\bRTX 5080\b|\bRTX PRO 6000\b",
     _no_nvlink("Blackwell client (RTX 5090 class)", "Blackwell", 5, note="no NVLink")),
    (r"\bK40M?\b|\bK80\b", _no_nvlink("Kepler (K40/K80)", "Kepler", 3)),
)


@lru_cache(maxsize=1)
def _gpu_patterns() -> tuple[tuple[re.Pattern[str], GpuFacts], ...]:
    """The table's patterns, compiled on first use (keeps the import cheap for the prolog path)."""
    return tuple((re.compile(p), f) for p, f in _GPU_TABLE)

_PREFIX_RE = re.compile(r"^(?:NVIDIA\s+)?(?:TESLA\s+|GEFORCE\s+|QUADRO\s+)?")


def normalize_gpu_name(name: str) -> str:
    """"NVIDIA A100-SXM4-80GB" -> "A100 SXM4 80GB"; "Tesla V100-SXM2-32GB" -> "V100 SXM2 32GB"."""
    text = re.sub(r"[-_]", " ", str(name).upper())
    text = re.sub(r"\s+", " ", text).strip()
    return _PREFIX_RE.sub("", text, count=1).strip()


GRACE_RE = re.compile(r"\bG[BH]\d{2,3}\b|\bGRACE\b")


def is_grace(name: str) -> bool:
    """True for a Grace-based GPU (GB200, GB300, GH200, or a name saying "Grace"): the GPU reaches its
    CPU over NVLink-C2C and the NICs hang off Grace's PCIe, so topo -m prints SYS for every GPU-NIC
    cell by design. GB10 (DGX Spark) is a single SoC, not a Grace superchip with NICs on the CPU:
    it counts too, since its GPU-NIC path is also through the CPU side."""
    return bool(GRACE_RE.search(normalize_gpu_name(name)))


# Multi-node NVLink domains by product: the GPUs one NVLink fabric (NVSwitch trays, one clique) joins
# across compute trays. NVIDIA GB200 NVL72 / GB300 NVL72 product pages: 72 GPUs in one NVLink domain
# (18 compute trays of 4 GPUs); the NVL36 variant joins 36. The clique id of the GPUs' fabric info
# (nvidia-smi -q "Fabric", NVML nvmlDeviceGetGpuFabricInfo) names the domain a GPU belongs to.
MULTINODE_NVLINK_GPUS: Mapping[str, int] = MappingProxyType({"GB200": 72, "GB300": 72})


def switched_nvlink(facts: "GpuFacts | None") -> bool:
    """True when the product joins every GPU of the node through NVLink by design (NVSwitch on 8-GPU
    SXM boards from A100 on, direct all-to-all NVLink on 4-GPU SXM4 boards, the NVLink switch trays
    of Grace-Blackwell): any GPU with an active link is in the node's one NVLink domain. Not V100
    SXM2 (the DGX-1 cube mesh leaves pairs unlinked) nor bridged PCIe cards."""
    return (facts is not None and facts.nvlink_generation is not None and facts.nvlink_generation >= 3
            and not facts.nvlink_bridge and facts.form_factor in ("SXM", "superchip") and facts.nvlinks > 0)


def multinode_nvlink_gpus(facts: "GpuFacts | None") -> int | None:
    """The GPUs of the product's multi-node NVLink domain (GB200 NVL72: 72), or None."""
    if facts is None:
        return None
    return next((n for key, n in MULTINODE_NVLINK_GPUS.items() if re.search(rf"\b{key}\b", facts.model)), None)


def gpu_facts(name: str) -> GpuFacts | None:
    """GPU model name as nvidia-smi/NVML print it -> GpuFacts; None for a model not in the table."""
    norm = normalize_gpu_name(name)
    for pattern, facts in _gpu_patterns():
        if pattern.search(norm):
            return facts
    return None


# --------------------------------------------------------------------------------------------------
# Bus bandwidth. docs/domain.md "Bus bandwidth (nccl-tests)": busbw = algbw x factor(n). all_reduce
# 2(n-1)/n; all_gather / reduce_scatter (n-1)/n; broadcast / reduce 1. sendrecv 1 and alltoall,
# gather, scatter (n-1)/n as nccl-tests computes them (its src/*.cu, doc/PERFORMANCE.md).

BUSBW_FACTORS: Mapping[str, Callable[[int], float]] = MappingProxyType({
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
    "alltoall": lambda n: (n - 1) / n,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
})

_COLLECTIVE_ALIASES: Mapping[str, str] = MappingProxyType({
    "allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
    "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "sendrecv", "alltoall": "alltoall",
    "gather": "gather", "scatter": "scatter",
})


def normalize_collective(name: str) -> str:
    """"all_reduce_perf", "AllReduce", "allreduce" -> "all_reduce"; ValueError when unknown."""
    key = re.sub(r"_perf$", "", str(name).strip().lower())
    key = key.replace("_", "").replace("-", "").replace(" ", "")
    if key not in _COLLECTIVE_ALIASES:
        raise ValueError(f"unknown collective {name!r} (known: {', '.join(BUSBW_FACTORS)})")
    return _COLLECTIVE_ALIASES[key]


def busbw_factor(collective: str, nranks: int) -> float:
    """busbw / algbw for a collective over nranks ranks (all_reduce, 8 ranks -> 1.75)."""
    if nranks < 1:
        raise ValueError(f"nranks must be >= 1, got {nranks}")
    return BUSBW_FACTORS[normalize_collective(collective)](nranks)


def busbw_from_algbw(algbw_gbyte_s: float, collective: str, nranks: int) -> float:
    return algbw_gbyte_s * busbw_factor(collective, nranks)


def slowest_sxm_nvlink() -> tuple[str, float]:
    """(model, one-way GB/s per GPU) of the slowest NVSwitch/hybrid-mesh (non-bridged) NVLink GPU in
    the table: the floor under which an intra-node busbw is below every NVLink class."""
    found = [(f.nvlink_one_way_gbyte_s, f.model) for _, f in _GPU_TABLE
             if f.nvlink_one_way_gbyte_s and not f.nvlink_bridge]
    speed, model = min(found)
    return model, speed
