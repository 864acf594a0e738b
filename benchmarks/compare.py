"""relayir (graph executor, cpu target) side by side with PyTorch eager and ONNX Runtime.

    python benchmarks/compare.py                 # all models, 3 rounds, markdown table
    python benchmarks/compare.py --rounds 1 --models mlp,resnet18

Every measurement runs in a fresh process (``--one FRAMEWORK MODEL``), and the rounds
interleave frameworks and models, because on this machine a whole process sometimes
gets only one core's speed. All three run the same weights (the torch twin loads the
relayir params), with the same thread count. The table gives the median over rounds of
each process's median latency, and the range.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MODELS = {  # name: (workload, knobs)
    "mlp_b1": ("mlp", {"batch_size": 1}),
    "mlp_b64": ("mlp", {"batch_size": 64}),
    "resnet18": ("resnet18", {}),
    "mobilenet_v2": ("mobilenet_v2", {}),
    "bert": ("bert", {}),
}
FRAMEWORKS = ("relayir", "torch", "ort")


def _time(fn, min_seconds: float = 1.0, max_runs: int = 2000) -> float:
    """Median seconds of ``fn`` over repeated runs (after warm-up)."""
    for _ in range(3):
        fn()
    times = []
    start = time.perf_counter()
    while (time.perf_counter() - start < min_seconds or len(times) < 10) and len(times) < max_runs:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(framework: str, model: str, threads: int) -> dict:
    from relayir.testing.models import get_workload, make_inputs

    workload, knobs = MODELS[model]
    mod, params, _ = get_workload(workload, **knobs)
    inputs = make_inputs(workload, mod)
    result = {"framework": framework, "model": model}
    if framework == "relayir":
        import relayir as relay

        os.environ["OMP_NUM_THREADS"] = str(threads)
        with tempfile.TemporaryDirectory() as cache:
            os.environ["RELAYIR_CACHE_DIR"] = cache
            compiles = []
            for _ in range(2):  # cold, then cached
                t0 = time.perf_counter()
                with relay.transform.PassContext(opt_level=3):
                    lib = relay.build(mod, target="cpu", params=params)
                compiles.append(time.perf_counter() - t0)
        gm = relay.graph_executor.GraphModule(lib)
        gm.set_input(**inputs)
        result["latency_s"] = _time(gm.run)
        result["compile_cold_s"], result["compile_cached_s"] = compiles
        plan = lib.memory_plan
        result["planned_bytes"] = plan.planned_bytes
        result["naive_bytes"] = plan.naive_bytes
        return result

    import torch

    from relayir.testing.models import torch_models

    torch.set_num_threads(threads)
    module = torch_models.load(torch_models.build(workload, **{
        k: v for k, v in knobs.items() if k != "batch_size"}), params).float().eval()
    args = [torch.from_numpy(np.asarray(x)) for x in inputs.values()]
    if framework == "torch":
        with torch.inference_mode():
            result["latency_s"] = _time(lambda: module(*args))
        return result

    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        torch.onnx.export(module, tuple(args), path, input_names=list(inputs),
                          dynamo=False)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    feed = {name: np.asarray(v) for name, v in inputs.items()}
    result["latency_s"] = _time(lambda: sess.run(None, feed))
    return result


def _versions() -> str:
    out = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    for mod in ("torch", "onnxruntime"):
        try:
            out.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            out.append(f"{mod} missing")
    return ", ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--one", nargs=2, metavar=("FRAMEWORK", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], args.one[1], args.threads)))
        return
    models = args.models.split(",")
    frameworks = args.frameworks.split(",")
    results: dict = {}
    for r in range(args.rounds):
        for model in models:
            for fw in frameworks:
                cmd = [sys.executable, __file__, "--one", fw, model, "--threads",
                       str(args.threads)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"round {r} {fw} {model} failed:\n{proc.stderr[-2000:]}",
                          file=sys.stderr)
                    continue
                res = json.loads(proc.stdout.strip().splitlines()[-1])
                results.setdefault((model, fw), []).append(res)
                print(f"round {r}: {model:13s} {fw:8s} {res['latency_s'] * 1e3:9.3f} ms",
                      file=sys.stderr)
    _report(results, models, frameworks, args)


def _report(results, models, frameworks, args) -> None:
    def med(model, fw, key="latency_s"):
        vals = [r[key] for r in results.get((model, fw), []) if key in r]
        return (statistics.median(vals), min(vals), max(vals)) if vals else None

    print(f"{args.threads} threads, {args.rounds} fresh processes per cell, "
          f"{platform.processor() or platform.machine()}; {_versions()}\n")
    head = "| model | " + " | ".join(f"{fw} ms (range)" for fw in frameworks)
    head += " | relayir / torch | relayir / ort | compile cold / cached s |"
    head += " memory plan / one buffer per tensor MiB |"
    print(head)
    print("|" + "---|" * (len(frameworks) + 5))
    for model in models:
        cells = []
        for fw in frameworks:
            m = med(model, fw)
            cells.append(f"{m[0] * 1e3:.3f} ({m[1] * 1e3:.3f}–{m[2] * 1e3:.3f})" if m else "–")
        rel = med(model, "relayir")

        def ratio(other, rel=rel, model=model):
            o = med(model, other)
            return f"{rel[0] / o[0]:.2f}×" if rel and o else "–"

        cold, cached = med(model, "relayir", "compile_cold_s"), med(model, "relayir",
                                                                      "compile_cached_s")
        comp = f"{cold[0]:.2f} / {cached[0]:.2f}" if cold and cached else "–"
        planned, naive = med(model, "relayir", "planned_bytes"), med(model, "relayir",
                                                                     "naive_bytes")
        mem = f"{planned[0] / 2**20:.2f} / {naive[0] / 2**20:.2f}" if planned and naive else "–"
        print(f"| {model} | " + " | ".join(cells) + f" | {ratio('torch')} | {ratio('ort')} | "
              f"{comp} | {mem} |")


if __name__ == "__main__":
    main()
