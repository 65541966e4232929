"""The NVML probe's child process on a node installed without the [nvml] extra: pynvml does not
import there (the test's own interpreter has it, so the child blocks the import), and the probe's
own main() runs.

    no_pynvml_child.use(monkeypatch)
"""

from __future__ import annotations

import sys
from typing import Any

MODULE = "topodiag.live.nvml_probe"


def use(monkeypatch: Any) -> None:
    from topodiag.live import child

    monkeypatch.setitem(child.REPLACED, MODULE, __name__)


def main() -> int:
    sys.modules["pynvml"] = None  # type: ignore[assignment]  # `import pynvml` raises ImportError
    from topodiag.live import nvml_probe

    return nvml_probe.main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
