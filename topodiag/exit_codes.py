"""The one exit-code table of topodiag (README and man page list the same)."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # no finding at or above --fail-on; for `parse`: the input parsed
    FINDINGS = 1  # findings at or above --fail-on (default: error)
    USAGE = 2  # bad command line: unknown option, bad value
    INCOMPLETE = 3  # an input could not be read or parsed: no verdict
    INTERNAL = 4  # a bug in topodiag (report it, with --debug output)
