"""Benchmark: the streaming NCCL_DEBUG parser on a large generated multi-node log, against grep.

    python benchmarks/nccl_log.py                 # 128 MB log in a temp dir
    python benchmarks/nccl_log.py --size-mb 512 --out /tmp/big.log --keep

Generates an NCCL_DEBUG=INFO log shaped like the corpus (host:pid:tid [dev] prefixes, banners,
NET/IB lines, Channel/Ring connection lines over P2P/SHM/NET, proxy and GDR lines, occasional
WARN, interleaved training/MPI output), then measures in fresh subprocesses: wall time and peak
RSS of the CLI's path (topodiag/load/files.py `parse_opened`: the parser's bytes engine, with the
loader's worker process computing the chunk digests; `--one-process`: without it; `--text`:
`parse_lines(open(file))`, text encoded chunk by chunk), and wall time of `grep -cE 'NCCL (INFO|WARN)' FILE`. Prints a
table and one JSON line. Targets: parser within 8x grep's wall time, peak RSS under 100 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from topodiag.scan import parallel
from topodiag.load.files import open_text, parse_opened
from topodiag.parsers import get
from topodiag.parsers.nccl_debug import parse_lines
if sys.argv[3] == "1":
    parallel.PARALLEL_MIN_BYTES = None  # no worker process
if sys.argv[2] == "binary":  # the path the CLI uses: the loader, a worker for the digests
    opened = open_text(sys.argv[1])
    r = parse_opened(get("nccl_debug"), opened)
else:
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        r = parse_lines(f)
t1 = time.perf_counter()
print(json.dumps({"parse_s": t1 - t0, "lines": r.lines, "nccl_lines": r.nccl_lines,
                  "transports": r.transports, "warnings_total": r.warnings_total,
                  "errors_total": r.errors_total, "hosts": len(r.hosts), "nranks": r.nranks}))
"""


