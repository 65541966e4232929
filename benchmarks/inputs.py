"""Big inputs of every class for benchmarks/all.py, each built from the project's real fixtures
(`#@` headers dropped) repeated with their names and numbers varied, or, for the fabric, generated
in ibnetdiscover's own format (a two-level fat tree). Every writer streams: memory stays small
whatever the size asked for.

    nccl_issue      the NCCL_DEBUG logs of fixtures/nccl_debug (which hold nccl-tests runs too) appended
                    round after round, each round with its own hosts and pids: the log issue 11 and
                    issue 29 measure (benchmarks/check_log.py's "issue" log, redaction.py `generate`)
    nccl_progress   NCCL_DEBUG=INFO logs (fixtures/nccl_debug) interleaved with what a training
                    job prints beside them: tqdm bars redrawn with carriage returns (as tqdm
                    writes them to a file: 10 cells, 0-100%, a loop that starts again), epoch/loss
                    lines, and timestamps before the NCCL prefix ("[2025-01-07 10:00:01] node...")
    nccl_long       the same logs with long lines between them (a 256 KiB JSON config dump every
                    ~2 MB: the lines a reader must not hold whole)
    one_line        one line of tqdm redraws joined by carriage returns, no newline at all
    kernel_log      the kernel-log fixtures (dmesg, journalctl -k) appended, timestamps moved on
                    (the dense worst case: a third of the lines are the drivers' the parser reads)
    kernel_log_node a node's dmesg as it mostly is: the fixtures' lines that no catalogued producer
                    writes (other drivers, systemd, the PCI core...) round after round, with the
                    producers' lines (NVRM, Xid, mlx5_core, AER, IOMMU...) interleaved at ~2%
    bug_report      an nvidia-bug-report.log: the prologue, then rounds of sections (a file copied, a
                    ~2 MB dmesg section of the kernel-log fixtures, a base64 dump): 1 GB in ~1,500
                    sections, under the reader's cap of 4,096
    bug_report_node an nvidia-bug-report as a node's mostly is: ~70% of its bytes in sections no
                    source reads (an X log, lspci -xxx hex, a base64 dump), ~30% in ~0.5 MB dmesg
                    sections of kernel_log_node's lines (the producers' at 2%), round after round
    ibnetdiscover   a fat tree of `nodes` nodes (hosts with one HCA each, 32 per leaf switch, leaves
                    with 32 uplinks, 64-port spines), one block per node as ibnetdiscover prints it
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PREFIX = re.compile(r"(?m)^([A-Za-z][\w.-]*):(\d+):(\d+)(?=[ \t]+\[)")


def _texts(folder: str, suffixes=(".txt", ".log")) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from topodiag.parsers.base import blank_provenance_header

    out = []
    for p in sorted((ROOT / "fixtures" / folder).glob("*")):
        if p.suffix in suffixes:
            out.append(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")).lstrip("\n"))
    return out


def _rounds(texts: list[str], vary):
    """Yield texts round after round, `vary(text, round)` applied, without end."""
    rnd = 0
    while True:
        rnd += 1
        for text in texts:
            yield vary(text, rnd)


def _nccl_vary(text: str, rnd: int) -> str:
    hosts: dict[str, str] = {}

    def sub(m: re.Match) -> str:
        host = hosts.setdefault(m[1], f"node{(rnd * 37 + len(hosts)) % 9999 + 1:04d}")
        return f"{host}:{int(m[2]) + rnd * 101}:{int(m[3]) + rnd * 101}"

    return _PREFIX.sub(sub, text)


def _tqdm(step: int, total: int = 1000) -> str:
    """One redraw of a tqdm bar as tqdm writes it to a file (no terminal: a bar 10 cells wide), at
    `step` of a loop of `total` that starts again once done (a bar never passes 100%)."""
    step %= total + 1
    pct = step * 100 // total
    bar = "\u2588" * (pct // 10) + " " * (10 - pct // 10)
    return f"Epoch {step % 7}: {pct:3d}%|{bar}| {step}/{total} [00:{step % 60:02d}<01:{(total - step) % 60:02d}, 36.{step % 10}it/s, loss={1 / (step + 1):.4f}]"


def _redraws(step: int, n: int) -> str:
    """`n` redraws of a bar from `step` on as tqdm's status printer writes them (tqdm/std.py
    `status_printer`, v4.67.3): each a carriage return, the bar, and blanks over what is left of a
    longer redraw before it."""
    out, last = [], 0
    for k in range(n):
        bar = _tqdm(step + k)
        out.append("\r" + bar + " " * max(last - len(bar), 0))
        last = len(bar)
    return "".join(out)


def _written(last: str, message: str) -> str:
    """`tqdm.write(message)` under a bar whose last redraw was `last`, as tqdm writes it (tqdm/std.py
    `clear` and `write`, v4.67.3): the bar cleared (a carriage return, blanks over it, a carriage
    return), then the message; its newline and the bar's next redraw follow."""
    return "\r" + " " * len(last) + "\r" + message


