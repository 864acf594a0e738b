"""relayir (graph executor, cpu target) side by side with PyTorch eager and ONNX Runtime.

    python benchmarks/compare.py                 # all models, 3 rounds, markdown tables
    python benchmarks/compare.py --rounds 1 --models mlp_b1,lstm
    python benchmarks/compare.py --busy          # also with one competing busy process
    python benchmarks/compare.py --builder       # relayir from the Relay builders instead
    python benchmarks/compare.py --in-process [--import-first relayir]   # engines in turn
                                                 # in ONE process (benchmarks/in_process.py)

relayir imports each model as users do (``--frontend``, the default): the PyTorch twin
goes through ``relayir.frontend.from_pytorch`` and ``relay.build`` at opt level 3.
``--builder`` takes the built-in Relay builder (``relayir.testing.models``) instead, the
path of the first milestones; the framework ``relayir_builder`` reports it beside the
import (``--frameworks relayir,relayir_builder,torch,ort``). All frameworks run the same
weights (the torch twin loads the relayir params; ONNX Runtime runs the twin exported
by ``torch.onnx.export``), with the same thread count.

Every engine does the same work per timed call: it takes the inputs as numpy arrays and
returns the outputs as arrays the caller owns. relayir: ``relayir.runtime.wrap(lib).run(
inputs)`` (inputs checked and copied in, the graph run, the outputs copied out); the
engine-only time (``GraphModule.run`` on inputs set once, outputs left in the executor)
is reported beside it as ``run only``, never instead. PyTorch: ``module(*tensors)`` under
``inference_mode``; ONNX Runtime: ``session.run(None, feed)``.

Every measurement runs in a fresh process (``--one FRAMEWORK MODEL``), and the rounds
interleave frameworks and models, because on this machine a whole process sometimes
gets only one core's speed. Each cell is the median over rounds of each process's median
latency (the range is over the processes).

``--busy``: each process also measures its model with ONE competing busy process running
(started after the warm-up, stopped after the timing; never pinned to a core:
``--busy-kind python`` is a pure Python loop, ``numpy`` a single-threaded matmul loop),
and the busy table gives the slowdown factor (busy / quiet) of each framework.
"""

from __future__ import annotations

import argparse
import json
import math
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
    "lstm": ("lstm", {}),
}
FRAMEWORKS = ("relayir", "torch", "ort")
NAMES = {"relayir": "relayir", "relayir_builder": "relayir (builder)", "torch": "PyTorch eager",
         "ort": "ONNX Runtime"}
BUSY = {  # --busy-kind: the competing process's program
    "python": "while True: pass",
    "numpy": ("import numpy as np\na = np.random.rand(512, 512).astype('float32')\n"
              "while True: a @ a"),
}


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


