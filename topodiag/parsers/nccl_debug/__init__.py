"""Parser for NCCL_DEBUG=INFO logs (NCCL 2.4 .. 2.27, net plugins, Slurm/MPI line prefixes).

    n013:101855:101885 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB [RO]; OOB ibp209s0f0:10.128.3.13<0>
    n013:101855:101885 [0] NCCL INFO Using network IB
    NCCL version 2.16.5+cuda11.8
    gpu36:20775:20807 [0] NCCL INFO Channel 00/0 : 1[81000] -> 0[81000] [receive] via NET/IB/1/GDRDMA
    [155] crow-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC
    H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer ... with error 4, ...
    n013:101855:101885 [0] NCCL INFO comm 0x72a6b00 rank 0 nranks 2 cudaDev 0 busId 81000 commId 0xb2 - Init COMPLETE

A package of small modules, chiefly records.py (the Result and its caps), kinds.py (the fact messages
by their start: one table, from which the scan's choice of lines and the fact reader's dispatch are
both built), facts.py (what the lines say, accumulated first-seen) and reader.py (one engine over
bytes that picks those lines out of chunks of about 4 MiB). A multi-GB log parses in constant memory: every list is capped
(warnings/errors keep the first 200, with `warnings_total`/`errors_total`), every dict and cache is
bounded. `parse(text)`, `parse_lines(lines)` and `parse_binary(file)` all read through the same
engine (text is encoded as UTF-8), so they agree; `parse_chunks` merges chunks given with their
`digest` (the state-free half of the work), which is how the loader spreads a big file's digests over
a worker process (topodiag/scan/parallel.py) without the parser managing processes.

PyTorch c10d watchdog logs (`ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective
operation timeout: WorkNCCL(...)`) are parsed, not refused: their timeout lines go to `errors`
(kind "watchdog_timeout" ...) and every other field stays empty/null, so the timeout reaches the
rules. ParseError only when no NCCL line at all was seen (line 0 for empty text, else the last line).

JSON: {source: "nccl_debug", nccl_version ("2.18.3", first banner), cuda_version (banner
"+cuda12.2", else from cudaDriverVersion), cuda_driver_version ("12.2" from "cudaDriverVersion
12020"), hosts (sorted host names from the "host:pid:tid [dev]" prefixes of the lines read:
banner/env/NET/Bootstrap/comm/Trees/WARN lines and the first line of each connection), cuda_devs
{host: [CUDA device numbers in the "[dev]" of those prefixes]} (a lower bound on how many GPUs
each host runs ranks on), nranks
(largest "nranks N" of comm lines, else largest rank seen + 1), nranks_from ("comm" | "max_rank" |
null), ranks [{rank, host, cuda_dev, bus_id, nranks}] (sorted, ranks >= nranks dropped; host only
for the rank that logged the line; a bracket "8[20000]" of two or fewer digits is a cudaDev (NCCL >=
2.19), longer a busId), network (first "Using network X", or NCCL 2.3's "Using internal Network X"), networks (distinct, in order), net_plugin
("Loaded net plugin X", else "P2P plugin [vN] X", else "aws-ofi-nccl" when NET/OFI lines appear),
net_plugin_path, collnet_plugin, net_devices [{name, port, link_layer ("IB"|"RoCE"|null), index,
kind ("ib"|"socket"), address, sharp}] (from "NET/IB : Using" / "NET/Socket : Using", distinct by
kind+name+port), gid_index, qp_mtus [{host, device, net_dev, ib_dev, port, link_layer ("IB" on a "LID"
line, "RoCE" on a "GID" line), mtu (the IB MTU enum NCCL prints: 1..5), mtu_bytes (256..4096, null
outside the enum), qps (lines), line_no (the first)}] (NET/IB's per-QP lines of every era, "NET/IB: Dev
1 Port 1 qpn 3038 mtu 5 LID 37" to "NET/IB: ncclIbConnect: NCCL Dev 0 IbDev 0 Port 1 qp_num 576 mtu 3
GID 3 (..)", one entry per host, devices, port, link layer and MTU, sorted; device is the name the
"NET/IB : Using [i]name" list gives NCCL Dev i, when that index names one device only), gdr (true: "GPU Direct RDMA Enabled" or a GDRDMA transport; false: only
"Disabled" lines; null: no evidence), gdr_lines [{line_no, text}], transports {kind: count} (keys
"P2P/IPC", "P2P/CUMEM", "P2P/direct pointer" -- a "/read" suffix is dropped --, "SHM" (any SHM/...),
"NET/<name>" with "/GDRDMA" when the path says so (device number and "/Shared" dropped), "CollNet",
"NVLS" (one per "Connected NVLS" line)), connections_sample [{line_no, text}] (first line of each of
the first 20 distinct connection texts), env {NCCL_*: value} (first value printed; also
NCCL_TOPO_FILE set by aws-ofi-nccl), channels {coll, collnet, nvls, p2p, p2p_per_peer} (first
summary line), init_complete, warnings [{line_no, text}], warnings_total, errors [{line_no, text,
kind}] (kinds: ib_completion, remote_process_exited, unhandled_system_error, internal_error,
unhandled_cuda_error, cuda_failure, connection_closed, nccl_failure, nccl_error, watchdog_timeout,
watchdog_exception, watchdog_abort), errors_total, socket_fallback_reasons (only when a socket
transport is in evidence: "NET/IB : No device found", "Failed to initialize NET plugin X",
"NCCL_IB_DISABLE=1", "NCCL_NET=Socket"), nnodes (largest "nNodes N" of the "comm 0x.. rank r nRanks n
nNodes N localRanks l" lines, NCCL >= 2.19; null without them), net_plugins_initialized /
net_plugins_failed (distinct names from "Initialized NET plugin X" / "Failed to initialize NET
plugin X", in order), net_plugin_assigned (first "Assigned NET plugin X to comm"), net_by_host {host:
[the NET transports, normalised as in `transports`, of the connection lines of that host's ranks]},
net_by_rank {rank (a string): those transports} for the ranks whose host no line gives (a log
without host prefixes, or a paste of bare connection lines: "9[1a000] -> 2[6b000] [receive] via
NET/IB/1" is read as a connection line of rank 2 -- the rank a "[receive]" line's process owns, the
first rank on a "[send]" line),
lines, nccl_lines (occurrences of "NCCL INFO " (with its blank)/"NCCL WARN"/"NCCL TRACE" plus untagged
banner/watchdog/failure lines)}.
"""

