"""Creation: ``zeros``, ``ones``, ``full`` and their ``*_like`` forms."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.expr import Expr, const
from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import attr_dtype, set_fields
from ..type_rel import (
    fail,
    show_type,
    tensor,
    tensors,
)
from ._common import _attr_shape
from .convert import cast_values

# ---------------------------------------------------------------- creation: zeros, ones, full


@dataclasses.dataclass(frozen=True)
class InitOpAttrs(Attrs):
    shape: tuple = ()
    dtype: str | None = "float32"

    def __post_init__(self):
        dtype = None if self.dtype in (None, "") else attr_dtype(self.dtype)
        set_fields(self, shape=_attr_shape(self.shape), dtype=dtype)


def _init_rel(types, attrs):
    return TensorType(attrs.shape, attrs.dtype or "float32")


register_op("zeros", rel=_init_rel, ref=lambda attrs: np.zeros(attrs.shape, attrs.dtype),
            pattern=OpPattern.ELEMWISE, num_inputs=0, arg_names=(), attrs=InitOpAttrs)
register_op("ones", rel=_init_rel, ref=lambda attrs: np.ones(attrs.shape, attrs.dtype),
            pattern=OpPattern.ELEMWISE, num_inputs=0, arg_names=(), attrs=InitOpAttrs)


@dataclasses.dataclass(frozen=True)
class FullAttrs(InitOpAttrs):
    """``dtype=None`` (or Relay's ``""``): the fill value's dtype."""

    dtype: str | None = None


def _scalar(t: TensorType, what: str = "fill_value") -> TensorType:
    if t.ndim != 0:
        fail(f"{what} must be a scalar (0-d) tensor, found {show_type(t)}")
    return t


def _full_rel(types, attrs):
    fill = _scalar(tensor(types[0], "fill_value"))
    return TensorType(attrs.shape, attrs.dtype or fill.dtype)


def _full_ref(fill, attrs):
    return np.full(attrs.shape, cast_values(fill, attrs.dtype or fill.dtype))


register_op("full", rel=_full_rel, ref=_full_ref, pattern=OpPattern.ELEMWISE, num_inputs=1,
            arg_names=("fill_value",), attrs=FullAttrs)


def _like_rel(types, attrs):
    return tensor(types[0])


def _full_like_rel(types, attrs):
    data, fill = tensors(types, ("data", "fill_value"))
    _scalar(fill)
    return data


register_op("zeros_like", rel=_like_rel, ref=lambda x, attrs=None: np.zeros_like(x),
            pattern=OpPattern.ELEMWISE, num_inputs=1)
register_op("ones_like", rel=_like_rel, ref=lambda x, attrs=None: np.ones_like(x),
            pattern=OpPattern.ELEMWISE, num_inputs=1)
register_op("full_like", rel=_full_like_rel,
            ref=lambda x, fill, attrs=None: np.full_like(x, cast_values(fill, x.dtype)),
            pattern=OpPattern.ELEMWISE, num_inputs=2, arg_names=("data", "fill_value"))


def zeros(shape, dtype="float32"):
    """A tensor of zeros."""
    return call("zeros", [], shape=shape, dtype=dtype)


def ones(shape, dtype="float32"):
    """A tensor of ones."""
    return call("ones", [], shape=shape, dtype=dtype)


def full(fill_value, shape=(), dtype=""):
    """A tensor filled with a scalar; ``dtype=""`` keeps the fill value's dtype."""
    if not isinstance(fill_value, Expr):
        fill_value = const(fill_value, dtype or None)
    return call("full", [fill_value], shape=shape, dtype=dtype)


def zeros_like(data):
    """Zeros of ``data``'s type."""
    return call("zeros_like", [data])


def ones_like(data):
    """Ones of ``data``'s type."""
    return call("ones_like", [data])


def full_like(data, fill_value):
    """``data``'s type filled with a scalar."""
    return call("full_like", [data, fill_value])
