"""The plan as text for a terminal: the layers, the recommended layout's per-dimension table, the
given layout's losses and the alternatives (plain text: no colours needed to read it)."""

from __future__ import annotations

from typing import Optional, TextIO

from . import fmt_s


def _gb(n: Optional[float]) -> str:
    if n is None:
        return "?"
    return f"{n / 1e9:.3g} GB" if n >= 1e8 else f"{n / 1e6:.3g} MB"


def _bw(v: Optional[float]) -> str:
    return "?" if v is None else f"{v:g} GB/s"


def _layers(result: dict, out: TextIO) -> None:
    node = result["node"]
    out.write(f"Node: {node['host'] or '?'}, {node['gpus']} GPU(s) {node['gpu_model'] or '(model unknown)'}"
              f", x {result['nodes']} node(s)\n")
    for d in node["nvlink_domains"]:
        out.write(f"  NVLink domain of {d['size']} ({d['gpus'][0]}..{d['gpus'][-1]}): {_bw(d['gbyte_s'])} per GPU "
                  f"[{d['basis']}], {d['links_per_gpu'] or '?'} links, slowest pair {d['slowest_pair'] or '?'}\n")
    if not node["nvlink_domains"]:
        out.write("  No NVLink between the GPUs\n")
    for key in ("pcie", "network"):
        layer = node[key]
        out.write(f"  {'PCIe' if key == 'pcie' else 'Network'}: {_bw(layer['gbyte_s'])} per GPU "
                  f"[{layer['basis']}]: {layer['how']}\n")


def _table(block: dict, out: TextIO) -> None:
    out.write(f"  {'dim':<4} {'size':>4}  {'layer':<8} {'GB/s':>8}  {'ops/step':>8}  {'each':>9}  {'time/step':>10}\n")
    for r in block["dimensions"]:
        out.write(f"  {r['dim'].upper():<4} {r['size']:>4}  {r['layer'] or '-':<8} {r['gbyte_s'] or 0:>8g}  "
                  f"{r['ops_per_step']:>8}  {_gb(r['bytes_each']):>9}  {fmt_s(r['time_s']):>10}\n")
    if not block["dimensions"]:
        out.write("  (one GPU per replica: no communication)\n")
    bubble = f", bubble {block['bubble']:.0%} (M={block['micro_batches']})" if block["pp"] > 1 else ""
    fits = {True: "fits", False: "does NOT fit", None: "memory unknown"}[block["fits_memory"]]
    compute = f" + compute {fmt_s(block['compute_s'])}" if block.get("compute_s") else ""
    out.write(f"  communication {fmt_s(block['comm_s'])}{compute} per step{bubble}: a step of "
              f"{fmt_s(block.get('step_s'))}; training state {block['state_gb_per_gpu']:.3g} GB per GPU ({fits})\n")


def render(result: dict, out: TextIO) -> None:
    _layers(result, out)
    m = result["model"]
    out.write(f"Model: {m['name']}, {m['params'] / 1e9:g}B params, {m['layers']} layers, hidden {m['hidden']}, "
              f"seq {m['seq']} x micro-batch {m['micro_batch']} {m['dtype']}"
              + (f", {m['tp_bytes_moved'] / 1e9:g} GB moved per TP AllReduce" if m["tp_bytes_moved"] else "") + "\n")
    out.write(f"Global batch: {result.get('global_micro_batches', '?')} micro-batches per step, the same for "
              f"every layout below\n")
    rec = result["recommended"]
    out.write(f"\nRecommended: {rec['label']}  (tp={rec['tp']} pp={rec['pp']} dp={rec['dp']} ep={rec['ep']})\n")
    _table(rec, out)
    given = result.get("given")
    if given:
        out.write(f"\nGiven: {given['label']}\n")
        _table(given, out)
        out.write("  loses:\n")
        for line in given["loses"]:
            out.write(f"   - {line}\n")
    if result["alternatives"]:
        out.write("\nAlternatives:\n")
        for alt in result["alternatives"]:
            out.write(f"  - {alt['vs_recommended']}\n")
    if result["notes"]:
        out.write("\nNotes:\n")
        for n in result["notes"]:
            out.write(f"  - {n}\n")
    out.write(f"\nHow: {result['basis']}.\n")
