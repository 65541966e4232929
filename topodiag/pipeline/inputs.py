"""Loading the inputs: files, directories and bundles, or this node live; and the deadlines parsing runs under."""

from __future__ import annotations

import os
import time
from typing import Iterable, Optional, Sequence

from ..errors import InputError, UsageError
from .diagnosis import LiveOptions, PathLike


def run_deadline() -> Optional[float]:
    """The live run's deadline (time.monotonic()) when a `--deadline` session is on, else None: what
    parse_deadline bounds parsing with (a parse still going then stops and its input is "failed",
    not read to its end)."""
    from ..live.commands import time_left

    left = time_left()
    return None if left is None else time.monotonic() + left


def parse_deadline(at: Optional[float]):
    """parsers.base.parse_deadline: parsers under it stop at `at`."""
    from ..parsers.base import parse_deadline as under

    return under(at)


def load(paths: Iterable[PathLike], source: Optional[str] = None):
    """Parse every file, directory and bundle the paths stand for (load/gather.py); `source` reads the
    loose files as that tool's output instead of detecting it. Raises BundleError for a bundle that
    cannot be trusted and InputError when there is nothing to read."""
    from ..load.gather import gather

    names = [os.fspath(p) for p in paths]
    if not names:
        raise UsageError("no inputs given")
    if source is not None:
        from ..parsers import names as source_names

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
    from ..bundle.shown import PATH_SHOWN, shown

    named = set(names) | {shown(n, PATH_SHOWN) for n in names}  # inputs are named escaped (printable)
    for s in statuses:
        if s.path in named and s.source is None and s.status in ("failed", "unparseable"):
            raise InputError(s.path, s.reason)


def collect_live(options: Optional[LiveOptions] = None):
    """Collect this node (NVML, sysfs, and unless `prolog` the commands) and parse what came back,
    in memory: the same parsers and statuses as reading the bundle `topodiag collect` would write."""
    from ..live import collection as live
    from ..load.gather import gather_records

    opts = options or LiveOptions()
    if opts.deadline_s <= 0:
        raise UsageError("--deadline: must be a positive number of seconds")
    started = time.monotonic()
    records = live.collect(live.Options(deadline_s=opts.deadline_s, prolog=opts.prolog, sysfs_root=opts.sysfs_root,
                                        nccl_logs=tuple(opts.nccl_logs), nccl_tests=tuple(opts.nccl_tests),
                                        kernel_log_since_s=opts.kernel_log_since_s),
                           progress=opts.progress)
    node = os.uname()  # this node's name and kernel (what socket.gethostname and platform.release read)
    with parse_deadline(parse_deadline_after(started, opts.deadline_s)):
        gathered = gather_records(records, host=node.nodename, label_root="live")
    gathered.records = records
    gathered.collected_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    gathered.host_facts = {"kernel": node.release}  # this node's (no subprocess)
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

