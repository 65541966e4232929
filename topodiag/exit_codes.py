"""The one exit-code table of topodiag, and the one function that maps what a command ended with
(an Outcome) to its code. Every command exits through `exit_code`; README's and the man page's
tables are generated from MEANINGS (`python -m topodiag.docs`).

    exit_code(Outcome.FINDINGS)                      # 1
    exit_code(Outcome.INCOMPLETE, lenient=True)      # 0: the prolog without --strict
    exit_code(Outcome.FINDINGS, drain_held=True)     # 0: the drain limit held the drain back
"""

from enum import Enum, IntEnum


class ExitCode(IntEnum):
    OK = 0  # no finding at or above --fail-on; for `parse`: the input parsed
    FINDINGS = 1  # findings at or above --fail-on (default: error)
    USAGE = 2  # bad command line: unknown option, bad value
    INCOMPLETE = 3  # an input could not be read or parsed: no verdict
    INTERNAL = 4  # a bug in topodiag (report it, with --debug output)


# What each code means, in the words README's and the man page's tables print (the docs generate them).
MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "ok: no finding at or above `--fail-on`; for `parse`, the input parsed; for `collect`, "
                 "the bundle was written; for `prolog` without `--strict`, also a node it could not see whole",
    ExitCode.FINDINGS: "findings at or above `--fail-on` (default: error); `fleet`: a node differs from the "
                       "majority, or two sources report one host name",
    ExitCode.USAGE: "usage: unknown option, bad value, missing argument",
    ExitCode.INCOMPLETE: "incomplete: an input could not be read or is not that tool's output (no verdict); "
                         "`fleet`: a node gave no report, or nothing was read",
    ExitCode.INTERNAL: "internal error in topodiag (rerun with `--debug` and report the traceback)",
}


class Outcome(str, Enum):
    """What a command ended with, before it is a number."""

    OK = "ok"  # a verdict with nothing at or above --fail-on; a bundle written; a file parsed
    FINDINGS = "findings"  # findings at or above --fail-on
    OUTLIERS = "outliers"  # fleet: a node (or an NCCL host) differs from the majority
    DUPLICATE_HOSTS = "duplicate hosts"  # fleet: two sources report one host name
    USAGE = "usage"  # a bad command line or site config: nothing ran
    INCOMPLETE = "incomplete"  # an input was not read: no verdict
    INPUT_ERROR = "input error"  # an input named on the command line cannot be read at all
    NO_REPORT = "no report"  # fleet: a node or input gave no report, or nothing was read
    INTERNAL = "internal"  # a check crashed, or a bug escaped


CODE_OF: dict[Outcome, ExitCode] = {
    Outcome.OK: ExitCode.OK,
    Outcome.FINDINGS: ExitCode.FINDINGS,
    Outcome.OUTLIERS: ExitCode.FINDINGS,
    Outcome.DUPLICATE_HOSTS: ExitCode.FINDINGS,
    Outcome.USAGE: ExitCode.USAGE,
    Outcome.INCOMPLETE: ExitCode.INCOMPLETE,
    Outcome.INPUT_ERROR: ExitCode.INCOMPLETE,
    Outcome.NO_REPORT: ExitCode.INCOMPLETE,
    Outcome.INTERNAL: ExitCode.INTERNAL,
}

# A verdict (the engine's ExitCode for a run's findings) as an Outcome.
_VERDICT = {ExitCode.OK: Outcome.OK, ExitCode.FINDINGS: Outcome.FINDINGS, ExitCode.USAGE: Outcome.USAGE,
            ExitCode.INCOMPLETE: Outcome.INCOMPLETE, ExitCode.INTERNAL: Outcome.INTERNAL}


def outcome_of(verdict: "int | ExitCode | Outcome") -> Outcome:
    """The Outcome a verdict stands for (a run's `exit_code`, already an Outcome: itself)."""
    if isinstance(verdict, Outcome):
        return verdict
    return _VERDICT[ExitCode(int(verdict))]


def exit_code(outcome: "Outcome | ExitCode | int", *, lenient: bool = False, drain_held: bool = False) -> int:
    """The exit code of `outcome`: CODE_OF, where

    lenient     (`prolog` without --strict) a node that could not be seen whole, or a check that
                crashed, exits 0: a diagnostic that could not see must not drain a node;
    drain_held  (`prolog --mark-offline`) findings whose drain the drain limit held back exit 0: Slurm
                drains a node whose prolog exits non-zero, which the limit said not to do."""
    code = CODE_OF[outcome_of(outcome)]
    if lenient and code in (ExitCode.INCOMPLETE, ExitCode.INTERNAL):
        return int(ExitCode.OK)
    if drain_held and code == ExitCode.FINDINGS:
        return int(ExitCode.OK)
    return int(code)


INTERRUPTED = 130  # Ctrl-C before a command's own handler: 128 + SIGINT, as a shell reports it


def signalled(signum: int) -> int:
    """The exit code after a terminating signal (SIGTERM, SIGINT, SIGHUP): 128 + its number."""
    return 128 + int(signum)
