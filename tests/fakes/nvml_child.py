"""The NVML probe's child process in tests: the real pynvml over tests/fakes/fake_libnvml.py.

    nvml_child.use(monkeypatch, probe_path_or_dict, lost=[3], crash_at="nvmlDeviceGetName(gpu=2)")

makes live collection (topodiag/live/child.py) run `python -m tests.fakes.nvml_child --progress`
instead of `python -m topodiag.live.nvml_probe`; the child reads what to replay from the
environment (TOPODIAG_TEST_NVML_LIB: {"probe": {...}, "knobs": {...}}, the FakeLibNvml keywords),
puts the fake library under the real pynvml and runs the probe's own main().
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ENV = "TOPODIAG_TEST_NVML_LIB"
MODULE = "topodiag.live.nvml_probe"


def use(monkeypatch: Any, probe: Any, **knobs: Any) -> None:
    from topodiag.live import child
    from topodiag.parsers import blank_provenance_header

    if isinstance(probe, (str, Path)):
        probe = json.loads(blank_provenance_header(Path(probe).read_text()))
    monkeypatch.setitem(child.REPLACED, MODULE, __name__)
    monkeypatch.setenv(ENV, json.dumps({"probe": probe, "knobs": knobs}))


def main() -> int:
    import pynvml

    from tests.fakes.fake_libnvml import FakeLibNvml
    from topodiag.live import nvml_probe

    spec = json.loads(os.environ[ENV])
    knobs = {k: tuple(v) if isinstance(v, list) else v for k, v in spec.get("knobs", {}).items()}
    FakeLibNvml(spec["probe"], **knobs).install_for_good(pynvml)
    return nvml_probe.main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
