"""Live sources run once per RoCE interface: `ethtool -S IF`, `mlnx_qos -i IF`.

A parser whose INFO.argv holds the word NETDEV ("{netdev}") names a command to run per network
interface of an RDMA device with an Ethernet link layer (RoCE), found in sysfs (under
`Options.sysfs_root`, so tests give a tree): `/sys/class/infiniband/<dev>/ports/<p>/link_layer` is
"Ethernet", and the interfaces are `/sys/class/infiniband/<dev>/device/net/*`, else the names in
`ports/<p>/gid_attrs/ndevs/*` (a RoCE LAG's bond, a container's VF). Each interface's run has its own
timeout (PER_NETDEV_S, e.g. 5 s for ethtool, 10 s for mlnx_qos, a Python tool that starts slowly),
cut to what is left of the source's budget (its INFO.timeout_s) and of the collection's deadline;
interfaces left when the budget is spent are not started and are named in the record's reason.

The outputs go into one bundle member per source, each preceded by its prompt line the way pastes
carry them (`$ ethtool -S ens1f0np0`), which the source's parser reads as a new section naming its
interface. A run that failed is left out of the member and named in the reason; the source is "ok"
when one interface answered, "not_available" when the tool is not installed or the host has no RoCE
interface, "timed_out" when none answered and one ran out of time, "failed" otherwise.

Neither runs in the prolog: they are commands (the prolog runs probes only), ethtool -S asks the
driver, which on a wedged NIC's firmware can block for a minute, and mlnx_qos is a Python program that
takes most of a second to start per interface. The ECN switches of the same interfaces
(/sys/class/net/IF/ecn/roce_np|roce_rp/enable/<prio>) are sysfs reads: the ib_counters probe has them,
prolog-safe.
"""

from __future__ import annotations

import time
from typing import Optional

from .commands import MIN_START_S, CommandResult, run

NETDEV = "{netdev}"  # the word of an INFO.argv replaced by each interface's name
PER_NETDEV_S = {"ethtool": 5.0, "mlnx_qos": 10.0}  # one interface's run, by the tool's name
DEFAULT_PER_NETDEV_S = 5.0
MAX_NETDEVS = 32


def roce_netdevs(sysfs_root: str = "/") -> list[str]:
    """The network interfaces of the RDMA ports whose link layer is Ethernet, in device order, each once."""
    from .rooted import Rooted

    r = Rooted(sysfs_root)
    out: list[str] = []
    for dev in r.listdir("sys/class/infiniband"):
        base = f"sys/class/infiniband/{dev}"
        ports = [p for p in r.listdir(f"{base}/ports") if p.isdigit() and len(p) <= 3]
        eth = [p for p in ports if (r.read(f"{base}/ports/{p}/link_layer") or "").lower() == "ethernet"]
        if not eth:
            continue
        names = list(r.listdir(f"{base}/device/net"))
        if not names:
            for p in eth:
                ndevs = f"{base}/ports/{p}/gid_attrs/ndevs"
                names += [n for n in (r.read(f"{ndevs}/{i}") for i in r.listdir(ndevs)) if n]
        for name in names:
            if _plain(name) and name not in out:
                out.append(name)
    return out[:MAX_NETDEVS]


def _plain(name: str) -> bool:
    return 0 < len(name) <= 40 and all(c.isalnum() or c in "_.-@" for c in name) and not name.startswith("-")


def per_netdev(argv: tuple[str, ...]) -> bool:
    return NETDEV in argv


def _argv(template: tuple[str, ...], netdev: str) -> tuple[str, ...]:
    return tuple(netdev if a == NETDEV else a for a in template)


def _section(argv: tuple[str, ...], res: CommandResult) -> str:
    out = res.stdout if res.stdout.endswith("\n") or not res.stdout else res.stdout + "\n"
    return f"$ {' '.join(argv)}\n{out}"


def _why(argv: tuple[str, ...], res: CommandResult) -> str:
    return f"{' '.join(argv)}: {res.reason or ('timed out' if res.timed_out else f'exit {res.rc}')}"


def _record(status: str, member: Optional[str] = None, text: Optional[str] = None, **rest) -> dict:
    return dict(status=status, member=member, text=text, **rest)


def collect_per_netdev(src, opts, budget_s: float, deadline: Optional[float] = None) -> dict:
    """Run `src.argv` (a collection.LiveSource's) for each RoCE interface within `budget_s`: the
    fields of its collection.Record but the source's name (this module imports no collection)."""
    start = time.monotonic()
    netdevs = roce_netdevs(opts.sysfs_root)
    shown = tuple(a if a != NETDEV or not netdevs else "{" + ",".join(netdevs) + "}" for a in src.argv)
    if not netdevs:  # the manifest keeps the template: ethtool -S {netdev}
        return _record("not_available", argv=shown, duration_s=0.0,
                      reason="no RoCE interface: no RDMA port with an Ethernet link layer under /sys/class/infiniband")
    each_s = PER_NETDEV_S.get(src.argv[0].rsplit("/", 1)[-1], DEFAULT_PER_NETDEV_S)
    sections, problems, timed_out = [], [], False
    for i, netdev in enumerate(netdevs):
        argv = _argv(src.argv, netdev)
        left = budget_s - (time.monotonic() - start)
        if deadline is not None:
            left = min(left, deadline - time.monotonic())
        if left <= MIN_START_S:
            problems.append(f"not run ({', '.join(netdevs[i:])}): the source's {budget_s:g} s were spent")
            timed_out = True
            break
        res = run(argv, min(each_s, left), deadline=deadline)
        if res.not_found:
            return _record("not_available", argv=shown, reason=res.reason,
                          duration_s=round(time.monotonic() - start, 3))
        if res.ok and res.stdout.strip():
            sections.append(_section(argv, res))
        else:
            timed_out = timed_out or res.timed_out or res.skipped
            problems.append(_why(argv, res))
    duration = round(time.monotonic() - start, 3)
    reason = "; ".join(problems)
    if sections:
        return _record("ok", src.member, "".join(sections), argv=shown, rc=0, duration_s=duration, reason=reason)
    status = "timed_out" if timed_out else "failed"
    return _record(status, argv=shown, duration_s=duration, timed_out=timed_out,
                   reason=reason or "no interface answered")
