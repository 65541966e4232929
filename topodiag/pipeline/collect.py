"""`topodiag collect`'s flow: this node into a bundle, its report.html beside the members."""

from __future__ import annotations

import os
import time
from typing import Optional

from ..errors import InputError, UsageError
from .diagnosis import LiveOptions, PathLike
from .inputs import parse_deadline, parse_deadline_after
from .run import diagnose


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

    from .. import bundle
    from ..live import collection as live_collection

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
                from ..bundle.redact import Redactor, redact_bundle_dir

                clean = os.path.join(tmp, "redacted")
                from ..live.commands import time_left

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
