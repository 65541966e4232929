"""Model shapes for `topodiag plan`: presets and explicit numbers.

A model is what the traffic of each parallel dimension depends on: parameters (gradient bytes for
DP), layers (how many TP AllReduces per step), hidden size, sequence length and micro-batch (the
activation a TP AllReduce or a PP send carries), and the dtype of activations and gradients.

The presets are the Llama family shapes the article's sizes name (7B, 13B, 70B, 405B); `article` is
the article's own worked example: 80 layers and 1 GB moved per TP AllReduce, as it assumes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ..errors import UsageError

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4}
# What plan's numbers may be (the man page and README say so): a number outside, or not a finite
# number, is a usage error at the option, before any work (--nodes 1000000000 ran away).
BOUNDS: dict[str, tuple[float, float]] = {
    "nodes": (1, 16384), "params": (1e3, 1e15), "layers": (1, 10_000), "hidden": (1, 1 << 20),
    "seq": (1, 1 << 24), "micro_batch": (1, 1 << 16), "micro_batches": (1, 1 << 16),
    "tp": (1, 1 << 20), "pp": (1, 1 << 20), "dp": (1, 1 << 20), "ep": (1, 1 << 20),
}


def check_bounds(**values) -> None:
    """UsageError (one line) for the first value (None: not given) outside BOUNDS or not finite."""
    import math

    for key, value in values.items():
        if value is None:
            continue
        lo, hi = BOUNDS[key]
        if not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
            got = _shown(value) if isinstance(value, (int, float)) else "not a number"
            raise UsageError(f"--{key.replace('_', '-')}: from {_shown(lo)} to {_shown(hi)}, got {got}")


def _shown(v: float) -> str:
    """1024 as 1024, 1e15 as 1e+15, nan as nan."""
    if isinstance(v, int) or (v == v and abs(v) < 1e7 and float(v).is_integer()):
        return str(int(v))
    return f"{v:g}"
GB = 1e9  # the article counts in decimal gigabytes: 7B x 2 bytes = 14 GB


@dataclass(frozen=True)
class ModelSpec:
    """A transformer's shape. `tp_bytes_moved`, when set, is the bytes each GPU moves per TP
    AllReduce, taken as given (the article's "1 GB each") instead of derived from the activation."""

    name: str
    params: float
    layers: int
    hidden: int
    seq: int = 4096
    micro_batch: int = 1
    dtype: str = "bf16"
    top_k: int = 2  # experts a token is routed to (EP all-to-all volume)
    tp_bytes_moved: Optional[float] = None

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def activation_bytes(self) -> float:
        """One micro-batch's activation between layers: micro-batch x sequence x hidden x dtype."""
        return float(self.micro_batch * self.seq * self.hidden * self.dtype_bytes)

    @property
    def gradient_bytes(self) -> float:
        """The whole model's gradients in the training dtype (7B in FP16: 14 GB)."""
        return float(self.params * self.dtype_bytes)

    def to_json(self) -> dict:
        return {"name": self.name, "params": self.params, "layers": self.layers, "hidden": self.hidden,
                "seq": self.seq, "micro_batch": self.micro_batch, "dtype": self.dtype,
                "activation_bytes": self.activation_bytes, "gradient_bytes": self.gradient_bytes,
                "tp_bytes_moved": self.tp_bytes_moved}


PRESETS: dict[str, ModelSpec] = {
    "7b": ModelSpec("7b", 7e9, 32, 4096),
    "13b": ModelSpec("13b", 13e9, 40, 5120),
    "70b": ModelSpec("70b", 70e9, 80, 8192),
    "405b": ModelSpec("405b", 405e9, 126, 16384),
    # The article's example: an 80-layer model, 4 AllReduces per layer, 1 GB moved by each.
    "article": ModelSpec("article", 70e9, 80, 8192, tp_bytes_moved=1 * GB),
}


def model_spec(preset: Optional[str] = None, *, params: Optional[float] = None, layers: Optional[int] = None,
               hidden: Optional[int] = None, seq: Optional[int] = None, micro_batch: Optional[int] = None,
               dtype: Optional[str] = None) -> ModelSpec:
    """A preset (default `article`), with any explicit number replacing the preset's; without a
    preset, --params, --layers and --hidden are all needed. UsageError for what does not fit."""
    if dtype is not None and dtype not in DTYPE_BYTES:
        raise UsageError(f"--dtype: {dtype!r} is not one of {', '.join(DTYPE_BYTES)}")
    explicit = {k: v for k, v in dict(params=params, layers=layers, hidden=hidden, seq=seq,
                                      micro_batch=micro_batch, dtype=dtype).items() if v is not None}
    for key, value in explicit.items():
        if key != "dtype" and not value > 0:
            raise UsageError(f"--{key.replace('_', '-')}: must be positive, got {value:g}")
    check_bounds(**{k: v for k, v in explicit.items() if k != "dtype"})
    if preset is None and {"params", "layers", "hidden"} <= set(explicit):
        base = ModelSpec("custom", explicit.pop("params"), explicit.pop("layers"), explicit.pop("hidden"))
    elif preset is None and {"params", "layers", "hidden"} & set(explicit):
        raise UsageError("--params, --layers and --hidden go together (or start from --model)")
    else:
        key = (preset or "article").lower()
        if key not in PRESETS:
            raise UsageError(f"--model: unknown model {preset!r}; one of: {', '.join(PRESETS)}")
        base = PRESETS[key]
    if "layers" in explicit:
        explicit["layers"] = int(explicit["layers"])
    changed = replace(base, **explicit) if explicit else base
    if explicit and changed.tp_bytes_moved is not None and {"hidden", "seq", "micro_batch", "dtype"} & set(explicit):
        changed = replace(changed, tp_bytes_moved=None)  # the activation now follows the numbers given
    return changed


def parse_params(text: str) -> float:
    """"70b", "70B", "7e9", "405000000000" -> parameters; UsageError otherwise."""
    t = str(text).strip().lower()
    scale = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}.get(t[-1:], 1.0)
    body = t[:-1] if t[-1:] in "kmbt" else t
    try:
        value = float(body) * scale
    except ValueError:
        raise UsageError(f"--params: {text!r} is not a number of parameters (e.g. 70b, 7e9)") from None
    check_bounds(params=value)
    return value
