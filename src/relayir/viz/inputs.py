"""Inputs for the runs a report shows, made from ``@main``'s parameter types when the
caller gives none: standard-normal floats, integers 0 or 1, random booleans (a built-in
model's own ``make_inputs`` is better: the command line passes it)."""

from __future__ import annotations

import numpy as np

from ..ir.module import IRModule
from ..ir.types import TensorType


def random_inputs(mod: IRModule, params: dict | None = None,
                  seed: int = 0) -> tuple[dict[str, np.ndarray] | None, str]:
    """``(inputs by name, "")``, or ``(None, why not)`` when a parameter is not a
    tensor of static shape (an ADT, a closure, a dynamic dim)."""
    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for p in mod["main"].params:
        if params and p.name_hint in params:
            continue
        ty = p.type_annotation
        if not isinstance(ty, TensorType) or not all(isinstance(d, int) for d in ty.shape):
            return None, (f"input %{p.name_hint} of @main is {ty}: the report makes random "
                          f"inputs only for tensors of static shape (pass inputs=...)")
        shape, dtype = tuple(ty.shape), np.dtype(ty.dtype)
        if dtype.kind == "f":
            inputs[p.name_hint] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            inputs[p.name_hint] = rng.integers(0, 2, shape).astype(bool)
        else:
            inputs[p.name_hint] = rng.integers(0, 2, shape).astype(dtype)
    return inputs, ""


__all__ = ["random_inputs"]
