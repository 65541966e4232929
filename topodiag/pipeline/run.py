"""The whole run: the checklist over the inputs (diagnose), the model alone (survey)."""

from __future__ import annotations

import os
import time
from typing import Any, Iterable, Optional

from ..errors import UsageError
from .diagnosis import Diagnosis, LiveOptions, PathLike
from .inputs import collect_live, load, parse_deadline, run_deadline
from .platform import build_topology, choose_profile, describe_platform


def diagnose(paths: Optional[Iterable[PathLike]] = None, *, live: Optional[LiveOptions] = None,
             gathered: Any = None, host: Optional[str] = None, profile: Optional[str] = None,
             config: Optional[PathLike] = None, select: Any = None, ignore: Any = None, tags: Any = None,
             fail_on: str = "error", source: Optional[str] = None) -> Diagnosis:
    """Run the checklist and return the Diagnosis.

    paths     saved outputs, directories of them, bundles (directory or .tar.gz); or
    live      LiveOptions to collect this node (the default when neither paths nor gathered is given); or
    gathered  inputs already loaded (`load`, `collect_live`)
    host      the host the inputs come from (default: what a bundle or NCCL log says)
    profile   a platform profile name (rules/profiles/), default: detected from the GPU models
    config    a site config TOML (profile, [rules.CODE] overrides, [[hosts]] blocks)
    select, ignore, tags   which rules run (codes, families, slugs; tags such as "prolog")
    fail_on   the severity at or above which findings make exit code 1 ("never": none)
    source    read the paths' loose files as this tool's output (a parser's name) instead of detecting it

    Raises UsageError (ConfigError, SelectionError, ProfileError) before running anything, and
    InputError (BundleError) when the inputs cannot be read at all.
    """
    from ..engine import load_catalog, load_checks, parse_fail_on, run

    started = time.monotonic()
    try:
        fail_level = parse_fail_on(fail_on)
    except ValueError as exc:
        raise UsageError(f"--fail-on: {exc}") from None
    site = _site_config(config)
    if gathered is None:
        if paths is not None:
            with parse_deadline(run_deadline()):  # a live session's deadline (none for check --from)
                gathered = load(paths, source)
        else:
            gathered = collect_live(live)  # which parses under the live deadline (parse_deadline_after)
    topology = build_topology(gathered, host)
    rules_config: dict[str, Any] = {}
    config_info = None
    if site is not None:
        name = topology.node(topology.host()).get("name")
        rules_config, config_profile, matched = site.for_host(name)
        profile = profile or config_profile
        config_info = {"file": os.fspath(config), "host": name, "matched": matched}
    tests = getattr(gathered.engine_inputs().get("nccl_tests"), "items", ())
    prof, profile_how = choose_profile(profile, topology, [value for value, _ in tests])
    platform = describe_platform(topology, prof, [value for value, _ in tests])
    inputs = engine_inputs(gathered, topology, prof)
    catalog = load_catalog(examples=False)
    load_checks(codes=_checked_codes(catalog, select, ignore, tags))
    outcome = run(catalog, inputs, select=select, ignore=ignore, tags=tags, config=rules_config,
                  fail_on=fail_level, problems=gathered.problems)
    return Diagnosis(outcome, topology, list(gathered.statuses), prof, profile_how, config_info, catalog,
                     time.monotonic() - started, list(getattr(gathered, "records", None) or ()), platform,
                     getattr(gathered, "collected_at", None), dict(getattr(gathered, "host_facts", None) or {}))


def _checked_codes(catalog, select: Any, ignore: Any, tags: Any) -> Optional[set[str]]:
    """The codes of the selected rules that have a check (the modules to import: the prolog's few);
    None (every check module) when the selection is a usage error, which run() then reports."""
    from ..engine.runner import SelectionError, select_rules

    try:
        return {r.code for r in select_rules(catalog, select, ignore, tags) if not r.builtin}
    except SelectionError:
        return None


def engine_inputs(gathered, topology, profile) -> dict[str, Any]:
    """What the checks take by parameter name: each source's parsed files, the combined views of
    alternative sources, the topology and the profile."""
    from ..model.combiners import combine

    inputs: dict[str, Any] = dict(gathered.engine_inputs())
    inputs.update(combine(inputs))
    inputs["topology"] = topology
    inputs["profile"] = profile
    return inputs


def _site_config(config: Optional[PathLike]):
    if not config:
        return None
    from ..engine.site_config import load as load_site_config

    return load_site_config(os.fspath(config))



def survey(paths: Optional[Iterable[PathLike]] = None, *, live: Optional[LiveOptions] = None,
           host: Optional[str] = None) -> Diagnosis:
    """The node's model without the checklist (`topodiag show`): a Diagnosis whose outcome is None."""
    started = time.monotonic()
    if paths is not None:
        with parse_deadline(run_deadline()):
            gathered = load(paths)
    else:
        gathered = collect_live(live)
    topology = build_topology(gathered, host)
    return Diagnosis(None, topology, list(gathered.statuses), elapsed_s=time.monotonic() - started,
                     records=list(gathered.records), collected_at=gathered.collected_at,
                     host_facts=dict(gathered.host_facts))

