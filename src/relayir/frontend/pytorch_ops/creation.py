"""Tensor creation and dtype conversion: arange, zeros/ones/full(_like), to/_to_copy."""

from __future__ import annotations

import numpy as np
import torch

from ...ir.expr import const
from ...op import algorithm as A
from ...op import dynamic as D
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import (
    cast_to,
    current_import,
    is_symbolic,
    ndim,
    out_dtype,
    out_shape,
    out_val,
    scalar,
    static,
)

TABLE = ConverterTable()


def _static_out(what):
    s = out_shape()
    if not static(*s):
        raise ConversionError(f"{what} with the dynamic shape {s}")
    return s


@TABLE.register("aten.zeros.default", "aten.empty.memory_format", "aten.new_zeros.default",
                "aten.new_empty.default", "aten.zeros.names")
def zeros(*_, **__):
    return T.zeros(_static_out("zeros"), out_dtype())


@TABLE.register("aten.ones.default", "aten.new_ones.default")
def ones(*_, **__):
    return T.ones(_static_out("ones"), out_dtype())


@TABLE.register("aten.full.default")
def full(size, fill_value, **_):
    return T.full(cast_to(fill_value, out_dtype()), _static_out("full"), out_dtype())


@TABLE.register("aten.new_full.default")
def new_full(self, size, fill_value, **_):
    return full(size, fill_value)


@TABLE.register("aten.scalar_tensor.default")
def scalar_tensor(s, **_):
    return const(np.asarray(s, dtype=out_dtype()))


@TABLE.register("aten.zeros_like.default", "aten.empty_like.default")
def zeros_like(self, **_):
    return T.zeros_like(cast_to(self, out_dtype()))


@TABLE.register("aten.ones_like.default")
def ones_like(self, **_):
    return T.ones_like(cast_to(self, out_dtype()))


@TABLE.register("aten.full_like.default")
def full_like(self, fill_value, **_):
    return T.full_like(cast_to(self, out_dtype()), cast_to(fill_value, out_dtype()))


@TABLE.register("aten.fill.Scalar")
def fill(self, value):
    return full_like(self, value)


@TABLE.register("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout",
                "aten.to.device", "aten.to.other", "aten.type_as.default",
                "aten._assert_tensor_metadata.default")
def to(self, *_, **__):
    if not isinstance(out_val(), torch.Tensor):
        return None  # _assert_tensor_metadata: a check, no value
    return cast_to(self, out_dtype())


@TABLE.register("aten.arange.default", "aten.arange.start", "aten.arange.start_step")
def arange(*args, **_):
    dt = out_dtype()
    if not any(is_symbolic(a) for a in args):
        return A.arange(*args, dtype=dt)  # an op, not a stored constant
    if len(args) == 1 and str(args[0]) in current_import().sym_source:
        return _dynamic_arange(args[0], dt)  # arange(seq): keeps the dim's name
    # bounds computed from the inputs' shapes when the model runs: dyn.arange
    start, stop, step = {1: (0, *args, 1), 2: (*args, 1)}.get(len(args), args[:3])
    return D.arange(*(scalar(v, dt) for v in (start, stop, step)), dtype=dt)


def _dynamic_arange(end, dt):
    """``arange(n)`` for a symbolic ``n`` that is a tensor's dimension, with static-rank
    ops: the exclusive running count of ones along that dimension (one kernel that serves
    every length on the VM, and the result's extent keeps the dim's name)."""
    src, ax = current_import().sym_source[str(end)]
    row = src
    for a in reversed(range(ndim(src))):
        if a != ax:
            row = T.take(row, const(np.int64(0)), axis=a)
    return A.cumsum(T.ones_like(T.cast(row, dt)), axis=0, exclusive=True)


@TABLE.register("aten.lift_fresh.default")
def lift_fresh(self):
    return self


@TABLE.register("aten.item.default", "aten._local_scalar_dense.default")
def item(self):
    raise ConversionError("item(): a data-dependent Python scalar")


@TABLE.register("aten.size.int", "aten.sym_size.int")
def size(self, dim):
    return out_val()