def _init_block(rng: random.Random, nodes: int, gpus: int, comm: int) -> list[str]:
    """One communicator's init + connection phase on every rank of every node."""
    out: list[str] = []
    nranks = nodes * gpus
    nch = 16
    busids = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"]
    for node in range(nodes):
        host = f"node{node + 1:03d}"
        for g in range(gpus):
            rank = node * gpus + g
            pid = 10000 + rank * 7  # one job: the same processes create communicator after communicator
            tid = pid + 40 + comm % 997  # each communicator's init runs on a new thread
            pre = f"{host}:{pid}:{tid} [{g}] NCCL INFO "
            pre0 = f"{host}:{pid}:{pid} [{g}] NCCL INFO "
            if comm == 0 and rank == 0:
                out.append("NCCL version 2.21.5+cuda12.4")
            if comm == 0:  # NCCL initialises the process once: bootstrap, plugin and NIC lines come once
                out += [
                    pre0 + f"Bootstrap : Using ibp12s0:10.1.{node}.{g + 10}<0>",
                    pre0 + "cudaDriverVersion 12040",
                    pre0 + "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file "
                    "or directory No plugin found (libnccl-net.so), using internal implementation",
                    pre + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB "
                    "[4]mlx5_6:1/IB [5]mlx5_9:1/IB [6]mlx5_10:1/IB [7]mlx5_11:1/IB [RO]; OOB ibp12s0:10.1.0.1<0>",
                ]
            out += [
                pre + "Using network IB",
                pre + f"ncclCommInitRank comm 0x55{comm:04x}{rank:04x} rank {rank} nranks {nranks} cudaDev {g} "
                f"nvmlDev {g} busId {busids[g % 8]} commId 0x{comm:016x} - Init START",
                pre + f"Setting affinity for GPU {g} to ffffffff,ffffffff,00000000,00000000",
                pre + "NVLS multicast support is not available on dev 0",
                pre + f"comm 0x55{comm:04x}{rank:04x} rank {rank} nRanks {nranks} nNodes {nodes} "
                f"localRanks {gpus} localRank {g} MNNVL 0",
                pre + f"Trees [0] {rank + 1}/-1/-1->{rank}->{rank - 1} [1] {rank + 1}/-1/-1->{rank}->{rank - 1}",
                pre + "P2P Chunksize set to 524288",
            ]
            for c in range(nch):
                nxt = (rank + 1) % nranks
                prv = (rank - 1) % nranks
                if g == gpus - 1:
                    out.append(pre + f"Channel {c:02d}/0 : {rank}[{g}] -> {nxt}[0] [send] via NET/IB/{g}/GDRDMA")
                else:
                    out.append(pre + f"Channel {c:02d}/0 : {rank}[{g}] -> {nxt}[{g + 1}] via P2P/CUMEM/read")
                if g == 0:
                    out.append(pre + f"Channel {c:02d}/0 : {prv}[{gpus - 1}] -> {rank}[0] [receive] "
                               f"via NET/IB/{g}/GDRDMA")
                if rng.random() < 0.1:
                    out.append(pre + f"GPU Direct RDMA Enabled for GPU {busids[g % 8]} / HCA {g} (distance 3 <= 4), "
                               f"read 1 mode Default")
                if rng.random() < 0.3:
                    out.append(f"{host}:{pid}:{tid + 1} [{g}] NCCL INFO New proxy send connection {c} from "
                               f"local rank {g}, transport 2")
                    out.append(pre + f"Connection to proxy localRank {g} -> connection 0x7f{rng.getrandbits(32):08x}")
            out += [
                pre + "Connected all rings",
                pre + "Connected all trees",
                pre + "threadThresholds 8/8/64 | 512/8/64 | 512 | 512",
                pre + f"{nch} coll channels, 0 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer",
                f"{host}:{pid}:{tid + 1} [{g}] NCCL INFO NET/IB: IbDev {g} Port 1 qpn {rng.randrange(100, 9000)} "
                f"mtu 5 GID 3 (0/D4010A0AFFFF0000)",
                pre + f"comm 0x55{comm:04x}{rank:04x} rank {rank} nranks {nranks} cudaDev {g} nvmlDev {g} "
                f"busId {busids[g % 8]} commId 0x{comm:016x} - Init COMPLETE",
            ]
            if rng.random() < 0.002:
                out.append(f"{host}:{pid}:{tid + 1} [{g}] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
                           f"completion from peer 10.1.{node}.20<{rng.randrange(30000, 60000)}> with status=12 "
                           f"opcode=0 len=0 vendor err 129 (Recv)")
    return out


def _noise(rng: random.Random, n: int, step: int) -> list[str]:
    """Program output between NCCL lines: training logs, MPI help aggregation, nccl-tests rows."""
    out = []
    for i in range(n):
        k = rng.random()
        if k < 0.6:
            out.append(f"[rank{rng.randrange(64)}] step {step + i} loss {rng.uniform(1, 3):.4f} lr 3.0e-04 "
                       f"tokens/s {rng.randrange(100000, 200000)} mem 61.2GB")
        elif k < 0.8:
            size = 1 << rng.randrange(10, 33)
            out.append(f"  {size:>12d}  {size // 4:>12d}     float     sum      -1  {rng.uniform(10, 9000):8.1f}"
                       f"  {rng.uniform(1, 400):6.2f}  {rng.uniform(1, 400):6.2f}      0")
        else:
            out.append("[node001:12345] 63 more processes have sent help message help-mpi-btl-openib.txt / "
                       "ib port not selected")
    return out


