"""Dense layers and matrix products: ``nn.dense``, ``nn.matmul``, ``nn.batch_matmul``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import set_fields
from ..type_rel import (
    broadcast_dim,
    dim_may_equal,
    fail,
    tensors,
)
from ._common import (
    _acc_dtype,
    _dtype_attr,
    _out_dtype,
    _positive,
    _rank,
)

# ---------------------------------------------------------------- dense / matmul


@dataclasses.dataclass(frozen=True)
class DenseAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""

    def __post_init__(self):
        if self.units is not None:
            set_fields(self, units=_positive(self.units, "units"))
        set_fields(self, out_dtype=_dtype_attr(self.out_dtype))


def _check_units(attrs, out_dim, weight: TensorType, name: str = "weight"):
    """The output width: the weight's, or ``units`` when the weight's is not static."""
    if attrs.units is None:
        return out_dim
    if not dim_may_equal(out_dim, attrs.units):
        fail(f"units={attrs.units} but {name} gives {out_dim} output units: {name} is {weight}")
    return attrs.units


def _dense_rel(types, attrs):
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    _rank(weight, "weight", (2,), "units, in")
    if data.ndim < 1:
        fail(f"data must have rank >= 1, found {data}")
    if not dim_may_equal(data.shape[-1], weight.shape[1]):
        fail(f"in-features mismatch: data is {data} but weight is {weight} (the last dim "
             f"of data, {data.shape[-1]}, must equal the weight's in-features, its dim 1: "
             f"{weight.shape[1]}; weight is (units, in))")
    units = _check_units(attrs, weight.shape[0], weight)
    return TensorType((*data.shape[:-1], units), dtype)


def _dense_ref(data, weight, attrs):
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    return np.matmul(data.astype(acc), weight.astype(acc).T).astype(dtype)


register_op("nn.dense", rel=_dense_rel, ref=_dense_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            num_inputs=2, arg_names=("data", "weight"), attrs=DenseAttrs,
            description="data (..., in) x weight (units, in) → (..., units)")


@dataclasses.dataclass(frozen=True)
class MatmulAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = False

    def __post_init__(self):
        DenseAttrs.__post_init__(self)
        set_fields(self, transpose_a=bool(self.transpose_a), transpose_b=bool(self.transpose_b))


def _matmul_rel(types, attrs):
    a, b = tensors(types, ("tensor_a", "tensor_b"))
    dtype = _out_dtype(attrs, a, b, ("tensor_a", "tensor_b"))
    _rank(b, "tensor_b", (2,))
    if a.ndim < (2 if attrs.transpose_a else 1):
        fail(f"tensor_a must have rank >= {2 if attrs.transpose_a else 1}, found {a}")
    rows = a.shape[:-2] + ((a.shape[-1],) if attrs.transpose_a else a.shape[-2:-1])
    k_a = a.shape[-2] if attrs.transpose_a else a.shape[-1]
    k_b, n = (b.shape[1], b.shape[0]) if attrs.transpose_b else b.shape
    if not dim_may_equal(k_a, k_b):
        fail(f"reduction mismatch ({k_a} vs {k_b}, transpose_a={attrs.transpose_a}, "
             f"transpose_b={attrs.transpose_b}): tensor_a is {a} but tensor_b is {b}")
    return TensorType((*rows, _check_units(attrs, n, b, "tensor_b")), dtype)


def _matmul_ref(a, b, attrs):
    dtype = attrs.out_dtype or a.dtype.name
    acc = _acc_dtype(dtype, a.dtype.name)
    a, b = a.astype(acc), b.astype(acc)
    if attrs.transpose_a:
        a = np.swapaxes(a, -1, -2)
    return np.matmul(a, b.T if attrs.transpose_b else b).astype(dtype)


register_op("nn.matmul", rel=_matmul_rel, ref=_matmul_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
            arg_names=("tensor_a", "tensor_b"), attrs=MatmulAttrs)


@dataclasses.dataclass(frozen=True)
class BatchMatmulAttrs(Attrs):
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = True

    def __post_init__(self):
        set_fields(self, out_dtype=_dtype_attr(self.out_dtype), transpose_a=bool(self.transpose_a),
                   transpose_b=bool(self.transpose_b))


def _batch_matmul_rel(types, attrs):
    a, b = tensors(types, ("tensor_a", "tensor_b"))
    dtype = _out_dtype(attrs, a, b, ("tensor_a", "tensor_b"))
    _rank(a, "tensor_a", (3,))
    _rank(b, "tensor_b", (3,))
    batch = broadcast_dim(a.shape[0], b.shape[0])
    if batch is None:
        fail(f"batch sizes differ ({a.shape[0]} vs {b.shape[0]}, neither is 1): "
             f"tensor_a is {a} but tensor_b is {b}")
    m, k_a = (a.shape[2], a.shape[1]) if attrs.transpose_a else a.shape[1:]
    n, k_b = b.shape[1:] if attrs.transpose_b else (b.shape[2], b.shape[1])
    if not dim_may_equal(k_a, k_b):
        fail(f"reduction mismatch ({k_a} vs {k_b}, transpose_a={attrs.transpose_a}, "
             f"transpose_b={attrs.transpose_b}): tensor_a is {a} but tensor_b is {b}")
    return TensorType((batch, m, n), dtype)


def _batch_matmul_ref(a, b, attrs):
    dtype = attrs.out_dtype or a.dtype.name
    acc = _acc_dtype(dtype, a.dtype.name)
    a, b = a.astype(acc), b.astype(acc)
    if attrs.transpose_a:
        a = np.swapaxes(a, 1, 2)
    if attrs.transpose_b:
        b = np.swapaxes(b, 1, 2)
    return np.matmul(a, b).astype(dtype)


register_op("nn.batch_matmul", rel=_batch_matmul_rel, ref=_batch_matmul_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
            arg_names=("tensor_a", "tensor_b"), attrs=BatchMatmulAttrs)


def dense(data, weight, units=None, out_dtype=""):
    """``data @ weight.T``; ``weight`` is ``(units, in)``."""
    return call("nn.dense", [data, weight], units=units, out_dtype=out_dtype)


def matmul(tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False):
    """``op(a) @ op(b)``; ``tensor_b`` is 2-D, ``transpose_a`` swaps a's last two axes."""
    return call("nn.matmul", [tensor_a, tensor_b], units=units, out_dtype=out_dtype,
                transpose_a=transpose_a, transpose_b=transpose_b)


def batch_matmul(tensor_a, tensor_b, out_dtype="", transpose_a=False, transpose_b=True):
    """3-D batched matmul; ``tensor_b`` is ``(batch, N, K)`` by default, as in Relay."""
    return call("nn.batch_matmul", [tensor_a, tensor_b], out_dtype=out_dtype,
                transpose_a=transpose_a, transpose_b=transpose_b)
