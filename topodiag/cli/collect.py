"""`topodiag collect`: this node's interconnect, recorded as a support bundle (tar.gz or directory)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import List, Optional

import typer

from ..exit_codes import ExitCode
from . import app
from .check import fail


@app.command("collect")
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
) -> None:
    """Collect this node (NVML, sysfs, nvidia-smi, ibstat, ibv_devinfo, show_gids, given logs) into a
    bundle that `topodiag check --from` reads anywhere. Prints the bundle's path.

    Exit 0 when the bundle was written (sources that failed or are not installed are recorded in
    it), 2 for a usage error, 3 when it could not be written or a given file could not be read.
    """
    import tempfile

    from .. import bundle
    from ..live import collection as live

    if deadline <= 0:
        fail("--deadline: must be a positive number of seconds", ExitCode.USAGE)
    for path in nccl_logs + nccl_tests:
        if not os.path.isfile(path):
            fail(f"{path}: no such file (given to --nccl-log / --nccl-tests)", ExitCode.INCOMPLETE)
    tty = sys.stderr.isatty()
    if tty:
        print(f"topodiag: collecting (deadline {deadline:g} s)", file=sys.stderr)
    opts = live.Options(deadline_s=deadline, sysfs_root=sysfs_root, nccl_logs=tuple(nccl_logs),
                        nccl_tests=tuple(nccl_tests))
    from .check import _progress_line

    records = live.collect(opts, progress=_progress_line if tty else None)
    facts = live.host_facts(sysfs_root)
    host = facts["hostname"]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    try:
        with tempfile.TemporaryDirectory(prefix="topodiag-collect-") as tmp:
            root = os.path.join(tmp, "bundle")
            bundle.write_bundle_dir(root, records, host, facts)
            if redact:
                from ..bundle.redact import RedactionError, Redactor, redact_bundle_dir

                clean = os.path.join(tmp, "redacted")
                try:
                    redactor = redact_bundle_dir(root, clean, Redactor(hostnames=[host]))
                except RedactionError as exc:
                    fail(f"--redact: {exc}", ExitCode.INCOMPLETE)
                root, host = clean, redactor.redact(host)
            target = output or f"topodiag-{host}-{stamp}.tar.gz"
            if target.lower().endswith(bundle.ARCHIVE_SUFFIXES):
                bundle.pack(root, target)
            else:
                if os.path.exists(target) and (not os.path.isdir(target) or os.listdir(target)):
                    fail(f"{target}: exists and is not an empty directory; give a new directory or a .tar.gz name",
                         ExitCode.USAGE)
                shutil.copytree(root, target, symlinks=False, dirs_exist_ok=True)
    except OSError as exc:
        fail(f"{output or 'the bundle'}: cannot write the bundle: {exc.strerror or exc}", ExitCode.INCOMPLETE)
    got = sum(1 for r in records if r.status == "ok")
    missing = [f"{r.source} {r.status.replace('_', ' ')}" for r in records if r.status != "ok"]
    print(f"topodiag: collected {got} of {len(records)} sources" + (f" ({'; '.join(missing)})" if missing else ""),
          file=sys.stderr)
    print(target)
    raise typer.Exit(ExitCode.OK)
