"""The ``relayir`` command: run a built-in model, print its text, list operators."""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def _run(args) -> int:
    import relayir as relay
    from relayir.testing.models import get_workload, make_inputs

    mod, params, reference = get_workload(args.model, batch_size=args.batch)
    inputs = make_inputs(args.model, mod)

    start = time.perf_counter()
    with relay.transform.PassContext(opt_level=args.opt_level):
        run = relay.create_executor(args.executor, mod, target=args.target,
                                    params=params).evaluate()
    prepare = time.perf_counter() - start

    out = run(**inputs)  # warm-up
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        out = run(**inputs)
        times.append(time.perf_counter() - t0)
    expected = reference(params, *inputs.values())
    err = float(np.max(np.abs(out.astype("float64") - expected)))
    scale = float(np.max(np.abs(expected))) or 1.0
    print(f"model       {args.model} (batch {args.batch}), executor {args.executor}, "
          f"target {args.target}, opt level {args.opt_level}")
    print(f"compile     {prepare * 1e3:.1f} ms")
    print(f"latency     {statistics.median(times) * 1e3:.3f} ms median of {args.repeat} "
          f"(min {min(times) * 1e3:.3f} ms)")
    print(f"max error   {err:.3g} (relative to the largest output: {err / scale:.3g}) "
          f"against an independent float64 reference")
    if args.target != "numpy":  # the numpy target is the semantic reference of every kernel
        with relay.transform.PassContext(opt_level=args.opt_level):
            ref_run = relay.create_executor(args.executor, mod, target="numpy",
                                            params=params).evaluate()
        ref_err = float(np.max(np.abs(out.astype("float64") - ref_run(**inputs))))
        print(f"            {ref_err:.3g} against the numpy target")
    return 0 if err / scale < 1e-4 else 1


def _print(args) -> int:
    from relayir.testing.models import get_workload
    from relayir.transform import InferType

    mod, _, _ = get_workload(args.model, batch_size=args.batch)
    print(InferType()(mod).astext(show_meta_data=False))
    return 0


def _ops(args) -> int:
    from relayir.op import get_op, list_ops

    for name in list_ops():
        print(f"{name:28s} {get_op(name).pattern.name}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="relayir", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a built-in model and check it against numpy")
    run.add_argument("model", help="built-in model name, e.g. mlp")
    run.add_argument("--executor", default="graph", choices=["graph", "vm", "debug"],
                     help="graph: build() + the graph executor; vm: the Relay VM; "
                          "debug: the reference interpreter")
    run.add_argument("--target", default="cpu",
                     help="cpu: generated C (needs a C compiler); numpy: reference kernels")
    run.add_argument("--opt-level", type=int, default=3, choices=range(4))
    run.add_argument("--batch", type=int, default=1)
    run.add_argument("--repeat", type=int, default=20)
    run.set_defaults(func=_run)
    show = sub.add_parser("print", help="print a built-in model as Relay text")
    show.add_argument("model")
    show.add_argument("--batch", type=int, default=1)
    show.set_defaults(func=_print)
    ops = sub.add_parser("ops", help="list registered operators and their fusion patterns")
    ops.set_defaults(func=_ops)
    args = parser.parse_args(argv)
    from relayir.errors import Error

    try:
        return args.func(args)
    except Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
