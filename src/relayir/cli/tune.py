"""``relayir tune MODEL --trials N --records out.json [--ray ADDRESS]``: tune a model's
kernels and append every measurement to a records file that ``relayir compile/run
--tuning-records`` (and ``autotune.apply_history_best``) build with."""

from __future__ import annotations

import math
import os
import time

from .. import autotune
from ..autotune.conv_algorithms import chosen_context
from ..testing.models import get_workload
from ..transform import PassContext
from .command import Command, add_model_options, load
from .console import Console
from .runners import CommandError
from .workloads import NAMES


def add_arguments(p) -> None:
    p.add_argument("model", metavar="MODEL",
                   help=f"a model file (.onnx, .pt2, .relay) or a built-in model "
                        f"({', '.join(NAMES)})")
    p.add_argument("--trials", type=int, default=200, metavar="N",
                   help="measurements in all, split across kernels by their share of the "
                        "time (default: 200)")
    p.add_argument("--records", required=True, metavar="FILE",
                   help="tuning records (JSON lines) to append to; earlier records of the "
                        "same kernels are reused")
    p.add_argument("--tuner", choices=tuple(autotune.TUNERS), default="xgb",
                   help="xgb: model-guided (needs relayir[tune]); random; grid "
                        "(default: xgb)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="measure on a Ray cluster (needs relayir[distributed]): its address "
                        "(ray://host:10001 or auto); without one, a local Ray instance")
    p.add_argument("--batch", type=int, default=8, help="candidates per batch (default: 8)")
    p.add_argument("--repeat", type=int, default=10,
                   help="measurements per candidate (default: 10)")
    p.add_argument("--min-repeat-ms", type=float, default=10.0, metavar="MS",
                   help="shortest measurement; short kernels run more times (default: 10)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="S",
                   help="seconds a candidate may take before it is killed (default: 30)")
    p.add_argument("--target", default="cpu", help="target to tune for (default: cpu)")
    p.add_argument("--opt-level", type=int, default=3, choices=range(4), metavar="N",
                   help="optimisation level to build with, as relayir compile (default: 3)")
    p.add_argument("--batch-size", type=int, default=1, help="batch size of a built-in model")
    p.add_argument("--conv-algorithms", action="store_true",
                   help="first choose each convolution's algorithm (direct or a Winograd "
                        "tile), measured in the whole model, then tune the kernels")
    add_model_options(p)


def _model(args, console: Console):
    if args.model in NAMES and not os.path.exists(args.model):
        mod, params, _ = get_workload(args.model, batch_size=args.batch_size)
        return mod, params
    if not os.path.exists(args.model):
        raise CommandError(f"{args.model}: not found (not a file, nor a built-in model: "
                           f"{', '.join(NAMES)})")
    return load(args.model, args, console)


def run(args, console: Console) -> int:
    if args.trials < 0:
        raise CommandError(f"--trials must be >= 0, found {args.trials}")
    mod, params = _model(args, console)
    options = dict(repeat=args.repeat, min_repeat_ms=args.min_repeat_ms, timeout=args.timeout)
    runner = (autotune.RayRunner(args.ray or None, **options) if args.ray is not None
              else autotune.LocalRunner(**options))
    start = time.perf_counter()
    try:
        with PassContext(opt_level=args.opt_level):
            better = {}
            if args.conv_algorithms:
                with console.task("choosing each convolution's algorithm"):
                    better = autotune.tune_conv_algorithms(mod, params, args.target,
                                                           records=args.records,
                                                           log=console.step)
                for key, choice in better.items():
                    console.step(f"{key}: {choice} (better than the cost rule's)")
            with console.task("extracting tasks"), chosen_context(better):
                tasks = autotune.extract_tasks(mod, params, args.target)
            for t in tasks:
                console.step(f"{t.name}: {autotune.ConfigSpace(t).describe()}")
            results = autotune.tune(mod, params, args.target, trials=args.trials,
                                    records=args.records, runner=runner, tuner=args.tuner,
                                    batch=args.batch, tasks=tasks,
                                    progress=console.live or console.verbose)
    finally:
        runner.close()
    rows = [[r.task.name, r.task.kind, r.task.weight, f"{r.space_size:,}", r.trials, r.errors,
             f"{r.default_gflops:.1f}", f"{r.gflops:.1f}", f"{r.speedup:.2f}x"]
            for r in results]
    console.table(["kernel", "kind", "calls", "space", "trials", "errors", "default GFLOP/s",
                   "tuned GFLOP/s", "speed-up"], rows, title=f"tuning {args.model}")
    before = sum(r.task.weight * r.default_cost for r in results
                 if math.isfinite(r.default_cost))
    after = sum(r.task.weight * min(r.best_cost, r.default_cost) for r in results
                if math.isfinite(r.default_cost))
    console.print(f"kernel time per inference: {before * 1e3:.3f} ms default, "
                  f"{after * 1e3:.3f} ms tuned (measured kernel by kernel)")
    console.print(f"{sum(r.trials for r in results)} trials in "
                  f"{time.perf_counter() - start:.0f} s; records in {args.records}")
    console.print(f"build with: relayir compile {args.model} --tuning-records {args.records}")
    return 0


COMMAND = Command(
    "tune", "tune a model's kernels and write tuning records",
    "Extract the kernels of MODEL (as relayir compile builds it), search each kernel's "
    "schedule knobs within --trials measurements in all (spent where the time is), "
    "measuring every candidate in its own process on this machine or on a Ray cluster, "
    "and append every measurement to --records. Build with the best ones: relayir "
    "compile/run MODEL --tuning-records FILE.",
    ("relayir tune resnet18 --trials 500 --records resnet18.json",
     "relayir tune model.onnx --trials 200 --records r.json --tuner random",
     "relayir tune bert --trials 1000 --records bert.json --ray ray://head:10001"),
    add_arguments, run)

__all__ = ["COMMAND"]
