"""Train a 2-layer MLP with the compiled gradient (relayir.transform.gradient + build)
and plain numpy SGD; compare with the same model trained by PyTorch from the same start.

    python examples/train_mlp.py [steps]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import relayir as r
from relayir.runtime.graph_executor import GraphModule
from relayir.transform import PassContext, gradient

N, D, H, C = 128, 10, 32, 3


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


def train_relayir(steps, lr=0.5):
    x, y, labels = dataset()
    with PassContext(opt_level=3):
        lib = r.build(r.IRModule.from_expr(gradient(loss_fn())), target="numpy")
    m = GraphModule(lib)
    params = init()
    names = ["w1", "b1", "w2", "b2"]
    losses, t0 = [], time.perf_counter()
    for _ in range(steps):
        m.run(**dict(zip(names, params)), x=x, y=y)
        loss = float(m.get_output(0))
        grads = [np.array(m.get_output(1 + i)) for i in range(4)]  # then d/dx, d/dy
        params = [p - lr * g for p, g in zip(params, grads)]
        losses.append(float(loss))
    step = (time.perf_counter() - t0) / steps
    w1, b1, w2, b2 = params
    logits = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    acc = float(np.mean(np.argmax(logits, 1) == labels))
    return losses, acc, step


def train_torch(steps, lr=0.5):
    import torch

    x, y, labels = dataset()
    ps = [torch.tensor(p, requires_grad=True) for p in init()]
    xt, yt = torch.tensor(x), torch.tensor(y)
    losses, t0 = [], time.perf_counter()
    for _ in range(steps):
        logits = torch.relu(xt @ ps[0].T + ps[1]) @ ps[2].T + ps[3]
        loss = -(torch.log_softmax(logits, 1) * yt).sum() / N
        for p in ps:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in ps:
                p -= lr * p.grad
        losses.append(float(loss.detach()))
    step = (time.perf_counter() - t0) / steps
    acc = float(np.mean(np.argmax(logits.detach().numpy(), 1) == labels))
    return losses, acc, step


def main(steps=100):
    losses, acc, step = train_relayir(steps)
    print(f"relayir: loss {losses[0]:.4f} -> {losses[-1]:.4f}, accuracy {acc:.3f}, "
          f"{step * 1e3:.2f} ms/step")
    tl, tacc, tstep = train_torch(steps)
    print(f"torch:   loss {tl[0]:.4f} -> {tl[-1]:.4f}, accuracy {tacc:.3f}, "
          f"{tstep * 1e3:.2f} ms/step")
    return losses, acc, tl


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
