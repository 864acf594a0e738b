"""Microbenchmarks of the generated code, each next to its numpy counterpart.

    python benchmarks/micro.py [--threads 2]

- dense GFLOP/s at 256/512/1024 (weight packed at run time, weight pre-packed,
  ``numpy.matmul``, and the measured FP32 peak);
- bandwidth of a fused elementwise kernel (add + relu over 4M floats) vs a numpy copy;
- per-kernel dispatch overhead of the graph executor's run loop (a chain of 200 tiny
  kernels: run time / 200, minus the kernel bodies measured alone);
- ``--conv``: resnet18's conv layers by algorithm (NCHW, blocked direct, Winograd) in
  effective GFLOP/s next to ONNX Runtime, and resnet18 / mobilenet_v2 end to end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
from timing import interleaved


def _median(fn, repeat: int = 30) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _primitive(body_fn, *types):
    import relayir as relay

    params = [relay.var(f"p{i}", shape=s, dtype=d) for i, (s, d) in enumerate(types)]
    fn = relay.Function(params, body_fn(*params)).with_attr("Primitive", 1)
    relay.transform.infer_type(fn)
    return fn


_PEAK_SOURCE = r"""
#include <omp.h>
typedef float rl_peak_v __attribute__((vector_size(LANES * sizeof(float))));
/* Fused multiply-adds on 24 independent vector chains per thread (no memory traffic):
   the FP32 rate a matmul kernel could reach at best. Returns the flops done. */
