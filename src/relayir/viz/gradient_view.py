"""The Gradient view's data: a scalar loss, the Relay program ``transform.gradient``
makes of it (a typed function computed at compile time: the forward pass, then the
backward pass as more let-bindings), the same after the pipeline ``build`` runs (fused
into kernels), and next to it the autograd graph PyTorch records at run time for the
same loss, with node counts and the values both compute.

The default loss is the built-in MLP's (dense, bias, relu, dense, bias, log-softmax
cross-entropy) at a small size, with the same random weights on both sides.
"""

from __future__ import annotations

import numpy as np

from ..backend import build, optimize
from ..ir.expr import Call, Function, Let, Op, const, var
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..op import nn
from ..op.reduce import sum as reduce_sum
from ..op.tensor import negative
from ..runtime.graph_executor import GraphModule
from ..transform import PassContext, gradient
from ..typing.infer import infer_module
from .dataflow import function_graph
from .torch_graphs import autograd_graph

MLP_SIZES = {"batch": 4, "features": 8, "hidden": 16, "classes": 3}
MLP_WEIGHTS = ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")


def mlp_loss(batch: int = 4, features: int = 8, hidden: int = 16, classes: int = 3) -> Function:
    """``loss(data, label, fc1_weight, fc1_bias, fc2_weight, fc2_bias)``: the mean
    cross-entropy of the built-in MLP's logits against one-hot labels."""
    x, y = var("data", shape=(batch, features)), var("label", shape=(batch, classes))
    w1, b1 = var("fc1_weight", shape=(hidden, features)), var("fc1_bias", shape=(hidden,))
    w2, b2 = var("fc2_weight", shape=(classes, hidden)), var("fc2_bias", shape=(classes,))
    h = nn.relu(nn.bias_add(nn.dense(x, w1), b1))
    logits = nn.bias_add(nn.dense(h, w2), b2)
    loss = negative(reduce_sum(nn.log_softmax(logits) * y)) * const(1.0 / batch)
    return Function([x, y, w1, b1, w2, b2], loss)


def mlp_inputs(fn: Function, seed: int = 0) -> dict[str, np.ndarray]:
    """Data, one-hot labels and weights scaled by fan-in for ``mlp_loss``'s parameters."""
    rng = np.random.default_rng(seed)
    out = {}
    for p in fn.params:
        shape = tuple(int(d) for d in p.type_annotation.shape)
        if p.name_hint == "label":
            out["label"] = np.eye(shape[1], dtype="float32")[rng.integers(0, shape[1], shape[0])]
        else:
            scale = 1.0 / np.sqrt(shape[-1]) if p.name_hint != "data" else 1.0
            out[p.name_hint] = (rng.standard_normal(shape) * scale).astype("float32")
    return out


def _counts(mod: IRModule) -> dict[str, int]:
    nodes = [n for fn in mod.functions.values() for n in post_order(fn)]
    return {"ops": sum(1 for n in nodes if type(n) is Call and type(n.op) is Op),
            "lets": sum(1 for n in nodes if type(n) is Let),
            "kernels": sum(1 for n in nodes if type(n) is Function and n.is_primitive)}


def torch_mlp(inputs: dict[str, np.ndarray]):
    """``(loss, gradients by name, autograd Graph)`` of the MLP loss in PyTorch."""
    import torch

    t = {k: torch.tensor(v, requires_grad=k in MLP_WEIGHTS or k == "data")
         for k, v in inputs.items()}
    h = torch.relu(t["data"] @ t["fc1_weight"].T + t["fc1_bias"])
    logits = h @ t["fc2_weight"].T + t["fc2_bias"]
    loss = -(torch.log_softmax(logits, dim=1) * t["label"]).sum() * (1.0 / len(inputs["data"]))
    graph = autograd_graph(loss, {id(v): k for k, v in t.items()})
    loss.backward()
    grads = {k: v.grad.numpy() for k, v in t.items() if v.grad is not None}
    return float(loss.detach()), grads, graph


def gradient_section(loss: Function | None, target, opt_level: int,
                     inputs: dict[str, np.ndarray] | None = None) -> dict:
    """The gradient of ``loss`` (default: ``mlp_loss()``) before and after optimisation,
    run once; for the default loss also PyTorch's autograd graph and values."""
    default = loss is None
    fn = mlp_loss(**MLP_SIZES) if default else loss
    mod = infer_module(IRModule.from_expr(fn))
    grad_mod = IRModule.from_expr(gradient(mod["main"], mod))
    before = infer_module(grad_mod.copy())
    with PassContext(opt_level=opt_level):
        after = optimize(before, target=target)
        lib = build(before, target=target)
    section = {
        "loss_text": mod.astext(show_meta_data=False),
        "params": [p.name_hint for p in fn.params],
        "default": default,
        "before": {"text": grad_mod.astext(show_meta_data=False),
                   "graph": function_graph(before["main"]).to_json(), "counts": _counts(before)},
        "after": {"text": after.astext(show_meta_data=False),
                  "graph": function_graph(after["main"]).to_json(), "counts": _counts(after)},
    }
    if inputs is None and default:
        inputs = mlp_inputs(fn)
    if inputs is None:
        return section
    module = GraphModule(lib)
    module.run(**inputs)
    value = float(module.get_output(0))
    grads = {p.name_hint: module.get_output(1 + i) for i, p in enumerate(fn.params)}
    section["value"] = _finite(value)
    section["grad_norms"] = {k: _finite(np.linalg.norm(g)) for k, g in grads.items()}
    if default:
        section["torch"] = _torch_side(inputs, value, grads)
    return section


def _torch_side(inputs, value: float, grads: dict) -> dict:
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        return {"unavailable": f"torch is not importable ({exc})"}
    t_value, t_grads, graph = torch_mlp(inputs)
    diff = max(float(np.max(np.abs(grads[k] - g))) for k, g in t_grads.items())
    return {"graph": graph.to_json(), "nodes": len(graph.nodes), "value": _finite(t_value),
            "max_grad_difference": _finite(diff)}


def _finite(x) -> float | None:
    """A float for the report's JSON, which has no NaN: ``None`` for a non-finite one."""
    x = float(x)
    return x if np.isfinite(x) else None


__all__ = ["MLP_SIZES", "gradient_section", "mlp_inputs", "mlp_loss", "torch_mlp"]
