"""The pipeline at the centre: inputs (files, bundles, or this node live) -> parsed inputs -> the
node's Topology -> the platform profile (chosen once, here) -> the rules -> a Diagnosis.

    import topodiag
    d = topodiag.diagnose(["fixtures/hosts/hgx-h100-healthy-assembled"])
    d.exit_code, [f.code for f in d.findings], d.topology.graph, d.to_json()

This is the library API; the commands (`topodiag.cli`) and `topodiag.fleet` are shells around it.
It never exits and never prints: it raises the typed errors of `topodiag.errors` (UsageError for a
bad option or config, InputError for inputs that cannot be read at all), and everything else it
learns about the inputs (a tool that failed, a file that is not that tool's output, a check that
crashed) is a finding of the SYS family in the Diagnosis, never an exception.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from .errors import InputError, ProfileError, UsageError

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class LiveOptions:
    """How to collect this node live: the whole collection's deadline, the prolog's passive-only
    sources, where /sys and /proc are (a container with the host's mounted elsewhere), and an
    optional callable(record) told as each source finishes (progress on a terminal)."""

    deadline_s: float = 30.0
    prolog: bool = False
    sysfs_root: str = "/"
    nccl_logs: tuple[str, ...] = ()
    nccl_tests: tuple[str, ...] = ()
    progress: Optional[Callable[[Any], None]] = None
    kernel_log_since_s: Optional[float] = None  # judge only the kernel log's last S seconds (prolog)


@dataclass
class Diagnosis:
    """What a run found, and everything the renderers need to say so.

    `outcome` is the engine's (findings, skipped rules, crashes, exit code); `statuses` lists every
    input and how it went; `profile` is the platform profile the rules used (None: none applied)
    and `profile_how` how it was chosen; `config_info` which site-config patterns matched."""

    outcome: Any
    topology: Any
    statuses: list
    profile: Any = None
    profile_how: str = "none"
    config_info: Optional[dict] = None
    catalog: Any = None
    elapsed_s: float = 0.0
    records: list = field(default_factory=list)  # live collection's records (empty for files)
    platform: str = ""  # the platform inferred from the inputs' hints, its confidence, and what did not run for want of one
    collected_at: Optional[str] = None  # UTC ISO 8601: when the inputs were collected, where known
    host_facts: dict = field(default_factory=dict)  # kernel, ofed of the collecting host, where known
    run_info: dict = field(default_factory=dict)  # the shell's: generated_at, command (render/meta.py)

    @property
    def findings(self) -> tuple:
        return self.outcome.findings

    @property
    def skipped(self) -> tuple:
        return self.outcome.skipped

    @property
    def exit_code(self) -> int:
        return int(self.outcome.exit_code)

    @property
    def host(self) -> Optional[str]:
        host = self.topology.host()
        return self.topology.node(host).get("name") if host else None

    def to_json(self) -> dict:
        """The JSON report, as `topodiag check --format json` prints it (render/json_report.py)."""
        from .render.json_report import report

        return report(self)

    def render(self, fmt: str = "text", stream=None, **options: Any) -> None:
        """Write the report in one of the registered formats (`topodiag.render.FORMATS`)."""
        from .render import render

        render(fmt, self, stream, **options)


# -- loading ---------------------------------------------------------------------------------------

def run_deadline() -> Optional[float]:
    """The live run's deadline (time.monotonic()) when a `--deadline` session is on, else None: what
    parse_deadline bounds parsing with (a parse still going then stops and its input is "failed",
    not read to its end)."""
    from .live.commands import time_left

    left = time_left()
    return None if left is None else time.monotonic() + left


def parse_deadline(at: Optional[float]):
    """parsers.base.parse_deadline: parsers under it stop at `at`."""
    from .parsers.base import parse_deadline as under

    return under(at)


def load(paths: Iterable[PathLike], source: Optional[str] = None):
    """Parse every file, directory and bundle the paths stand for (load/gather.py); `source` reads the
    loose files as that tool's output instead of detecting it. Raises BundleError for a bundle that
    cannot be trusted and InputError when there is nothing to read."""
    from .load.gather import gather

    names = [os.fspath(p) for p in paths]
    if not names:
        raise UsageError("no inputs given")
    if source is not None:
        from .parsers import names as source_names

        if source not in source_names():
            raise UsageError(f"--source: unknown source {source!r}; one of: {', '.join(source_names())}")
    gathered = gather(names, source)
    if not gathered.statuses:
        raise InputError(", ".join(names), "no files to read")
    _refuse_unreadable(names, gathered.statuses)
    _refuse_mixed_hosts(gathered)
    return gathered


def _refuse_mixed_hosts(gathered) -> None:
    """Inputs of two hosts are never merged into one node: a UsageError saying how to split them."""
    hosts = gathered.host_names()
    if len(hosts) < 2:
        return
    each = "; ".join(f"{h}: {', '.join(labels[:2])}{' ...' if len(labels) > 2 else ''}" for h, labels in hosts.items())
    firsts = " ".join(labels[0] for labels in hosts.values())
    raise UsageError(f"the inputs come from {len(hosts)} hosts ({each}): one node's inputs make one report; "
                     f"check each host on its own (`topodiag check --from {next(iter(hosts.values()))[0]}`), "
                     f"or compare them with `topodiag fleet {firsts}`")

def _refuse_unreadable(names: Sequence[str], statuses) -> None:
    """A file named on the command line that is missing, empty, binary or no tool's output is a
    mistake to say in one line (InputError), not a report: a report about it would read as a node
    that was checked. Files found in a directory or a bundle stay findings (SYS001/SYS002)."""
    from .bundle.shown import PATH_SHOWN, shown

    named = set(names) | {shown(n, PATH_SHOWN) for n in names}  # inputs are named escaped (printable)
    for s in statuses:
        if s.path in named and s.source is None and s.status in ("failed", "unparseable"):
            raise InputError(s.path, s.reason)


def collect_live(options: Optional[LiveOptions] = None):
    """Collect this node (NVML, sysfs, and unless `prolog` the commands) and parse what came back,
    in memory: the same parsers and statuses as reading the bundle `topodiag collect` would write."""
    from .live import collection as live
    from .load.gather import gather_records

    opts = options or LiveOptions()
    if opts.deadline_s <= 0:
        raise UsageError("--deadline: must be a positive number of seconds")
    started = time.monotonic()
    records = live.collect(live.Options(deadline_s=opts.deadline_s, prolog=opts.prolog, sysfs_root=opts.sysfs_root,
                                        nccl_logs=tuple(opts.nccl_logs), nccl_tests=tuple(opts.nccl_tests),
                                        kernel_log_since_s=opts.kernel_log_since_s),
                           progress=opts.progress)
    import socket

    with parse_deadline(parse_deadline_after(started, opts.deadline_s)):
        gathered = gather_records(records, host=socket.gethostname(), label_root="live")
    gathered.records = records
    gathered.collected_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    import platform

    gathered.host_facts = {"kernel": platform.release()}  # this node's (no subprocess)
    return gathered


PARSE_GRACE_SHARE = 0.2  # of --deadline: what parsing gets at least after a collection that used all of it
PARSE_GRACE_MIN_S = 2.0


def parse_deadline_after(started: float, deadline_s: float) -> float:
    """When the parsing of a live collection (begun at `started`, time.monotonic()) must stop: at
    --deadline, or, when collection took (nearly) all of it (a hung tool waited for to the end),
    a fifth of --deadline (at least 2 s) after collection ended, so that the sources that did
    answer are still read. Either way bounded: `check --deadline 120` with ten tools flooding 64 MB
    each took 7 minutes of parsing before."""
    grace = max(PARSE_GRACE_MIN_S, PARSE_GRACE_SHARE * deadline_s)
    return max(started + deadline_s, time.monotonic() + grace)


# -- the model and the profile ---------------------------------------------------------------------

def build_topology(gathered, host: Optional[str] = None):
    """The node's Topology from the parsed inputs (model/)."""
    from .model import build

    return build(gathered.parsed, host=host or gathered.host)


def named_profile(name: str):
    """The profile called `name`; ProfileError (a usage error) when it is unknown or unreadable."""
    from .profiles import load_profiles

    profiles = load_profiles()
    if name not in profiles:
        raise ProfileError(f"--profile: unknown profile {name!r}; one of: {', '.join(profiles)}")
    return profiles[name]


def gpu_models(topology) -> list[str]:
    """The GPU model names the model's GPUs carry."""
    return [m for g in topology.gpus() if (m := topology.node(g).get("model"))]


def _nccl_tests_layout(results) -> tuple[list[str], Optional[int]]:
    """GPU names and GPUs per node from the "# Rank ... on HOST device N ... NVIDIA ..." lines of the
    first nccl-tests run that has them (None per node when the nodes differ)."""
    from .parsers.base import to_jsonable

    for result in results:  # the devices only: a big log's result holds thousands of rows
        raw = result.get("devices") if isinstance(result, dict) else getattr(result, "devices", ())
        devices = [d for d in (to_jsonable(d) for d in raw or ()) if isinstance(d, dict)]
        first = [d for d in devices if (d.get("run") or 0) == (devices[0].get("run") or 0)] if devices else []
        names = [d["name"] for d in first if d.get("name")]
        if names:
            per_host: dict[str, int] = {}
            for d in first:
                per_host[d.get("host") or "?"] = per_host.get(d.get("host") or "?", 0) + 1
            counts = set(per_host.values())
            return names, counts.pop() if len(counts) == 1 else None
    return [], None


def choose_profile(name: Optional[str], topology, nccl_tests: Iterable[Any] = ()) -> tuple[Any, str]:
    """The profile every rule uses, chosen once: the one named (--profile or the site config), else
    the one the GPU models match (the model's GPUs, else an nccl-tests run's rank lines, whose GPUs per
    node must match the profile's); and how it was chosen (the report's `profile`)."""
    if name:
        return named_profile(name), f"{name} (given)"
    from .model.gpu_set import inventory

    models = gpu_models(topology)
    gpus = inventory(topology)["count"] or None  # one set by PCI bus id, never a sum of listings
    where = ""
    if not models:
        models, gpus = _nccl_tests_layout(nccl_tests)
        where = f" x{gpus} per node in an nccl-tests run" if models and gpus else ""
        if models and gpus is None:
            return None, "none (the nccl-tests nodes have different GPU counts)"
    if not models:
        return None, "none (the inputs name no GPU model)"  # without reading the profiles
    from .profiles import detect_profile, load_profiles

    try:
        profiles = load_profiles()
    except ProfileError:
        return None, "none (profiles unreadable)"
    prof = detect_profile(models, profiles, gpu_count=gpus)
    if prof is None:
        return None, "none (no profile matches)"
    short = f"; {gpus} of its {prof.gpus} GPUs seen" if gpus and gpus < prof.gpus else ""
    return prof, f"{prof.name} (detected from {models[0]}{where}{short})"


# The rules that judge only against a profile, and what they would have judged.
PROFILE_ONLY = ("TOPO006 (GPUs missing against the platform's count)",
                "TOPO007 (topo -m NIC rows against its compute NICs)")


def describe_platform(topology, prof, nccl_tests: Iterable[Any] = ()) -> str:
    """The platform the inputs' hints describe, how sure that is and which hints decided it (GPU model from
    any source, an nccl-tests run's rank lines included; GPU and NIC counts; NV#/PCIe pairs; Grace GPU NUMA
    ids; NVSwitches; HCA models; PCIe generation), and, without a profile, the rules that did not judge."""
    import dataclasses

    from .checks._design import hints_of
    from .knowledge.platform import infer

    hints = hints_of(topology, prof)
    if not hints.gpu_models:
        models, per_node = _nccl_tests_layout(nccl_tests)
        if models:
            hints = dataclasses.replace(hints, gpu_models=tuple(models[:1]), gpu_count=hints.gpu_count or per_node,
                                        gpu_model_source="an nccl-tests run's rank lines (per node)")
    words = infer(hints).words()
    if prof is None:
        words += "; no profile, so not judged: " + ", ".join(PROFILE_ONLY)
    return words


# -- the whole run ---------------------------------------------------------------------------------

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
    from .engine import load_catalog, load_checks, parse_fail_on, run

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
    load_checks()
    outcome = run(catalog, inputs, select=select, ignore=ignore, tags=tags, config=rules_config,
                  fail_on=fail_level, problems=gathered.problems)
    return Diagnosis(outcome, topology, list(gathered.statuses), prof, profile_how, config_info, catalog,
                     time.monotonic() - started, list(getattr(gathered, "records", None) or ()), platform,
                     getattr(gathered, "collected_at", None), dict(getattr(gathered, "host_facts", None) or {}))


def engine_inputs(gathered, topology, profile) -> dict[str, Any]:
    """What the checks take by parameter name: each source's parsed files, the combined views of
    alternative sources, the topology and the profile."""
    from .model.combiners import combine

    inputs: dict[str, Any] = dict(gathered.engine_inputs())
    inputs.update(combine(inputs))
    inputs["topology"] = topology
    inputs["profile"] = profile
    return inputs


def _site_config(config: Optional[PathLike]):
    if not config:
        return None
    from .engine.site_config import load as load_site_config

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


def _write_report_html(root: str, at: Optional[float] = None) -> None:
    """report.html beside the members (not a manifest member: readers ignore it): the check of the
    bundle as one page for the ticket, from the (redacted, when asked) members themselves, with paths
    relative to the bundle. A bundle whose check fails gets no page; the bundle itself is written."""
    import io

    if at is not None and time.monotonic() >= at:  # collect --deadline: no time left for the page
        return
    try:
        buf = io.StringIO()
        with parse_deadline(at):
            diagnose([root]).render("html", buf)
    except Exception:  # the page is a convenience: never the reason a collection is lost
        return
    base = root.rstrip("/")
    page = buf.getvalue().replace(base + "/", "").replace(base, "bundle")
    with open(os.path.join(root, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(page)


def collect_bundle(output: Optional[PathLike] = None, live: Optional[LiveOptions] = None,
                   redact: bool = False) -> tuple[str, list]:
    """Collect this node into a bundle (`topodiag collect`): a .tar.gz/.tgz/.tar path, or any other
    path as a bundle directory (new or empty); default `topodiag-HOST-TIME.tar.gz` here. With
    `redact`, identifiers are replaced consistently in every member. Returns (the bundle's path,
    the collection's records). Raises UsageError for a target that exists, InputError for a file
    given to --nccl-log/--nccl-tests that is missing, and InputError when the bundle cannot be written
    or redacted."""
    import tempfile

    from . import bundle
    from .live import collection as live_collection

    opts = live or LiveOptions(deadline_s=60.0)
    if opts.deadline_s <= 0:
        raise UsageError("--deadline: must be a positive number of seconds")
    for path in tuple(opts.nccl_logs) + tuple(opts.nccl_tests):
        if not os.path.isfile(path):
            raise InputError(path, "no such file (given to --nccl-log / --nccl-tests)")
    target = os.fspath(output) if output is not None else None
    if target and not target.lower().endswith(bundle.ARCHIVE_SUFFIXES) and os.path.exists(target) and (
            not os.path.isdir(target) or os.listdir(target)):
        raise UsageError(f"{target}: exists and is not an empty directory; give a new directory or a .tar.gz name")
    started = time.monotonic()
    records = live_collection.collect(
        live_collection.Options(deadline_s=opts.deadline_s, sysfs_root=opts.sysfs_root,
                                nccl_logs=tuple(opts.nccl_logs), nccl_tests=tuple(opts.nccl_tests)),
        progress=opts.progress)
    facts = live_collection.host_facts(opts.sysfs_root)
    host = facts["hostname"]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    try:
        with tempfile.TemporaryDirectory(prefix="topodiag-collect-") as tmp:
            root = os.path.join(tmp, "bundle")
            bundle.write_bundle_dir(root, records, host, facts)
            if redact:
                from .bundle.redact import Redactor, redact_bundle_dir

                clean = os.path.join(tmp, "redacted")
                from .live.commands import time_left

                left = time_left()  # collect --deadline bounds redaction too
                at = None if left is None else time.monotonic() + left
                # the parsers that find host names stop there as well: a member they could not read
                # then is never written, since the Redactor refuses to go on past the same deadline
                with parse_deadline(at):
                    redactor = redact_bundle_dir(root, clean, Redactor(hostnames=[host], deadline=at))
                root, host = clean, redactor.redact(host)
            _write_report_html(root, parse_deadline_after(started, opts.deadline_s))  # its parsing bounded as a check's
            if not target:  # the host name as a file name: no '/' nor control characters (a hostile hostname file)
                import re

                target = f"topodiag-{re.sub(r'[^A-Za-z0-9._-]+', '_', host or 'host')[:64]}-{stamp}.tar.gz"
            if target.lower().endswith(bundle.ARCHIVE_SUFFIXES):
                bundle.pack(root, target)
            else:
                bundle.archive.place_dir(root, target)  # a private folder renamed onto target: no write through a link
    except OSError as exc:
        raise InputError(target or "the bundle", f"cannot write the bundle: {exc.strerror or exc}") from None
    return target, records
