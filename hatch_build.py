"""Build hook: compile the optional line scanner (topodiag/scan/_cscan.c) into the wheel.

The package is pure Python; this one C file makes the two NCCL log readers read a big log about twice
as fast (topodiag/scan/lines.py, benchmarks/check_log.py), and the kernel log's block digest ten
times as fast (topodiag/parsers/_kernel_log_keys.py). It is compiled with the C compiler
the Python build used (sysconfig), with nothing but the Python headers. Where that fails (no compiler,
no headers) the build goes on without it and the readers use their pure-Python twins, which give the
same results; TOPODIAG_NO_COMPILE=1 skips the compiler on purpose. An editable install
(`pip install -e .`) puts the module beside its source, in topodiag/scan/ (git ignores it).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "topodiag/scan/_cscan.c"


def compile_scanner(src: Path, out: Path) -> str | None:
    """Compile `src` into the extension module `out`; None when it worked, else why not (one line)."""
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    flags = ["-O2", "-shared", "-fPIC", "-I", include]
    if sys.platform == "darwin":
        flags += ["-undefined", "dynamic_lookup"]
    try:
        done = subprocess.run(cc + flags + [str(src), "-o", str(out)], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{cc[0]}: {exc}"
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return None


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or os.environ.get("TOPODIAG_NO_COMPILE", "") not in ("", "0"):
            return
        name = "_cscan" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        src = Path(self.root) / SOURCE
        if version == "editable":
            out = Path(self.root) / "topodiag" / "scan" / name
        else:
            out = Path(tempfile.mkdtemp(prefix="topodiag-build-")) / name
        why = compile_scanner(src, out)
        if why is not None:
            print(f"topodiag: line scanner not compiled ({why}); the pure-Python readers are used", file=sys.stderr)
            return
        if version != "editable":
            build_data["force_include"][str(out)] = f"topodiag/scan/{name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
