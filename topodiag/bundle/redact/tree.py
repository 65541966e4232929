"""Redacting a tree or a bundle directory: every member read (as text; a large NCCL log or
nccl-tests output is streamed, topodiag/bundle/redact_stream.py), the host names found in all of
them registered first (find_hosts.hostnames_in), then every member, path and link target redacted
with one Redactor, and a bundle's manifest rewritten (its strings redacted, each member's sha256
recomputed, "redacted": true). Binary members, special files and links that leave the tree are
refused before anything is written: nothing is ever copied unredacted."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from typing import Optional

from ...errors import RedactionError
from ..manifest import open_regular
from ..shown import PATH_SHOWN, shown
from .core import Redactor
from .find_hosts import _prompt_hosts, hostnames_in
from .lids import SYSFS_LID_MEMBER
from .names import plausible_host
from .serials import SYSFS_SERIAL_MEMBER


def _read_tree(src_dir: str, deadline: Optional[float] = None) -> tuple[dict[str, str], dict[str, str], dict[str, set]]:
    """Every file under src_dir as text (relative '/'-separated path -> text), every link that
    stays inside the tree (path -> its relative target, as a sysfs snapshot records them), and the
    large members, which are not read whole (path -> the host names their first streaming pass
    found, topodiag/bundle/redact_stream.py). RedactionError naming every member that is binary
    (not UTF-8 text, or with NUL bytes), not a regular file, or a link that is absolute or leaves the
    tree. `deadline` (monotonic) is checked per member and per block of a large member's scan."""
    from .. import redact_stream

    members: dict[str, str] = {}
    links: dict[str, str] = {}
    large: dict[str, set] = {}
    refused: list[str] = []
    top = os.path.realpath(src_dir)
    for root, dirs, files in os.walk(src_dir):
        dirs.sort()
        for name in sorted(dirs + files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, src_dir).replace(os.sep, "/")
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                inside = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(full)), target))
                if os.path.isabs(target) or not (inside + os.sep).startswith(os.path.abspath(src_dir) + os.sep) or (
                        not os.path.realpath(full).startswith(top + os.sep) and os.path.exists(full)):
                    refused.append(f"{shown(rel)} (a link out of the tree: {shown(target)})")
                else:
                    links[rel] = target.replace(os.sep, "/")
                continue
            if not stat.S_ISREG(st.st_mode):
                refused += [] if stat.S_ISDIR(st.st_mode) else [f"{shown(rel)} (not a regular file)"]
                continue
            if st.st_size >= redact_stream.LARGE_MEMBER_BYTES and _streamable(rel, full):
                try:
                    large[rel] = redact_stream.scan(full, _prompt_hosts, deadline)
                except redact_stream.DeadlinePassed:
                    raise
                except RedactionError:
                    refused.append(f"{shown(rel)} (binary: not UTF-8 text)")
                continue
            redact_stream.check_deadline(deadline)
            with open_regular(full) as fh:  # no FIFO put there in between: never blocks
                data = fh.read()
            try:
                if b"\0" in data:
                    raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
                members[rel] = data.decode("utf-8")
            except UnicodeDecodeError:
                refused.append(f"{shown(rel)} (binary: not UTF-8 text)")
    if refused:
        shown_list = ", ".join(refused[:20]) + (f" and {len(refused) - 20} more" if len(refused) > 20 else "")
        raise RedactionError(f"{shown(src_dir, PATH_SHOWN)}: cannot redact {len(refused)} member(s), and will not "
                             f"copy them unredacted: {shown_list}")
    return members, links, large


# The sources whose every place for a host name the streaming scan knows (NCCL prefixes, peers named
# in a message, nccl-tests device lines, shell prompts): only their members are streamed.
_STREAMED_SOURCES = ("nccl_debug", "nccl_tests")
_FABRIC_SOURCES = ("iblinkinfo", "ibnetdiscover")  # host names in node descriptions: read whole


def _streamable(rel: str, full: str) -> bool:
    """A large member that may be redacted as a stream: an NCCL log or nccl-tests output (detected
    from its head), whose host names the streaming scan finds. Anything else (a probe's JSON with its
    "hostname", a journal's host column, fabric listings with host names in node descriptions that only
    their parsers read, the manifest) is read whole, so that `hostnames_in` reads its hosts the way its
    parser does: a large probe JSON streamed kept a hostname other than the manifest's."""
    if rel == "manifest.json" or SYSFS_LID_MEMBER.search(rel) or SYSFS_SERIAL_MEMBER.search(rel):
        return False  # redacted whole by its name
    with open(full, "rb") as fh:
        head = fh.read(1 << 16).decode("utf-8", "replace")
    return _log_stream(head) and not _fabric_listing(rel, head)


def _sniffed_as(head: str, sources: tuple[str, ...]) -> bool:
    """Whether one of `sources`' sniffers takes the head of a member for its tool's output, as
    detect_all scores them, from their light sniff modules (no parser imported); a sniffer that fails
    says no."""
    from ...parsers import DETECT_THRESHOLD, SNIFF_CHARS, sniffer

    for source in sources:
        try:
            if float(sniffer(source)(head[:SNIFF_CHARS])) >= DETECT_THRESHOLD:
                return True
        except Exception:  # a sniffer bug must not stop redaction (the member is then read whole)
            pass
    return False


