"""``nn.contrib_dense_pack``: a dense layer whose weight is already in the panel layout
the matmul micro-kernels stream (TVM's op of the same name).

The weight has layout ``NC[n]n``: shape ``(units / n, in, n)``, with
``weight[jo, k, jj] = W[jo * n + jj, k]`` for the ``(units, in)`` weight ``W`` of
``nn.dense`` — ``layout_transform(W, "NC", "NC16n")`` makes it, and ``FoldConstant``
folds that into the constant when the model is built, so no kernel repacks a weight at
run time. ``tir/matmul.py`` reads it in place: ``n`` columns per register tile (``n =
2 × lanes``, 32 floats on AVX-512, is what the tiles want; any multiple of the vector
width works). ``units`` must be a multiple of ``n``.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import set_fields
from ..type_rel import dim_may_equal, fail, tensors
from ._common import _acc_dtype, _dtype_attr, _out_dtype, _positive, _rank, _scaled

_LAYOUT = re.compile(r"NC(\d+)n")


def weight_block(layout: str) -> int:
    """The column block ``n`` of an ``NC[n]n`` weight layout."""
    m = _LAYOUT.fullmatch(layout) if isinstance(layout, str) else None
    if m is None or int(m.group(1)) < 1:
        raise ValueError(f"weight_layout must be NC[n]n such as 'NC16n', found {layout!r}")
    return int(m.group(1))


@dataclasses.dataclass(frozen=True)
class DensePackAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""
    weight_layout: str = "NC16n"

    def __post_init__(self):
        if self.units is not None:
            set_fields(self, units=_positive(self.units, "units"))
        set_fields(self, out_dtype=_dtype_attr(self.out_dtype))
        weight_block(self.weight_layout)


def _dense_pack_rel(types, attrs):
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    n = weight_block(attrs.weight_layout)
    _rank(weight, "weight", (3,), f"units / {n}, in, {n}")
    where = f"data is {data} but weight is {weight}"
    if data.ndim < 1:
        fail(f"data must have rank >= 1, found {data}")
    if not dim_may_equal(weight.shape[2], n):
        fail(f"weight_layout {attrs.weight_layout} needs a last weight dimension of {n}: "
             f"{where}")
    if not dim_may_equal(data.shape[-1], weight.shape[1]):
        fail(f"in-features mismatch: {where}")
    units = _scaled(weight.shape[0], multiply=n)
    if attrs.units is not None:
        if not dim_may_equal(units, attrs.units):
            fail(f"units={attrs.units} but weight gives {units} output units: {where}")
        units = attrs.units
    return TensorType((*data.shape[:-1], units), dtype)


def unpack_weight(weight: np.ndarray) -> np.ndarray:
    """The ``(units, in)`` weight of a packed ``(units / n, in, n)`` one."""
    blocks, k, n = weight.shape
    return weight.transpose(0, 2, 1).reshape(blocks * n, k)


def _dense_pack_ref(data, weight, attrs):
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    return np.matmul(data.astype(acc), unpack_weight(weight).astype(acc).T).astype(dtype)


register_op("nn.contrib_dense_pack", rel=_dense_pack_rel, ref=_dense_pack_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
            arg_names=("data", "weight"), attrs=DensePackAttrs,
            description="data (..., in) x weight (units/n, in, n) → (..., units)")


def contrib_dense_pack(data, weight, units=None, out_dtype="", weight_layout="NC16n"):
    """``nn.contrib_dense_pack``: ``nn.dense`` with a weight in layout ``NC[n]n``."""
    return call("nn.contrib_dense_pack", [data, weight], units=units, out_dtype=out_dtype,
                weight_layout=weight_layout)


__all__ = ["DensePackAttrs", "contrib_dense_pack", "unpack_weight", "weight_block"]
