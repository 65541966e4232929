"""The rule engine: the TOML catalog, the `@check` registry, the runner and what it reports.

    from topodiag.engine import load_catalog, run, check, hit
    outcome = run(load_catalog(), {"topology": topo, "nvidia_smi_topo_m": parsed}, fail_on="error")

Cheap to import (no networkx, no rich): the prolog path pays only for the standard library.
"""

from .catalog import (
    Catalog,
    CatalogError,
    Example,
    Rule,
    UnknownMessage,
    default_rules_dir,
    load_catalog,
    load_rule,
)
from .findings import Evidence, Finding, Hit, Severity, hit, when
from .registry import CheckSpec, check, load_checks
from .runner import (
    ConfigError,
    Crash,
    Each,
    InputProblem,
    Outcome,
    SelectionError,
    Skipped,
    exit_code_for,
    parse_fail_on,
    run,
    select_rules,
    split_codes,
)

__all__ = [
    "Catalog", "CatalogError", "Example", "Rule", "UnknownMessage", "default_rules_dir", "load_catalog", "load_rule",
    "Evidence", "Finding", "Hit", "Severity", "hit", "when",
    "CheckSpec", "check", "load_checks",
    "ConfigError", "Crash", "Each", "InputProblem", "Outcome", "SelectionError", "Skipped",
    "exit_code_for", "parse_fail_on", "run", "select_rules", "split_codes",
]
