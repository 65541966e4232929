"""The troubleshooting checklist of docs/domain.md as a view of one run: per symptom, the likely
cause, the rules that check it, and what they decided (ok / found / not checked) with the fact that
decided it. The rules stay the judges; this only groups their outcome under the symptoms a person
starts from.

    checklist(outcome) -> [Row(symptom, cause, how, codes, state, fact)]

state: "found" (a finding at warning or above among its rules; fact: the worst one's message),
"ok" (some of its rules ran and none found anything at warning or above; fact: which ran),
"not checked" (none of its rules ran; fact: what to give, and the capabilities its rules lacked),
"outside" (not topodiag's to check).
"""

from __future__ import annotations

from dataclasses import dataclass

# symptom, likely cause, how to check (docs/domain.md), and the rule codes or families that check it
ROWS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("step time far above expectation", "not enough communication bandwidth",
     "nccl-tests: measure the real busbw", ("PERF001", "PERF002", "PERF003", "PERF004")),
    ("GPU utilisation low for long stretches", "data loading or CPU preprocessing",
     "a profiler (Nsight Systems)", ()),
    ("GPUs run at different speeds", "NVLink topology asymmetry, a link down, a GPU or switch fault",
     "nvidia-smi topo -m, nvidia-smi nvlink -s, the kernel log",
     ("TOPO001", "TOPO002", "TOPO004", "TOPO005", "TOPO006", "NVL", "GPU", "FAB", "PCI002", "PERF005",
      "PERF006", "PERF007")),
    ("poor multi-node scaling", "InfiniBand or RoCE configuration, NCCL's transport",
     "NCCL_DEBUG=INFO: which transport really ran; ibstat",
     ("IB", "NCCL", "GDR", "PCI001", "PCI003", "TOPO003", "TOPO007")),
    ("bandwidth far below nominal", "algorithm choice, buffers too small",
     "force NCCL_ALGO variants and compare (topodiag compare)", ("PERF001", "PERF003", "NCCL011")),
)


@dataclass(frozen=True)
class Row:
    symptom: str
    cause: str
    how: str
    codes: tuple[str, ...]
    state: str
    fact: str


def _family(code: str) -> str:
    return code.rstrip("0123456789")


def _covers(patterns: tuple[str, ...], code: str) -> bool:
    return any(code == p or (not p[-1].isdigit() and _family(code) == p) for p in patterns)


def checklist(outcome) -> list[Row]:
    from . import Severity

    rows = []
    for symptom, cause, how, patterns in ROWS:
        if not patterns:
            rows.append(Row(symptom, cause, how, (), "outside", "not topodiag's to check: " + how))
            continue
        ran = [c for c in outcome.ran if _covers(patterns, c)]
        found = [f for f in outcome.findings if _covers(patterns, f.code) and f.severity >= Severity.WARNING]
        if found:
            worst = max(found, key=lambda f: f.severity)
            rows.append(Row(symptom, cause, how, tuple(ran), "found",
                            f"{worst.code}: {worst.message}" + (f" (+{len(found) - 1} more)" if len(found) > 1 else "")))
        elif ran:
            rows.append(Row(symptom, cause, how, tuple(ran), "ok", f"{len(ran)} check(s) passed: {', '.join(ran)}"))
        else:
            rows.append(Row(symptom, cause, how, (), "not checked", f"no input for it: {how}" + _needs(outcome, patterns)))
    return rows


def _needs(outcome, patterns: tuple[str, ...]) -> str:
    """" (needs nccl.busbw)": the capabilities the row's skipped rules lacked, in rule order."""
    needs = list(dict.fromkeys(g.replace("|", " or ") for s in outcome.skipped if _covers(patterns, s.code)
                               for g in getattr(s, "needs", ())))
    return f" (needs {', '.join(needs)})" if needs else ""
