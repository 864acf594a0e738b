"""Sorting, scans, einsum, one_hot, triangles, gather/scatter and bitwise aten ops.

torch's sort is stable when asked (``stable=True``) and the Relay ops always are, so a
converted model agrees with eager torch on ties wherever torch defines the order.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import Expr, TupleGetItem, const
from ...op import algorithm as A
from ...op import bitwise as B
from ...op import scatter as S
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import axis, cast_to, dtype, ndim, out_dtype, shape

TABLE = ConverterTable()


def _pair(call):
    return TupleGetItem(call, 0), TupleGetItem(call, 1)


@TABLE.register("aten.sort.default")
def sort(self, dim=-1, descending=False):
    return _pair(A.topk(self, 0, int(dim), "both", not descending, "int64"))


@TABLE.register("aten.sort.stable")
def sort_stable(self, *, stable=None, dim=-1, descending=False):
    return sort(self, dim, descending)


@TABLE.register("aten.argsort.default")
def argsort(self, dim=-1, descending=False):
    return A.argsort(self, int(dim), not descending, "int64")


@TABLE.register("aten.argsort.stable")
def argsort_stable(self, *, stable=None, dim=-1, descending=False):
    return argsort(self, dim, descending)


@TABLE.register("aten.topk.default")
def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002  (aten's name)
    return _pair(A.topk(self, int(k), int(dim), "both", not largest, "int64"))


def _scan(relay_fn):
    def convert(self, dim, dtype=None):
        return relay_fn(self, axis=int(dim), dtype=out_dtype())

    return convert


TABLE.register("aten.cumsum.default")(_scan(A.cumsum))
TABLE.register("aten.cumprod.default")(_scan(A.cumprod))


@TABLE.register("aten.tril.default")
def tril(self, diagonal=0):
    return A.tril(self, int(diagonal))


@TABLE.register("aten.triu.default")
def triu(self, diagonal=0):
    return A.triu(self, int(diagonal))


@TABLE.register("aten.einsum.default")
def einsum(equation, tensors, path=None):
    return A.einsum(list(tensors), equation)


@TABLE.register("aten.one_hot.default")
def one_hot(self, num_classes=-1):
    if int(num_classes) < 0:
        raise ConversionError("one_hot without num_classes (the depth would depend on the "
                              "data)")
    return A.one_hot(self, 1, 0, depth=int(num_classes), dtype=out_dtype())


@TABLE.register("aten.gather.default")
def gather(self, dim, index, sparse_grad=False):
    return S.gather(self, axis(int(dim), ndim(self)), index)


@TABLE.register("aten.scatter.src", "aten.scatter.value")
def scatter(self, dim, index, src):
    if not isinstance(src, Expr):  # scatter.value: one scalar for every index
        src = T.full(cast_to(src, dtype(self)), shape(index), dtype(self))
    return S.scatter_elements(self, index, cast_to(src, dtype(self)),
                              axis=axis(int(dim), ndim(self)))


@TABLE.register("aten.scatter_add.default")
def scatter_add(self, dim, index, src):
    return S.scatter_elements(self, index, src, axis=axis(int(dim), ndim(self)),
                              reduction="add")


_REDUCE = {"sum": "add", "prod": "mul", "amax": "max", "amin": "min"}


def _identity(reduce: str, dt: str) -> np.ndarray:
    if reduce in ("sum", "prod"):
        return np.asarray(0 if reduce == "sum" else 1, dt)
    if dt.startswith("float"):
        low, high = -np.inf, np.inf
    else:
        low, high = np.iinfo(dt).min, np.iinfo(dt).max
    return np.asarray(low if reduce == "amax" else high, dt)


@TABLE.register("aten.scatter_reduce.two")
def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    a = axis(int(dim), ndim(self))
    dt = dtype(self)
    if reduce == "mean":
        return _scatter_mean(self, index, src, a, include_self)
    if reduce not in _REDUCE:
        raise ConversionError(f"scatter_reduce with reduce={reduce!r} (supported: "
                              f"{', '.join(_REDUCE)}, mean)")
    if not include_self:  # the touched positions start from the reduction's identity
        fill = T.full(const(_identity(reduce, dt)), shape(index), dt)
        self = S.scatter_elements(self, index, fill, axis=a)
    return S.scatter_elements(self, index, src, axis=a, reduction=_REDUCE[reduce])


def _scatter_mean(self, index, src, a, include_self):
    dt = dtype(self)
    if not dt.startswith("float"):
        raise ConversionError(f"scatter_reduce mean of {dt} (torch divides integers)")
    count = S.scatter_elements(T.zeros_like(self), index, T.ones_like(src), axis=a,
                               reduction="add")
    base = self if include_self else S.scatter_elements(self, index, T.zeros_like(src), axis=a)
    total = S.scatter_elements(base, index, src, axis=a, reduction="add")
    one = const(np.asarray(1, dt))
    if include_self:
        return E.divide(total, E.add(count, one))
    mean = E.divide(total, E.maximum(count, one))
    return T.where(E.greater(count, const(np.asarray(0, dt))), mean, self)


def _bitwise(relay_fn):
    def convert(self, other):
        return relay_fn(self, cast_to(other, dtype(self)))

    return convert


for _name, _fn in (("and", B.bitwise_and), ("or", B.bitwise_or), ("xor", B.bitwise_xor)):
    TABLE.register(f"aten.bitwise_{_name}.Tensor", f"aten.bitwise_{_name}.Scalar",
                   f"aten.__{_name}__.Tensor", f"aten.__{_name}__.Scalar")(_bitwise(_fn))
for _name, _fn in (("left", B.left_shift), ("right", B.right_shift)):
    short = "l" if _name == "left" else "r"
    TABLE.register(f"aten.bitwise_{_name}_shift.Tensor",
                   f"aten.bitwise_{_name}_shift.Tensor_Scalar",
                   f"aten.__{short}shift__.Tensor", f"aten.__{short}shift__.Scalar")(
        _bitwise(_fn))


@TABLE.register("aten.bitwise_not.default", "aten.__invert__.default")
def bitwise_not(self):
    return B.bitwise_not(self)
