"""Joining and splitting: ``concatenate``, ``stack``, ``split``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import OpError
from ...ir.dim_expr import dim_add, dim_sub, exact_div, floordiv
from ...ir.expr import Expr, Tuple, as_expr
from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType, TupleType
from ..attrs_util import attr_int, attr_ints, set_fields
from ..type_rel import (
    check_axis,
    check_insert_axis,
    dim_unify,
    fail,
    show_type,
    tensor,
)
from ._common import _check_tensor_list

# ---------------------------------------------------------------- concatenate, stack, split


@dataclasses.dataclass(frozen=True)
class ConcatenateAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"))


def _concatenate_rel(types, attrs):
    ts = _check_tensor_list(types[0])
    first = ts[0]
    if first.ndim == 0:
        fail(f"cannot concatenate 0-d tensors: data.0 is {show_type(first)}")
    axis = check_axis(attrs.axis, first.ndim)
    for i, t in enumerate(ts[1:], 1):
        if t.dtype != first.dtype or t.ndim != first.ndim:
            what = "dtypes" if t.dtype != first.dtype else "ranks"
            fail(f"data.{i} is {show_type(t)} but data.0 is {show_type(first)}: {what} differ")
    shape = list(first.shape)
    for i, t in enumerate(ts[1:], 1):
        for k, d in enumerate(t.shape):
            if k == axis:
                continue
            u = dim_unify(shape[k], d)
            if u is None:
                fail(f"data.{i} is {show_type(t)} but data.0 is {show_type(first)}: "
                     f"dimension {k} differs ({d} vs {first.shape[k]}) off the "
                     f"concatenation axis {axis}")
            shape[k] = u
    sizes = [t.shape[axis] for t in ts]
    total = 0
    for d in sizes:
        total = dim_add(total, d)  # symbolic sizes sum symbolically; an Any gives Any
    shape[axis] = total
    return TensorType(tuple(shape), first.dtype)


def _concatenate_ref(xs, attrs):
    return np.concatenate(xs, axis=attrs.axis)


register_op("concatenate", rel=_concatenate_rel, ref=_concatenate_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=ConcatenateAttrs)


@dataclasses.dataclass(frozen=True)
class StackAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"))


def _stack_rel(types, attrs):
    ts = _check_tensor_list(types[0])
    first = ts[0]
    shape = list(first.shape)
    for i, t in enumerate(ts[1:], 1):
        same = t.dtype == first.dtype and t.ndim == first.ndim
        for k, d in enumerate(t.shape if same else ()):
            shape[k] = dim_unify(shape[k], d)
            same = same and shape[k] is not None
        if not same:
            fail(f"data.{i} is {show_type(t)} but data.0 is {show_type(first)}: stacked "
                 f"tensors need one shape and dtype")
    axis = check_insert_axis(attrs.axis, first.ndim)
    return TensorType(tuple(shape[:axis]) + (len(ts),) + tuple(shape[axis:]), first.dtype)


def _stack_ref(xs, attrs):
    return np.stack(xs, axis=attrs.axis)


register_op("stack", rel=_stack_rel, ref=_stack_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=1, attrs=StackAttrs)


@dataclasses.dataclass(frozen=True)
class SplitAttrs(Attrs):
    """An int: that many equal sections. A tuple: the indices to split before."""

    indices_or_sections: int | tuple = 1
    axis: int = 0

    def __post_init__(self):
        v = self.indices_or_sections
        if isinstance(v, (list, tuple, np.ndarray)):
            v = attr_ints(v, "indices_or_sections")
            if any(i < 0 for i in v) or list(v) != sorted(v):
                raise ValueError(f"split indices {v} must be >= 0 and ascending")
        else:
            v = attr_int(v, "indices_or_sections")
            if v < 1:
                raise ValueError(f"the number of sections must be >= 1, found {v}")
        set_fields(self, indices_or_sections=v, axis=attr_int(self.axis, "axis"))


def _split_sizes(t: TensorType, attrs) -> tuple[int, list]:
    axis = check_axis(attrs.axis, t.ndim)
    d = t.shape[axis]
    spec = attrs.indices_or_sections
    if isinstance(spec, int):
        if isinstance(d, int):
            if d % spec:
                fail(f"cannot split axis {axis} of data {show_type(t)} into {spec} equal "
                     f"sections")
            return axis, [d // spec] * spec
        part = exact_div(d, spec)  # whole at run time, or the shape function refuses
        return axis, [part if part is not None else floordiv(d, spec)] * spec
    if isinstance(d, int) and spec and spec[-1] > d:
        fail(f"split indices {spec} exceed the size {d} of axis {axis} of data {show_type(t)}")
    bounds = (0, *spec)
    sizes = [b - a for a, b in zip(bounds, bounds[1:])]
    return axis, sizes + [dim_sub(d, bounds[-1])]


def _split_rel(types, attrs):
    t = tensor(types[0])
    axis, sizes = _split_sizes(t, attrs)
    return TupleType(
        tuple(TensorType(t.shape[:axis] + (s,) + t.shape[axis + 1:], t.dtype) for s in sizes)
    )


def _split_ref(x, attrs):
    spec = attrs.indices_or_sections
    return tuple(np.split(x, spec if isinstance(spec, int) else list(spec), axis=attrs.axis))


register_op("split", rel=_split_rel, ref=_split_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=1, attrs=SplitAttrs)


def _tensor_list(data) -> Expr:
    """A list/tuple of expressions becomes a ``Tuple``; a tuple-typed expression stays."""
    if isinstance(data, Expr):
        return data
    if not isinstance(data, (list, tuple)) or not data:
        raise OpError(f"expected a non-empty list of tensors, found {data!r}")
    return Tuple([as_expr(d) for d in data])


def concatenate(data, axis):
    """Join a list of tensors (or a tuple-typed expression) along an existing axis."""
    return call("concatenate", [_tensor_list(data)], axis=axis)


def stack(data, axis):
    """Join a list of same-shaped tensors along a new axis."""
    return call("stack", [_tensor_list(data)], axis=axis)


def split(data, indices_or_sections, axis=0):
    """Split into equal sections or before the given indices; a tuple-typed call."""
    return call("split", [data], indices_or_sections=indices_or_sections, axis=axis)
