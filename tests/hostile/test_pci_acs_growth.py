"""PCI001/PCI002 on a large lspci -vvv paste (topodiag/checks/pci.py): the ACS rule was quadratic
in devices x bridges (every bridge scanned every endpoint, and every pair of endpoints it separates
was labelled: 8.3 million name look-ups, 84 s for a 4 MB paste). Bridges are now found by a
(domain, bus) index and each device is named once; the work grows with the paste, counted here
in name look-ups and bus-range tests, not seconds.

The paste: the invented PLX/GPU/NIC fixture repeated with its devices moved to other buses (each
copy's bus numbers rewritten), as the attack report built its 4 MB file."""

from __future__ import annotations

import re
from pathlib import Path

from topodiag.checks import pci
from topodiag.parsers import get

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "lspci_vvv" / "lspci-vvv-invented-plx-gpu-nic-acs-redirect-01.txt"


def _paste(copies: int) -> str:
    text = "\n".join(line for line in FIXTURE.read_text().split("\n") if not line.startswith("#@"))
    out = []
    for n in range(copies):
        out.append(re.sub(r"^[0-9a-f]{2}:[0-9a-f]{2}\.", "%02x:%02x." % (n % 256, n // 256), text, flags=re.M))
    return "\n".join(out)


def _steps(monkeypatch, copies: int) -> tuple[int, int]:
    parsed = get("lspci_vvv").parse(_paste(copies))
    calls = [0]
    real_name, real_below = pci._name, pci._below

    def name(*a, **k):
        calls[0] += 1
        return real_name(*a, **k)

    def below(*a, **k):
        calls[0] += 1
        return real_below(*a, **k)

    monkeypatch.setattr(pci, "_name", name)
    monkeypatch.setattr(pci, "_below", below)
    found = list(pci.acs_redirect.__wrapped__(parsed) if hasattr(pci.acs_redirect, "__wrapped__")
                 else pci.acs_redirect(parsed))
    found += list(pci.pcie_link_below_cap.__wrapped__(parsed) if hasattr(pci.pcie_link_below_cap, "__wrapped__")
                  else pci.pcie_link_below_cap(parsed))
    monkeypatch.undo()
    return calls[0], len(found)


def test_acs_and_link_rules_grow_linearly(monkeypatch):
    small, n_small = _steps(monkeypatch, 100)
    big, n_big = _steps(monkeypatch, 200)
    assert n_small > 0 and n_big >= n_small
    assert big <= 2.5 * small, (small, big)  # quadratic: 4 times
