"""int8 side by side: relayir's quantization against ONNX Runtime's, same ONNX file.

    python benchmarks/int8.py                          # resnet18, mobilenet_v2, bert; 2 threads
    python benchmarks/int8.py --models resnet18 --threads 2 --calibration 8
    python benchmarks/int8.py --layers                 # resnet18's int8 convs vs the int8 peak
    python benchmarks/int8.py --digits                 # accuracy: fp32 / relayir int8 / ORT int8

Per model, the float model is the built-in workload's PyTorch twin exported to ONNX; the
calibration set is ``--calibration`` random inputs (seeds 1..n). ONNX Runtime quantizes
it with ``quantize_static`` (QDQ, per-channel int8 weights, uint8 activations; CNNs) or
``quantize_dynamic`` (int8 weights; bert). Engines, each in its own process (``--one``),
each returning its output for the same input (seed 0):

- ``relayir_fp32``: the float ONNX file, imported and built (opt level 3);
- ``relayir_int8``: the float file quantized by ``relay.quantize.quantize`` (static on
  the same calibration inputs, or dynamic), built;
- ``relayir_ort_q``: ONNX Runtime's quantized file, imported (not re-quantized), built;
- ``ort_fp32`` / ``ort_int8``: ONNX Runtime on the float / its quantized file.

Latency is the median over >= 1 s of runs after warm-up, every engine called as users
call it with its outputs returned (relayir: ``runtime.wrap(lib).run(inputs)``, ORT:
``session.run``); the output columns compare each
engine with ``relayir_fp32`` (max |diff| / max |fp32|, and top-1 agreement for the CNNs).
``--layers``: each distinct conv layer of resnet18 (batch 1, 224x224) built alone as
``qnn.conv2d`` + ``qnn.requantize`` (uint8 data, int8 per-channel weights), its int8
ops/s (2 x multiply-adds / time) next to the machine's measured peak for the path in use:
a C loop of independent ``vpdpbusd`` (or the AVX2 pair) over registers, one thread, times
the threads.

``--digits``: accuracy on scikit-learn's ``load_digits`` (1,797 8x8 images; 1,400 to
train, 397 to test) of a small CNN trained for a few seconds in PyTorch and exported to
ONNX: fp32, relayir int8 (``relay.quantize.quantize``, static) and ONNX Runtime int8
(``quantize_static``, QDQ) from the same 100 calibration images, and relayir running
ONNX Runtime's quantized file.

The line ``isa`` says which int8 path the generated C compiled (the compiler's macros
under -march=native: AVX512-VNNI, AVX-VNNI, AVX2 or scalar).
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

import numpy as np

MODELS = {"resnet18": "static", "mobilenet_v2": "static", "bert": "dynamic"}
ENGINES = ("relayir_fp32", "relayir_int8", "relayir_ort_q", "ort_fp32", "ort_int8")


def _time(fn, min_seconds: float = 1.0) -> float:
    for _ in range(3):
        fn()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < min_seconds or len(times) < 10:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def isa() -> str:
    """The int8 path codegen/routines_int8.py compiles to on this machine."""
    cc = os.environ.get("CC", "cc")
    try:
        macros = subprocess.run([cc, "-march=native", "-dM", "-E", "-"], input="",
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no C compiler)"
    if "__AVX512VNNI__" in macros and "__AVX512BW__" in macros:
        return "AVX512-VNNI (vpdpbusd, 512-bit)"
    if "__AVXVNNI__" in macros:
        return "AVX-VNNI (vpdpbusd, 256-bit)"
    return "AVX2 (vpmaddwd)" if "__AVX2__" in macros else "scalar"


def prepare(model: str, workdir: str, calibration: int) -> None:
    """float.onnx, ort_q.onnx, inputs.npz (input 0: seed 0; calibration: seeds 1..n)."""
    import onnx  # noqa: F401
    import torch
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    from relayir.testing.models import get_workload, make_inputs, torch_models

    mod, params, _ = get_workload(model)
    module = torch_models.load(torch_models.build(model), params).float().eval()
    feeds = [make_inputs(model, mod, seed=s) for s in range(calibration + 1)]
    names = list(feeds[0])
    path = os.path.join(workdir, "float.onnx")
    args = tuple(torch.from_numpy(np.asarray(v)) for v in feeds[0].values())
    torch.onnx.export(module, args, path, input_names=names, dynamo=False)
    np.savez(os.path.join(workdir, "inputs.npz"),
             **{f"{k}__{i}": v for i, f in enumerate(feeds) for k, v in f.items()})
    q = os.path.join(workdir, "ort_q.onnx")
    if MODELS[model] == "dynamic":
        quantize_dynamic(path, q, weight_type=QuantType.QInt8)
        return

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(feeds[1:])

        def get_next(self):
            return next(self.it, None)

    quantize_static(path, q, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


def _inputs(workdir: str) -> list[dict]:
    data = np.load(os.path.join(workdir, "inputs.npz"))
    out: dict[int, dict] = {}
    for key in data.files:
        name, i = key.rsplit("__", 1)
        out.setdefault(int(i), {})[name] = data[key]
    return [out[i] for i in sorted(out)]


def one(engine: str, model: str, workdir: str, threads: int) -> dict:
    os.environ["OMP_NUM_THREADS"] = str(threads)
    feeds = _inputs(workdir)
    x = feeds[0]
    result = {"engine": engine, "model": model}
    if engine.startswith("ort"):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        f = "float.onnx" if engine == "ort_fp32" else "ort_q.onnx"
        sess = ort.InferenceSession(os.path.join(workdir, f), opts,
                                    providers=["CPUExecutionProvider"])
        out = sess.run(None, x)[0]
        result["latency_ms"] = 1e3 * _time(lambda: sess.run(None, x))
    else:
        import onnx

        import relayir as relay

        f = "ort_q.onnx" if engine == "relayir_ort_q" else "float.onnx"
        mod, params = relay.frontend.from_onnx(onnx.load(os.path.join(workdir, f)))
        t0 = time.perf_counter()
        if engine == "relayir_int8":
            mod = relay.quantize.quantize(mod, params, dataset=feeds[1:], mode=MODELS[model])
            params = {}
        result["quantize_s"] = time.perf_counter() - t0
        with relay.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target="cpu", params=params)
        result["build_s"] = time.perf_counter() - t0 - result["quantize_s"]
        model = relay.runtime.wrap(lib)  # as users call it: inputs in, outputs returned
        out = model.run(x)[0]
        result["latency_ms"] = 1e3 * _time(lambda: model.run(x))
    np.save(os.path.join(workdir, f"out_{engine}.npy"), np.asarray(out))
    return result


# resnet18's distinct convolutions: (in, out, kernel, stride, input size)
RESNET18_CONVS = [(3, 64, 7, 2, 224), (64, 64, 3, 1, 56), (64, 128, 3, 2, 56), (64, 128, 1, 2, 56),
                  (128, 128, 3, 1, 28), (128, 256, 3, 2, 28), (128, 256, 1, 2, 28),
                  (256, 256, 3, 1, 14), (256, 512, 3, 2, 14), (256, 512, 1, 2, 14),
                  (512, 512, 3, 1, 7)]

_PEAK_C = r"""
#include <immintrin.h>
#include <stdint.h>
int64_t peak(int64_t iters, int32_t* out) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  __m512i a[12], x = _mm512_set1_epi32(0x01010101), w = _mm512_set1_epi32(0x01FF01FF);
  for (int i = 0; i < 12; ++i) a[i] = _mm512_setzero_si512();
  for (int64_t k = 0; k < iters; ++k) {
    #pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm512_dpbusd_epi32(a[i], x, w);
  }
  for (int i = 1; i < 12; ++i) a[0] = _mm512_add_epi32(a[0], a[i]);
  _mm512_storeu_si512(out, a[0]);
  return iters * 12 * 64 * 2;   /* int8 ops: 64 multiply-adds per instruction */