def generate(path: Path, size_mb: float, seed: int = 1) -> int:
    """Write a log of about size_mb megabytes; returns its size in bytes."""
    rng = random.Random(seed)
    target = int(size_mb * 1024 * 1024)
    written = 0
    comm = 0
    step = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            block = _init_block(rng, nodes=8, gpus=8, comm=comm)
            noise = _noise(rng, len(block) // 3, step)
            step += len(noise)
            # interleave noise into the NCCL block, as many ranks writing to one stream would
            merged = []
            ni = 0
            for i, line in enumerate(block):
                merged.append(line)
                if i % 3 == 2 and ni < len(noise):
                    merged.append(noise[ni])
                    ni += 1
            text = "\n".join(merged) + "\n"
            f.write(text)
            written += len(text.encode())
            comm += 1
    return path.stat().st_size


def measure(path: Path, grep_timeout: float = 600.0, mode: str = "binary", one_process: bool = False,
            runs: int = 3) -> dict:
    """Best of `runs` for the parser (each in a fresh process) and for grep, run in alternation so that
    both see the same machine."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    parse_runs, grep_runs = [], []
    grep_count = child = None
    for _ in range(max(1, runs)):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CHILD, str(path), mode, "1" if one_process else "0"],
                              capture_output=True, text=True, env=env, timeout=3600)
        parse_runs.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"parser subprocess failed: {proc.stderr.strip()}")
        child = json.loads(proc.stdout)
        t0 = time.perf_counter()
        g = subprocess.run(["grep", "-cE", "NCCL (INFO|WARN)", str(path)], capture_output=True, text=True,
                           timeout=grep_timeout)
        grep_runs.append(time.perf_counter() - t0)
        grep_count = int(g.stdout.strip() or 0)
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0  # KiB on Linux, the largest child
    parse_wall = min(parse_runs)
    grep_wall = min(grep_runs)
    size_mb = path.stat().st_size / (1024 * 1024)
    return {
        "api": ("loader" + (" (one process)" if one_process else " (digests in a worker)")) if mode == "binary" else "parse_lines",
        "size_mb": round(size_mb, 1),
        "lines": child["lines"],
        "nccl_lines": child["nccl_lines"],
        "grep_count": grep_count,
        "parse_wall_s": round(parse_wall, 3),
        "parse_s_in_child": round(child["parse_s"], 3),
        "parse_mb_per_s": round(size_mb / parse_wall, 1),
        "grep_wall_s": round(grep_wall, 3),
        "grep_mb_per_s": round(size_mb / grep_wall, 1),
        "ratio_to_grep": round(parse_wall / grep_wall, 2),
        "peak_rss_mb": round(rss_mb, 1),
        "runs": len(parse_runs),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=128.0, help="size of the generated log (default 128)")
    ap.add_argument("--out", type=Path, help="write the log here (default: a temp dir, removed afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    ap.add_argument("--reuse", action="store_true", help="reuse --out if it exists instead of regenerating")
    ap.add_argument("--text", action="store_true",
                    help="measure parse_lines(open(file, text mode)) instead of the loader's binary path")
    ap.add_argument("--runs", type=int, default=3, help="best of this many runs, parser and grep alternating")
    ap.add_argument("--one-process", action="store_true",
                    help="the loader without its worker process (topodiag.scan.parallel.PARALLEL_MIN_BYTES = None)")
    args = ap.parse_args(argv)
    tmp = None
    if args.out:
        path = args.out
    else:
        tmp = tempfile.mkdtemp(prefix="nccl_log_bench_")
        path = Path(tmp) / "nccl_debug.log"
    try:
        if not (args.reuse and path.exists()):
            t0 = time.perf_counter()
            generate(path, args.size_mb)
            print(f"generated {path} ({path.stat().st_size / 1048576:.1f} MB) in {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)
        res = measure(path, mode="text" if args.text else "binary", one_process=args.one_process, runs=args.runs)
    finally:
        if not args.keep and (tmp or not args.out):
            try:
                path.unlink()
                if tmp:
                    os.rmdir(tmp)
            except OSError:
                pass
    rows = [
        ("log size", f"{res['size_mb']} MB, {res['lines']} lines ({res['nccl_lines']} NCCL)"),
        ("parser wall", f"{res['api']}: {res['parse_wall_s']} s best of {res['runs']} ({res['parse_mb_per_s']} MB/s)"),
        ("grep -cE wall", f"{res['grep_wall_s']} s ({res['grep_mb_per_s']} MB/s), count {res['grep_count']}"),
        ("ratio to grep", f"{res['ratio_to_grep']}x (target <= 8x)"),
        ("parser peak RSS", f"{res['peak_rss_mb']} MB (target < 100 MB)"),
    ]
    width = max(len(r[0]) for r in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
