"""Shape-level layers: ``nn.dropout`` (inference identity), ``nn.pad``, ``nn.batch_flatten``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.dim_expr import dim_add, dim_product
from ...ir.expr import Constant, Expr, TupleGetItem, Var, const
from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType, TupleType
from ..attrs_util import set_fields
from ..type_rel import (
    fail,
    float_identity_rel,
    same_dtype,
    tensor,
    tensors,
)
from ._common import (
    _ints,
)

# ---------------------------------------------------------------- dropout, pad, flatten


@dataclasses.dataclass(frozen=True)
class DropoutAttrs(Attrs):
    rate: float = 0.5

    def __post_init__(self):
        rate = float(self.rate)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be in [0, 1], found {self.rate!r}")
        set_fields(self, rate=rate)


def _dropout_rel(types, attrs):
    t = float_identity_rel(types, attrs)
    return TupleType((t, t))


def _dropout_ref(data, attrs):
    return data.copy(), np.ones_like(data)


register_op("nn.dropout", rel=_dropout_rel, ref=_dropout_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=DropoutAttrs,
            description="inference mode: (data, ones); training passes rewrite it")


_PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect"}


@dataclasses.dataclass(frozen=True)
class PadAttrs(Attrs):
    pad_width: tuple = ()
    pad_mode: str = "constant"

    def __post_init__(self):
        width = tuple(_ints(p, 2, "pad_width entry") for p in self.pad_width)
        set_fields(self, pad_width=width)
        if self.pad_mode not in _PAD_MODES:
            raise ValueError(f"pad_mode must be one of {', '.join(_PAD_MODES)}, "
                             f"found {self.pad_mode!r}")


def _pad_rel(types, attrs):
    data, value = tensors(types, ("data", "pad_value"))
    if len(attrs.pad_width) != data.ndim:
        fail(f"pad_width has {len(attrs.pad_width)} entries but data has rank {data.ndim}: "
             f"data is {data}")
    if value.ndim != 0:
        fail(f"pad_value must be a scalar, found {value}")
    same_dtype(data, value, ("data", "pad_value"))
    out = []
    for axis, (d, (before, after)) in enumerate(zip(data.shape, attrs.pad_width)):
        if isinstance(d, int):
            if attrs.pad_mode == "reflect" and max(before, after) >= max(d, 1):
                fail(f"reflect padding {(before, after)} needs axis {axis} longer than the "
                     f"padding: data is {data}")
            if attrs.pad_mode == "edge" and d == 0 and before + after:
                fail(f"edge padding of the empty axis {axis}: data is {data}")
            out.append(d + before + after)
        else:
            out.append(dim_add(d, before + after))
    return TensorType(tuple(out), data.dtype)


def _pad_ref(data, pad_value, attrs):
    mode = _PAD_MODES[attrs.pad_mode]
    if mode == "constant":
        return np.pad(data, attrs.pad_width, mode, constant_values=pad_value[()])
    return np.pad(data, attrs.pad_width, mode)


register_op("nn.pad", rel=_pad_rel, ref=_pad_ref, pattern=OpPattern.INJECTIVE, num_inputs=2,
            arg_names=("data", "pad_value"), attrs=PadAttrs)


def _batch_flatten_rel(types, attrs):
    data = tensor(types[0])
    if data.ndim < 1:
        fail(f"data must have rank >= 1, found {data}")
    return TensorType((data.shape[0], dim_product(data.shape[1:])), data.dtype)


def _batch_flatten_ref(data, attrs):
    return data.reshape(data.shape[0], -1)


register_op("nn.batch_flatten", rel=_batch_flatten_rel, ref=_batch_flatten_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=1)


def dropout_raw(data, rate=0.5):
    """The ``nn.dropout`` call itself: a tuple ``(out, mask)``."""
    return call("nn.dropout", [data], rate=rate)


def dropout(data, rate=0.5):
    """Field 0 of ``nn.dropout`` (its output), as Relay's ``dropout`` returns."""
    return TupleGetItem(dropout_raw(data, rate), 0)


def _known_dtype(expr) -> str | None:
    if getattr(expr, "has_type", False) and isinstance(expr.checked_type, TensorType):
        return expr.checked_type.dtype
    if isinstance(expr, Var) and isinstance(expr.type_annotation, TensorType):
        return expr.type_annotation.dtype
    if isinstance(expr, Constant):
        return expr.data.dtype.name
    if isinstance(expr, np.ndarray):
        return expr.dtype.name
    return None


def pad(data, pad_width, pad_value=0, pad_mode="constant"):
    """Pad ``data``. A Python-number ``pad_value`` becomes a constant of data's dtype when
    that is known here (annotated var, constant, typed expr), otherwise float32; pass an
    expression (``relayir.const(0, "int32")``) to choose it."""
    if not isinstance(pad_value, Expr):
        pad_value = const(pad_value, dtype=_known_dtype(data) or "float32")
    return call("nn.pad", [data, pad_value], pad_width=pad_width, pad_mode=pad_mode)


def batch_flatten(data):
    return call("nn.batch_flatten", [data])
