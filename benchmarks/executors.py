"""The three executors side by side: graph executor, VM, AOT (from Python and from C),
with ONNX Runtime in the same run.

    python benchmarks/executors.py                      # 3 rounds, all models
    python benchmarks/executors.py --rounds 1 --models mlp_b1 --min-seconds 0.2

Every measurement runs in a fresh process (``--one EXECUTOR CASE``); the rounds
interleave executors and cases, as ``benchmarks/compare.py`` does (whose model table,
timing loop, ONNX Runtime measurement and version line this reuses). Executors:

- ``graph``: the graph executor (a Python loop over pre-bound ctypes calls);
- ``vm``: the VM on the same model, same static shapes;
- ``aot``: the AOT module (ONE ctypes call into ``relayir_run``);
- ``aot_c``: ``examples/aot_c`` built against the exported ``model.so``, timing its own
  loop of ``relayir_run`` calls (no Python in the process);
- ``ort``: ONNX Runtime on the torch twin (``compare.measure``).

Each Python executor is timed as users call it, ``relayir.runtime.wrap(built).run(
inputs)``: inputs in, outputs returned as arrays the caller owns, as ONNX Runtime's
``session.run`` does; the engine alone (inputs set once, outputs left in the executor:
``GraphModule.run``, ``VirtualMachine.invoke``, ``AotModule.run``) is reported beside it
(``run only``).

``overhead`` is a model of ONE kernel on 4 floats (a few ns of work): its run time is
what an executor costs per run beyond its kernels. Memory: the intermediates (graph
plan, VM arena, AOT workspace) and the weights (graph executor: copied into its
storage; AOT: read-only pages of the library, mapped on first touch).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import MODELS, _commit, _cpu, _time, _versions  # noqa: E402
from compare import measure as compare_measure  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "aot_c"
EXECUTORS = ("graph", "vm", "aot", "aot_c", "ort")
CASES = ("overhead", *MODELS)


def _model(case: str):
    import numpy as np

    import relayir as relay
    from relayir.testing.models import get_workload, make_inputs

    if case == "overhead":
        x = relay.var("x", shape=(4,), dtype="float32")
        mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(1.0))))
        return mod, {}, {"x": np.ones(4, "float32")}
    workload, knobs = MODELS[case]
    mod, params, _ = get_workload(workload, **knobs)
    return mod, params, make_inputs(workload, mod)


def _aot_from_c(lib, inputs: dict, min_seconds: float) -> float:
    """Seconds per ``relayir_run`` as the example program measures its own loop."""
    with tempfile.TemporaryDirectory() as tmp:
        lib.export_library(os.path.join(tmp, "model.so"))
        with open(os.path.join(tmp, "in.bin"), "wb") as f:
            for value in inputs.values():
                f.write(value.tobytes())
        binary = os.path.join(tmp, "run_model")
        subprocess.run(["make", "-C", str(EXAMPLE), f"MODEL_DIR={tmp}", f"OUT={binary}"],
                       check=True, capture_output=True)

        def per_run(runs: int) -> float:
            out = subprocess.run([binary, f"{tmp}/in.bin", f"{tmp}/out.bin", str(runs)],
                                 check=True, capture_output=True, text=True).stdout
            return float(re.search(r"([0-9.]+) us per run", out).group(1)) * 1e-6

        estimate = per_run(10)
        runs = int(min(max(min_seconds / max(estimate, 1e-9), 10), 5_000_000))
        return statistics.median(per_run(runs) for _ in range(3))


def measure(executor: str, case: str, threads: int, min_seconds: float) -> dict:
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if executor == "ort":
        if case == "overhead":
            return {}
        return {"latency_s": compare_measure("ort", case, threads)["latency_s"]}
    import relayir as relay

    mod, params, inputs = _model(case)
    result: dict = {}
    weights = sum(v.nbytes for v in params.values())
    with relay.transform.PassContext(opt_level=3):
        if executor == "vm":
            exe = relay.vm.compile(mod, target="cpu", params=params)
            vm = relay.vm.VirtualMachine(exe)
            vm.set_input("main", **inputs)
            result["run_only_s"] = _time(lambda: vm.invoke("main"), min_seconds)
            model = relay.runtime.wrap(exe)
            result["latency_s"] = _time(lambda: model.run(inputs), min_seconds)
            result["arena_bytes"] = exe.storage_bytes()
            return result
        if executor == "graph":
            lib = relay.build(mod, target="cpu", params=params)
            gm = relay.graph_executor.GraphModule(lib)
            gm.set_input(**inputs)
            result["run_only_s"] = _time(gm.run, min_seconds)
            model = relay.runtime.wrap(lib)
            result["latency_s"] = _time(lambda: model.run(inputs), min_seconds)
            result["arena_bytes"] = lib.memory_plan.planned_bytes
            result["weights_bytes"] = weights
            return result
        lib = relay.build(mod, target="cpu", params=params, executor="aot")
    result["arena_bytes"] = lib.get_lib().workspace_size
    result["weights_bytes"] = weights
    if executor == "aot_c":
        result["latency_s"] = _aot_from_c(lib, inputs, min_seconds)
        return result
    m = relay.runtime.executor.AotModule(lib)
    m.set_input(**inputs)
    m.run()
    result["run_only_s"] = _time(m.run, min_seconds)
    model = relay.runtime.wrap(lib)
    result["latency_s"] = _time(lambda: model.run(inputs), min_seconds)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(CASES))
    ap.add_argument("--executors", default=",".join(EXECUTORS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-seconds", type=float, default=1.0, help="timing per measurement")
    ap.add_argument("--one", nargs=2, metavar=("EXECUTOR", "CASE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(*args.one, args.threads, args.min_seconds)))
        return
    cases, executors = args.models.split(","), args.executors.split(",")
    results: dict = {}
    for r in range(args.rounds):
        for case in cases:
            for ex in executors:
                cmd = [sys.executable, os.path.abspath(__file__), "--one", ex, case,
                       "--threads", str(args.threads), "--min-seconds", str(args.min_seconds)]
                env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if proc.returncode != 0:
                    print(f"round {r} {ex} {case} failed:\n{proc.stderr[-2000:]}",
                          file=sys.stderr)
                    continue
                res = json.loads(proc.stdout.strip().splitlines()[-1])
                results.setdefault((case, ex), []).append(res)
                print(f"round {r}: {case:13s} {ex:6s} {res}", file=sys.stderr)
    _report(results, cases, executors, args)


def _report(results: dict, cases: list, executors: list, args) -> None:
    def med(case, ex, key="latency_s"):
        vals = [r[key] for r in results.get((case, ex), []) if key in r]
        return (statistics.median(vals), min(vals), max(vals)) if vals else None

    def cell(case, ex, scale, digits, key="latency_s"):
        m = med(case, ex, key)
        return "–" if m is None else \
            f"{m[0] * scale:.{digits}f} ({m[1] * scale:.{digits}f}–{m[2] * scale:.{digits}f})"

    def ratio(case, a, b):
        x, y = med(case, a), med(case, b)
        return f"{x[0] / y[0]:.2f}×" if x and y else "–"

    def mib(case, ex, key):
        m = med(case, ex, key)
        return "–" if m is None else f"{m[0] / 2**20:.2f}"

    print(f"{args.threads} threads, {args.rounds} fresh processes per cell; {_cpu()}; "
          f"{_versions()}; commit {_commit()}; Python executors timed as "
          f"runtime.wrap(built).run(inputs), outputs returned\n")
    if "overhead" in cases:
        print("One kernel on 4 floats (the executor's own cost per run), µs: " + ", ".join(
            f"{ex} {cell('overhead', ex, 1e6, 3)}" for ex in executors if ex != "ort") + "\n")
    names = {"graph": "graph", "vm": "VM", "aot": "AOT (Python)", "aot_c": "AOT (C)",
             "ort": "ORT"}
    print("| model | " + " | ".join(f"{names[ex]} ms (range)" for ex in executors)
          + " | AOT / ORT | AOT / graph | intermediates MiB graph / VM / AOT | weights MiB |")
    print("|---|" + "---|" * (len(executors) + 4))
    for case in (c for c in cases if c != "overhead"):
        cells = " | ".join(cell(case, ex, 1e3, 3) for ex in executors)
        arena = " / ".join(mib(case, ex, "arena_bytes") for ex in ("graph", "vm", "aot"))
        print(f"| {case} | {cells} | {ratio(case, 'aot', 'ort')} | {ratio(case, 'aot', 'graph')}"
              f" | {arena} | {mib(case, 'aot', 'weights_bytes')} |")
    print("\nThe engines alone (inputs set once, outputs left in the executor), ms: " + "; ".join(
        f"{case}: " + ", ".join(f"{names[ex]} {cell(case, ex, 1e3, 3, 'run_only_s')}"
                                for ex in executors if ex in ("graph", "vm", "aot"))
        for case in cases if case != "overhead"))


if __name__ == "__main__":
    main()
