"""Train a 2-layer MLP with the compiled gradient (relayir.transform.gradient + build)
and plain numpy SGD; compare with the same model trained by PyTorch from the same start.

    python examples/train_mlp.py [steps] [--target cpu|numpy] [--lr 0.5] [--threads N]

The gradient function ``fn(w1, b1, w2, b2, x, y) -> (loss, (dw1, db1, dw2, db2, dx, dy))``
is built once (generated C on the ``cpu`` target, numpy kernels on ``numpy``) and run
by the graph executor every step; the update is numpy. It prints the loss and accuracy
at the start and the end and the median step time of both trainings. On a busy machine
pass ``--threads 1``: OpenMP (the C kernels) and PyTorch's thread pools then stop
competing for the cores, which otherwise makes both step times noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import NamedTuple

import numpy as np

import relayir as r
from relayir.runtime.graph_executor import GraphModule
from relayir.transform import PassContext, gradient

N, D, H, C = 128, 10, 32, 3
WEIGHTS = ("w1", "b1", "w2", "b2")


class Run(NamedTuple):
    losses: list  # the loss before each step
    accuracy: tuple  # (before training, after)
    step_times: list  # seconds per step

    @property
    def median_ms(self) -> float:
        return statistics.median(self.step_times) * 1e3


def dataset(seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((C, D)) * 2.0
    labels = rng.integers(0, C, N)
    x = (centres[labels] + rng.standard_normal((N, D))).astype("float32")
    return x, np.eye(C, dtype="float32")[labels], labels


def loss_fn():
    x, y = r.var("x", shape=(N, D)), r.var("y", shape=(N, C))
    w1, b1, w2, b2 = r.var("w1", shape=(H, D)), r.var("b1", shape=(H,)), \
        r.var("w2", shape=(C, H)), r.var("b2", shape=(C,))
    h = r.nn.relu(r.nn.bias_add(r.nn.dense(x, w1), b1))
    logits = r.nn.bias_add(r.nn.dense(h, w2), b2)
    loss = r.negative(r.sum(r.nn.log_softmax(logits) * y)) / r.const(float(N))
    return r.Function([w1, b1, w2, b2, x, y], loss)


def init(seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((H, D)) / np.sqrt(D)).astype("float32"),
            np.zeros(H, "float32"),
            (rng.standard_normal((C, H)) / np.sqrt(H)).astype("float32"),
            np.zeros(C, "float32")]


def accuracy(params, x, labels) -> float:
    w1, b1, w2, b2 = params
    logits = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    return float(np.mean(np.argmax(logits, 1) == labels))


def train_relayir(steps, lr=0.5, target="cpu") -> Run:
    x, y, labels = dataset()
    with PassContext(opt_level=3):
        lib = r.build(r.IRModule.from_expr(gradient(loss_fn())), target=target)
    m = GraphModule(lib)
    params = init()
    acc0 = accuracy(params, x, labels)
    losses, times = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        m.run(**dict(zip(WEIGHTS, params)), x=x, y=y)
        loss = float(m.get_output(0))
        grads = [m.get_output(1 + i) for i in range(len(WEIGHTS))]  # then d/dx, d/dy
        params = [p - lr * g for p, g in zip(params, grads)]
        times.append(time.perf_counter() - t0)
        losses.append(loss)
    return Run(losses, (acc0, accuracy(params, x, labels)), times)


def train_torch(steps, lr=0.5) -> Run:
    import torch

    x, y, labels = dataset()
    ps = [torch.tensor(p, requires_grad=True) for p in init()]
    xt, yt = torch.tensor(x), torch.tensor(y)
    acc0 = accuracy(init(), x, labels)
    losses, times = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        logits = torch.relu(xt @ ps[0].T + ps[1]) @ ps[2].T + ps[3]
        loss = -(torch.log_softmax(logits, 1) * yt).sum() / N
        for p in ps:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in ps:
                p -= lr * p.grad
        times.append(time.perf_counter() - t0)
        losses.append(float(loss.detach()))
    final = [p.detach().numpy() for p in ps]
    return Run(losses, (acc0, accuracy(final, x, labels)), times)


def report(name: str, run: Run) -> str:
    return (f"{name:<14} loss {run.losses[0]:.4f} -> {run.losses[-1]:.4f}   "
            f"accuracy {run.accuracy[0]:.3f} -> {run.accuracy[1]:.3f}   "
            f"median step {run.median_ms:.3f} ms")


def main(steps=100, target="cpu", lr=0.5, with_torch=True):
    ours = train_relayir(steps, lr, target)
    print(report(f"relayir-{target}", ours))
    if not with_torch:
        return ours, None
    theirs = train_torch(steps, lr)
    print(report("torch", theirs))
    print(f"relayir-{target} / torch step time: {ours.median_ms / theirs.median_ms:.2f}x; "
          f"final loss difference {abs(ours.losses[-1] - theirs.losses[-1]):.2e}")
    return ours, theirs


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("steps", type=int, nargs="?", default=100)
    ap.add_argument("--target", choices=("cpu", "numpy"), default="cpu")
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--threads", type=int, help="threads for both (OpenMP and torch)")
    args = ap.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # read when the kernels load
        import torch

        torch.set_num_threads(args.threads)
    main(args.steps, args.target, args.lr)
