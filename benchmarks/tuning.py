"""Auto-tuning benchmarks (issue 13): what tuning buys, what it costs, whether the cost
model earns its keep. Run under ``nice`` on a shared machine; every figure compares
candidates measured in the same process, interleaved.

    python benchmarks/tuning.py tune resnet18 --trials 400 --records out/resnet18.json
    python benchmarks/tuning.py tasks --records out/resnet18.json --mlp-records out/mlp.json
    python benchmarks/tuning.py e2e --records-dir out/ --models resnet18,mobilenet_v2,bert
    python benchmarks/tuning.py conv resnet18 --records out/resnet18_conv.json
    python benchmarks/tuning.py curves --model resnet18 --tasks 2 --trials 64 --save out/curves
    python benchmarks/tuning.py spearman --records-dir out/curves

``tune``: ``autotune.tune`` with the xgb tuner, wall time and per-task table.
``tasks``: the 4 heaviest distinct kernels of resnet18 (calls × default time) and the
dense of mlp batch 64: default vs tuned GFLOP/s (measured again side by side, in worker
processes as the tuner measures) and ONNX Runtime's time for the same layer (a one-layer
ONNX model: conv + bias + relu, or dense + bias + relu), GFLOP/s over the layer's own
multiply-adds (2 per MAC) for all three.
``e2e``: each model built with and without its records (graph executor) and ONNX
Runtime on its PyTorch twin, 2 threads, rounds interleaved in one process; medians.
``curves``: best-so-far after N trials of the random and the xgb tuner on the same
tasks (same budget, separate runs, no finalist re-measurement), the trials xgb needs to
reach random's best; then the XGBoost model's Spearman rank correlation on held-out
random measurements of each task (trained on 70% of them and on every measurement of
the other tasks; the held-out 30% never seen).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from timing import interleaved

os.environ.setdefault("OMP_NUM_THREADS", "2")

import relayir as relay  # noqa: E402
from relayir import autotune  # noqa: E402
from relayir.autotune.cost_model import TrainingSet, XGBoostCostModel  # noqa: E402
from relayir.autotune.features import features  # noqa: E402
from relayir.autotune.measure import TaskData  # noqa: E402
from relayir.testing.models import get_workload, make_inputs  # noqa: E402
from relayir.transform import PassContext  # noqa: E402

MODELS = {"resnet18": {}, "mobilenet_v2": {}, "bert": {}, "mlp": {"batch_size": 64}}


def _tasks(model: str):
    mod, params, _ = get_workload(model, **MODELS.get(model, {}))
    with PassContext(opt_level=3):
        return mod, params, autotune.extract_tasks(mod, params, "cpu")


def _runner():
    return autotune.LocalRunner(repeat=10, min_repeat_ms=10, timeout=30)


# ---------------------------------------------------------------- tune


def cmd_tune(args) -> None:
    mod, params, tasks = _tasks(args.model)
    for t in tasks:
        print(f"  {t.name:58s} {t.kind:9s} x{t.weight} {t.flops / 1e6:8.1f} MFLOP  space "
              f"{autotune.ConfigSpace(t).describe()}", flush=True)
    start = time.perf_counter()
    runner = _runner()
    with PassContext(opt_level=3):
        results = autotune.tune(mod, params, "cpu", trials=args.trials, records=args.records,
                                runner=runner, tuner=args.tuner, tasks=tasks)
    runner.close()
    wall = time.perf_counter() - start
    print(f"\n{args.model}: {sum(r.trials for r in results)} trials "
          f"({sum(r.errors for r in results)} errors) in {wall / 60:.1f} min")
    print("| kernel | calls | space | trials | default GFLOP/s | tuned GFLOP/s | speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r.task.name} | {r.task.weight} | {r.space_size:,} | {r.trials} | "
              f"{r.default_gflops:.1f} | {r.gflops:.1f} | {r.speedup:.2f}x |")


# ---------------------------------------------------------------- per task


def _layer(task):
    """``(macs, onnx layer builder)`` of a conv/dense task from its primitive function."""
    from relayir.ir.expr import Call
    from relayir.ir.functor import post_order

    for n in post_order(task.func.body):
        if type(n) is Call and hasattr(n.op, "name") and (
                "conv2d" in n.op.name or "dense" in n.op.name):
            return n
    return None


def _ort_layer(call, threads: int = 2):
    """ONNX Runtime running the same layer in NCHW (conv + bias + relu) or dense."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    a = call.attrs
    x_t, w_t = call.args[0].checked_type, call.args[1].checked_type
    rng = np.random.default_rng(0)
    if "dense" in call.op.name:
        m, k = int(x_t.shape[0]), int(x_t.shape[1])
        if len(w_t.shape) == 3:  # dense_pack (N / nb, K, nb)
            n = int(w_t.shape[0]) * int(w_t.shape[2])
        else:
            n = int(w_t.shape[0])
        w = rng.standard_normal((k, n)).astype("float32")
        b = rng.standard_normal(n).astype("float32")
        nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"]),
                 helper.make_node("Relu", ["y"], ["z"])]
        x_shape, macs = (m, k), m * n * k
        inits = [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
                 helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())]
    else:
        out_t = call.checked_type
        n, cb, h, wd, ib = (int(d) for d in x_t.shape[:5]) if len(x_t.shape) == 5 else (
            *(int(d) for d in x_t.shape), 1)
        cin = cb * ib
        oc = int(a.channels) if getattr(a, "channels", None) else int(out_t.shape[1]) * int(
            out_t.shape[-1])
        kh, kw = (int(k) for k in a.kernel_size)
        strides = [int(s) for s in getattr(a, "strides", (1, 1))]
        pads = [int(p) for p in a.padding]
        groups = int(getattr(a, "groups", 1) or 1)
        w = rng.standard_normal((oc, cin // groups, kh, kw)).astype("float32")
        b = rng.standard_normal(oc).astype("float32")
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[kh, kw],
                                  strides=strides, pads=[pads[0], pads[1], pads[2], pads[3]],
                                  group=groups),
                 helper.make_node("Relu", ["y"], ["z"])]
        oh = (h + pads[0] + pads[2] - kh) // strides[0] + 1
        ow = (wd + pads[1] + pads[3] - kw) // strides[1] + 1
        x_shape, macs = (n, cin, h, wd), n * oc * oh * ow * (cin // groups) * kh * kw
        inits = [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
                 helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())]
    graph = helper.make_graph(nodes, "layer",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    feed = {"x": rng.standard_normal(x_shape).astype("float32")}
    return macs, (lambda: sess.run(None, feed))


def _ort_time(fn, min_s: float = 0.02, repeat: int = 15) -> float:
    fn()
    start = time.perf_counter()
    fn()
    number = max(1, math.ceil(min_s / max(time.perf_counter() - start, 1e-7)))
    costs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        costs.append((time.perf_counter() - t0) / number)
    return min(costs)


def cmd_tasks(args) -> None:
    rows = []
    for model, path, top in (("resnet18", args.records, 4), ("mlp", args.mlp_records, 1)):
        _, _, tasks = _tasks(model)
        history = autotune.ApplyHistoryBest(path)
        ranked = []
        runner = _runner()
        for t in tasks:
            if t.kind not in ("conv", "dense"):
                continue
            space = autotune.ConfigSpace(t)
            best = history.best.get(t.key)
            ranked.append((t, space, best))
        # heaviest by calls x default time: measured again here
        timed = []
        for t, space, best in ranked:
            data = TaskData(t)
            _, job = autotune.build_job(t, space, [space.default_config], data)
            cost = runner.run([job])[0][0].cost
            timed.append((t.weight * cost, t, space, best, data))
        timed.sort(key=lambda x: -x[0])
        for _, t, space, best, data in timed[:top]:
            configs = [space.default_config] + ([best[0]] if best else [])
            costs = {0: [], 1: []}
            for _ in range(args.rounds):  # interleaved rounds, fastest measurement each
                _, job = autotune.build_job(t, space, configs, data)
                for i, r in enumerate(runner.run([job])[0]):
                    costs[i].append(r.cost)
            call = _layer(t)
            macs, ort_fn = _ort_layer(call)
            ort_cost = _ort_time(ort_fn)
            d = min(costs[0])
            b = min(costs[1]) if best else d
            trials = sum(1 for r in autotune.load_records(path) if r.key == t.key)
            rows.append((model, t.name, t.weight, trials, 2 * macs / d / 1e9,
                         2 * macs / b / 1e9, 2 * macs / ort_cost / 1e9, d / b,
                         ort_cost / b))
        runner.close()
    print("| model | kernel | calls | trials | default GFLOP/s | tuned GFLOP/s | ORT GFLOP/s "
          "| tuned/default | tuned vs ORT |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for m, name, w, n, d, b, o, s, vo in rows:
        print(f"| {m} | {name} | {w} | {n} | {d:.1f} | {b:.1f} | {o:.1f} | {s:.2f}x | "
              f"{vo:.2f}x |")


# ---------------------------------------------------------------- end to end


def _ort_model(model: str, params, inputs, threads: int = 2):
    import onnxruntime as ort
    import torch

    from relayir.testing.models import torch_models

    knobs = {k: v for k, v in MODELS[model].items() if k != "batch_size"}
    module = torch_models.load(torch_models.build(model, **knobs), params).float().eval()
    args = [torch.from_numpy(np.asarray(x)) for x in inputs.values()]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        torch.onnx.export(module, tuple(args), path, input_names=list(inputs), dynamo=False)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    feed = {k: np.asarray(v) for k, v in inputs.items()}
    return lambda: sess.run(None, feed)


def _latency(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cmd_e2e(args) -> None:
    print("| model | default (ms) | tuned (ms) | ORT (ms) | tuned speed-up | tuned / ORT |")
    print("|---|---:|---:|---:|---:|---:|")
    for model in args.models.split(","):
        mod, params, _ = get_workload(model, **MODELS.get(model, {}))
        inputs = make_inputs(model, mod)
        path = os.path.join(args.records_dir, f"{model}.json")
        fns = {}
        with PassContext(opt_level=3):
            lib = relay.build(mod, target="cpu", params=params)
            with autotune.apply_history_best(path) as h:
                tuned = relay.build(mod, target="cpu", params=params)
        outs = []
        for name, built in (("default", lib), ("tuned", tuned)):
            model = relay.runtime.wrap(built)  # inputs in, outputs returned, as ORT's run
            fns[name] = lambda model=model, inputs=inputs: model.run(inputs)
            outs.append(model.run(inputs)[0])
        err = float(np.max(np.abs(outs[0] - outs[1])))
        fns["ort"] = _ort_model(model, params, inputs)
        for fn in fns.values():
            for _ in range(5):
                fn()
        lat = interleaved(fns, args.rounds, lambda fn: _latency(fn, args.runs))
        d, t, o = (statistics.median(lat[k]) * 1e3 for k in ("default", "tuned", "ort"))
        print(f"| {model} | {d:.3f} | {t:.3f} | {o:.3f} | {d / t:.2f}x | {t / o:.2f}x |"
              f"  <!-- {len(h.applied)} kernels tuned, max |tuned - default| {err:.2g}; "
              f"rounds default {[round(x * 1e3, 2) for x in lat['default']]} tuned "
              f"{[round(x * 1e3, 2) for x in lat['tuned']]} -->", flush=True)


def cmd_conv(args) -> None:
    """Each convolution's algorithm measured in the whole model (tune_conv_algorithms)."""
    mod, params, _ = get_workload(args.model, **MODELS.get(args.model, {}))
    lines = []
    start = time.perf_counter()
    with PassContext(opt_level=3):
        better = autotune.tune_conv_algorithms(mod, params, "cpu", records=args.records,
                                               rounds=args.rounds, log=lines.append)
    wall = time.perf_counter() - start
    print(f"| {args.model}: layer, candidate | model time / the current choice's |")
    print("|---|---:|")
    for line in lines:
        key, rest = line.split(": ", 1)
        choice, ratio = rest.split("x the current")[0].rsplit(" ", 1)
        print(f"| {key} {choice} | {ratio}x |")
    print(f"\n{len(lines)} candidates in {wall / 60:.1f} min; better than the cost rule: "
          f"{better or 'none'}")


# ---------------------------------------------------------------- curves and model


def _curve_run(task, tuner: str, trials: int, seed: int):
    session = autotune.TuningSession(_runner(), None, tuner, batch=8, seed=seed)
    result = session.run_task(task, trials, confirm=0)
    session.close()
    return result.curve, session.records


def _features(task, records):
    """Features and costs of the successful measurements in ``records`` (lowered again)."""
    from relayir.tir import lower_primitive

    space = autotune.ConfigSpace(task)
    xs, costs = [], []
    for r in records:
        if r.error or not r.costs:
            continue
        kernel = lower_primitive(task.func, "k", space.schedule(r.schedule))
        xs.append(features(kernel, task.profile, r.schedule))
        costs.append(r.cost)
    return xs, costs


def cmd_curves(args) -> None:
    """Random vs xgb best-after-N on ``--tasks`` tasks, then the model's Spearman on
    held-out random measurements of each task (trained on 70% of them and on every
    measurement of the other tasks)."""

    _, _, tasks = _tasks(args.model)
    tasks = [t for t in tasks if t.kind in ("conv", "dense")][: args.tasks]
    marks = [m for m in (4, 8, 16, 24, 32, 48, 64, 96, 128) if m <= args.trials]
    random_records, all_records = {}, {}
    summary = []
    for t in tasks:
        curves = {"random": [], "xgb": []}
        for seed in range(args.seeds):
            for tuner in ("random", "xgb"):
                curve, records = _curve_run(t, tuner, args.trials, seed)
                if args.save:  # to study the cost model offline (--from-saved)
                    autotune.records.append_records(
                        os.path.join(args.save, f"{t.name}.{tuner}.{seed}.json"), records)
                curves[tuner].append(curve)
                all_records.setdefault(t.workload, []).extend(records)
                if tuner == "random":
                    random_records.setdefault(t.workload, []).extend(records)
        print(f"\n{t.name} ({t.flops / 1e6:.0f} MFLOP, space "
              f"{len(autotune.ConfigSpace(t)):,}): best speed-up over the default (measured "
              f"in alternation with it) after N trials (mean over {args.seeds} seed(s))")
        print("| tuner | " + " | ".join(f"N={m}" for m in marks) + " |")
        print("|---|" + "---:|" * len(marks))
        for tuner, runs in curves.items():
            cells = [statistics.mean(1 / r[m - 1] for r in runs) for m in marks]
            print(f"| {tuner} | " + " | ".join(f"{c:.2f}x" for c in cells) + " |")
        for seed in range(args.seeds):
            target = curves["random"][seed][args.trials - 1]
            reached = next((i + 1 for i, c in enumerate(curves["xgb"][seed]) if c <= target),
                           None)
            summary.append((t.name, seed, 1 / target, reached))
            print(f"seed {seed}: random's best after {args.trials} = {1 / target:.2f}x; xgb "
                  f"reached it after {reached if reached else '>' + str(args.trials)} trials",
                  flush=True)
    _spearman_table(tasks, random_records, all_records, args.splits)


def _spearman_table(tasks, random_records: dict, all_records: dict, splits: int) -> None:
    """The XGBoost model's Spearman on held-out random measurements of each task: trained
    on a random 70% of them plus every measurement of the other tasks, tested on the
    other 30%; ``splits`` different splits (mean and range)."""
    from scipy.stats import spearmanr

    print(f"\nSpearman of the XGBoost model on held-out random measurements "
          f"({splits} random 70/30 splits)")
    print("| task | measured | train (this task) | held out | Spearman mean | min | max |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    feats = {t.workload: _features(t, all_records[t.workload]) for t in tasks}
    for t in tasks:
        xs, costs = _features(t, random_records[t.workload])
        cut = int(0.7 * len(costs))
        rhos = []
        for split in range(splits):
            idx = np.random.default_rng(split).permutation(len(costs))
            data = TrainingSet()
            for other in tasks:
                if other.workload != t.workload:
                    for x, c in zip(*feats[other.workload]):
                        data.add(other.workload, x, c)
            for i in idx[:cut]:
                data.add(t.workload, xs[i], costs[i])
            model = XGBoostCostModel(seed=0)
            model.fit(data)
            test = idx[cut:]
            pred = model.predict(np.stack([xs[i] for i in test]))
            rhos.append(spearmanr(pred, [-costs[i] for i in test]).statistic)
        print(f"| {t.name} | {len(costs)} | {cut} | {len(costs) - cut} | "
              f"{statistics.mean(rhos):.3f} | {min(rhos):.3f} | {max(rhos):.3f} |", flush=True)


def cmd_spearman(args) -> None:
    """The Spearman table again from the records ``curves --save`` wrote."""
    import glob

    _, _, tasks = _tasks(args.model)
    tasks = [t for t in tasks if t.kind in ("conv", "dense")][: args.tasks]
    random_records, all_records = {}, {}
    for t in tasks:
        for path in sorted(glob.glob(os.path.join(args.records_dir, f"{t.name}.*.json"))):
            records = autotune.load_records(path)
            all_records.setdefault(t.workload, []).extend(records)
            if ".random." in os.path.basename(path):
                random_records.setdefault(t.workload, []).extend(records)
    _spearman_table(tasks, random_records, all_records, args.splits)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tune")
    t.add_argument("model")
    t.add_argument("--trials", type=int, default=400)
    t.add_argument("--records", required=True)
    t.add_argument("--tuner", default="xgb")
    k = sub.add_parser("tasks")
    k.add_argument("--records", required=True)
    k.add_argument("--mlp-records", required=True)
    k.add_argument("--rounds", type=int, default=3)
    e = sub.add_parser("e2e")
    e.add_argument("--records-dir", required=True)
    e.add_argument("--models", default="resnet18,mobilenet_v2,bert")
    e.add_argument("--rounds", type=int, default=7)
    e.add_argument("--runs", type=int, default=20)
    c = sub.add_parser("curves")
    c.add_argument("--model", default="resnet18")
    c.add_argument("--tasks", type=int, default=2)
    c.add_argument("--trials", type=int, default=64)
    c.add_argument("--seeds", type=int, default=1)
    c.add_argument("--save", help="a folder for each run's records (JSON lines)")
    c.add_argument("--splits", type=int, default=10)
    cv = sub.add_parser("conv", help="each convolution's algorithm, measured in the model")
    cv.add_argument("model")
    cv.add_argument("--records", required=True)
    cv.add_argument("--rounds", type=int, default=5)
    sp = sub.add_parser("spearman", help="the Spearman table from records curves --save wrote")
    sp.add_argument("--records-dir", required=True)
    sp.add_argument("--model", default="resnet18")
    sp.add_argument("--tasks", type=int, default=2)
    sp.add_argument("--splits", type=int, default=10)
    args = p.parse_args()
    commands = {"tune": cmd_tune, "tasks": cmd_tasks, "e2e": cmd_e2e, "curves": cmd_curves,
                "spearman": cmd_spearman, "conv": cmd_conv}
    commands[args.cmd](args)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