def _log_stream(head: str) -> bool:
    """Whether the head of a member is an NCCL log or nccl-tests output."""
    return _sniffed_as(head, _STREAMED_SOURCES)


def _fabric_listing(rel: str, head: str) -> bool:
    """Whether a member is iblinkinfo or ibnetdiscover output (by its name, or by those two parsers'
    sniffers)."""
    stem = re.sub(r"-\d+$", "", os.path.basename(rel.replace("\\", "/")).split(".", 1)[0])
    return stem in _FABRIC_SOURCES or _sniffed_as(head, _FABRIC_SOURCES)


def _redact_json_strings(value, redactor: Redactor):
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_redact_json_strings(v, redactor) for v in value]
    if isinstance(value, dict):
        return {k: _redact_json_strings(v, redactor) for k, v in value.items()}
    return value


def redact_tree(src_dir: str, dst_dir: str, redactor: Redactor) -> dict[str, str]:
    """Write a redacted copy of the tree under src_dir into dst_dir (new or empty), with the host
    names hostnames_in finds added to `redactor` first. Every file must be text; paths and link
    targets are redacted too. A bundle's manifest.json is rewritten: its strings redacted, each
    member's sha256 recomputed, "redacted": true. Binary files, special files and links that leave
    the tree are refused (RedactionError naming them all) before anything is written: nothing is
    ever copied unredacted. Returns old relative path -> new relative path."""
    from .. import redact_stream

    if os.path.exists(dst_dir) and (not os.path.isdir(dst_dir) or os.listdir(dst_dir)):
        raise RedactionError(f"{shown(dst_dir, PATH_SHOWN)}: exists and is not an empty directory")
    members, links, large = _read_tree(src_dir, redactor.deadline)
    found = hostnames_in(members)
    for hosts in large.values():
        found |= {h.rstrip(".") for h in hosts if plausible_host(h.rstrip("."))}
    redactor.add_hostnames(sorted(found))
    renamed: dict[str, str] = {}
    for rel in list(members) + list(large) + list(links):
        new_rel = rel if rel == "manifest.json" else redactor.redact(rel)
        if new_rel in renamed.values() or ".." in new_rel.split("/") or new_rel.startswith("/"):
            raise RedactionError(f"{shown(rel)}: its redacted name '{shown(new_rel)}' is not usable")
        renamed[rel] = new_rel
    os.makedirs(dst_dir, exist_ok=True)
    for rel, text in members.items():
        if rel == "manifest.json":
            continue
        out = os.path.join(dst_dir, *renamed[rel].split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as fh:
            fh.write(redactor.redact(text, member=rel).encode("utf-8"))
    for rel in large:  # streamed: memory flat in the member's size
        out = os.path.join(dst_dir, *renamed[rel].split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        redact_stream.redact_file(os.path.join(src_dir, *rel.split("/")), out,
                                  lambda text, rel=rel: redactor.redact(text, member=rel))
    for rel, target in links.items():
        out = os.path.join(dst_dir, *renamed[rel].split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        os.symlink(redactor.redact(target), out)
    if "manifest.json" in members:
        _write_manifest(members["manifest.json"], dst_dir, redactor, renamed)
    return renamed


def _write_manifest(text: str, dst_dir: str, redactor: Redactor, renamed: dict[str, str]) -> None:
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise RedactionError(f"manifest.json: not valid JSON ({shown(exc)}); a bundle cannot be redacted without it") from None
    if not isinstance(manifest, dict):
        raise RedactionError("manifest.json: expected a JSON object")
    sources = manifest.get("sources") if isinstance(manifest.get("sources"), list) else []
    members = [e.get("member") if isinstance(e, dict) else None for e in sources]
    manifest = _redact_json_strings(manifest, redactor)
    for entry, member in zip(manifest.get("sources") or [], members):
        if not isinstance(entry, dict) or not isinstance(member, str):
            continue
        new = renamed.get(member.replace("\\", "/"))
        if new is None:
            continue  # listed but absent: reading the bundle reports it
        entry["member"] = new
        if entry.get("sha256") is not None or entry.get("status") == "ok":
            with open(os.path.join(dst_dir, *new.split("/")), "rb") as fh:
                entry["sha256"] = hashlib.sha256(fh.read()).hexdigest()
    manifest["redacted"] = True
    with open(os.path.join(dst_dir, "manifest.json"), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest, indent=1) + "\n")


def redact_bundle_dir(src_dir: str, dst_dir: str, redactor: Optional[Redactor] = None) -> Redactor:
    """Redact a bundle directory into dst_dir (see redact_tree); returns the Redactor, whose
    mapping() the caller keeps outside the bundle."""
    redactor = redactor if redactor is not None else Redactor()
    redact_tree(src_dir, dst_dir, redactor)
    return redactor
