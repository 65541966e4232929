"""What a run may honestly conclude: the verdict word and how much of the checklist ran.

"OK" only when nothing is at warning or above, nothing kept the run from seeing, and there was
something to see (a node with no GPU, HCA or NCCL run in its inputs is "NOTHING SEEN"); a run whose
findings do not fail it (`--fail-on never`, or warnings under `--fail-on error`) says what it
found instead ("WARNINGS", "ERRORS"). The coverage counts the rules that ran against those
selected (the SYS rules, which judge the tool itself, are not checklist items) and names the
families of which none could run, each by the input that would have run most of its rules: "7 of 27
checks ran: no nvidia_smi_nvlink_s, nccl_debug or nvml input". That input is derived, never listed
by hand: a skipped rule records the capabilities it lacked (its `requires`), and
topodiag.model.merge.capability_sources says which inputs give each one (merge modules' PROVIDES
and FILLS, schema.INPUT_FACTS); a new rule family or source needs no edit here. Every renderer
(text, JSON, the prolog's one line) says the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..exit_codes import ExitCode
from .findings import Severity

TOOL_FAMILY = "SYS"
UNRECOGNISED = "SYS004"  # failure text no catalogue entry explains: a warning, never incomplete (engine/runner.py)
GPUS_NOT_CHECKED = "SYS005"  # GPUs the PCI bus shows that nothing checked: incomplete too (checks/gpu_set.py)


def family(code: str) -> str:
    return code.rstrip("0123456789")


@dataclass(frozen=True)
class Coverage:
    """`ran` of `of` checklist rules ran; `missing`: the inputs of families none of whose rules ran."""

    ran: int
    of: int
    missing: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        return self.ran < self.of

    def text(self) -> str:
        line = f"{self.ran} of {self.of} checks ran"
        if self.missing:
            line += f": no {_either(self.missing)} input"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {"checks_run": self.ran, "checks_selected": self.of, "inputs_missing": list(self.missing),
                "text": self.text()}


@dataclass(frozen=True)
class Verdict:
    """`word` for a terminal (OK, WARNINGS, ERRORS, FINDINGS, INCOMPLETE, INTERNAL ERROR), `key` its
    JSON form, `detail` the line that goes with it ("2 errors (not failing: --fail-on never)")."""

    word: str
    key: str
    detail: str = ""


def coverage(outcome) -> Coverage:
    ran = [c for c in outcome.ran if family(c) != TOOL_FAMILY]
    skipped = [s for s in outcome.skipped if family(s.code) != TOOL_FAMILY]
    ran_families = {family(c) for c in ran}
    by_family: dict[str, list] = {}
    for skip in skipped:
        if family(skip.code) not in ran_families:
            by_family.setdefault(family(skip.code), []).append(skip)
    missing = dict.fromkeys(family_input(name, skips) for name, skips in by_family.items())
    return Coverage(len(ran), len(ran) + len(skipped), tuple(missing))


def family_input(name: str, skips) -> str:
    """The input that would have run most of a family's skipped rules (of equals, the first to get a
    vote: the rules in code order, each capability's inputs in capability_sources' order); the
    family's letters when its rules were skipped for another reason than a missing input (the config,
    the deadline)."""
    votes: dict[str, int] = {}
    for skip in skips:
        for source in dict.fromkeys(s for group in skip.needs for s in requires_inputs(group)):
            votes[source] = votes.get(source, 0) + 1
    return max(votes, key=lambda s: votes[s]) if votes else name  # max() keeps the first of equals


def requires_inputs(group: str) -> tuple[str, ...]:
    """The inputs a person can give that meet one `requires` entry ("nic.port_state|nccl.transport"):
    a capability stands for every input that gives it, a combined view for the inputs it is made
    from, an input name for itself."""
    from ..model.combiners import COMBINED
    from ..model.merge import capability_sources
    from ..model.schema import is_capability

    table = capability_sources()
    names = [s for n in group.split("|") for s in (table.get(n, (n,)) if is_capability(n) else (n,))]
    return tuple(dict.fromkeys(part for n in names for part in COMBINED.get(n, (n,))))


def _either(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


# Inputs that are evidence of a run even when they name no device (a log, a benchmark's table).
# (nccl_diag, p2pBandwidthLatencyTest and nvbandwidth ran on the GPUs: evidence of them too.)
RUN_RECORDS = ("nccl_debug", "nccl_tests", "busbw_pairs", "nccl_diag", "p2p_bandwidth_latency", "nvbandwidth")


def saw_nothing(topology) -> bool:
    """No GPU, no HCA and no NCCL run in the inputs: rules that ran had nothing to judge."""
    if topology is None:
        return False
    return not (topology.gpus() or topology.nics() or any(topology.observations(s) for s in RUN_RECORDS))


def verdict(outcome, topology=None) -> Verdict:
    """The verdict of a run; with the `topology`, a run that saw no device is never "OK"."""
    code = int(outcome.exit_code)
    if code == ExitCode.INTERNAL:
        return Verdict("INTERNAL ERROR", "internal-error", "a check crashed: report it with --debug output")
    if code == ExitCode.INCOMPLETE:
        if all(f.code == GPUS_NOT_CHECKED for f in outcome.findings if family(f.code) == TOOL_FAMILY):
            return Verdict("INCOMPLETE", "incomplete", "NVIDIA GPUs on the PCI bus were not checked (no NVML, no "
                                                       "nvidia-smi output): no verdict on them")
        return Verdict("INCOMPLETE", "incomplete", "an input could not be read: no verdict on what it would show")
    if code == ExitCode.FINDINGS:
        level = str(outcome.fail_on)
        return Verdict("FINDINGS", "findings", f"findings at or above {level} (--fail-on {level})")
    # SYS findings that do not make a run incomplete (SYS004: failure text no catalogue explains) count
    # here too: the verdict is never OK over a warning of any family.
    worst = max((f.severity for f in outcome.findings
                 if family(f.code) != TOOL_FAMILY or f.code == UNRECOGNISED), default=None)
    if (worst is None or worst < Severity.WARNING) and saw_nothing(topology):
        return Verdict("NOTHING SEEN", "nothing-seen",
                       "no GPU, HCA or NCCL run in the inputs: the rules had nothing to judge")
    if worst is None or worst < Severity.WARNING:
        return Verdict("OK", "ok")
    counts = outcome.counts()
    why = "--fail-on never" if outcome.fail_on is None else f"--fail-on {outcome.fail_on}"
    if worst >= Severity.ERROR:
        n = counts["error"] + counts["critical"]
        return Verdict("ERRORS", "errors", f"{_count(n, 'error')} (not failing: {why})")
    return Verdict("WARNINGS", "warnings", f"{_count(counts['warning'], 'warning')} (not failing: {why})")