def _start_busy(kind: str) -> subprocess.Popen:
    """One competing single-threaded process, on no particular core."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", BUSY[kind]], env=env)
    time.sleep(0.5)  # running and spinning before the timing starts
    return proc


def _timed(result: dict, fn, busy: str | None) -> dict:
    """``latency_s`` of ``fn`` and, with ``busy``, ``busy_latency_s`` beside one busy
    process."""
    result["latency_s"] = _time(fn)
    if busy:
        proc = _start_busy(busy)
        try:
            result["busy_latency_s"] = _time(fn)
        finally:
            proc.kill()
            proc.wait()
    return result


def _torch_twin(workload: str, knobs: dict, params: dict):
    from relayir.testing.models import torch_models

    config = {k: v for k, v in knobs.items() if k != "batch_size"}
    return torch_models.load(torch_models.build(workload, **config), params).float().eval()


def _relayir(mod, params, inputs: dict, threads: int, result: dict, busy, expected=None):
    import relayir as relay

    with tempfile.TemporaryDirectory() as cache:
        os.environ["RELAYIR_CACHE_DIR"] = cache
        compiles = []
        for _ in range(2):  # cold, then cached
            t0 = time.perf_counter()
            with relay.transform.PassContext(opt_level=3):
                lib = relay.build(mod, target="cpu", params=params)
            compiles.append(time.perf_counter() - t0)
    model = relay.runtime.wrap(lib)
    gm = model.module
    gm.set_input(**inputs)
    if expected is not None:  # the same answer as eager torch, in the same process
        result["max_abs_err"] = float(np.max(np.abs(model.run(inputs)[0] - expected)))
    result["compile_cold_s"], result["compile_cached_s"] = compiles
    plan = lib.memory_plan
    result["planned_bytes"] = plan.planned_bytes
    result["naive_bytes"] = plan.naive_bytes
    from relayir.codegen import openmp_env

    result["openmp"] = openmp_env.status()
    gm.set_input(**inputs)
    result["run_only_s"] = _time(gm.run)  # the engine alone, beside the user path
    return _timed(result, lambda: model.run(inputs), busy)


def measure(framework: str, model: str, threads: int, frontend: bool = True,
            busy: str | None = None) -> dict:
    from relayir.testing.models import get_workload, make_inputs

    workload, knobs = MODELS[model]
    mod, params, _ = get_workload(workload, **knobs)
    inputs = make_inputs(workload, mod)
    result = {"framework": framework, "model": model}
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if framework == "relayir_builder" or (framework == "relayir" and not frontend):
        result["import"] = "builder"
        return _relayir(mod, params, inputs, threads, result, busy)

    import torch

    torch.set_num_threads(threads)
    module = _torch_twin(workload, knobs, params)
    args = [torch.from_numpy(np.asarray(x)) for x in inputs.values()]
    if framework == "relayir":
        import relayir as relay

        infos = [(k, (tuple(np.shape(v)), np.asarray(v).dtype.name)) for k, v in inputs.items()]
        t0 = time.perf_counter()
        imported, weights = relay.frontend.from_pytorch(module, infos)
        result["import"], result["import_s"] = "from_pytorch", time.perf_counter() - t0
        with torch.inference_mode():
            expected = module(*args).numpy()
        return _relayir(imported, weights, inputs, threads, result, busy, expected)
    if framework == "torch":
        with torch.inference_mode():
            return _timed(result, lambda: module(*args), busy)

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
    return _timed(result, lambda: sess.run(None, feed), busy)


def _cpu() -> str:
    """The CPU's model name and its widest vector ISA (every figure names its CPU)."""
    name, flags = platform.processor() or platform.machine(), ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and name in ("", platform.machine()):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    isa = next((i for i in ("avx512f", "avx2") if f" {i} " in flags), "")
    return f"{name} ({isa.replace('avx512f', 'AVX-512').replace('avx2', 'AVX2') or 'no AVX2'})"


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True,
                               cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        return out.stdout.strip() + ("+changes" if dirty else "") or "unknown"
    except OSError:
        return "unknown"


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
    ap.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                    help=f"some of {', '.join(NAMES)}")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    path = ap.add_mutually_exclusive_group()
    path.add_argument("--frontend", dest="frontend", action="store_true", default=True,
                      help="relayir imports the PyTorch twin with from_pytorch (default)")
    path.add_argument("--builder", dest="frontend", action="store_false",
                      help="relayir builds the model with the Relay builders")
    ap.add_argument("--busy", action="store_true",
                    help="also time each model beside one competing busy process")
    ap.add_argument("--busy-kind", choices=sorted(BUSY), default="python")
    ap.add_argument("--in-process", action="store_true",
                    help="relayir, PyTorch and ONNX Runtime called in turn in one process")
    ap.add_argument("--import-first", choices=("torch", "relayir"), default="torch",
                    help="with --in-process: which runtime the process imports first")
    ap.add_argument("--one", nargs=2, metavar=("FRAMEWORK", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    busy = args.busy_kind if args.busy else None
    if args.one:
        print(json.dumps(measure(args.one[0], args.one[1], args.threads, args.frontend, busy)))
        return
    models = args.models.split(",")
    frameworks = args.frameworks.split(",")
    for name in (*models, *frameworks):
        if name not in MODELS and name not in NAMES:
            ap.error(f"unknown model or framework {name!r}")
    if args.in_process:
        import in_process

        in_process.run(models, args.rounds, args.threads, args.import_first)
        return
    results: dict = {}
    for r in range(args.rounds):
        for model in models:
            for fw in frameworks:
                res = run_one(fw, model, args.threads, args.frontend, busy, r)
                if res is None:
                    continue
                results.setdefault((model, fw), []).append(res)
                extra = (f"  busy {res['busy_latency_s'] * 1e3:9.3f} ms"
                         if "busy_latency_s" in res else "")
                print(f"round {r}: {model:13s} {fw:16s} {res['latency_s'] * 1e3:9.3f} ms{extra}",
                      file=sys.stderr)
    _report(results, models, frameworks, args)


def run_one(fw: str, model: str, threads: int, frontend: bool = True, busy=None,
            r: int = 0) -> dict | None:
    """``measure(fw, model)`` in a fresh process (``--one``); None if it failed."""
    cmd = [sys.executable, os.path.abspath(__file__), "--one", fw, model, "--threads",
           str(threads), "--frontend" if frontend else "--builder"]
    if busy:
        cmd += ["--busy", "--busy-kind", busy]
    env = dict(os.environ)
    if not fw.startswith("relayir"):  # importing relayir must not retune
        env["RELAYIR_OMP_SPINCOUNT"] = "default"  # torch's OpenMP runtime
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(f"round {r} {fw} {model} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _med(results, model, fw, key="latency_s"):
    vals = [r[key] for r in results.get((model, fw), []) if key in r]
    return (statistics.median(vals), min(vals), max(vals)) if vals else None


def _geomean(values) -> float | None:
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _report(results, models, frameworks, args) -> None:
    mode = "from_pytorch import" if args.frontend else "Relay builders"
    print(f"relayir: {mode}, build(target=\"cpu\") at opt level 3, graph executor, "
          f"timed as runtime.wrap(lib).run(inputs) (outputs returned); {args.threads} "
          f"threads, {args.rounds} fresh processes per cell; {_cpu()}; {_versions()}; "
          f"commit {_commit()}\n")
    others = [fw for fw in ("torch", "ort") if fw in frameworks]
    ours = [fw for fw in frameworks if fw.startswith("relayir")]
    head = ("| model | " + " | ".join(f"{NAMES[fw]} ms" for fw in frameworks) + " | "
            + " | ".join(f"{NAMES[o]} / {NAMES[other]}" for o in ours for other in others)
            + " |")
    print(head)
    print("|---|" + "---:|" * (len(frameworks) + len(ours) * len(others)))
    ratios: dict = {(o, other): [] for o in ours for other in others}
    for model in models:
        cells = []
        for fw in frameworks:
            m = _med(results, model, fw)
            cells.append(f"{m[0] * 1e3:.3f}" if m else "–")
        for o in ours:
            for other in others:
                a, b = _med(results, model, o), _med(results, model, other)
                ratio = a[0] / b[0] if a and b else None
                ratios[(o, other)].append(ratio)
                cells.append(f"{ratio:.2f}" if ratio else "–")
        print(f"| {model} | " + " | ".join(cells) + " |")
    for o in ours:
        parts = []
        for other in others:
            g = _geomean(ratios[(o, other)])
            if g:
                worst = max(r for r in ratios[(o, other)] if r)
                parts.append(f"{g:.2f}× {NAMES[other]} (worst {worst:.2f}×)")
        if parts:
            print(f"\nGeometric mean, {NAMES[o]}: " + ", ".join(parts) + ".")
    _details(results, models, frameworks)
    if args.busy:
        _busy_report(results, models, frameworks, args.busy_kind)


def _details(results, models, frameworks) -> None:
    """Ranges over the processes, compile times, memory plan, error against torch."""
    print("\n| model | " + " | ".join(f"{NAMES[fw]} ms (range)" for fw in frameworks)
          + " | relayir run only ms | compile cold / cached s "
            "| memory plan / one buffer per tensor MiB | max abs err vs torch |")
    print("|---|" + "---|" * (len(frameworks) + 4))
    ours = next((fw for fw in frameworks if fw.startswith("relayir")), None)
    for model in models:
        cells = []
        for fw in frameworks:
            m = _med(results, model, fw)
            cells.append(f"{m[0] * 1e3:.3f} ({m[1] * 1e3:.3f}–{m[2] * 1e3:.3f})" if m else "–")
        cold, cached = (_med(results, model, ours, k)
                        for k in ("compile_cold_s", "compile_cached_s"))
        comp = f"{cold[0]:.2f} / {cached[0]:.2f}" if cold and cached else "–"
        planned, naive = (_med(results, model, ours, k) for k in ("planned_bytes", "naive_bytes"))
        mem = f"{planned[0] / 2**20:.2f} / {naive[0] / 2**20:.2f}" if planned and naive else "–"
        err = _med(results, model, ours, "max_abs_err")
        only = _med(results, model, ours, "run_only_s")
        cells.append(f"{only[0] * 1e3:.3f}" if only else "–")
        print(f"| {model} | " + " | ".join(cells) + f" | {comp} | {mem} | "
              f"{f'{err[1]:.1e}–{err[2]:.1e}' if err else '–'} |")


def _busy_report(results, models, frameworks, kind) -> None:
    print(f"\nWith one competing busy process ({kind}): median busy latency and the slowdown "
          f"factor (busy / quiet, each process's own ratio, median over processes).\n")
    print("| model | " + " | ".join(f"{NAMES[fw]} busy ms (× quiet)" for fw in frameworks)
          + " |")
    print("|---|" + "---:|" * len(frameworks))
    for model in models:
        cells = []
        for fw in frameworks:
            runs = [r for r in results.get((model, fw), []) if "busy_latency_s" in r]
            if not runs:
                cells.append("–")
                continue
            busy = statistics.median(r["busy_latency_s"] for r in runs)
            factor = statistics.median(r["busy_latency_s"] / r["latency_s"] for r in runs)
            cells.append(f"{busy * 1e3:.3f} (×{factor:.2f})")
        print(f"| {model} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
