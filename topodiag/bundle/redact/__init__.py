"""Redaction of bundle members (`topodiag collect --redact`): identifiers -> consistent tokens that
keep the shape of what they replace, so topodiag's own parsers read a redacted bundle and reach the
same findings. One module per identifier kind, each with its map and its pass:

    hosts       node017 -> host-0001, node017.cluster.local -> host-0001.domain-01.invalid
                (names: which names are words, models, domains; find_hosts: where hosts are found)
    people      /home/alice77 -> /home/user-0001, e-mail addresses, Slurm node lists -> nodelist-01
    uuids       GPU-/MIG- UUIDs -> 00000001-0000-0000-0000-000000000001
    serials     serial numbers -> 0000000000001 (same number of digits)
    ipv6        IPv6 addresses, IB GIDs, IPoIB hardware addresses (prefix and interface id mapped)
    guids       IB GUIDs and other 64-bit ids in every printed form (same significant width)
    macs        MAC addresses -> 02:00:00:00:00:01 (locally administered)
    ipv4        IPv4 addresses -> 198.18.0.1 ... (benchmark range; loopback, masks... kept)
    lids        IB LIDs -> 1, 2, 3 ... (0 and 65535 kept; column alignment kept)

`core` holds the Redactor (the maps, the pass order as data, `mapping()`: original -> token, for
the collector to keep *outside* the bundle), `text` the placeholders that keep a pass from reading
what another replaced, `tree` the redaction of a directory tree or bundle.

Left alone on purpose: rates, bandwidths, sizes, PCI bus ids (topology, not identity), CPU
affinity, GID indexes, port numbers, pids, dotted versions (2.18.3, 28.39.1002, and any dotted run
longer than 4 numbers), netdev names, NCCL host_hash (not reversible to a host name). A private-use
character in a member (the placeholders' planes) is replaced with U+FFFD.
"""

from __future__ import annotations

from ...errors import RedactionError
from .core import Redactor
from .find_hosts import _ANSI_RE, _desc_host, _prompt_hosts, hostnames_in  # noqa: F401 (the tests read the private ones)
from .names import is_word as _is_word  # noqa: F401
from .tree import redact_bundle_dir, redact_tree

__all__ = ["Redactor", "RedactionError", "hostnames_in", "redact_tree", "redact_bundle_dir"]