#elif defined(__AVXVNNI__)
  __m256i a[12], x = _mm256_set1_epi32(0x01010101), w = _mm256_set1_epi32(0x01FF01FF);
  for (int i = 0; i < 12; ++i) a[i] = _mm256_setzero_si256();
  for (int64_t k = 0; k < iters; ++k) {
    #pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm256_dpbusd_avx_epi32(a[i], x, w);
  }
  for (int i = 1; i < 12; ++i) a[0] = _mm256_add_epi32(a[0], a[i]);
  _mm256_storeu_si256((__m256i*)out, a[0]);
  return iters * 12 * 32 * 2;
#else
  __m256i a[12], x = _mm256_set1_epi32(0x00010001), w = _mm256_set1_epi32(0x0003FFFF);
  for (int i = 0; i < 12; ++i) a[i] = _mm256_setzero_si256();
  for (int64_t k = 0; k < iters; ++k) {
    #pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm256_add_epi32(a[i], _mm256_madd_epi16(x, w));
  }
  for (int i = 1; i < 12; ++i) a[0] = _mm256_add_epi32(a[0], a[i]);
  _mm256_storeu_si256((__m256i*)out, a[0]);
  return iters * 12 * 16 * 2;   /* the AVX2 path: 16 exact multiply-adds per vpmaddwd */