def nccl_progress(path: Path, size: int) -> None:
    texts = _texts("nccl_debug")
    stamp = 0
    with open(path, "w", encoding="utf-8") as out:
        for chunk in _rounds(texts, _nccl_vary):
            if out.tell() >= size:
                break
            lines = chunk.splitlines(True)
            for i in range(0, len(lines), 8):
                stamp += 1
                block = lines[i:i + 8]
                if stamp % 3 == 0:  # a launcher's timestamp before the NCCL prefix
                    block = [f"[2025-01-07 10:{stamp // 60 % 60:02d}:{stamp % 60:02d}] {ln}" if ":" in ln[:40] else ln
                             for ln in block]
                out.write("".join(block))
                out.write(_redraws(stamp * 7, 12))
                if stamp % 20 == 0:  # a logging callback's line through tqdm.write (Hugging Face's Trainer does)
                    out.write(_written(_tqdm(stamp * 7 + 11), f"{{'loss': {1 / stamp:.4f}, 'learning_rate': 3e-05, "
                                                              f"'epoch': {stamp / 1000:.2f}}}"))
                out.write("\n")
                out.write(f"step {stamp} | train loss {1 / stamp:.5f} | lr 3.0e-04 | grad norm 0.{stamp % 97:02d} | "
                          f"tokens/s {40000 + stamp % 977}\n")


def nccl_long(path: Path, size: int) -> None:
    texts = _texts("nccl_debug")
    dump = '{"config": {' + ", ".join(f'"layer_{k}": {{"dim": {k * 64}, "heads": {k % 32}}}' for k in range(6000)) + "}}"
    dump = dump[: 256 * 1024]
    n = written = 0
    with open(path, "w", encoding="utf-8") as out:
        for chunk in _rounds(texts, _nccl_vary):
            if written >= size:
                break
            out.write(chunk)
            n += len(chunk)
            written += len(chunk)
            if n >= 2 << 20:
                out.write(dump + "\n")
                written += len(dump) + 1
                n = 0


