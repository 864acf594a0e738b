"""The VM against the graph executor (cpu target, same static shapes).

    python benchmarks/vm.py                          # 3 rounds: dispatch, calls, models
    python benchmarks/vm.py --rounds 1 --models mlp_b1,resnet18

Three measurements, each in a fresh process (``--one EXECUTOR CASE``), the rounds
interleaving executors and cases as ``benchmarks/compare.py`` does (whose timing loop,
model table and version line this reuses):

- ``dispatch``: a function of 20,000 ``Move`` instructions: µs per dispatched
  instruction (the loop's own cost, no kernel);
- ``calls``: a chain of 50 ``add`` kernels on 4 floats (opt level 0: no fusion): µs per
  kernel call, VM and graph executor (the kernels' work is the same in both);
- models (``mlp_b1``, ``resnet18``, ``bert``): latency of the VM and of the graph
  executor, VM / graph (goal: within 1.2x), the VM's instruction count, its storage
  arena vs the graph executor's memory plan, and how long ``Executable.load`` takes;
- ``bert_dyn``: the VM running ``bert`` compiled once with a symbolic sequence length,
  at the static model's length (128), against the static graph executor.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import MODELS, _time, _versions  # noqa: E402

CASES = ("dispatch", "calls", "mlp_b1", "resnet18", "bert", "bert_dyn")
EXECUTORS = ("graph", "vm")


def _dispatch() -> dict:
    from relayir.vm import Executable, Instruction, Opcode, VirtualMachine, VMFunction

    n = 20000
    code = [Instruction(Opcode.LoadConsti, (0, 1))]
    code += [Instruction(Opcode.Move, (1 + i % 2, i % 2)) for i in range(n)]
    code.append(Instruction(Opcode.Ret, (1,)))
    fn = VMFunction("main", (), (), code, 3)
    vm = VirtualMachine(Executable([fn], [], [], [], [], []))
    return {"us_per_instruction": _time(vm.run, min_seconds=0.5) / (n + 2) * 1e6}


def _calls(executor: str) -> dict:
    import numpy as np

    import relayir as relay

    k = 50
    x = relay.var("x", shape=(4,), dtype="float32")
    y = x
    for _ in range(k):
        y = relay.add(y, relay.const(1.0))
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    data = np.ones(4, "float32")
    with relay.transform.PassContext(opt_level=0):
        if executor == "vm":
            vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu"))
            vm.set_input("main", data)
            seconds = _time(lambda: vm.invoke("main"))
        else:
            gm = relay.graph_executor.GraphModule(relay.build(mod, target="cpu"))
            gm.set_input("x", data)
            seconds = _time(gm.run)
    return {"us_per_call": seconds / k * 1e6}


def _model(executor: str, model: str) -> dict:
    import numpy as np

    import relayir as relay
    from relayir.testing.models import get_workload, make_inputs

    dynamic = model == "bert_dyn"
    workload, knobs = MODELS["bert" if dynamic else model]
    mod, params, _ = get_workload(workload, **knobs)
    inputs = make_inputs(workload, mod)
    if dynamic:  # one module for every length, run at the static one
        mod, params, _ = get_workload(workload, seq_len="seq", **knobs)
        inputs["position_ids"] = np.arange(inputs["input_ids"].shape[1], dtype="int64")
    result: dict = {}
    with relay.transform.PassContext(opt_level=3):
        if executor == "graph":
            lib = relay.build(mod, target="cpu", params=params)
            gm = relay.graph_executor.GraphModule(lib)
            gm.set_input(**inputs)
            result["latency_s"] = _time(gm.run)
            result["memory_bytes"] = lib.memory_plan.planned_bytes
            return result
        exe = relay.vm.compile(mod, target="cpu", params=params)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.relayvm")
        exe.save(path)
        relay.vm.Executable.load(path)  # the first load materialises the .so in the cache
        t0 = time.perf_counter()
        exe = relay.vm.Executable.load(path)
        result["load_s"] = time.perf_counter() - t0
    vm = relay.vm.VirtualMachine(exe)
    vm.set_input("main", **inputs)
    result["latency_s"] = _time(lambda: vm.invoke("main"))
    result["instructions"] = sum(len(f.instructions) for f in exe.functions)
    result["kernel_calls"] = sum(1 for f in exe.functions for i in f.instructions
                                 if i.op.name == "InvokePacked")
    result["memory_bytes"] = exe.storage_bytes()
    return result


def measure(executor: str, case: str, threads: int) -> dict:
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if case == "dispatch":
        return _dispatch() if executor == "vm" else {}
    if case == "calls":
        return _calls(executor)
    if case == "bert_dyn" and executor == "graph":
        return {}  # the graph executor runs static shapes: compared with its "bert"
    return _model(executor, case)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mlp_b1,resnet18,bert,bert_dyn")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--one", nargs=2, metavar=("EXECUTOR", "CASE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], args.one[1], args.threads)))
        return
    cases = ["dispatch", "calls"] + [m for m in args.models.split(",") if m]
    results: dict = {}
    for r in range(args.rounds):
        for case in cases:
            for ex in EXECUTORS:
                if case in ("dispatch", "bert_dyn") and ex == "graph":
                    continue
                cmd = [sys.executable, os.path.abspath(__file__), "--one", ex, case,
                       "--threads", str(args.threads)]
                env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if proc.returncode != 0:
                    print(f"round {r} {ex} {case} failed:\n{proc.stderr[-2000:]}",
                          file=sys.stderr)
                    continue
                res = json.loads(proc.stdout.strip().splitlines()[-1])
                results.setdefault((case, ex), []).append(res)
                print(f"round {r}: {case:9s} {ex:5s} {res}", file=sys.stderr)
    _report(results, cases, args)


def _report(results: dict, cases: list, args) -> None:
    def med(case, ex, key):
        vals = [r[key] for r in results.get((case, ex), []) if key in r]
        return (statistics.median(vals), min(vals), max(vals)) if vals else None

    def cell(m, scale=1.0, fmt="{:.3f}"):
        if m is None:
            return "–"
        return f"{fmt.format(m[0] * scale)} ({fmt.format(m[1] * scale)}–" \
               f"{fmt.format(m[2] * scale)})"

    print(f"{args.threads} threads, {args.rounds} fresh processes per cell; {_versions()}\n")
    d = med("dispatch", "vm", "us_per_instruction")
    print(f"VM dispatch: {cell(d)} µs per instruction (Move)")
    g, v = med("calls", "graph", "us_per_call"), med("calls", "vm", "us_per_call")
    print(f"kernel call (4 floats, 50 calls): graph {cell(g)} µs, VM {cell(v)} µs\n")
    print("| model | graph ms (range) | VM ms (range) | VM / graph | VM instructions "
          "(kernel calls) | VM arena / graph plan MiB | Executable.load ms |")
    print("|---|---|---|---|---|---|---|")
    for case in cases[2:]:
        g = med("bert" if case == "bert_dyn" else case, "graph", "latency_s")
        v = med(case, "vm", "latency_s")
        ratio = f"{v[0] / g[0]:.2f}×" if g and v else "–"
        ins, calls = med(case, "vm", "instructions"), med(case, "vm", "kernel_calls")
        mem_v = med(case, "vm", "memory_bytes")
        mem_g = med("bert" if case == "bert_dyn" else case, "graph", "memory_bytes")
        mem = f"{mem_v[0] / 2**20:.2f} / {mem_g[0] / 2**20:.2f}" if mem_v and mem_g else "–"
        load = med(case, "vm", "load_s")
        load_ms = f"{load[0] * 1e3:.1f}" if load else "–"
        print(f"| {case} | {cell(g, 1e3)} | {cell(v, 1e3)} | {ratio} | "
              f"{int(ins[0]) if ins else '–'} ({int(calls[0]) if calls else '–'}) | {mem} | "
              f"{load_ms} |")


if __name__ == "__main__":
    main()
