"""`topodiag plan`: parallelism placement from the node's graph (topodiag/plan): parse the options,
call the library, print text or JSON."""

from __future__ import annotations

from enum import Enum
from typing import List, Optional

import typer

from ..exit_codes import exit_code
from .app import app
from .output import OUTPUT_HELP, chosen_format, report_stream
from .errors import guarded


class PlanFormat(str, Enum):
    text = "text"
    json = "json"


class Dtype(str, Enum):
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"


@app.command("plan")
@guarded
def plan_command(
    paths: List[str] = typer.Option([], "--from", metavar="PATH",
                                    help="Saved outputs of one node (topo -m, nvlink -s, ibstat, nccl-tests), a "
                                         "directory or a bundle (repeatable); without it, this node live."),
    nodes: int = typer.Option(1, "--nodes", metavar="N", help="How many such nodes the job spans (1 to 16384)."),
    model: Optional[str] = typer.Option(None, "--model", metavar="7b|13b|70b|405b|article",
                                        help="A model preset (default: article, the article's 80-layer example)."),
    params: Optional[str] = typer.Option(None, "--params", metavar="P", help="Parameters, e.g. 70b or 7e9."),
    layers: Optional[int] = typer.Option(None, "--layers", metavar="L", help="Transformer layers."),
    hidden: Optional[int] = typer.Option(None, "--hidden", metavar="H", help="Hidden size."),
    seq: Optional[int] = typer.Option(None, "--seq", metavar="S", help="Sequence length (default 4096)."),
    micro_batch: Optional[int] = typer.Option(None, "--micro-batch", metavar="B", help="Micro-batch size (default 1)."),
    dtype: Optional[Dtype] = typer.Option(None, "--dtype", help="Activation and gradient dtype (default bf16)."),
    tp: Optional[int] = typer.Option(None, "--tp", metavar="T", help="Judge this tensor-parallel size."),
    pp: Optional[int] = typer.Option(None, "--pp", metavar="P", help="Judge this pipeline-parallel size."),
    dp: Optional[int] = typer.Option(None, "--dp", metavar="D", help="Judge this data-parallel size."),
    ep: Optional[int] = typer.Option(None, "--ep", metavar="E", help="Expert-parallel size (divides DP)."),
    micro_batches: Optional[int] = typer.Option(None, "--micro-batches", metavar="M",
                                                help="Micro-batches per step (default 1, or 4 x PP with PP)."),
    tflops: Optional[float] = typer.Option(None, "--tflops", metavar="T",
                                           help="Achieved TFLOP/s per GPU: adds compute (6 x params x tokens) to "
                                                "the step time."),
    output_format: Optional[PlanFormat] = typer.Option(None, "--format", "-f",
                                                       help="text (the default; $TOPODIAG_FORMAT changes it) or json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help=OUTPUT_HELP),
) -> None:
    """Place TP/PP/DP/EP on the node's interconnect layers and say what each costs per step."""
    from ..pipeline.commands.plan import PlanRequest, plan

    run = plan(PlanRequest(paths=list(paths), nodes=nodes, model=model, params=params, layers=layers, hidden=hidden,
                           seq=seq, micro_batch=micro_batch, dtype=dtype.value if dtype else None, tp=tp, pp=pp,
                           dp=dp, ep=ep, micro_batches=micro_batches, tflops=tflops))
    result = run.report
    fmt = chosen_format(output_format.value if output_format else None, [f.value for f in PlanFormat])
    with report_stream(output) as stream:
        if fmt == "json":
            from ..render.sanitise import dump_json

            dump_json(result, stream)
        else:
            from ..plan.text import render
            from .output import Folded

            folded = Folded(stream)  # 80 columns off a terminal: long lines wrapped, never cut
            render(result, folded)
            folded.flush()
    raise typer.Exit(exit_code(run.outcome))
