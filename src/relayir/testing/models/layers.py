"""Shared pieces of the workload builders: weights as Relay variables, conv + batch norm.

A builder asks a ``ParamSet`` for each weight by its PyTorch ``state_dict()`` key; the
set creates the ``%name`` parameter and a deterministic random float32 value, in the
order the builder asks, which is the forward order and so also the ``state_dict`` order.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import Error
from ...ir.expr import Expr, Function, Var, var
from ...ir.module import IRModule
from ...ir.types import TensorType
from ...op import nn


class ParamSet:
    """Weights as ``Var``s plus their values, in creation order."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.vars: list[Var] = []
        self.values: dict[str, np.ndarray] = {}

    def add(self, name: str, value: np.ndarray) -> Var:
        if name in self.values:
            raise Error(f"parameter {name!r} is defined twice")
        value = np.ascontiguousarray(value, dtype="float32")
        v = var(name, shape=value.shape, dtype="float32")
        self.vars.append(v)
        self.values[name] = value
        return v

    def normal(self, name: str, shape, std: float = 1.0, mean: float = 0.0) -> Var:
        return self.add(name, mean + std * self.rng.standard_normal(shape))

    def uniform(self, name: str, shape, low: float, high: float) -> Var:
        return self.add(name, self.rng.uniform(low, high, shape))

    def weight(self, name: str, shape, fan_in: int, gain: float = 1.0) -> Var:
        """``N(0, gain² / fan_in)``: keeps activations O(1) through deep stacks."""
        return self.normal(name, shape, gain / math.sqrt(fan_in))

    def module(self, inputs: list[Var], body: Expr) -> tuple[IRModule, dict[str, np.ndarray]]:
        """``@main(inputs..., weights...)`` and the weights."""
        return IRModule.from_expr(Function([*inputs, *self.vars], body)), dict(self.values)


def batch_norm(ps: ParamSet, x: Expr, prefix: str, channels: int,
               gamma_range: tuple[float, float] = (0.5, 1.5)) -> Expr:
    """Inference-mode ``nn.batch_norm`` with random (not identity) affine and moving stats,
    so folding it into the convolution is a real test of the optimiser."""
    gamma = ps.uniform(f"{prefix}.weight", (channels,), *gamma_range)
    beta = ps.normal(f"{prefix}.bias", (channels,), 0.1)
    mean = ps.normal(f"{prefix}.running_mean", (channels,), 0.1)
    variance = ps.uniform(f"{prefix}.running_var", (channels,), 0.5, 1.5)
    return nn.batch_norm(x, gamma, beta, mean, variance)[0]


def conv2d(ps: ParamSet, x: Expr, name: str, in_channels: int, out_channels: int,
           kernel: int, stride: int = 1, groups: int = 1, gain: float = math.sqrt(2)) -> Expr:
    """A bias-free ``kernel``x``kernel`` convolution with "same" padding, He-initialised."""
    fan_in = in_channels // groups * kernel * kernel
    w = ps.weight(f"{name}.weight", (out_channels, in_channels // groups, kernel, kernel),
                  fan_in, gain)
    pad = (kernel - 1) // 2
    return nn.conv2d(x, w, strides=(stride, stride), padding=(pad, pad), groups=groups,
                     channels=out_channels, kernel_size=(kernel, kernel))


def dense(ps: ParamSet, x: Expr, name: str, in_features: int, out_features: int,
          bias_add: bool = True) -> Expr:
    """``x @ W.T + b`` with torch.nn.Linear's parameter names. ``bias_add=False`` adds the
    bias with a broadcasting ``add``, as TVM's ONNX importer writes MatMul + Add."""
    w = ps.weight(f"{name}.weight", (out_features, in_features), in_features)
    b = ps.normal(f"{name}.bias", (out_features,), 0.1)
    y = nn.dense(x, w)
    return nn.bias_add(y, b, axis=-1) if bias_add else y + b


def classifier_head(ps: ParamSet, x: Expr, name: str, channels: int, num_classes: int) -> Expr:
    """Global average pool, flatten, linear: the end of ResNet and MobileNet."""
    return dense(ps, nn.batch_flatten(nn.global_avg_pool2d(x)), name, channels, num_classes)


def input_type(mod: IRModule, name: str) -> TensorType:
    """The declared type of ``@main``'s parameter ``name``."""
    for p in mod["main"].params:
        if p.name_hint == name:
            if not isinstance(p.type_annotation, TensorType):
                break
            return p.type_annotation
    raise Error(f"@main has no tensor input named {name!r}")


def image_input(batch_size: int, image_size: int, channels: int = 3) -> Var:
    return var("data", shape=(batch_size, channels, image_size, image_size), dtype="float32")


def make_data(mod: IRModule, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A standard-normal float32 ``%data`` of @main's declared shape."""
    shape = input_type(mod, "data").shape
    return {"data": rng.standard_normal(shape).astype("float32")}
