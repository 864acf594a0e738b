"""VM latency of a BERT-style encoder with a position table (4 layers, hidden 256,
``position_ids[:, :seq]``), imported ONCE with a dynamic sequence length and compiled
once for the VM, at lengths 8, 32 and 128, next to ONNX Runtime (the same model exported
with a dynamic axis) and PyTorch eager, same process, same thread count (issue 17).

Every engine is timed as users call it, inputs in and outputs returned: relayir as
``relayir.runtime.wrap(exe).run(inputs)``, ONNX Runtime as ``session.run``, PyTorch as
``model(ids)`` under ``no_grad``; each engine after a pause (``timing.SETTLE_S``), so that
another runtime's spinning thread pool has gone to sleep.

    python benchmarks/dynamic_bert.py          # THREADS=2 by default
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

import relayir as relay
from relayir.frontend import from_pytorch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "frontend"))
from test_pytorch_dynamic import BertStyleEncoder  # noqa: E402  (the tests' model)
from timing import SETTLE_S  # noqa: E402  (benchmarks/timing.py, beside this file)

LENGTHS = (8, 32, 128)


def bench(fn, reps: int = 200) -> tuple[float, float]:
    for _ in range(5):
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return min(ts), statistics.median(ts)


def main() -> None:
    import onnxruntime as ort

    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    threads = int(os.environ.get("THREADS", "2"))
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    torch.set_num_threads(threads)
    model = BertStyleEncoder(layers=4, hidden=256, vocab=1000).eval()
    t0 = time.perf_counter()
    mod, params = from_pytorch(model, [("ids", ((1, "seq"), "int64"))])
    t1 = time.perf_counter()
    vm = relay.runtime.wrap(relay.vm.compile(mod, target="cpu", params=params))
    t2 = time.perf_counter()
    print(f"import {t1 - t0:.1f} s, vm.compile once {t2 - t1:.1f} s; {mod['main'].attrs}")

    path = os.path.join(tempfile.mkdtemp(), "bert.onnx")
    torch.onnx.export(model, (torch.zeros(1, 8, dtype=torch.int64),), path,
                      input_names=["ids"], output_names=["out"], opset_version=18,
                      dynamic_shapes=({1: torch.export.Dim("seq", max=512)},), dynamo=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])

    print(f"{threads} threads; min / median ms of 200 runs")
    print("| seq | relayir VM | ONNX Runtime | PyTorch eager | max abs err VM vs eager |")
    print("|---:|---:|---:|---:|---:|")
    for n in LENGTHS:
        ids = torch.randint(0, 1000, (1, n))
        a = ids.numpy()
        with torch.no_grad():
            want = model(ids).numpy()
            time.sleep(SETTLE_S)
            e = bench(lambda ids=ids: model(ids))
        got = vm.run({"ids": a})[0]
        time.sleep(SETTLE_S)
        v = bench(lambda a=a: vm.run({"ids": a}))
        time.sleep(SETTLE_S)
        r = bench(lambda a=a: sess.run(None, {"ids": a}))
        print(f"| {n} | {v[0]:.2f} / {v[1]:.2f} | {r[0]:.2f} / {r[1]:.2f} | "
              f"{e[0]:.2f} / {e[1]:.2f} | {np.abs(got - want).max():.1e} |")


if __name__ == "__main__":
    main()
