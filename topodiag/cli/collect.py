"""`topodiag collect`: this node's interconnect, recorded as a support bundle (tar.gz or directory)."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from ..bundle.shown import shown
from ..errors import BundleError, RedactionError
from ..exit_codes import Outcome, exit_code
from .app import app
from .errors import guarded


@app.command("collect")
@guarded
def collect_command(
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE",
                                         help="Where to write: FILE.tar.gz (default topodiag-HOST-TIME.tar.gz "
                                              "here) or, without a .tar.gz/.tgz/.tar suffix, a bundle directory."),
    redact: bool = typer.Option(False, "--redact",
                                help="Replace hostnames, IP and MAC addresses, IB GUIDs and LIDs, GPU UUIDs and "
                                     "serials with consistent tokens in every member."),
    nccl_logs: List[str] = typer.Option([], "--nccl-log", metavar="FILE",
                                        help="An NCCL_DEBUG=INFO log to put in the bundle (repeatable)."),
    nccl_tests: List[str] = typer.Option([], "--nccl-tests", metavar="FILE",
                                         help="An nccl-tests output to put in the bundle (repeatable)."),
    deadline: float = typer.Option(60.0, "--deadline", metavar="SECONDS",
                                   help="The whole collection's deadline (each source has its own timeout too)."),
    sysfs_root: str = typer.Option("/", "--sysfs-root", metavar="DIR",
                                   help="Read /sys and /proc under DIR (a container with the host's mounted elsewhere)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing FILE.tar.gz given with -o."),
) -> None:
    """Collect this node (NVML, sysfs, nvidia-smi, ibstat, ibv_devinfo, show_gids, given logs) into a
    bundle that `topodiag check --from` reads anywhere. Prints the bundle's path.

    Exit 0 when the bundle was written (sources that failed or are not installed are recorded in
    it), 2 for a usage error, 3 when it could not be written or a given file could not be read. An
    output path that is a symbolic link is refused (exit 3): the bundle is written only at the path
    given, through a private temporary folder beside it, never through a link. An archive that
    already exists is replaced only with --force (else exit 2, before collecting).
    """
    from ..live.commands import session
    from ..pipeline import LiveOptions, collect_bundle
    from .check import positive_deadline, progress_line

    positive_deadline(deadline)  # nan, inf, 0, negatives: a usage error (exit 2) before anything runs
    if output is not None and os.path.islink(output):  # before collecting: never written through
        raise BundleError(f"{shown(output)}: is a symbolic link; refusing to write through it (give a path "
                          "that is not a link, or remove the link)")
    _refuse_existing(output, force)
    tty = sys.stderr.isatty()
    if tty:
        print(f"topodiag: collecting (deadline {deadline:g} s)", file=sys.stderr)
    live = LiveOptions(deadline_s=deadline, sysfs_root=sysfs_root, nccl_logs=tuple(nccl_logs),
                       nccl_tests=tuple(nccl_tests), progress=progress_line if tty else None)
    try:
        with session(deadline):  # every tool under --deadline; a SIGTERM/SIGINT/SIGHUP kills their groups
            target, records = collect_bundle(output, live, redact=redact)
    except RedactionError as exc:
        raise RedactionError(f"--redact: {exc}") from None
    print(collected_line(records), file=sys.stderr)
    print(target)
    raise typer.Exit(exit_code(Outcome.OK))


def _refuse_existing(output: Optional[str], force: bool) -> None:
    """UsageError for an -o archive that exists, unless --force (a folder is checked by collect_bundle:
    it must be new or empty)."""
    from ..bundle.archive import ARCHIVE_SUFFIXES
    from ..errors import UsageError

    if output is None or force or not output.lower().endswith(ARCHIVE_SUFFIXES):
        return
    if os.path.lexists(output) and not os.path.isdir(output):
        raise UsageError(f"{shown(output)}: exists; give --force to replace it, or a new name")


def collected_line(records) -> str:
    """What stderr says after collecting, at most `width` (80) columns: how many sources gave output,
    then one wrapped paragraph per what happened to the others ("not on this host", "failed", "timed
    out"), each source with its short reason; a source fed by two probes is named by the probe
    (sysfs_infiniband (pyverbs.json)), so a probe that ran is never reported as absent."""
    import textwrap

    got = sum(1 for r in records if r.status == "ok")
    groups: dict[str, list[str]] = {}
    for r in records:
        if r.status == "ok":
            continue
        name = r.label
        reason = " ".join(str(r.reason or "").split())
        short = reason if len(reason) <= 60 else reason[:57] + "..."
        key = "not on this host" if r.status == "not_available" else r.status.replace("_", " ")
        groups.setdefault(key, []).append(f"{name}: {short}" if short else name)
    lines = [f"topodiag: collected {got} of {len(records)} sources"]
    for key, items in groups.items():
        lines.append(textwrap.fill(f"{key}: {'; '.join(items)}", width=80, initial_indent="  ",
                                   subsequent_indent="    ", break_long_words=True, break_on_hyphens=False))
    return "\n".join(lines)
