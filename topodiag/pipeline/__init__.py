"""The pipeline at the centre: inputs (files, bundles, or this node live) -> parsed inputs -> the
node's Topology -> the platform profile (chosen once, here) -> the rules -> a Diagnosis.

    import topodiag
    d = topodiag.diagnose(["fixtures/hosts/hgx-h100-healthy-assembled"])
    d.exit_code, [f.code for f in d.findings], d.topology.graph, d.to_json()

This is the library API. It never exits and never prints: it raises the typed errors of
`topodiag.errors` (UsageError for a bad option or config, InputError for inputs that cannot be read
at all), and everything else it learns about the inputs (a tool that failed, a file that is not that
tool's output, a check that crashed) is a finding of the SYS family in the Diagnosis, never an
exception.

Two halves, one layer apart (tests/architecture/test_layers.py):

    diagnosis, inputs, platform, run, collect  the node's flow: load or collect -> model -> profile ->
                                               rules (diagnose, survey, collect_bundle); what fleet/,
                                               plan/ and compare/ call to read a node
    commands/                                  one entry point per command above that (check, show,
                                               collect, prolog, fleet, plan, compare): a request in,
                                               a result out with its report and its Outcome
                                               (topodiag/exit_codes.py); the CLI only parses options,
                                               renders and exits with exit_code(outcome)
"""

from __future__ import annotations

from .collect import collect_bundle
from .diagnosis import Diagnosis, LiveOptions, PathLike
from .inputs import (PARSE_GRACE_MIN_S, PARSE_GRACE_SHARE, collect_live, load, parse_deadline,
                     parse_deadline_after, run_deadline)
from .platform import (PROFILE_ONLY, build_topology, choose_profile, describe_platform, gpu_models,
                       named_profile)
from .run import diagnose, engine_inputs, survey

__all__ = [
    "Diagnosis", "LiveOptions", "PathLike", "PARSE_GRACE_MIN_S", "PARSE_GRACE_SHARE", "PROFILE_ONLY",
    "build_topology", "choose_profile", "collect_bundle", "collect_live", "describe_platform", "diagnose",
    "engine_inputs", "gpu_models", "load", "named_profile", "parse_deadline", "parse_deadline_after",
    "run_deadline", "survey",
]
