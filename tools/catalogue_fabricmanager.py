"""The NVIDIA Fabric Manager catalogue (topodiag/catalogues/data/fabricmanager.json).

Fabric Manager is closed source: each entry is a regex (`pattern`) for a message as its journal
shows it (after the journal's "<date> <host> <process>[pid]: " prefix, which the fabricmanager
parser strips), with `where` = the public thread that shows it (repo, tag "observed", file = the
thread's URL) and `example` = the message as pasted there.

    python tools/catalogue_fabricmanager.py [--write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _catalogue_common as cc  # noqa: E402

GH = "https://github.com/"


def _w(url: str) -> list[dict]:
    repo = "/".join(url[len(GH):].split("/")[:2])
    return [{"repo": repo, "tag": "observed", "file": url}]


# (id, pattern, class, severity or None, consequence, example as pasted, thread, meaning or None)
ENTRIES = [
    ("fm.nvswitch_query.nothing_to_do",
     r"request to query NVSwitch device information from NVSwitch driver failed with error:\s*WARNING Nothing to do \[NV_WARN_NOTHING_TO_DO\]",
     "fabric-manager-idle", None, False,
     "request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]",
     GH + "NVIDIA/gpu-operator/issues/610", None),
    ("fm.nvswitch_query.failed",
     r"request to query NVSwitch device information from NVSwitch driver failed",
     "fabric-manager-failure", None, False,
     "request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]",
     GH + "data-infra/cube-studio/issues/29",
     "Fabric Manager could not read the NVSwitches from the NVSwitch driver (nvidia-nvswitch): without NV_WARN_NOTHING_TO_DO this is a driver or switch fault on an NVSwitch system."),
    ("fm.driver_version_mismatch",
     r"fabric manager NVIDIA GPU driver interface version \S+ do(?:n.?t|esn.?t|es not) match(?: with)? (?:the )?driver version",
     "tool-library-mismatch", "error", False,
     "fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver version 530.41.03. Please update with matching NVIDIA driver package.",
     GH + "NVIDIA/gpu-operator/issues/544",
     "Fabric Manager's version differs from the loaded driver's: it refuses to start and the NVLink fabric stays down (FAB002)."),
    ("fm.start_script.failed",
     r"\"?/usr/bin/nv-fabricmanager [^\"]*\"? failed! Exit code: [1-9][0-9]*",
     "fabric-manager-failure", None, True,
     "\"/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg\" failed! Exit code: 1",
     GH + "data-infra/cube-studio/issues/29",
     "The start script reports that nv-fabricmanager exited with an error: the cause is the Fabric Manager line before it."),
    ("fm.pre_nvl5",
     r"Detected Pre-NVL5 system",
     "informational", None, False,
     "Detected Pre-NVL5 system",
     GH + "data-infra/cube-studio/issues/29", None),
    ("fm.connected_nodes",
     r"Connected to [0-9]+ nodes?\.",
     "informational", None, False,
     "Connected to 1 node.",
     GH + "NVIDIA/nvtrust/issues/128", None),
    ("fm.configured",
     r"Successfully configured all the available NVSwitches",
     "informational", None, False,
     "Successfully configured all the available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer support will be enabled once the GPUs are successfully registered with the NVLink fabric.",
     GH + "NVIDIA/nvtrust/issues/128", None),
    ("fm.started",
     r"Started \"Nvidia Fabric Manager\"",
     "informational", None, False,
     "Started \"Nvidia Fabric Manager\"",
     GH + "NVIDIA/nvtrust/issues/128", None),
    ("systemd.fm.control_process_failed",
     r"nvidia-fabricmanager\.service: (?:Control|Main) process exited, code=exited, status=[1-9][0-9]*",
     "fabric-manager-failure", None, True,
     "nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE",
     GH + "NVIDIA/gpu-operator/issues/610",
     "systemd reports the Fabric Manager unit's process failed: the cause is the Fabric Manager line before it."),
    ("systemd.fm.job_failed",
     r"Job for nvidia-fabricmanager\.service failed",
     "fabric-manager-failure", None, True,
     "Job for nvidia-fabricmanager.service failed because the control process exited with error code.",
     GH + "NVIDIA/gpu-operator/issues/356", None),
]


def catalogue() -> dict:
    entries = []
    for ident, pattern, cls, severity, consequence, example, url, meaning in ENTRIES:
        e = {"id": ident, "pattern": pattern, "class": cls, "rule": "FAB002", "example": example,
             "where": _w(url), "versions": {}}
        if severity:
            e["severity"] = severity
        if consequence:
            e["consequence"] = True
        if meaning:
            e["meaning"] = meaning
        entries.append(e)
    return {"producer": "fabricmanager", "title": "NVIDIA Fabric Manager (and its systemd unit): messages observed in public threads",
            "readers": ["fabricmanager"],
            "sources": [{"repo": "NVIDIA Fabric Manager (closed source)", "tags": ["observed"],
                         "generated_by": "tools/catalogue_fabricmanager.py",
                         "reference": "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"}],
            "entries": entries}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    return cc.report_and_write("fabricmanager", catalogue(), args.write)


if __name__ == "__main__":
    raise SystemExit(main())
