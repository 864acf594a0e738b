"""relayir, PyTorch eager and ONNX Runtime called in turn inside ONE process.

    python benchmarks/compare.py --in-process                  # all models, torch imported first
    python benchmarks/compare.py --in-process --import-first relayir --models mlp_b1

A notebook that preprocesses with torch and infers with relayir, or ``relayir compare``,
runs several runtimes' thread pools in one process: a pool that has just finished a call
keeps spinning on the cores while the next runtime's call starts. Each model gets a fresh
process (``--one-in-process MODEL``) that imports the first runtime the user named, builds
the three engines as ``compare.py`` does (same weights, same thread count, every call
taking the inputs and returning the outputs), and then:

1. ``alone``: each engine timed by itself, after a pause that lets the others' pools sleep;
2. ``interleaved``: calls in turn — relayir, torch, ORT, relayir, ... — each call timed on
   its own, for the same wall time.

The figure the issue asks for is relayir's interleaved median over its separate-process
median (``compare.py`` without ``--in-process``); the same-process ``alone`` median is
printed beside it.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

SETTLE_S = 0.5  # long enough for every pool to stop spinning and sleep


def _median_call(fn, seconds: float) -> float:
    for _ in range(3):
        fn()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 10:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _interleaved(fns: dict, seconds: float) -> dict[str, float]:
    times: dict = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or min(map(len, times.values())) < 10:
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(v) for name, v in times.items()}


def measure_in_process(model: str, threads: int, import_first: str, seconds: float = 2.0) -> dict:
    """``{"alone": {engine: s}, "interleaved": {engine: s}}`` for one model."""
    import importlib

    # the first import loads its OpenMP runtime first (torch first: as in a torch notebook)
    for name in (("torch", "relayir") if import_first == "torch" else ("relayir", "torch")):
        importlib.import_module(name)
    import compare  # the sibling script: the same models, weights and engines
    import numpy as np
    import onnxruntime as ort
    import torch

    import relayir as relay
    from relayir.testing.models import get_workload, make_inputs

    os.environ["OMP_NUM_THREADS"] = str(threads)
    torch.set_num_threads(threads)
    workload, knobs = compare.MODELS[model]
    mod, params, _ = get_workload(workload, **knobs)
    inputs = make_inputs(workload, mod)
    module = compare._torch_twin(workload, knobs, params)
    args = [torch.from_numpy(np.asarray(x)) for x in inputs.values()]
    infos = [(k, (tuple(np.shape(v)), np.asarray(v).dtype.name)) for k, v in inputs.items()]
    imported, weights = relay.frontend.from_pytorch(module, infos)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(imported, target="cpu", params=weights)
    ours = relay.runtime.wrap(lib)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"in_process_{os.getpid()}.onnx")
    torch.onnx.export(module, tuple(args), path, input_names=list(inputs), dynamo=False)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    os.unlink(path)
    feed = {name: np.asarray(v) for name, v in inputs.items()}

    def run_torch():
        with torch.inference_mode():
            return module(*args)

    fns = {"relayir": lambda: ours.run(inputs), "torch": run_torch,
           "ort": lambda: sess.run(None, feed)}
    alone = {}
    for name, fn in fns.items():
        time.sleep(SETTLE_S)
        alone[name] = _median_call(fn, seconds)
    time.sleep(SETTLE_S)
    return {"model": model, "import_first": import_first, "alone": alone,
            "interleaved": _interleaved(fns, 3 * seconds)}


def run(models: list, rounds: int, threads: int, import_first: str) -> None:
    """``compare.py --in-process``: per round and model, relayir in a process of its own
    (``compare.py --one relayir MODEL``) and the three engines in one fresh process."""
    import compare

    here = os.path.abspath(__file__)
    rows: dict = {}
    for r in range(rounds):
        for model in models:
            alone = compare.run_one("relayir", model, threads)
            shared = _subprocess([sys.executable, here, model, import_first, str(threads)])
            if alone is None or shared is None:
                continue
            rows.setdefault(model, []).append((alone["latency_s"], shared))
            print(f"round {r}: {model:13s} relayir separate {alone['latency_s'] * 1e3:8.3f} ms"
                  f"  interleaved {shared['interleaved']['relayir'] * 1e3:8.3f} ms",
                  file=sys.stderr)
    print(f"relayir, PyTorch eager and ONNX Runtime in ONE process ({import_first} imported "
          f"first), every call taking inputs and returning outputs, {threads} threads, "
          f"{rounds} fresh processes per model; {compare._cpu()}; {compare._versions()}; "
          f"commit {compare._commit()}\n")
    print("| model | relayir own process ms | relayir in shared process, alone ms | relayir "
          "interleaved ms | interleaved / own process | PyTorch alone / interleaved ms "
          "| ORT alone / interleaved ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    med = statistics.median
    for model, runs in rows.items():
        own = med(a for a, _ in runs)
        alone = med(s["alone"]["relayir"] for _, s in runs)
        inter = med(s["interleaved"]["relayir"] for _, s in runs)
        ratios = sorted(s["interleaved"]["relayir"] / a for a, s in runs)
        other = [f"{med(s['alone'][e] for _, s in runs) * 1e3:.3f} / "
                 f"{med(s['interleaved'][e] for _, s in runs) * 1e3:.3f}" for e in ("torch", "ort")]
        print(f"| {model} | {own * 1e3:.3f} | {alone * 1e3:.3f} | {inter * 1e3:.3f} | "
              f"{inter / own:.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f}) | {other[0]} | {other[1]} |")


def _subprocess(cmd: list) -> dict | None:
    import json
    import subprocess

    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"{' '.join(cmd[1:])} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":  # python benchmarks/in_process.py MODEL [torch|relayir] [THREADS]
    import json

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    first = sys.argv[2] if len(sys.argv) > 2 else "torch"
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    print(json.dumps(measure_in_process(sys.argv[1], threads, first)))
