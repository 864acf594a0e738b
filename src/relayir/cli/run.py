"""``relayir run ARTIFACT|MODEL``: run a compiled artifact, or compile a model file on
the fly, on given or filled inputs; print the outputs' shapes, dtypes and a summary,
the latency, and with ``--profile`` the time per kernel. A built-in model's name
(``relayir run mlp``) builds it and checks it against its reference."""

from __future__ import annotations

import os
import statistics

from ..frontend.load_model import is_model_file
from .command import (
    Command,
    add_build_options,
    add_input_options,
    input_shapes,
    load,
    positive_int,
)
from .compiled import EXECUTORS, BuildOptions, compile_model, load_artifact
from .console import Console
from .inputs import read_npz, resolve, save_npz, summarise
from .runners import CommandError
from .timing import TIMED_S, timed_runs
from .workloads import NAMES, run_workload


def add_arguments(p) -> None:
    p.add_argument("model", metavar="ARTIFACT|MODEL",
                   help=f"an artifact of relayir compile, a model file (.onnx, .pt2, "
                        f".relay), or a built-in model ({', '.join(NAMES)})")
    add_build_options(p, executors=(*EXECUTORS, "debug"))
    add_input_options(p)
    p.add_argument("--outputs", metavar="OUT.npz", help="write the outputs (output_0, ...)")
    p.add_argument("--repeat", type=int, metavar="N",
                   help="timed runs after the warm-up (default: as many as 0.5 s holds, at "
                        "least 3; built-in models: at least 20)")
    p.add_argument("--profile", action="store_true", help="print the time per kernel")
    p.add_argument("--print-top", type=int, default=5, metavar="N",
                   help="top-N classes of a classifier-shaped output (default: 5; 0: none)")
    p.add_argument("--batch", type=positive_int, default=1, help="batch size of a built-in model")


def run(args, console: Console) -> int:
    if args.model in NAMES and not os.path.exists(args.model):
        return run_workload(args, console)
    if args.executor == "debug":
        raise CommandError("--executor debug runs built-in models only")
    if not os.path.exists(args.model):
        raise CommandError(f"{args.model}: not found (not a file, nor a built-in model: "
                           f"{', '.join(NAMES)})")
    if is_model_file(args.model):
        mod, params = load(args.model, args, console)
        compiled = compile_model(mod, params, BuildOptions.from_args(args), console)
        how = "compiled"
    else:
        with console.task(f"loading {args.model}"):
            compiled = load_artifact(args.model)
        how = "loaded"
    runner = compiled.runner()
    given = read_npz(args.inputs) if args.inputs else {}
    runner.set_inputs(resolve(runner.inputs, given, args.fill, input_shapes(args), console))
    repeat = None if args.repeat is None else max(args.repeat, 0)
    with console.task("running" if repeat is None else
                      f"running ({repeat} timed run{'s' if repeat != 1 else ''})"):
        outputs = runner.run()  # the first run: warm-up, and the outputs reported
        times = [t * 1e3 for t in timed_runs(runner.time_run, repeat, 3)]
    console.print(f"model       {args.model}: {compiled.describe()}, {how} in "
                  f"{compiled.seconds:.2f} s")
    console.print(f"kernels     {compiled.model.kernel_summary()}")
    if times:
        window = f" in {TIMED_S:g} s" if repeat is None else ""
        console.print(f"latency     {statistics.median(times):.3f} ms median of {len(times)} "
                      f"runs{window} (min {min(times):.3f}, max {max(times):.3f} ms)")
    summarise(console, outputs, args.print_top)
    if args.outputs:
        save_npz(args.outputs, outputs)
        console.print(f"wrote {args.outputs}")
    if args.profile:
        _profile(console, runner, 20 if repeat is None else max(repeat, 1))
    return 0


def _profile(console: Console, runner, number: int, limit: int = 20) -> None:
    report = runner.profile(number)
    rows = [[r.name, r.calls, f"{r.total_ms:.3f}", f"{r.mean_us:.1f}", f"{r.percent:.1f}"]
            for r in report.rows[:limit]]
    more = len(report.rows) - limit
    if more > 0:
        rows.append([f"... {more} more kernels", "", "", "", ""])
    rows.append(["total", sum(r.calls for r in report.rows), f"{report.total_ms:.3f}", "",
                 "100.0"])
    console.table(["kernel", "calls", "total (ms)", "mean (us)", "%"], rows,
                  title=f"time per kernel over {number} run(s)")


COMMAND = Command(
    "run", "run a compiled artifact or a model file, on given or random inputs",
    "Run ARTIFACT (written by relayir compile) or compile MODEL on the fly, on the arrays "
    "in --inputs (missing ones filled), and print each output's shape, dtype and range, "
    "the top classes of a classifier-shaped output, and the latency. A built-in model's "
    "name builds it and checks it against an independent reference.",
    ("relayir run resnet.relayir --inputs in.npz --outputs out.npz",
     "relayir run resnet.onnx --fill random --repeat 50 --profile",
     "relayir run mlp --executor vm"),
    add_arguments, run)
