"""``relay.testing.init``: ``create_workload(func)`` with Relay's initialisation by
parameter name (Xavier weights; zero biases, betas and means; unit gammas and
variances)."""

from __future__ import annotations

import numpy as np

from ....ir.module import IRModule
from ...runtime.ndarray import array
from ..transform import InferType


class Xavier:
    """Relay's default initializer: by the parameter's name suffix."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def __call__(self, name: str, arr: np.ndarray) -> None:
        if name.endswith(("bias", "beta", "moving_mean", "mean")):
            arr[:] = 0.0
        elif name.endswith(("gamma", "moving_var", "var")):
            arr[:] = 1.0
        else:
            self._init_weight(arr)

    def _init_weight(self, arr: np.ndarray) -> None:
        shape = arr.shape
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in = (shape[1] if len(shape) > 1 else shape[0]) * hw_scale
        fan_out = shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[
            self.factor_type]
        scale = np.sqrt(self.magnitude / max(factor, 1.0))
        if self.rnd_type == "uniform":
            arr[:] = np.random.uniform(-scale, scale, size=shape)
        else:
            arr[:] = np.random.normal(0, scale, size=shape)


def create_workload(net, initializer=None, seed: int = 0):
    """``(mod, params)``: every parameter of ``net`` but ``data`` gets a value."""
    mod = InferType()(IRModule.from_expr(net))
    np.random.seed(seed)
    initializer = initializer or Xavier()
    params = {}
    for p in mod["main"].params:
        if p.name_hint == "data":
            continue
        t = p.checked_type
        value = np.zeros(tuple(int(d) for d in t.shape), dtype=t.dtype)
        initializer(p.name_hint, value)
        params[p.name_hint] = array(value)
    return mod, params


__all__ = ["Xavier", "create_workload"]
