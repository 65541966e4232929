"""lspci -vvv, the kernel command line and /sys/class/iommu: what the fixture pairs do not show."""

import pytest

from topodiag.errors import ParseError
from topodiag.parsers import kernel_cmdline, lspci_vvv, sysfs_iommu


@pytest.mark.parametrize("line,mode", [
    ("BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt", "passthrough"),
    ("BOOT_IMAGE=/vmlinuz ro intel_iommu=on", "translated"),
    ("BOOT_IMAGE=/vmlinuz ro amd_iommu=off", "off"),
    ("BOOT_IMAGE=/vmlinuz ro iommu.passthrough=1", "passthrough"),
    ("BOOT_IMAGE=/vmlinuz ro quiet", "default"),
    ("console=ttyS0 quiet panic=1 -- --init-arg", "default"),
])
def test_iommu_mode(line, mode):
    assert kernel_cmdline.parse(line).iommu_mode == mode


def test_cmdline_noacs_and_refusal():
    assert kernel_cmdline.parse("root=/dev/sda1 ro pci=noacs,realloc").pci_noacs
    with pytest.raises(ParseError):
        kernel_cmdline.parse("hello world\n")


def test_lspci_refuses_other_text_with_a_line():
    with pytest.raises(ParseError) as e:
        lspci_vvv.parse("nothing\nhere\n")
    assert e.value.line_no == 3


def test_lspci_counts_access_denied_and_places_by_bus_range():
    text = ("00:01.0 PCI bridge: Intel Corporation Device (rev 04)\n"
            "\tBus: primary=00, secondary=16, subordinate=1a, sec-latency=0\n"
            "\tCapabilities: <access denied>\n"
            "18:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\n")
    r = lspci_vvv.parse(text)
    assert [(d.bdf, d.kind) for d in r.devices] == [("0000:00:01.0", "bridge"), ("0000:18:00.0", "gpu")]
    assert (r.devices[0].secondary, r.devices[0].subordinate, r.access_denied) == (0x16, 0x1a, 1)
    assert lspci_vvv.sniff(text) == 0.0  # no ACS or link line: not claimed
    assert lspci_vvv.sniff(text + "\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)\n") == 0.9


def test_sysfs_iommu_listing():
    assert sysfs_iommu.parse("$ ls /sys/class/iommu\ndmar0  dmar1\n").vendor == "intel"
    assert sysfs_iommu.parse("").units == ()
    with pytest.raises(ParseError):
        sysfs_iommu.parse("dmar0 notes.txt\n")


def test_redaction_covers_the_serials_lspci_prints():
    from topodiag.bundle.redact import Redactor

    text = ("\t\t\t[SN] Serial number: MT2233X01234\n"
            "\tCapabilities: [150 v1] Device Serial Number 88-e9-a4-ff-ff-1b-2c-3d\n")
    out = Redactor().redact(text)
    assert "MT2233X01234" not in out and "88-e9-a4-ff-ff-1b-2c-3d" not in out
    assert "Serial number:" in out and "Device Serial Number" in out