#endif
}
"""


def int8_peak() -> float:
    """One thread's int8 ops/s on independent vpdpbusd (or vpmaddwd) chains."""
    import ctypes

    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as d:
        src, lib = os.path.join(d, "peak.c"), os.path.join(d, "peak.so")
        with open(src, "w") as f:
            f.write(_PEAK_C)
        subprocess.run([cc, "-O3", "-march=native", "-shared", "-fPIC", src, "-o", lib],
                       check=True)
        fn = ctypes.CDLL(lib).peak
        fn.restype, fn.argtypes = ctypes.c_int64, [ctypes.c_int64, ctypes.c_void_p]
        out = np.zeros(16, np.int32)
        best = 0.0
        for _ in range(5):
            t0 = time.perf_counter()
            ops = fn(20_000_000, out.ctypes.data)
            best = max(best, ops / (time.perf_counter() - t0))
    return best


def layers(threads: int) -> None:
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import relayir as relay

    qnn = relay.qnn.op
    r = np.random.default_rng(0)
    peak = int8_peak()
    print(f"int8 peak (one thread, measured): {peak / 1e9:.0f} GOP/s; x {threads} threads = "
          f"{threads * peak / 1e9:.0f}\n")
    print("| layer (in, out, k, stride, size) | ms | int8 GOP/s | % of peak |")
    print("|---|---|---|---|")
    for cin, cout, k, s, size in RESNET18_CONVS:
        x = relay.var("x", shape=(1, cin, size, size), dtype="uint8")
        w = relay.const(r.integers(-127, 128, (cout, cin, k, k)).astype("int8"))
        ws = r.uniform(0.001, 0.01, cout).astype("float32")
        acc = qnn.conv2d(x, w, 128, 0, 0.02, ws, strides=(s, s), padding=(k // 2, k // 2))
        y = qnn.requantize(acc, relay.const(np.float32(0.02) * ws), 0, 0.05, 0, axis=1,
                           out_dtype="uint8")
        with relay.transform.PassContext(opt_level=3):
            lib = relay.build(relay.IRModule.from_expr(relay.Function([x], y)), target="cpu")
        model = relay.runtime.wrap(lib)
        feed = {"x": r.integers(0, 256, (1, cin, size, size)).astype("uint8")}
        sec = _time(lambda m=model, f=feed: m.run(f))
        out = (size + 2 * (k // 2) - k) // s + 1
        ops = 2 * cout * cin * k * k * out * out
        print(f"| {cin}, {cout}, {k}, {s}, {size} | {sec * 1e3:.3f} | {ops / sec / 1e9:.0f} | "
              f"{100 * ops / sec / (threads * peak):.0f}% |", flush=True)


def digits_cnn(seed: int = 0):
    """``(onnx path's model bytes, x_train, x_test, y_test)``: a CNN trained on digits."""
    import io

    import torch
    from sklearn.datasets import load_digits

    torch.manual_seed(seed)
    d = load_digits()
    order = np.random.default_rng(seed).permutation(len(d.target))
    x = (d.images[order] / 16.0).astype("float32")[:, None]
    y = d.target[order]
    xt, yt = torch.from_numpy(x[:1400]), torch.from_numpy(y[:1400]).long()
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 16, 10))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(600):
        idx = torch.randint(0, 1400, (64,))
        loss = torch.nn.functional.cross_entropy(net(xt[idx]), yt[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    buf = io.BytesIO()
    torch.onnx.export(net, (xt[:1],), buf, input_names=["x"], dynamo=False)
    return buf.getvalue(), x[:1400], x[1400:], y[1400:]


def digits(threads: int) -> None:
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    import relayir as relay

    os.environ["OMP_NUM_THREADS"] = str(threads)
    model_bytes, x_train, x_test, y_test = digits_cnn()
    calib = [{"x": x_train[i:i + 1]} for i in range(100)]
    with tempfile.TemporaryDirectory() as d:
        f, q = os.path.join(d, "f.onnx"), os.path.join(d, "q.onnx")
        with open(f, "wb") as fh:
            fh.write(model_bytes)

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter(calib)

            def get_next(self):
                return next(self.it, None)

        quantize_static(f, q, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        engines = {}
        for name, path in (("ONNX Runtime fp32", f), ("ONNX Runtime int8", q)):
            sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
            engines[name] = lambda v, s=sess: s.run(None, {"x": v})[0]
        mod, params = relay.frontend.from_onnx(onnx.load(f))
        qmod = relay.quantize.quantize(mod, params, dataset=calib)
        ort_q, ort_q_params = relay.frontend.from_onnx(onnx.load(q))
        for name, (m, p) in (("relayir fp32", (mod, params)), ("relayir int8", (qmod, {})),
                             ("relayir on ORT's int8 file", (ort_q, ort_q_params))):
            with relay.transform.PassContext(opt_level=3):
                model = relay.runtime.wrap(relay.build(m, target="cpu", params=p))
            engines[name] = lambda v, mm=model: mm.run({"x": v})[0]
        print("| engine | test accuracy (397 images) |")
        print("|---|---|")
        for name, run in engines.items():
            pred = np.array([run(x_test[i:i + 1]).argmax() for i in range(len(x_test))])
            print(f"| {name} | {100 * (pred == y_test).mean():.2f}% |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--calibration", type=int, default=8)
    ap.add_argument("--one", nargs=2, metavar=("ENGINE", "MODEL"))
    ap.add_argument("--workdir")
    ap.add_argument("--digits", action="store_true",
                    help="accuracy on scikit-learn's digits: fp32, relayir int8, ORT int8")
    ap.add_argument("--layers", action="store_true",
                    help="resnet18's int8 conv layers against the measured int8 peak")
    a = ap.parse_args()
    if a.digits:
        digits(a.threads)
        return
    if a.layers:
        print(f"threads {a.threads}, int8 path: {isa()}\n")
        layers(a.threads)
        return
    if a.one:
        print(json.dumps(one(*a.one, a.workdir, a.threads)))
        return
    print(f"threads {a.threads}, int8 path: {isa()}\n")
    print("| model | engine | latency (ms) | vs ORT int8 | vs relayir fp32 | max err / max | "
          "top-1 = fp32 |")
    print("|---|---|---|---|---|---|---|")
    for model in a.models.split(","):
        with tempfile.TemporaryDirectory() as d:
            prepare(model, d, a.calibration)
            rows = {}
            for engine in a.engines.split(","):
                proc = subprocess.run([sys.executable, __file__, "--one", engine, model,
                                       "--workdir", d, "--threads", str(a.threads)],
                                      capture_output=True, text=True)
                if proc.returncode:
                    print(f"| {model} | {engine} | failed: "
                          f"{proc.stderr.strip().splitlines()[-1][:120]} |||||")
                    continue
                rows[engine] = json.loads(proc.stdout.strip().splitlines()[-1])
            ref = np.load(os.path.join(d, "out_relayir_fp32.npy")) if "relayir_fp32" in rows \
                else None
            for engine, r in rows.items():
                out = np.load(os.path.join(d, f"out_{engine}.npy"))
                err = top1 = ""
                if ref is not None:
                    err = f"{np.abs(out - ref).max() / np.abs(ref).max():.4f}"
                    if MODELS[model] == "static":
                        top1 = str(bool(out.argmax() == ref.argmax()))
                ms = r["latency_ms"]
                vs_ort = (f"{ms / rows['ort_int8']['latency_ms']:.2f}x" if "ort_int8" in rows
                          else "")
                vs_fp = (f"{ms / rows['relayir_fp32']['latency_ms']:.2f}x"
                         if "relayir_fp32" in rows else "")
                print(f"| {model} | {engine} | {ms:.2f} | {vs_ort} | {vs_fp} | {err} | {top1} |",
                      flush=True)


if __name__ == "__main__":
    main()
