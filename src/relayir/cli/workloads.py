"""The built-in models on the command line: ``relayir run mlp`` (build, run, check
against an independent reference), ``relayir print mlp`` and ``relayir ops``."""

from __future__ import annotations

import statistics
import time

import numpy as np

from ..executor import create_executor
from ..ir.op import get_op
from ..op import list_ops
from ..runtime import wrap
from ..testing.models import WORKLOADS, get_workload, make_inputs
from ..transform import InferType, PassContext
from .command import Command, positive_int
from .console import Console
from .timing import TIMED_S, WARM_S, timed_runs

NAMES = tuple(WORKLOADS)


def run_workload(args, console: Console) -> int:
    """Build a built-in model, time it and check it against its reference; exit status
    1 when the error is above 1e-4 of the largest output."""
    executor = args.executor or "graph"
    mod, params, reference = get_workload(args.model, batch_size=args.batch)
    inputs = make_inputs(args.model, mod)
    start = time.perf_counter()
    with console.task(f"compiling {args.model} for the {executor} executor"), \
            PassContext(opt_level=args.opt_level):
        run = create_executor(executor, mod, target=args.target, params=params).evaluate()
    prepare = time.perf_counter() - start
    out = run(**inputs)

    def time_one() -> float:
        t0 = time.perf_counter()
        run(**inputs)
        return time.perf_counter() - t0

    times = timed_runs(time_one, args.repeat, 20)
    expected = reference(params, *inputs.values())
    err = float(np.max(np.abs(out.astype("float64") - expected)))
    scale = float(np.max(np.abs(expected))) or 1.0
    p = console.print
    p(f"model       {args.model} (batch {args.batch}), executor {executor}, "
      f"target {args.target}, opt level {args.opt_level}")
    p(f"compile     {prepare * 1e3:.1f} ms")
    built = _built(run)
    if built is not None:
        p(f"kernels     {wrap(built).kernel_summary()}")
    if times:
        window = ("" if args.repeat is not None
                  else f" in {TIMED_S:g} s, after {WARM_S:g} s of warm-up runs")
        p(f"latency     {statistics.median(times) * 1e3:.3f} ms median of {len(times)} runs"
          f"{window} (min {min(times) * 1e3:.3f} ms, 90th percentile "
          f"{np.percentile(times, 90) * 1e3:.3f} ms)")
    p(f"max error   {err:.3g} (relative to the largest output: {err / scale:.3g}) "
      f"against an independent float64 reference")
    if args.target != "numpy":  # the numpy target is the semantic reference of every kernel
        with PassContext(opt_level=args.opt_level):
            ref_run = create_executor(executor, mod, target="numpy", params=params).evaluate()
        ref_err = float(np.max(np.abs(out.astype("float64") - ref_run(**inputs))))
        p(f"            {ref_err:.3g} against the numpy target")
    return 0 if err / scale < 1e-4 else 1


def _built(run):
    """What ``create_executor(...).evaluate()`` built: the graph/AOT factory or the VM
    executable (None for the interpreter)."""
    module = getattr(run, "module", None)
    if module is not None:
        return module.module
    vm = getattr(run, "vm", None)
    return vm.exe if vm is not None else None


def _print_args(p) -> None:
    p.add_argument("model", choices=NAMES, metavar="MODEL", help=f"one of {', '.join(NAMES)}")
    p.add_argument("--batch", type=positive_int, default=1)


def _print(args, console: Console) -> int:
    mod, _, _ = get_workload(args.model, batch_size=args.batch)
    console.print(InferType()(mod).astext(show_meta_data=False))
    return 0


def _ops(args, console: Console) -> int:
    for name in list_ops():
        console.print(f"{name:28s} {get_op(name).pattern.name}")
    return 0


PRINT = Command(
    "print", "print a built-in model as Relay text",
    "Print a built-in model's @main as Relay text, types inferred, weights elided "
    "(relayir show prints a model file, after any pass).",
    ("relayir print mlp", "relayir print resnet18 --batch 4"), _print_args, _print)

OPS = Command(
    "ops", "list operators and their fusion patterns",
    "List every registered operator with the fusion pattern FuseOps groups it by.",
    ("relayir ops", "relayir ops | grep conv"), lambda p: None, _ops)

__all__ = ["NAMES", "OPS", "PRINT", "run_workload"]