def one_line(path: Path, size: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        written = step = 0
        while written < size:
            piece = "\r".join(_tqdm(step + k, 10 ** 9) for k in range(1000)) + "\r"
            out.write(piece)
            written += len(piece.encode())
            step += 1000


_STAMP = re.compile(r"^\[ *([0-9]+)\.([0-9]{6})\]", re.M)


def kernel_log(path: Path, size: int) -> None:
    texts = _texts("kernel_log")

    def vary(text: str, rnd: int) -> str:
        return _STAMP.sub(lambda m: f"[{int(m[1]) + rnd * 3600:5d}.{m[2]}]", text)

    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for chunk in _rounds(texts, vary):
            if written >= size:
                break
            out.write(chunk if chunk.endswith("\n") else chunk + "\n")
            written += len(chunk) + 1


def _node_lines() -> tuple[list[str], list[str]]:
    """(background, producer) lines of the kernel-log fixtures, each without its stamp (dmesg, syslog
    or kmsg): a producer's line is one the parser records or reads in order (its description is
    neither "nothing", "blank" nor "plain"); a shell prompt pasted with a log is left out."""
    from topodiag.parsers._kernel_log_block import _KEY_RE, describe

    background, producer = [], []
    for text in _texts("kernel_log"):
        for line in text.splitlines():
            body = _KEY_RE.match(line)[5].strip()
            if not body or re.match(r"\S*[#$] ", body):
                continue
            kind = describe(line)[1][0]
            (background if kind in ("nothing", "blank", "plain") else producer).append(body)
    return background, producer


def kernel_log_node(path: Path, size: int) -> None:
    background, producer = _node_lines()
    every = 49  # one producer line after every 49 others: 2%
    written, n, k, p = 0, 0, 0, 0
    with open(path, "w", encoding="utf-8") as out:
        while written < size:
            rows = []
            for _ in range(4096):
                n += 1
                if n % (every + 1) == 0:
                    body, p = producer[p % len(producer)], p + 1
                else:
                    body, k = background[k % len(background)], k + 1
                rows.append(f"[{n // 400:5d}.{(n * 2477) % 1000000:06d}] {body}\n")
            text = "".join(rows)
            out.write(text)
            written += len(text)


_BAR = "_" * 44


def bug_report(path: Path, size: int) -> None:
    prologue = _texts("nvidia_bug_report")[0]
    kernel = [t if t.endswith("\n") else t + "\n" for t in _texts("kernel_log")]
    kernel = kernel * max(1, (2 << 20) // sum(map(len, kernel)))  # ~2 MB a dmesg: 1 GB in < MAX_SECTIONS
    b64 = "".join(f"{(k * 2654435761) % (1 << 32):08x}" * 9 + "\n" for k in range(2000))
    with open(path, "w", encoding="utf-8") as out:
        out.write(prologue if prologue.endswith("\n") else prologue + "\n")
        written, rnd = len(prologue), 0
        while written < size:
            rnd += 1
            parts = [f"\n{_BAR}\n\n*** /proc/driver/nvidia/gpus/0000:{rnd % 256:02x}:00.0/information\n"
                     f"*** ls: -r--r--r-- 1 root root 0 2022-10-27 20:48:36.3 -0300 /proc/driver/nvidia/gpus\n"
                     f"Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t {rnd % 500}\n",
                     f"\n{_BAR}\n\ndmesg:\n\n", "".join(kernel),
                     f"\n{_BAR}\n\nbase64 \"nvidia-nvswitch-{rnd}.dump\":\n\n", b64]
            text = "".join(parts)
            out.write(text)
            written += len(text)


def bug_report_node(path: Path, size: int) -> None:
    """A report as a node's mostly is: most bytes in sections no source reads, a node's dmesg beside."""
    prologue = _texts("nvidia_bug_report")[0]
    background, producer = _node_lines()
    xorg = "".join(f"[  {25 + k / 1000:9.3f}] (II) NVIDIA(GPU-{k % 8}): Setting mode \"DP-{k % 4}: nvidia-auto-select @1920x1080\"\n"
                   for k in range(2000))
    hexdump = "".join(f"{k * 16 % 256:02x}: " + " ".join(f"{(k * 7 + j * 13) % 256:02x}" for j in range(16)) + "\n"
                      for k in range(1024))
    b64 = "".join(f"{(k * 2654435761) % (1 << 32):08x}" * 9 + "\n" for k in range(14000))
    with open(path, "w", encoding="utf-8") as out:
        out.write(prologue if prologue.endswith("\n") else prologue + "\n")
        written, rnd, n, p = len(prologue), 0, 0, 0
        while written < size:
            rnd += 1
            rows = []
            for _ in range(5600):  # ~0.5 MB of a node's dmesg: one producer line in 50
                n += 1
                body = producer[p % len(producer)] if n % 50 == 0 else background[n % len(background)]
                p += n % 50 == 0
                rows.append(f"[{n // 400:5d}.{(n * 2477) % 1000000:06d}] {body}\n")
            parts = [f"\n{_BAR}\n\n*** /var/log/Xorg.{rnd}.log\n*** ls: -rw-r--r-- 1 root root 1 2022-10-27 /var/log/Xorg.{rnd}.log\n",
                     xorg, f"\n{_BAR}\n\n/sbin/lspci -d \"10de:*\" -v -xxx\n\n", hexdump,
                     f"\n{_BAR}\n\nbase64 \"nvidia-nvswitch-{rnd}.dump\":\n\n", b64,
                     f"\n{_BAR}\n\ndmesg:\n\n", "".join(rows)]
            text = "".join(parts)
            out.write(text)
            written += len(text)


def ibnetdiscover(path: Path, nodes: int) -> None:
    """A fat tree of about `nodes` nodes: hosts (one HCA, 32 to a leaf), leaves (32 uplinks), 64-port spines."""
    leaves = max(1, round(nodes / 33.5))
    hosts = leaves * 32
    spines = max(1, leaves * 32 // 64)
    sw = lambda k: f"{0x2c5eab0300000000 + k:016x}"  # noqa: E731
    ca = lambda k: f"{0xe09d730300000000 + k:016x}"  # noqa: E731
    w = []
    w.append(f"#\n# Topology file: generated on Wed Aug  6 16:11:23 2025\n#\n# Initiated from node {ca(0)} port {ca(0)}\n")
    for s in range(spines):
        g = sw(100000 + s)
        w.append(f"\nvendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x{g}\nswitchguid=0x{g}({g})\n"
                 f"Switch\t64 \"S-{g}\"\t\t# \"MF0;SPINE-{s:03d}:MQM9701/U1\" enhanced port 0 lid {50000 + s} lmc 0\n")
        for p in range(1, 65):
            up = s * 64 + p - 1  # the uplink number
            leaf, lp = up // 32, 33 + up % 32
            if leaf < leaves:
                w.append(f"[{p}]\t\"S-{sw(leaf)}\"[{lp}]\t\t# \"MF0;LEAF-{leaf:04d}:MQM9701/U1\" lid {40000 + leaf} 4xNDR\n")
    with open(path, "w", encoding="utf-8") as out:
        out.write("".join(w))
        for leaf in range(leaves):
            g = sw(leaf)
            b = [f"\nvendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x{g}\nswitchguid=0x{g}({g})\n"
                 f"Switch\t64 \"S-{g}\"\t\t# \"MF0;LEAF-{leaf:04d}:MQM9701/U1\" enhanced port 0 lid {40000 + leaf} lmc 0\n"]
            for p in range(1, 33):
                h = leaf * 32 + p - 1
                b.append(f"[{p}]\t\"H-{ca(h)}\"[1]({ca(h)}) \t\t# \"node{h:05d} mlx5_0\" lid {h + 1} 4xNDR\n")
            for p in range(33, 65):
                up = leaf * 32 + p - 33
                s = up // 64
                if s < spines:
                    b.append(f"[{p}]\t\"S-{sw(100000 + s)}\"[{up % 64 + 1}]\t\t# \"MF0;SPINE-{s:03d}:MQM9701/U1\" "
                             f"lid {50000 + s} 4xNDR\n")
            out.write("".join(b))
        for h in range(hosts):
            g, leaf = ca(h), h // 32
            out.write(f"\nvendid=0x2c9\ndevid=0x1021\nsysimgguid=0x{g}\ncaguid=0x{g}\n"
                      f"Ca\t1 \"H-{g}\"\t\t# \"node{h:05d} mlx5_0\"\n"
                      f"[1]({g}) \t\"S-{sw(leaf)}\"[{h % 32 + 1}]\t\t# lid {h + 1} lmc 0 \"MF0;LEAF-{leaf:04d}:MQM9701/U1\" "
                      f"lid {40000 + leaf} 4xNDR\n")


def nccl_issue(path: Path, size: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from redaction import generate

    generate(path, size / (1024 * 1024), ("nccl_debug",))


# the classes whose reading has a compiled line scan (topodiag/scan/_cscan.c) beside its pure-Python twin
PURE_CLASSES = ("nccl_issue", "nccl_progress", "nccl_long", "one_line", "kernel_log", "kernel_log_node", "bug_report",
                "bug_report_node")
# those whose pure-Python reading has a budget of its own (issue 29: the NCCL log, pure, <= 10x grep); the
# kernel logs' pure runs are shown beside their budget, which is the install's (compiled) one
PURE_BUDGET_CLASSES = ("nccl_issue", "nccl_progress", "nccl_long", "one_line")

WRITERS = {"nccl_issue": nccl_issue, "nccl_progress": nccl_progress, "nccl_long": nccl_long, "one_line": one_line,
           "kernel_log": kernel_log, "kernel_log_node": kernel_log_node, "bug_report": bug_report,
           "bug_report_node": bug_report_node, "ibnetdiscover": ibnetdiscover}