from __future__ import annotations


from ..base import ParseError, ParserInfo
from .facts import normalise_transport
from .reader import CHUNK, ChunkReader, digest, iter_chunks, parse, parse_binary, parse_chunks, parse_lines
from .records import IB_MTU_BYTES, MAX_LIST, MAX_SAMPLE, SOURCE, ErrorLine, LogLine, NetDevice, QpMtu, Rank, Result
from ..sniff.nccl_debug import sniff

# What a byte of a big NCCL log costs this reader beside the nccl-tests reader (1.0), measured at 1 GB
# (benchmarks/README.md: 10.0 against 7.8 CPU seconds compiled, 15.5 against 13.8 pure, the log;
# 0.97 against 0.57 s a 100 MB on the progress-bar log): of a file both read in two processes on a
# machine with cores beyond the two, the heavier reader stays in the loading process, which gets the
# odd digest worker. (On two cores a sample of the file decides instead, the cheaper reader staying
# there: topodiag/scan/onepass.py `_sides`.)
READ_WEIGHT = 1.3

INFO = ParserInfo(
    source=SOURCE,
    tool="NCCL_DEBUG=INFO",
    schema_version=4,  # 2: nnodes, net_plugins_initialized/failed, net_plugin_assigned, net_by_host; 3: net_by_rank; 4: qp_mtus
    description="an NCCL_DEBUG=INFO log (any NCCL 2.x, launcher prefixes, c10d watchdog lines): transports, NICs, GDR, errors",
)

__all__ = ["INFO", "SOURCE", "CHUNK", "ChunkReader", "IB_MTU_BYTES", "MAX_LIST", "MAX_SAMPLE", "ErrorLine", "LogLine",
           "NetDevice", "ParseError", "QpMtu", "Rank", "Result", "digest", "iter_chunks", "normalise_transport", "parse", "parse_binary", "parse_chunks",
           "parse_lines", "sniff"]
