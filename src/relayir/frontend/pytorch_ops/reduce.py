"""Reductions: sum, mean, amax/amin, max/min (with indices), argmax, var/std, norms."""

from __future__ import annotations

from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import cast_to, dtype, ndim, out_dtype

TABLE = ConverterTable()


def _axes(dim, x):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return [int(d) for d in dims]


@TABLE.register("aten.sum.dim_IntList", "aten.sum.default")
def sum_(self, dim=None, keepdim=False, dtype=None):  # noqa: A002
    return R.sum(cast_to(self, out_dtype()), _axes(dim, self), bool(keepdim))


@TABLE.register("aten.mean.dim", "aten.mean.default")
def mean(self, dim=None, keepdim=False, dtype=None):  # noqa: A002
    return R.mean(cast_to(self, out_dtype()), _axes(dim, self), bool(keepdim))


@TABLE.register("aten.prod.default", "aten.prod.dim_int")
def prod(self, dim=None, keepdim=False, dtype=None):  # noqa: A002
    return R.prod(cast_to(self, out_dtype()), _axes(dim, self), bool(keepdim))


@TABLE.register("aten.amax.default")
def amax(self, dim=(), keepdim=False):
    return R.max(self, _axes(dim, self), bool(keepdim))


@TABLE.register("aten.amin.default")
def amin(self, dim=(), keepdim=False):
    return R.min(self, _axes(dim, self), bool(keepdim))


@TABLE.register("aten.max.default")
def max_(self):
    return R.max(self)


@TABLE.register("aten.min.default")
def min_(self):
    return R.min(self)


@TABLE.register("aten.max.dim")
def max_dim(self, dim, keepdim=False):
    return (R.max(self, [int(dim)], bool(keepdim)), argmax(self, dim, keepdim))


@TABLE.register("aten.min.dim")
def min_dim(self, dim, keepdim=False):
    return (R.min(self, [int(dim)], bool(keepdim)), argmin(self, dim, keepdim))


@TABLE.register("aten.max.other")
def max_other(self, other):
    return E.maximum(self, other)


@TABLE.register("aten.min.other")
def min_other(self, other):
    return E.minimum(self, other)


@TABLE.register("aten.argmax.default")
def argmax(self, dim=None, keepdim=False):
    if dim is None:
        return T.cast(R.argmax(T.reshape(self, [-1]), [0], bool(keepdim) and ndim(self) == 1),
                      "int64") if not keepdim else T.cast(
            T.reshape(R.argmax(T.reshape(self, [-1]), [0]), [1] * ndim(self)), "int64")
    return T.cast(R.argmax(self, [int(dim)], bool(keepdim)), "int64")


@TABLE.register("aten.argmin.default")
def argmin(self, dim=None, keepdim=False):
    if dim is None:
        return T.cast(R.argmin(T.reshape(self, [-1]), [0]), "int64")
    return T.cast(R.argmin(self, [int(dim)], bool(keepdim)), "int64")


def _correction(correction, unbiased):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased in (None, True) else 0.0


def _var(x, dim, correction, keepdim):
    c = float(correction)
    if c not in (0.0, 1.0):
        raise ConversionError(f"var with correction={c}")
    return R.variance(x, _axes(dim, x), bool(keepdim), unbiased=c == 1.0)


@TABLE.register("aten.var.correction")
def var(self, dim=None, correction=None, keepdim=False):
    return _var(self, dim, _correction(correction, None), keepdim)


@TABLE.register("aten.var.dim")
def var_dim(self, dim=None, unbiased=True, keepdim=False):
    return _var(self, dim, _correction(None, unbiased), keepdim)


@TABLE.register("aten.std.correction")
def std(self, dim=None, correction=None, keepdim=False):
    return E.sqrt(var(self, dim, correction, keepdim))


@TABLE.register("aten.std.dim")
def std_dim(self, dim=None, unbiased=True, keepdim=False):
    return E.sqrt(var_dim(self, dim, unbiased, keepdim))


@TABLE.register("aten.var_mean.correction")
def var_mean(self, dim=None, correction=None, keepdim=False):
    return (var(self, dim, correction, keepdim), mean(self, dim, keepdim))


@TABLE.register("aten.logsumexp.default")
def logsumexp(self, dim, keepdim=False):
    return R.logsumexp(self, _axes(dim, self), bool(keepdim))


@TABLE.register("aten.all.default", "aten.all.dim", "aten.all.dims")
def all_(self, dim=None, keepdim=False):
    return R.all(cast_to(self, "bool"), _axes(dim, self), bool(keepdim))


@TABLE.register("aten.any.default", "aten.any.dim", "aten.any.dims")
def any_(self, dim=None, keepdim=False):
    return R.any(cast_to(self, "bool"), _axes(dim, self), bool(keepdim))


@TABLE.register("aten.linalg_vector_norm.default", "aten.norm.ScalarOpt_dim")
def vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):  # noqa: A002
    x = self
    if ord == 1:
        return R.sum(E.abs(x), _axes(dim, x), bool(keepdim))
    if ord == float("inf"):
        return R.max(E.abs(x), _axes(dim, x), bool(keepdim))
    if ord == 2 or ord is None:
        return E.sqrt(R.sum(E.multiply(x, x), _axes(dim, x), bool(keepdim)))
    p = cast_to(float(ord), dtype_of(x))
    s = R.sum(E.power(E.abs(x), p), _axes(dim, x), bool(keepdim))
    return E.power(s, E.divide(cast_to(1.0, dtype_of(x)), p))


dtype_of = dtype


@TABLE.register("aten._weight_norm.default")
def weight_norm(v, g, dim=0):
    """``v * g / ||v||``, the norm over every axis but ``dim`` (``nn.utils.weight_norm``,
    wav2vec2's positional convolution)."""
    n = ndim(v)
    d = int(dim) + n if int(dim) < 0 else int(dim)
    others = [a for a in range(n) if a != d]
    norm = E.sqrt(R.sum(E.multiply(v, v), others, True)) if others else E.abs(v)
    return E.multiply(v, E.divide(g, norm))
