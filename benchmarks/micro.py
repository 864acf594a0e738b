"""Microbenchmarks of the generated code, each next to its numpy counterpart.

    python benchmarks/micro.py [--threads 2]

- dense GFLOP/s at 256/512/1024 (generated kernel vs ``numpy.matmul``);
- bandwidth of a fused elementwise kernel (add + relu over 4M floats) vs a numpy copy;
- per-kernel dispatch overhead of the graph executor's run loop (a chain of 200 tiny
  kernels: run time / 200, minus the kernel bodies measured alone).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np


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


def dense(sizes=(256, 512, 1024)) -> list[str]:
    import relayir as relay
    from relayir.tir import lower_primitive
    from relayir.codegen.native import compile_kernels

    lines = []
    for n in sizes:
        fn = _primitive(relay.nn.dense, ((n, n), "float32"), ((n, n), "float32"))
        k = compile_kernels([lower_primitive(fn, f"dense{n}")])[f"dense{n}"]
        a = np.random.rand(n, n).astype("float32")
        b = np.random.rand(n, n).astype("float32")
        out = np.empty((n, n), "float32")
        f = k.function
        t_gen = _median(lambda f=f, a=a, b=b, out=out: f(a, b, out))
        t_np = _median(lambda a=a, b=b, out=out: np.matmul(a, b.T, out=out))
        flops = 2 * n**3
        lines.append(f"| dense {n} | {flops / t_gen / 1e9:.1f} GFLOP/s | "
                     f"{flops / t_np / 1e9:.1f} GFLOP/s | {t_np / t_gen:.0%} |")
    return lines


def elementwise(n: int = 4 * 1024 * 1024) -> list[str]:
    import relayir as relay
    from relayir.tir import lower_primitive
    from relayir.codegen.native import compile_kernels

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("RELAYIR_CACHE_DIR", tempfile.mkdtemp(prefix="relayir-micro-"))
    print(f"{args.threads} threads, numpy {np.__version__}\n")
    print("| benchmark | relayir | numpy | relayir / numpy |")
    print("|---|---|---|---|")
    for line in dense() + elementwise() + dispatch():
        print(line)


if __name__ == "__main__":
    main()