double relayir_peak(long iters) {
  double flops = 0;
#pragma omp parallel reduction(+ : flops)
  {
    rl_peak_v acc[24], b = (rl_peak_v){0} + 0.9999f, c = (rl_peak_v){0} + 0.0001f;
    for (int i = 0; i < 24; ++i) acc[i] = (rl_peak_v){0} + (float)i;
    for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 24
      for (int i = 0; i < 24; ++i) acc[i] = acc[i] * b + c;
      __asm__ volatile("" : "+v"(b));
    }
    float s = 0;
    for (int i = 0; i < 24; ++i) s += acc[i][0];
    flops = 2.0 * LANES * 24 * iters + 0 * s;
  }
  return flops;
}
"""


def peak_gflops() -> float:
    """This machine's FP32 peak over the OpenMP threads (best of 20), from an FMA loop
    compiled by relayir's compiler driver for the host's vector width."""
    import ctypes

    from relayir.codegen.compiler import compile_source
    from relayir.tir.machine import host_machine

    lanes = host_machine().lanes
    lib = ctypes.CDLL(str(compile_source(_PEAK_SOURCE.replace("LANES", str(lanes)),
                                         name="peak")))
    lib.relayir_peak.restype = ctypes.c_double
    lib.relayir_peak.argtypes = [ctypes.c_long]
    best = 0.0
    for _ in range(20):  # short runs: on a busy machine some run undisturbed
        t0 = time.perf_counter()
        flops = lib.relayir_peak(500_000)
        best = max(best, flops / (time.perf_counter() - t0) / 1e9)
    return best


def _interleaved_best(fns: dict, rounds: int = 40) -> dict:
    """``(best, median)`` seconds per name over ``rounds`` calls (``timing.interleaved``:
    relayir's candidates in turn — a busy machine slows every candidate of a round
    alike; the best is the least disturbed —, another runtime's alone)."""
    def once(fn):
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    for fn in fns.values():
        fn()
    times = interleaved(fns, rounds, once)
    return {name: (min(t), statistics.median(t)) for name, t in times.items()}


def dense(sizes=(256, 512, 1024)) -> list[str]:
    """``dense(x, W)`` with batch = size: relayir with the weight a runtime input (packed
    into panels inside the kernel), relayir with the weight pre-packed
    (``nn.contrib_dense_pack``: what a model build with constant weights runs), and
    ``numpy.matmul`` (OpenBLAS), interleaved in one process; GFLOP/s of the best run
    (and median), the ratio to numpy, and the fraction of the measured peak."""
    import relayir as relay
    from relayir.codegen.native import compile_kernels
    from relayir.op.layout import transform_array
    from relayir.tir import lower_primitive
    from relayir.tir.machine import host_machine

    peak = peak_gflops()
    block = 2 * host_machine().lanes
    lines = [f"FP32 peak (FMA loop, {os.environ.get('OMP_NUM_THREADS', '?')} threads): "
             f"{peak:.0f} GFLOP/s; GFLOP/s of the best of 40 interleaved runs (median)\n",
             "| dense n×n×n | relayir, weight packed at run time | relayir, weight pre-packed "
             "| numpy | relayir / numpy | pre-packed / numpy | pre-packed / peak |",
             "|---|---|---|---|---|---|---|"]
    for n in sizes:
        x = relay.var("x", shape=(n, n))
        wp = relay.var("wp", shape=(n // block, n, block))
        plain = _primitive(relay.nn.dense, ((n, n), "float32"), ((n, n), "float32"))
        packed = relay.Function([x, wp], relay.nn.contrib_dense_pack(
            x, wp, weight_layout=f"NC{block}n")).with_attr("Primitive", 1)
        relay.transform.infer_type(packed)
        ks = compile_kernels([lower_primitive(plain, f"dense{n}"),
                              lower_primitive(packed, f"dense_pack{n}")])
        a = np.random.rand(n, n).astype("float32")
        b = np.random.rand(n, n).astype("float32")
        bp = np.ascontiguousarray(transform_array(b, "NC", f"NC{block}n"))
        out = np.empty((n, n), "float32")
        f, fp = ks[f"dense{n}"].function, ks[f"dense_pack{n}"].function
        t = _interleaved_best({"rt": lambda f=f, a=a, b=b, out=out: f(a, b, out),
                               "pre": lambda f=fp, a=a, b=bp, out=out: f(a, b, out),
                               "numpy": lambda a=a, b=b, out=out: np.matmul(a, b.T, out=out)})
        flops = 2 * n ** 3

        def rate(k, t=t, flops=flops):
            return f"{flops / t[k][0] / 1e9:.0f} ({flops / t[k][1] / 1e9:.0f})"

        lines.append(f"| {n} | {rate('rt')} | {rate('pre')} | {rate('numpy')} | "
                     f"{t['numpy'][0] / t['rt'][0]:.0%} | {t['numpy'][0] / t['pre'][0]:.0%} | "
                     f"{flops / t['pre'][0] / 1e9 / peak:.0%} |")
    return lines


def elementwise(n: int = 4 * 1024 * 1024) -> list[str]:
    import relayir as relay
    from relayir.codegen.native import compile_kernels
    from relayir.tir import lower_primitive

    fn = _primitive(lambda x, y: relay.nn.relu(relay.add(x, y)),
                    ((n,), "float32"), ((n,), "float32"))
    k = compile_kernels([lower_primitive(fn, "add_relu")])["add_relu"]
    x, y = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    out = np.empty(n, "float32")
    f = k.function
    t_gen = _median(lambda: f(x, y, out))
    t_copy = _median(lambda: np.copyto(out, x))
    gen_bw = 3 * 4 * n / t_gen / 1e9  # two reads, one write
    copy_bw = 2 * 4 * n / t_copy / 1e9  # one read, one write
    return [f"| fused add+relu, 4M floats | {gen_bw:.1f} GB/s | numpy copy {copy_bw:.1f} GB/s | "
            f"{gen_bw / copy_bw:.0%} |"]


def dispatch(length: int = 200) -> list[str]:
    import relayir as relay

    x = relay.var("x", shape=(1,))
    e = x
    for i in range(length):  # opt level 0: no fusion, one kernel per op
        e = relay.negative(e) if i % 2 else relay.abs(e)  # nothing for SimplifyExpr to cancel
    mod = relay.IRModule.from_expr(relay.Function([x], e))
    with relay.transform.PassContext(opt_level=0):
        lib = relay.build(mod, target="cpu")
    gm = relay.graph_executor.GraphModule(lib)
    gm.set_input("x", np.ones(1, "float32"))
    t_run = _median(gm.run, repeat=200)
    kernel = next(iter(lib.get_lib().kernels.values()))
    a, b = np.ones(1, "float32"), np.empty(1, "float32")
    call = kernel.bind([a, b])
    t_call = _median(lambda: [call() for _ in range(length)], repeat=50) / length
    per = t_run / length
    return [f"| run loop, {length} kernels of 1 element | {per * 1e6:.2f} µs per kernel | "
            f"bare pre-bound native call {t_call * 1e6:.2f} µs | |"]


# ---------------------------------------------------------------- convolutions (P2)
#
# ``--conv``: resnet18's distinct conv layers, each built alone as AlterOpLayout emits
# it (packed weight constant) with its layout conversions (NCHW in, blocked, NCHW out:
# timed, as ONNX Runtime's own reorders are), by algorithm, next to the NCHW kernel
# AlterOpLayout replaces and to ONNX Runtime's Conv (same threads, one process; every
# call takes its input and returns its output; relayir's candidates interleaved, ONNX
# Runtime alone: timing.py). Inside a model the conversions happen once at its edges.
# GFLOP/s are *effective*: the direct convolution's 2·N·O·C·OH·OW·kh·kw/groups flops
# over the measured time, whatever the algorithm. Then resnet18 and mobilenet_v2 end to
# end (relay.build + GraphModule, blocked vs NCHW) against ONNX Runtime on the same
# weights.


def _interleaved(fns: dict, rounds: int = 5, repeat: int = 5) -> dict:
    """Median seconds per name (``timing.interleaved``: relayir's candidates in turn,
    another runtime's alone)."""
    times = interleaved(fns, rounds, lambda fn: _median(fn, repeat))
    return {name: statistics.median(t) for name, t in times.items()}


def _conv_layers(model: str = "resnet18", image_size: int = 224) -> list:
    """``(workload, count)`` per distinct conv of ``model``, in order."""
    from relayir.autotune.conv_algorithms import conv_workloads
    from relayir.testing.models import get_workload

    return conv_workloads(get_workload(model, image_size=image_size)[0])


def _conv_runner(wl, algorithm: str, width: int = 16, tile: int = 4):
    """One conv layer (``nchw``: the plain nn.conv2d kernel), NCHW in and out, and a
    function that runs it as users do (``runtime.wrap(lib).run``, output returned)."""
    import relayir as relay
    from relayir.op.layout import transform_array
    from relayir.op.nn.winograd import weight_transform
    from relayir.transform.alter_op_layout import choose_block

    rng = np.random.default_rng(0)
    c, o, g = wl.channels, wl.out_channels, wl.groups
    weight = (rng.standard_normal((o, c // g, *wl.kernel)) * 0.1).astype("float32")
    data = rng.standard_normal((wl.batch, c, wl.height, wl.width)).astype("float32")
    x, y = choose_block(c // g, width), choose_block(o // g, width)
    common = {"padding": wl.padding, "channels": o}
    inp = relay.var("x", shape=data.shape)  # NCHW in and out, as ONNX Runtime's layer
    if algorithm == "nchw":
        body = relay.nn.conv2d(inp, relay.const(weight), strides=wl.strides,
                               dilation=wl.dilation, groups=g, **common)
    else:  # the layout conversions are timed, as ORT's reorders are
        blocked = relay.layout_transform(inp, "NCHW", f"NCHW{x}c")
        layouts = {"data_layout": f"NCHW{x}c", "out_layout": f"NCHW{y}c"}
        direct = relay.const(transform_array(weight, "OIHW", f"OIHW{x}i{y}o"))
        if algorithm == "winograd":
            u = weight_transform(weight, tile).astype("float32")
            body = relay.nn.contrib_conv2d_winograd_NCHWc(
                blocked, relay.const(transform_array(u, "HWOI", f"HWOI{x}i{y}o")), direct,
                tile_size=tile, kernel_layout=f"HWOI{x}i{y}o", **layouts, **common)
        else:
            body = relay.nn.contrib_conv2d_NCHWc(
                blocked, direct, strides=wl.strides, dilation=wl.dilation, groups=g,
                kernel_layout=f"OIHW{x}i{y}o", **layouts, **common)
        body = relay.layout_transform(body, f"NCHW{y}c", "NCHW")
    mod = relay.IRModule.from_expr(relay.Function([inp], body))
    with relay.transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
        lib = relay.build(mod, target="cpu")
    model = relay.runtime.wrap(lib)  # inputs in, outputs returned, as ORT's session.run
    return lambda: model.run({"x": data})


def _ort_session(module, args, threads: int):
    import onnxruntime as ort
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        torch.onnx.export(module, tuple(torch.from_numpy(a) for a in args), path,
                          input_names=[f"i{k}" for k in range(len(args))], dynamo=False)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    feed = {f"i{k}": a for k, a in enumerate(args)}
    return lambda: sess.run(None, feed)


def _ort_conv(wl, threads: int):
    try:
        import torch
    except ImportError:
        return None
    conv = torch.nn.Conv2d(wl.channels, wl.out_channels, wl.kernel, wl.strides,
                           (wl.padding[0], wl.padding[1]), wl.dilation, wl.groups, bias=False)
    data = np.random.default_rng(0).standard_normal(
        (wl.batch, wl.channels, wl.height, wl.width)).astype("float32")
    return _ort_session(conv.eval(), [data], threads)


def conv_layers(threads: int, model: str = "resnet18") -> list[str]:
    """Each distinct conv layer of ``model`` measured alone (its weights stay in the
    caches between runs, which flatters Winograd's larger weights: see ``--choices`` for
    the layers inside the model)."""
    from relayir.transform.alter_op_layout import choose_algorithm

    lines = ["| layer (N C HxW → O, kernel, stride) | × | MFLOP | NCHW | NCHWc direct | "
             "Winograd F(2x2) | Winograd F(4x4) | ORT | chosen |",
             "|---|---|---|---|---|---|---|---|---|"]
    total = {"nchw": 0.0, "direct": 0.0, "chosen": 0.0, "ort": 0.0}
    for wl, count in _conv_layers(model):
        fns = {a: _conv_runner(wl, a) for a in ("nchw", "direct")}
        if wl.winograd_applies:
            for tile in (2, 4):
                fns[f"F{tile}"] = _conv_runner(wl, "winograd", tile=tile)
        ort = _ort_conv(wl, threads)
        if ort is not None:
            fns["ort"] = ort
        t = _interleaved(fns)
        flops = 2 * wl.macs
        algorithm, tile = choose_algorithm(wl)
        chosen = f"F{tile}" if tile else "direct"
        t["chosen"] = t[chosen]
        for k in total:
            total[k] += count * t.get(k, 0.0)

        def rate(name, t=t, flops=flops):
            return f"{flops / t[name] / 1e9:.0f}" if name in t else "—"

        desc = (f"{wl.channels} {wl.height}x{wl.width} → {wl.out_channels}, "
                f"{wl.kernel[0]}x{wl.kernel[1]} s{wl.strides[0]}")
        label = f"F({tile}x{tile})" if tile else "direct"
        lines.append(f"| {desc} | {count} | {flops / 1e6:.0f} | {rate('nchw')} | "
                     f"{rate('direct')} | {rate('F2')} | {rate('F4')} | {rate('ort')} | "
                     f"{label} |")
    ms = {k: f"{v * 1e3:.2f} ms" for k, v in total.items()}
    lines.append(f"| all convs (sum × count) | | | {ms['nchw']} | {ms['direct']} | | | "
                 f"{ms['ort']} | {ms['chosen']} |")
    return lines


def conv_models(threads: int, models=("resnet18", "mobilenet_v2")) -> list[str]:
    import relayir as relay
    from relayir.testing.models import get_workload, make_inputs

    lines = ["| model | relayir NCHWc (AlterOpLayout) | relayir NCHW | ORT | "
             "NCHWc / ORT | NCHW / ORT |", "|---|---|---|---|---|---|"]
    for name in models:
        mod, params, _ = get_workload(name)
        inputs = make_inputs(name, mod)
        fns = {}
        for label, disabled in (("blocked", []), ("nchw", ["AlterOpLayout"])):
            with relay.transform.PassContext(opt_level=3, disabled_pass=disabled):
                lib = relay.build(mod, target="cpu", params=params)
            gm = relay.graph_executor.GraphModule(lib)
            gm.set_input(**inputs)
            fns[label] = gm.run
        try:
            from relayir.testing.models import torch_models

            module = torch_models.load(torch_models.build(name), params).float()
            fns["ort"] = _ort_session(module, [np.asarray(v) for v in inputs.values()],
                                      threads)
        except ImportError:
            pass
        t = _interleaved(fns, rounds=5, repeat=10)
        ort = t.get("ort", float("nan"))
        lines.append(f"| {name} | {t['blocked'] * 1e3:.2f} ms | {t['nchw'] * 1e3:.2f} ms | "
                     f"{ort * 1e3:.2f} ms | {t['blocked'] / ort:.2f} | "
                     f"{t['nchw'] / ort:.2f} |")
    return lines


def _in_model_convs(lib, report) -> dict:
    """``{(c, hw, o): (algorithm, µs per call)}`` for the 3×3 stride-1 convolutions of a
    built resnet-style model, from its graph and a ``profile()`` report."""
    import json

    graph = json.loads(lib.get_graph_json())
    shapes, rows = graph["attrs"]["shape"][1], graph["node_row_ptr"]
    mean_us = {r.name: r.mean_us for r in report}
    found = {}
    for i, node in enumerate(graph["nodes"]):
        name = node["attrs"].get("func_name", "") if node["op"] == "tvm_op" else ""
        if "conv2d" not in name:
            continue
        (_, cb, h, w, ib), wshape = (shapes[rows[e[0]] + e[1]] for e in node["inputs"][:2])
        out = shapes[rows[i]]
        if "winograd" in name:
            algo = f"F({wshape[0] - 2}x{wshape[0] - 2})"
        elif wshape[2:4] == [3, 3] and out[2:4] == [h, w]:
            algo = "direct"
        else:
            continue
        found[(cb * ib, h, out[1] * out[4])] = (algo, mean_us[name])
    return found


def conv_choices(threads: int, model: str = "resnet18") -> list[str]:
    """``model`` end to end with each choice of algorithm for its Winograd-able layers
    (the cost rule's, the previous rule's F(4×4) at 56²/28²/14², direct at 14², all
    direct), interleaved in one process; then each 3×3 stride-1 layer's time inside the
    model (``profile()``: its weights stream from memory as in a real run, unlike a layer
    measured alone) in effective GFLOP/s (direct-conv flops / time)."""
    import relayir as relay
    from relayir.testing.models import get_workload, make_inputs
    from relayir.transform.alter_op_layout import (
        ALGORITHM_KEY,
        WINOGRAD_TILE_KEY,
        choose_algorithm,
    )

    layers = [wl for wl, _ in _conv_layers(model) if wl.winograd_applies]
    by_size = {wl.height: wl.key for wl in layers}
    variants = {
        "cost rule (per-layer tile)": {},
        "F(4x4) at 56/28/14, direct at 7": {
            ALGORITHM_KEY: {k: "direct" if s == 7 else "winograd" for s, k in by_size.items()},
            WINOGRAD_TILE_KEY: 4},
        "direct at 14": {ALGORITHM_KEY: {by_size[14]: "direct"}} if 14 in by_size else None,
        "all direct": {ALGORITHM_KEY: "direct"},
    }
    mod, params, _ = get_workload(model)
    inputs = make_inputs(model, mod)
    fns, libs = {}, {}
    for label, config in variants.items():
        if config is None:
            continue
        with relay.transform.PassContext(opt_level=3, config=config):
            libs[label] = relay.build(mod, target="cpu", params=params)
        gm = relay.graph_executor.GraphModule(libs[label])
        gm.set_input(**inputs)
        fns[label] = gm
    t = _interleaved({k: gm.run for k, gm in fns.items()}, rounds=7, repeat=10)
    base = t["cost rule (per-layer tile)"]
    lines = [f"| {model}: Winograd-able layers | end to end ms | / cost rule |",
             "|---|---|---|"]
    lines += [f"| {k} | {v * 1e3:.2f} | {v / base:.2f} |" for k, v in t.items()]
    per_layer: dict = {}
    for label, gm in fns.items():
        for key, (algo, us) in _in_model_convs(libs[label], gm.profile(number=20)).items():
            per_layer.setdefault(key, {}).setdefault(algo, []).append(us)
    lines += ["", "| layer (C HxW → O) | chosen by the rule | in the model: algorithm "
              "GFLOP/s (µs) |", "|---|---|---|"]
    for wl in layers:
        key = (wl.channels, wl.height, wl.out_channels)
        algo, tile = choose_algorithm(wl)
        chosen = f"F({tile}x{tile})" if tile else "direct"
        cells = ", ".join(f"{a} {2 * wl.macs / (min(us) * 1e3):.0f} ({min(us):.0f})"
                          for a, us in sorted(per_layer.get(key, {}).items()))
        lines.append(f"| {wl.channels} {wl.height}x{wl.width} → {wl.out_channels} | "
                     f"{chosen} | {cells} |")
    return lines


# ---------------------------------------------------------------- recurrent, transformer (P3)
#
# ``--blocks``: the LSTM / GRU layers of the LSTM row of compare.py (1 layer, 128 → 256,
# 32 steps, batch 1 and 8) and BERT-mini's softmax / layer_norm shapes, each a torch
# module imported with from_pytorch and built as users do, next to the same module in
# ONNX Runtime (exported) and PyTorch eager, measurements interleaved in one process.


def _block_cases():
    import torch

    class Outputs(torch.nn.Module):
        """A recurrent layer returning only its stacked outputs."""

        def __init__(self, layer):
            super().__init__()
            self.layer = layer

        def forward(self, x):
            return self.layer(x)[0]

    rng = np.random.default_rng(0)
    for batch in (1, 8):
        for name, layer in (("LSTM", torch.nn.LSTM), ("GRU", torch.nn.GRU)):
            yield (f"{name} 128→256, 32 steps, batch {batch}", Outputs(layer(128, 256)),
                   rng.standard_normal((32, batch, 128)))
    yield "softmax (4, 128, 128), last axis", torch.nn.Softmax(-1), rng.standard_normal(
        (4, 128, 128))
    yield "layer_norm (128, 256)", torch.nn.LayerNorm(256), rng.standard_normal((128, 256))


def blocks(threads: int) -> list[str]:
    import torch

    import relayir as relay

    torch.set_num_threads(threads)
    lines = ["| block | relayir | ONNX Runtime | PyTorch eager | relayir / ORT | "
             "relayir / torch |", "|---|---|---|---|---|---|"]
    for name, module, data in _block_cases():
        module = module.float().eval()
        x = data.astype("float32")
        mod, params = relay.frontend.from_pytorch(module, [("x", x.shape)])
        with relay.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target="cpu", params=params)
        model = relay.runtime.wrap(lib)  # inputs in, outputs returned, as ORT and torch
        tx = torch.from_numpy(x)

        def eager(module=module, tx=tx):
            with torch.inference_mode():
                return module(tx)

        t = _interleaved({"relayir": lambda model=model, x=x: model.run({"x": x}),
                          "ort": _ort_session(module, [x], threads),
                          "torch": eager}, rounds=5, repeat=20)
        lines.append(f"| {name} | {t['relayir'] * 1e6:.1f} µs | {t['ort'] * 1e6:.1f} µs | "
                     f"{t['torch'] * 1e6:.1f} µs | {t['relayir'] / t['ort']:.2f} | "
                     f"{t['relayir'] / t['torch']:.2f} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--conv", action="store_true",
                    help="only the convolution tables (per layer, then end to end)")
    ap.add_argument("--choices", action="store_true",
                    help="only resnet18 end to end per choice of convolution algorithm, "
                         "and its 3x3 layers timed inside the model")
    ap.add_argument("--blocks", action="store_true",
                    help="only the recurrent and transformer blocks (LSTM, GRU, softmax, "
                         "layer_norm) against ONNX Runtime and PyTorch")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("RELAYIR_CACHE_DIR", tempfile.mkdtemp(prefix="relayir-micro-"))
    if args.blocks:
        print(f"{args.threads} threads; from_pytorch + build, median of interleaved runs\n")
        print("\n".join(blocks(args.threads)))
        return
    if args.choices:
        print(f"{args.threads} threads; median of interleaved runs; FP32 peak (FMA loop) in "
              f"this run: {peak_gflops():.0f} GFLOP/s\n")
        print("\n".join(conv_choices(args.threads)))
        return
    if args.conv:
        print(f"{args.threads} threads; effective GFLOP/s (direct-conv flops / time); FP32 "
              f"peak (FMA loop) in this run: {peak_gflops():.0f} GFLOP/s\n")
        print("\n".join(conv_layers(args.threads)) + "\n")
        print("\n".join(conv_models(args.threads)))
        return
    print(f"{args.threads} threads, numpy {np.__version__}\n")
    print("\n".join(dense()) + "\n")
    print("| benchmark | relayir | numpy | relayir / numpy |")
    print("|---|---|---|---|")
    for line in elementwise() + dispatch():
        print(line)


if __name__ == "__main__":
    main()
