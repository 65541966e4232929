"""Every error topodiag raises on purpose, in one place; each is one line for a person.

The library raises these and never exits; only `topodiag.cli` turns them into exit codes (its
table is `topodiag.cli.errors.OUTCOME_FOR`, the codes `topodiag.exit_codes.exit_code`). Anything else that escapes is a bug (exit 4).

    TopodiagError
    ├── UsageError        a bad option or setting: fix the command line or the config (exit 2)
    │   ├── ConfigError       a site config or rule override that does not fit the catalog
    │   ├── SelectionError    --select/--ignore/--tags naming no rule
    │   └── ProfileError      an unknown or unreadable platform profile
    └── InputError        an input that cannot be read: no verdict (exit 3)
        ├── ParseError        text that is not the output of the tool its parser reads
        ├── BundleError       a bundle archive or manifest that cannot be trusted
        └── RedactionError    something that cannot be redacted safely
    CatalogError          the shipped rule files are invalid (a packaging bug: exit 4)
"""

from __future__ import annotations

from typing import Iterable


class TopodiagError(Exception):
    """Base of topodiag's own errors; `str()` is the one line shown to the user."""


class UsageError(TopodiagError, ValueError):
    """A bad option value or setting (the user can fix the command line or config)."""


class ConfigError(UsageError):
    """A site config or rule override (severity, params, enabled) that does not fit the catalog."""


class SelectionError(UsageError):
    """A --select/--ignore/--tags entry that names no rule."""


class ProfileError(UsageError):
    """A profile that is unknown or cannot be used: the message names the file and the key."""


class InputError(TopodiagError):
    """An input that cannot be read; `where` is `file` or `file:line` (may be empty)."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message


class ParseError(InputError):
    """Text that is not the output of the tool the parser reads.

    `line_no` is 1-based and counts lines of the text as given (the provenance header included,
    since the loader blanks header lines rather than removing them); 0 when no line applies.
    """

    def __init__(self, message: str, line_no: int = 0):
        Exception.__init__(self, message)
        self.where = ""
        self.message = message
        self.line_no = line_no

    def __str__(self) -> str:
        return f"line {self.line_no}: {self.message}" if self.line_no else self.message


class BundleError(InputError):
    """A bundle whose archive or manifest cannot be used at all (one line: where and what was expected)."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self.where = ""
        self.message = message


class RedactionError(InputError):
    """Something that cannot be redacted safely (one line: what and where)."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self.where = ""
        self.message = message


class CatalogError(TopodiagError):
    """One or more invalid rule files; `errors` holds one line per problem."""

    def __init__(self, errors: Iterable[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))
