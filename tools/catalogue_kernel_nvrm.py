"""Generate topodiag/catalogues/data/nvrm.json: the NVIDIA kernel driver's own kernel-log messages.

    python tools/catalogue_kernel_nvrm.py --source <git dir of NVIDIA/open-gpu-kernel-modules> [--tags T ...] [--write]

What is extracted, at each tag (git show TAG:path, no checkout):
  * kernel-open/ (the Linux glue: nvidia, nvidia-uvm's NVRM lines, nvidia-modeset, nvidia-drm) and
    src/nvidia/arch/nvalloc/unix/ (the RM's Unix layer, e.g. "RmInitAdapter failed!"):
    `nv_printf(NV_DBG_ERRORS|NV_DBG_WARNINGS, fmt, ...)`, `NV_DEV_PRINTF(level, nv, fmt, ...)`
    (the kernel prints "NVRM: GPU 0000:01:00.0: " before fmt) and `NV_DEV_PRINTF_STATUS(level, nv,
    status, fmt, ...)` (fmt then " (0x%x)").
  * with --rm: the resource manager's `NV_PRINTF(LEVEL_ERROR, fmt, ...)` under src/nvidia/src/, which
    reach dmesg as "NVRM: <function>: fmt" (the function named by the heuristic in _function()).
A format that prints several lines is one entry per line: the first carries the message, the others
are `consequence` entries (continuations, never a second cause).
Classes, severities, meanings come from tools/nvrm_curation.toml ([[match]] regexes over the format,
then per-id [entries."id"] overrides), so a re-generation keeps the curation.
Without --tags: the first tag of 515 and the newest tag of every driver branch from 515 on.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue_kernel_c import Git, calls, curate, diff_and_write, lines_of, literal, load_curation, slug  # noqa: E402

REPO = "NVIDIA/open-gpu-kernel-modules"
CURATION = Path(__file__).resolve().parent / "nvrm_curation.toml"
LEVELS = {"NV_DBG_ERRORS": "error", "NV_DBG_WARNINGS": "warning"}
DEV_PREFIX = "NVRM: GPU %04x:%02x:%02x.%x: "
MACROS = {"NV_PCI_DEV_FMT": "%04x:%02x:%02x.%x", "NvU64_fmtx": "llx", "NvU64_fmtX": "llX", "NvU64_fmtu": "llu",
          "NvU64_fmtd": "lld", "NvP64_fmt": "%p", "NV_VERSION_STRING": "%s", "__FUNCTION__": "%s",
          "NV_UVM_DRIVER_NAME": "nvidia-uvm", "MODULE_NAME": "%s", "NV_MODULE_NAME": "nvidia", "KBUILD_MODNAME": "%s"}
GLUE = ("kernel-open/nvidia", "kernel-open/nvidia-uvm", "kernel-open/nvidia-modeset", "kernel-open/nvidia-drm",
        "kernel-open/common", "src/nvidia/arch/nvalloc/unix")
_FUNC_RE = re.compile(r"^(?:[A-Za-z_][\w \t\*]*?[\s\*])?([A-Za-z_]\w*)[ \t]*\((?![^)]*;\s*$)", re.M)


def default_tags(git: Git) -> list[str]:
    def key(t: str) -> tuple:
        return tuple(int(x) for x in t.split(".") if x.isdigit())

    tags = sorted((t for t in git.tags() if re.fullmatch(r"\d+(\.\d+)+", t) and key(t)[0] >= 515), key=key)
    newest: dict[int, str] = {}
    for t in tags:
        newest[key(t)[0]] = t
    return sorted({tags[0], *newest.values()}, key=key) if tags else []


def _format(name: str, args: list[str]) -> tuple[str, str] | None:
    """(level, the format as the kernel prints it) of one call, or None when it is not one we keep."""
    if not args:
        return None
    level = LEVELS.get(args[0].strip())
    if level is None:
        return None
    if name == "nv_printf" and len(args) >= 2:
        text = literal(args[1], MACROS)
        return (level, text) if text else None
    if name == "NV_DEV_PRINTF" and len(args) >= 3:
        text = literal(args[2], MACROS)
        return (level, DEV_PREFIX + text) if text else None
    if name == "NV_DEV_PRINTF_STATUS" and len(args) >= 4:
        text = literal(args[3], MACROS)
        return (level, DEV_PREFIX + text.rstrip("\n") + " (0x%x)\n") if text else None
    return None


_HEAD_RE = re.compile(r"^(?:[A-Za-z_][\w\t \*]*[\s\*])?([A-Za-z_]\w*)[ \t]*(\(.*)?$")
DROPPED: set[str] = set()
_NOT_FUNCS = {"if", "for", "while", "switch", "return", "sizeof", "else", "do", "case", "default"}


def _function(src_lines: list[str], line: int) -> str | None:
    """The C function a line is in: the nearest definition head above it, "name(" at the start of a
    line or "name" alone with "(" on the next line (the RM's style). A heuristic."""
    for i in range(line - 2, max(-1, line - 4000), -1):
        ln = src_lines[i]
        if not ln or ln[0] in " \t#/{}*" or ln.rstrip().endswith((";", ",")):
            continue
        m = _HEAD_RE.match(ln)
        if not m or m[1] in _NOT_FUNCS or m[1].isupper():
            continue
        if m[2] is None and not (i + 1 < len(src_lines) and src_lines[i + 1].lstrip().startswith("(")):
            continue
        return m[1]
    return None


def extract(git: Git, tag: str, rm: bool) -> list[dict]:
    """Every kept message of one tag: [{format, level, file, line}] (one per printed line)."""
    out: list[dict] = []
    for top in GLUE:
        for path in git.files(tag, r"NV_DBG_(ERRORS|WARNINGS)", top):
            if not path.endswith((".c", ".h")):
                continue
            src = git.show(tag, path)
            for name, args, line in calls(src, ("nv_printf", "NV_DEV_PRINTF", "NV_DEV_PRINTF_STATUS")):
                got = _format(name, args)
                if got:
                    _add(out, got[0], got[1], path, line)
    if rm:
        for path in git.files(tag, r"NV_PRINTF(_COND)?\(", "src/nvidia/src") + git.files(tag, r"NV_PRINTF(_COND)?\(", "src/nvidia/arch"):
            src = git.show(tag, path)
            src_lines = src.split("\n")
            for name, args, line in calls(src, ("NV_PRINTF", "NV_PRINTF_COND")):
                if name == "NV_PRINTF_COND" and len(args) >= 4 and args[2].strip() == "LEVEL_ERROR":
                    args = args[2:]
                if len(args) >= 2 and args[0].strip() == "LEVEL_ERROR":
                    text = literal(args[1], MACROS)
                    func = _function(src_lines, line)
                    if text and func:
                        _add(out, "error", f"NVRM: {func}: {text}", path, line)
    return out


def _add(out: list[dict], level: str, fmt: str, path: str, line: int) -> None:
    parts = lines_of(fmt)
    if not parts[0].startswith("NVRM"):
        DROPPED.add(parts[0])  # no NVRM: prefix: not told apart from other drivers' lines in a log
        return
    for i, part in enumerate(parts):
        if not part.startswith("NVRM"):
            continue  # a continuation printed without the prefix: not told apart from other lines
        if len(re.sub(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[a-zA-Z]|NVRM:|\W", "", part)) < 4:
            continue  # "NVRM: %s" alone: nothing to recognise it by
        out.append({"format": part, "level": level, "file": path, "line": line, "continues": i > 0})


def build(git: Git, tags: list[str], rm: bool) -> dict:
    seen: dict[str, dict] = {}
    ids: set[str] = set()
    for tag in tags:
        print(f"{tag} ...", file=sys.stderr)
        for m in extract(git, tag, rm):
            e = seen.get(m["format"])
            if e is None:
                e = {"id": _id(m, ids), "format": m["format"], "level": m["level"],
                     "versions": {"first": tag, "last": tag}, "where": []}
                if m["continues"]:
                    e["consequence"] = True
                seen[m["format"]] = e
            e["versions"]["last"] = tag
            e["where"] = [{"repo": REPO, "tag": tag, "file": m["file"], "line": m["line"]}]
    newest = tags[-1]
    curation = load_curation(CURATION)
    entries = []
    for e in seen.values():
        if e["versions"]["last"] == newest:
            e["versions"]["last"] = None  # still printed
        entries.append(curate(e, curation))
    entries += [dict(x) for x in curation.get("extra", ())]
    entries.sort(key=lambda e: e["id"])
    return {"producer": "nvrm", "title": "NVIDIA kernel driver (NVRM) messages in the kernel log",
            "readers": ["kernel_log"],
            "sources": [{"repo": REPO, "tags": tags, "generated_by": "tools/catalogue_kernel_nvrm.py",
                         "paths": list(GLUE) + (["src/nvidia/src, src/nvidia/arch (NV_PRINTF LEVEL_ERROR)"] if rm else [])}],
            "entries": entries}


def _id(m: dict, ids: set[str]) -> str:
    area = m["file"].split("/")[1] if m["file"].startswith("kernel-open/") else "rm"
    base = f"nvrm.{area}.{slug(m['format'].replace('NVRM: GPU %04x:%02x:%02x.%x: ', '').replace('NVRM: ', ''))}"
    name, n = base, 2
    while name in ids:
        name, n = f"{base}_{n}", n + 1
    ids.add(name)
    return name


PEERMEM = "kernel-open/nvidia-peermem/nvidia-peermem.c"
# the kernel's module loader, when nvidia-peermem was built against an RDMA core without peer-memory
# support (kernel/module/main.c: "%s: Unknown symbol %s (err %d)"; the module name is printed with "_")
PEERMEM_LOADER = {"id": "peermem.module.unknown_symbol",
                  "format": "nvidia_peermem: Unknown symbol %s (err %d)", "class": "peermem-failure",
                  "where": [{"repo": "torvalds/linux", "tag": "v6.x", "file": "kernel/module/main.c",
                             "function": "resolve_symbol_wait"}]}


# peer_err lines printed on a normal teardown path (the free callback of a context already gone): a
# warning, not a failure of GPUDirect RDMA
PEERMEM_WARNING = ("detected invalid context",)


def build_peermem(git: Git, tags: list[str]) -> dict:
    """nvidia-peermem's own errors: peer_err(fmt) prints "nvidia-peermem %s:%d ERROR " fmt (function,
    line), and a few printk(KERN_ERR ...) lines."""
    seen: dict[str, dict] = {}
    ids: set[str] = set()
    for tag in tags:
        src = git.show(tag, PEERMEM)
        for name, args, line in calls(src, ("peer_err", "printk")):
            text = literal(args[0], {"KERN_ERR": ""}) if args else None
            if not text or (name == "printk" and not args[0].lstrip().startswith("KERN_ERR")):
                continue
            fmt = ("nvidia-peermem %s:%d ERROR " + text if name == "peer_err" else text).strip()
            e = seen.get(fmt)
            if e is None:
                base = f"peermem.{slug(text)}"
                e = seen[fmt] = {"id": base if base not in ids else f"{base}_{len(ids)}", "format": fmt,
                                 "class": "peermem-failure", "level": "err",
                                 "versions": {"first": tag, "last": tag}}
                ids.add(e["id"])
                if any(w in text for w in PEERMEM_WARNING):
                    e["severity"] = "warning"
            e["versions"]["last"] = tag
            e["where"] = [{"repo": REPO, "tag": tag, "file": PEERMEM, "line": line}]
    for e in seen.values():
        if e["versions"]["last"] == tags[-1]:
            e["versions"]["last"] = None
    entries = sorted(seen.values(), key=lambda e: e["id"]) + [PEERMEM_LOADER]
    return {"producer": "peermem", "title": "nvidia-peermem (GPUDirect RDMA) messages in the kernel log",
            "readers": ["kernel_log"],
            "sources": [{"repo": REPO, "tags": tags, "generated_by": "tools/catalogue_kernel_nvrm.py"}],
            "entries": entries}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="git dir (bare or .git) of NVIDIA/open-gpu-kernel-modules")
    ap.add_argument("--tags", nargs="*", help="release tags (default: 515's first and each branch's newest)")
    ap.add_argument("--rm", action="store_true", help="also the RM's NV_PRINTF(LEVEL_ERROR) messages (src/nvidia/src)")
    ap.add_argument("--write", action="store_true", help="rewrite topodiag/catalogues/data/nvrm.json")
    a = ap.parse_args(argv)
    git = Git(a.source)
    tags = a.tags or default_tags(git)
    diff_and_write("peermem", build_peermem(git, tags), a.write)
    doc = build(git, tags, a.rm)
    print(f"nvrm: {len(DROPPED)} messages without the NVRM: prefix left out", file=sys.stderr)
    return diff_and_write("nvrm", doc, a.write)


if __name__ == "__main__":
    sys.exit(main())
