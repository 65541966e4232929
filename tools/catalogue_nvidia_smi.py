"""The nvidia-smi failure catalogue (topodiag/catalogues/data/nvidia-smi.json).

nvidia-smi and NVML are closed source: there is no format string to extract. Each entry is a
regex (`pattern`) for a message as users pasted it, with `where` = the public thread that shows it
(repo, tag "observed", file = the thread's URL) and `example` = the line as pasted there, so that
the coverage test renders every entry. NVML's error strings (nvmlErrorString) follow "Failed to
initialize NVML: " and "Unable to determine the device handle for GPU<bus>: ".

    python tools/catalogue_nvidia_smi.py [--write]

prints what is new or gone against the shipped JSON; --write rewrites it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _catalogue_common as cc  # noqa: E402

READERS = ["nvidia_smi_topo_m", "nvidia_smi_topo_p2p", "nvidia_smi_nvlink_s", "nvidia_smi_nvlink_c",
           "nvidia_smi_nvlink_e", "nvidia_smi_nvlink_gt", "nvidia_smi_nvlink_info", "nvidia_smi_q"]
GH = "https://github.com/"
HANDLE = r"Unable to (?:determine|detect) the device handle for (?:GPU|gpu) ?[0-9A-Fa-f:.]+: "


def _w(url: str) -> list[dict]:
    repo = "/".join(url[len(GH):].split("/")[:2])
    return [{"repo": repo, "tag": "observed", "file": url}]


# (id, pattern, class, severity or None, example as pasted, thread, meaning or None, fix or None)
ENTRIES = [
    ("nvidia_smi.driver_unreachable",
     r"NVIDIA-SMI has failed because it couldn.t communicate with the NVIDIA driver",
     "tool-driver-unreachable", None,
     "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
     GH + "NVIDIA/nvidia-docker/issues/988",
     "nvidia-smi could not talk to the NVIDIA kernel driver: the module is not loaded (not built for the running kernel after a kernel update, nouveau holding the GPU), or a container runs without the driver's device files and libraries: no GPU job can run.",
     "lsmod | grep nvidia; dmesg | grep -i -E 'NVRM|nvidia'; rebuild/reinstall the driver for the running kernel (dkms status) or reboot; in a container use the NVIDIA runtime (--gpus all)."),
    ("nvidia_smi.make_sure_driver_running",
     r"Make sure that the latest NVIDIA driver is installed and running",
     "tool-driver-unreachable", None,
     "Make sure that the latest NVIDIA driver is installed and running.",
     GH + "NVIDIA/nvidia-docker/issues/988", None, None),
    ("nvml.init.version_mismatch",
     r"Failed to initialize NVML: Driver/library version mismatch",
     "tool-library-mismatch", None,
     "Failed to initialize NVML: Driver/library version mismatch",
     GH + "lyulyul/shine-cluster/issues/30",
     "The NVML library (user space) is of another version than the loaded nvidia kernel module: the driver packages were upgraded (often by unattended-upgrades) without a reboot: nvidia-smi and new CUDA jobs fail while running ones go on.",
     "Reboot the node (or unload and reload the nvidia modules when nothing uses them); pin the driver packages (apt-mark hold) so that they are upgraded only with a planned reboot."),
    ("nvml.library_version",
     r"NVML library version: [0-9.]+",
     "tool-library-mismatch", None,
     "NVML library version: 570.124",
     GH + "tinygrad/open-gpu-kernel-modules/issues/47", None, None),
    ("nvml.init.unknown_error",
     r"Failed to initialize NVML: Unknown Error",
     "tool-driver-unreachable", None,
     "Failed to initialize NVML: Unknown Error",
     GH + "NVIDIA/nvidia-docker/issues/1671",
     "NVML could not open the driver's device files: typically inside a container whose device cgroup lost the /dev/nvidia* rules (after systemctl daemon-reload on the host, or a CPU-manager policy), or a driver that is wedged.",
     "Restart the container (or pod); on the host, configure the NVIDIA container runtime with cgroup device rules that survive daemon-reload (nvidia-ctk system create-dev-char-symlinks); if the host's nvidia-smi fails too, read dmesg and reboot."),
    ("nvml.init.insufficient_permissions",
     r"Failed to initialize NVML: Insufficient Permissions",
     "tool-permission", None,
     "Failed to initialize NVML: Insufficient Permissions",
     GH + "NVIDIA/nvidia-docker/issues/676",
     "NVML was refused access to /dev/nvidiactl or /dev/nvidia*: an unprivileged user, SELinux, or a rootless container without the device permissions.",
     "Run as root or a user in the device's group; with SELinux allow container device use (setsebool -P container_use_devices 1); give the container the devices (--gpus all, CDI)."),
    ("nvml.init.other",
     r"Failed to initialize NVML: .+",
     "tool-driver-unreachable", None,
     "Failed to initialize NVML: Driver/library version mismatch",
     GH + "lyulyul/shine-cluster/issues/30", None, None),
    ("nvidia_smi.no_devices",
     r"No devices were found",
     "tool-no-device", None,
     "No devices were found",
     GH + "NVIDIA/open-gpu-kernel-modules/issues/862",
     "The driver is loaded but initialised no GPU (RmInitAdapter failed: firmware, BAR/Above-4G settings, a GPU the driver does not support, or GPUs bound to another driver such as vfio-pci): no GPU job can run.",
     "dmesg | grep NVRM for RmInitAdapter / probe errors; check the BIOS (Above 4G decoding, Resizable BAR), the driver's support for the GPU, and lspci -k for the driver each GPU is bound to."),
    ("nvidia_smi.device_handle.gpu_lost",
     HANDLE + r"GPU is lost",
     "gpu-lost", None,
     "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.  Reboot the system to recover this GPU",
     GH + "JosephKJ/OWOD/issues/81",
     "The driver lost the GPU (Xid 79: it fell off the bus): the node has one GPU less until it is rebooted; jobs that expect it fail or hang.",
     "Drain the node, reboot (power-cycle); read dmesg for Xid 79 and the BMC log for power or thermal events; reseat or RMA the GPU if it recurs."),
    ("nvidia_smi.device_handle.unknown_error",
     HANDLE + r"Unknown Error",
     "gpu-lost", "error",
     "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
     GH + "NVIDIA/open-gpu-kernel-modules/issues/387",
     "NVML cannot reach one GPU: on a host it has usually fallen off the bus (the thread: fixed by reseating it); inside a container only, the container lacks that GPU's device file.",
     "Compare with nvidia-smi on the host: failing there too, drain the node, read dmesg for Xid 79 / 'fallen off the bus' and reboot or reseat the GPU; only in the container, restart it with the GPU's device."),
    ("nvidia_smi.device_handle.other",
     HANDLE + r".+",
     "gpu-lost", "error",
     "Unable to determine the device handle for GPU0000:65:00.0: Unknown Error",
     GH + "NVIDIA/nvidia-container-toolkit/issues/69", None, None),
]


def catalogue() -> dict:
    entries = []
    for ident, pattern, cls, severity, example, url, meaning, fix in ENTRIES:
        e = {"id": ident, "pattern": pattern, "class": cls, "rule": "TOPO006" if cls == "gpu-lost" else "GPU005",
             "example": example,
             "level": "error", "where": _w(url), "versions": {}}
        if severity:
            e["severity"] = severity
        if meaning:
            e["meaning"] = meaning
        if fix:
            e["fix"] = fix
        entries.append(e)
    return {"producer": "nvidia-smi", "title": "nvidia-smi and NVML failure messages (observed in public threads)",
            "readers": READERS,
            "sources": [{"repo": "NVIDIA/nvidia-smi (closed source)", "tags": ["observed"],
                         "generated_by": "tools/catalogue_nvidia_smi.py"}],
            "entries": entries}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    return cc.report_and_write("nvidia-smi", catalogue(), args.write)


if __name__ == "__main__":
    raise SystemExit(main())
