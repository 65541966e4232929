"""InfiniBand rates, HCA models and board SKUs with their native rates (data: ib.toml).

`rate_gbps` is Gb/s as `ibstat` prints it; `_gbyte_s` names are GB/s."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Mapping

from ._data import table

_T = table("ib")


@dataclass(frozen=True)
class IbRate:
    name: str
    lane_gbit_s: float
    link_4x_gbit_s: float
    link_4x_gbyte_s: float


IB_RATES: Mapping[str, IbRate] = MappingProxyType({
    r["name"]: IbRate(r["name"], r["lane_gbit_s"], r["link_4x_gbit_s"], r["link_4x_gbyte_s"]) for r in _T["rate"]})

IB_MEASURED_GBYTE_S: Mapping[str, float] = MappingProxyType({
    k: v for k, v in _T["measured"].items() if k != "source"})

IB_RATE_REL_TOL: float = _T["tolerance"]["rate_rel_tol"]

IB_LEGACY_RATE_NAMES: Mapping[float, str] = MappingProxyType({
    float(k): v for k, v in _T["legacy_names"].items() if k != "source"})



@dataclass(frozen=True)
class HcaSku:
    part: str
    model: str
    native_gbit_s: float
    psid: str | None
    source: str


@lru_cache(maxsize=1)
def hca_models() -> Mapping[str, tuple[str, float | None]]:
    """CA type -> (model, top InfiniBand rate Gb/s of any SKU; None: Ethernet-only part), from hca.toml
    (read on first use: the prolog path pays for it only when it judges an HCA)."""
    return MappingProxyType({h["ca_type"]: (h["model"], h.get("top_gbit_s")) for h in table("hca")["hca"]})


@lru_cache(maxsize=1)
def hca_skus() -> tuple[HcaSku, ...]:
    """The board SKUs hca.toml knows, with their native rates."""
    return tuple(HcaSku(s["part"], s["model"], s["native_gbit_s"], s.get("psid"), s["source"])
                 for s in table("hca")["sku"])


def __getattr__(name: str):
    """HCA_MODELS / HCA_SKUS, built on first use."""
    if name == "HCA_MODELS":
        return hca_models()
    if name == "HCA_SKUS":
        return hca_skus()
    raise AttributeError(name)


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


def ib_rate_label(rate_gbps: float | None) -> str:
    """400 -> "NDR", 56 -> "FDR", 25 -> "25G"; "unknown" for None."""
    if rate_gbps is None:
        return "unknown"
    name = ib_rate_name(rate_gbps) or IB_LEGACY_RATE_NAMES.get(float(rate_gbps))
    return name or f"{rate_gbps:g}G"


def gbit_to_gbyte(gbit_s: float) -> float:
    """Gb/s (perftest, ibstat) -> GB/s (nccl-tests): divide by 8."""
    return gbit_s / 8


def hca_model(ca_type: str | None) -> str | None:
    """"MT4129" -> "ConnectX-7"; None when unknown."""
    return hca_models().get(ca_type or "", (None, None))[0]


def hca_top_gbit_s(ca_type: str | None) -> float | None:
    """The fastest InfiniBand rate any SKU of the CA type has (a ceiling, not every board's rate)."""
    return hca_models().get(ca_type or "", (None, None))[1]


def hca_sku(board_id: str | None = None, part: str | None = None) -> HcaSku | None:
    """The board SKU a PSID (ibv_devinfo board_id) or part number names, when the table knows it."""
    for sku in hca_skus():
        if board_id and sku.psid and sku.psid.upper() == str(board_id).strip().upper():
            return sku
        if part and str(part).strip().upper().startswith(sku.part.upper()[:-1]):
            return sku
    return None


def hca_lower_skus(model: str | None) -> tuple[float, ...]:
    """The native rates (Gb/s) of the model's SKUs below its top rate (ConnectX-6: HDR100 100)."""
    if not model:
        return ()
    top = max((m[1] or 0 for m in hca_models().values() if m[0] == model), default=0)
    return tuple(sorted({s.native_gbit_s for s in hca_skus() if s.model == model and s.native_gbit_s < top}))
