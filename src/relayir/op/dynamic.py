"""Dynamic-shape ops: ``dyn.*`` take their shape arguments as tensors, plus ``shape_of``.

Each ``dyn.X`` is the static op ``X`` with some attributes moved into run-time tensor
inputs (Relay's ``dyn`` namespace): ``dyn.reshape(data, newshape)`` is
``reshape(data, newshape=<value of newshape>)``. The rank of the result is known from
the static length of the shape tensor; its extents are ``Any()``. One table,
``DYNAMIC``, says for every ``dyn`` op which static op it stands for and how its
tensor inputs become that op's attributes; both the numpy reference (which runs the
static op's reference, so the two cannot disagree) and ``DynamicToStatic`` (which
rewrites a call whose shape inputs are constants into the static op) use it.

``shape_of`` reads a shape at run time; ``argwhere`` and ``unique`` have output extents
that depend on the data itself (ONNX ``NonZero``, ``Compress``, ``Unique``).

Their output shapes are data. Those whose static twin's compute needs no attribute
value (reshape, broadcast_to, tile, zeros, ones, full) have that compute, and the VM's
shape function reads their shape inputs' values; the cpu target runs the others
through their reference (``te/computes/dynamic.py`` says which).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..errors import OpError
from ..ir.expr import Expr, const
from ..ir.op import Attrs, OpPattern, call, get_op, make_attrs, register_op
from ..ir.types import Any, TensorType, TupleType, is_int
from .attrs_util import attr_dtype, attr_ints, set_fields
from .sparse import check_sparse_to_dense
from .type_rel import check_axes, fail, show_type, tensor


class DynamicOp(NamedTuple):
    """``dyn`` op → ``static`` op: the inputs at ``shape_args`` (int tensors; their values
    as numpy arrays) become ``static_attrs(attrs, *values)``, the others stay inputs.
    With ``data_shapes``, ``static_attrs`` also gets the data inputs' shapes (keyword
    ``data_shapes``): an ``Unsqueeze`` target shape is the data's with ones inserted."""

    static: str
    shape_args: tuple[int, ...]
    static_attrs: Callable[..., dict]
    data_shapes: bool = False

    def split(self, args) -> tuple[list, list]:
        """``(data inputs, shape inputs)`` of a call's arguments."""
        data = [a for i, a in enumerate(args) if i not in self.shape_args]
        return data, [args[i] for i in self.shape_args]

    def static_call_parts(self, args, attrs) -> tuple[list, Attrs]:
        """The static op's inputs and attrs, given the shape inputs' values. The data
        inputs are arrays (a run) or typed expressions (``DynamicToStatic``); an
        expression whose shape is not static raises ``DataShapeUnknown``."""
        data, shapes = self.split(args)
        op = get_op(self.static)
        if not self.data_shapes:
            return data, make_attrs(op, self.static_attrs(attrs, *shapes))
        known = [_data_shape(d) for d in data]
        return data, make_attrs(op, self.static_attrs(attrs, *shapes, data_shapes=known))


class DataShapeUnknown(Exception):
    """A data input's shape is not static yet (``DynamicToStatic`` leaves the call)."""


def _data_shape(d) -> tuple[int, ...]:
    if isinstance(d, np.ndarray):
        return d.shape
    ty = d.checked_type if d.has_type else None
    if not isinstance(ty, TensorType) or not ty.is_static:
        raise DataShapeUnknown(f"{ty} is not a static tensor type")
    return ty.shape


DYNAMIC: dict[str, DynamicOp] = {}


def shape_arg(ty, what: str) -> int:
    """The static length of a 1-D integer shape tensor."""
    t = tensor(ty, what)
    if t.ndim != 1 or not isinstance(t.shape[0], int) or not is_int(t.dtype):
        fail(f"{what} must be a 1-D integer tensor of static length, found {show_type(t)}")
    return t.shape[0]


def _ints(v) -> tuple[int, ...]:
    return tuple(int(i) for i in np.asarray(v).reshape(-1))


def register_dynamic(name: str, static: str, shape_args: tuple, rel, static_attrs, arg_names,
                     attrs=None, description: str = "", data_shapes: bool = False):
    """Register ``dyn`` op ``name`` standing for ``static`` (see ``DynamicOp``): its
    reference is the static op's, run with the attrs the shape inputs' values give."""
    spec = DYNAMIC[name] = DynamicOp(static, shape_args, static_attrs, data_shapes)
    static_op = get_op(static)

    def ref(*args):
        *inputs, attrs_value = args
        try:  # the run-time values make the static attrs: a bad one is the user's error
            data, static_attrs_value = spec.static_call_parts(inputs, attrs_value)
        except (ValueError, TypeError) as exc:
            raise OpError(f"{name}: {exc}") from None
        return static_op.reference(*data, static_attrs_value)

    ref.__name__ = f"_{name.replace('.', '_')}_ref"
    register_op(name, rel=rel, ref=ref, pattern=OpPattern.OPAQUE,
                num_inputs=len(arg_names), arg_names=arg_names, attrs=attrs,
                description=description)


# ---------------------------------------------------------------- dyn.reshape


@dataclasses.dataclass(frozen=True)
class DynReshapeAttrs(Attrs):
    allowzero: bool = False

    def __post_init__(self):
        set_fields(self, allowzero=bool(self.allowzero))


def _reshape_rel(types, attrs):
    data = tensor(types[0])
    return TensorType((Any(),) * shape_arg(types[1], "newshape"), data.dtype)


register_dynamic("dyn.reshape", "reshape", (1,), _reshape_rel,
          lambda a, s: {"newshape": _ints(s), "allowzero": a.allowzero},
          ("data", "newshape"), DynReshapeAttrs, "reshape to a run-time shape")


# ---------------------------------------------------------------- dyn.broadcast_to, dyn.tile


def _broadcast_to_rel(types, attrs):
    data = tensor(types[0])
    n = shape_arg(types[1], "shape")
    if n < data.ndim:
        fail(f"cannot broadcast data {show_type(data)} to a shape of rank {n}")
    return TensorType((Any(),) * n, data.dtype)


register_dynamic("dyn.broadcast_to", "broadcast_to", (1,), _broadcast_to_rel,
          lambda a, s: {"shape": _ints(s)}, ("data", "shape"),
          description="broadcast to a run-time shape")


def _tile_rel(types, attrs):
    data = tensor(types[0])
    n = max(data.ndim, shape_arg(types[1], "reps"))
    return TensorType((Any(),) * n, data.dtype)


register_dynamic("dyn.tile", "tile", (1,), _tile_rel, lambda a, r: {"reps": _ints(r)},
          ("data", "reps"), description="tile with run-time repetitions")


# ---------------------------------------------------------------- dyn.strided_slice


@dataclasses.dataclass(frozen=True)
class DynStridedSliceAttrs(Attrs):
    """``axes=None``: begin/end/strides apply to the leading axes."""

    axes: tuple | None = None
    slice_mode: str = "end"

    def __post_init__(self):
        axes = None if self.axes is None else attr_ints(self.axes, "axes")
        if self.slice_mode not in ("end", "size"):
            raise ValueError(f"slice_mode must be 'end' or 'size', found {self.slice_mode!r}")
        set_fields(self, axes=axes)


def _strided_slice_rel(types, attrs):
    data = tensor(types[0])
    n = shape_arg(types[1], "begin")
    for ty, what in ((types[2], "end"), (types[3], "strides")):
        if shape_arg(ty, what) != n:
            fail(f"{what} must have as many entries as begin ({n}), found {show_type(ty)}")
    if attrs.axes is not None:
        if len(attrs.axes) != n:
            fail(f"axes {attrs.axes} must have one entry per begin value ({n})")
        axes = check_axes(attrs.axes, data.ndim, "axes")
    elif n > data.ndim:
        fail(f"begin has {n} entries but the data {show_type(data)} has rank {data.ndim}")
    else:
        axes = range(n)
    shape = list(data.shape)
    for a in axes:
        shape[a] = Any()
    return TensorType(tuple(shape), data.dtype)


register_dynamic("dyn.strided_slice", "strided_slice", (1, 2, 3), _strided_slice_rel,
          lambda a, b, e, s: {"begin": _ints(b), "end": _ints(e), "strides": _ints(s),
                              "axes": a.axes, "slice_mode": a.slice_mode},
          ("data", "begin", "end", "strides"), DynStridedSliceAttrs,
          "slice with run-time begin, end and strides")


# ---------------------------------------------------------------- dyn.zeros, dyn.ones, dyn.full


@dataclasses.dataclass(frozen=True)
class DynInitAttrs(Attrs):
    """``dtype=None``: float32 for zeros/ones, the fill value's dtype for ``dyn.full``."""

    dtype: str | None = None

    def __post_init__(self):
        set_fields(self, dtype=None if self.dtype in (None, "") else attr_dtype(self.dtype))


def _init_rel(types, attrs):
    return TensorType((Any(),) * shape_arg(types[0], "shape"), attrs.dtype or "float32")


def _full_rel(types, attrs):
    fill = tensor(types[0], "fill_value")
    if fill.ndim != 0:
        fail(f"fill_value must be a scalar (0-d) tensor, found {show_type(fill)}")
    return TensorType((Any(),) * shape_arg(types[1], "shape"), attrs.dtype or fill.dtype)


for _name in ("zeros", "ones"):
    register_dynamic(f"dyn.{_name}", _name, (0,), _init_rel,
              lambda a, s: {"shape": _ints(s), "dtype": a.dtype or "float32"}, ("shape",),
              DynInitAttrs, f"{_name} of a run-time shape")
register_dynamic("dyn.full", "full", (1,), _full_rel,
          lambda a, s: {"shape": _ints(s), "dtype": a.dtype}, ("fill_value", "shape"),
          DynInitAttrs, "a run-time shape filled with a scalar")


# ---------------------------------------------------------------- dyn.nn.pad


@dataclasses.dataclass(frozen=True)
class DynPadAttrs(Attrs):
    pad_mode: str = "constant"


def _pad_rel(types, attrs):
    data, value = tensor(types[0]), tensor(types[2], "pad_value")
    width = tensor(types[1], "pad_width")
    if width.shape not in ((data.ndim, 2),) or not is_int(width.dtype):
        fail(f"pad_width must be an integer tensor of shape ({data.ndim}, 2) for data "
             f"{show_type(data)}, found {show_type(width)}")
    if value.ndim != 0 or value.dtype != data.dtype:
        fail(f"pad_value must be a scalar of dtype {data.dtype}, found {show_type(value)}")
    return TensorType((Any(),) * data.ndim, data.dtype)


def _pad_static(a, width):
    w = np.asarray(width).reshape(-1, 2)
    return {"pad_width": tuple((int(b), int(e)) for b, e in w), "pad_mode": a.pad_mode}


# nn.pad's inputs are (data, pad_value): the width sits between them here, as in TVM
register_dynamic("dyn.nn.pad", "nn.pad", (1,), _pad_rel, _pad_static,
          ("data", "pad_width", "pad_value"), DynPadAttrs, "pad by run-time widths")


# ---------------------------------------------------------------- dyn.arange


def _arange_rel(types, attrs):
    for ty, what in zip(types, ("start", "stop", "step")):
        t = tensor(ty, what)
        if t.ndim != 0:
            fail(f"{what} must be a scalar (0-d) tensor, found {show_type(t)}")
    return TensorType((Any(),), attrs.dtype or tensor(types[0]).dtype)


def _arange_static(a, start, stop, step):
    return {"start": start.item(), "stop": stop.item(), "step": step.item(),
            "dtype": a.dtype or start.dtype.name}


register_dynamic("dyn.arange", "arange", (0, 1, 2), _arange_rel, _arange_static,
          ("start", "stop", "step"), DynInitAttrs, "numpy arange of run-time scalar bounds")


# ---------------------------------------------------------------- dyn.segment_sum


def _segment_sum_rel(types, attrs):
    data, ids, n = tensor(types[0]), tensor(types[1], "segment_ids"), tensor(types[2],
                                                                             "num_segments")
    if not is_int(n.dtype) or n.shape not in ((), (1,)):
        fail(f"num_segments must be an integer scalar or 1-element tensor, found "
             f"{show_type(n)}")
    if not is_int(ids.dtype) or ids.ndim != 1 or data.ndim < 1:
        fail(f"segment_ids {show_type(ids)} must be a 1-D integer tensor and data "
             f"{show_type(data)} at least 1-D")
    return TensorType((Any(), *data.shape[1:]), data.dtype)


register_dynamic("dyn.segment_sum", "segment_sum", (2,), _segment_sum_rel,
          lambda a, n: {"num_segments": _ints(n)[0]}, ("data", "segment_ids", "num_segments"),
          description="segment_sum with a run-time number of segments")


# ---------------------------------------------------------------- dyn.sparse_to_dense


def _sparse_to_dense_rel(types, attrs):
    ind, val, default = (tensor(types[i], w) for i, w in (
        (0, "sparse_indices"), (2, "sparse_values"), (3, "default_value")))
    n = shape_arg(types[1], "output_shape")
    check_sparse_to_dense(ind, val, default, n)
    return TensorType((Any(),) * n, val.dtype)


register_dynamic("dyn.sparse_to_dense", "sparse_to_dense", (1,), _sparse_to_dense_rel,
          lambda a, s: {"output_shape": _ints(s)},
          ("sparse_indices", "output_shape", "sparse_values", "default_value"),
          description="sparse_to_dense of a run-time output shape")


# ---------------------------------------------------------------- shape_of


@dataclasses.dataclass(frozen=True)
class ShapeOfAttrs(Attrs):
    dtype: str = "int64"

    def __post_init__(self):
        set_fields(self, dtype=attr_dtype(self.dtype))


def _shape_of_rel(types, attrs):
    return TensorType((tensor(types[0]).ndim,), attrs.dtype)


register_op("shape_of", rel=_shape_of_rel,
            ref=lambda x, attrs: np.asarray(x.shape, dtype=attrs.dtype),
            pattern=OpPattern.OPAQUE, num_inputs=1, attrs=ShapeOfAttrs,
            description="the shape of a tensor as a 1-D tensor")


# ---------------------------------------------------------------- data-dependent extents


def _argwhere_rel(types, attrs):
    return TensorType((Any(), tensor(types[0]).ndim), "int64")


register_op("argwhere", rel=_argwhere_rel,
            ref=lambda x, attrs=None: np.argwhere(x).astype("int64"),
            pattern=OpPattern.OPAQUE, num_inputs=1, arg_names=("condition",),
            description="the indices of the nonzero entries, one row each")


@dataclasses.dataclass(frozen=True)
class UniqueAttrs(Attrs):
    """``axis=None``: unique scalars of the flattened data; ``is_sorted=False``: in order
    of first occurrence."""

    is_sorted: bool = True
    axis: int | None = None

    def __post_init__(self):
        set_fields(self, is_sorted=bool(self.is_sorted),
                   axis=None if self.axis is None else int(self.axis))


def _unique_rel(types, attrs):
    data = tensor(types[0])
    if attrs.axis is None:
        n = 1
        for d in data.shape:
            n = n * d if isinstance(d, int) and isinstance(n, int) else Any()
        values = TensorType((Any(),), data.dtype)
    else:
        a = check_axes([attrs.axis], data.ndim, "axis")[0]
        n = data.shape[a]
        values = TensorType(data.shape[:a] + (Any(),) + data.shape[a + 1:], data.dtype)
    index = TensorType((Any(),), "int64")
    return TupleType((values, index, TensorType((n,), "int64"), index))


def _unique_ref(x, attrs):
    """(values, first indices, inverse indices, counts), as ONNX's ``Unique``."""
    flat = x.reshape(-1) if attrs.axis is None else x
    values, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True,
                                               return_counts=True, axis=attrs.axis)
    inverse = inverse.reshape(-1)
    if not attrs.is_sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values = np.take(values, order, axis=0 if attrs.axis is None else attrs.axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return tuple(np.asarray(v) if k == 0 else np.asarray(v, "int64")
                 for k, v in enumerate((values, first, inverse, counts)))


register_op("unique", rel=_unique_rel, ref=_unique_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=UniqueAttrs,
            description="unique values, first indices, inverse indices and counts")


# ---------------------------------------------------------------- constructors


def _shape_expr(v) -> Expr:
    return v if isinstance(v, Expr) else const(np.asarray(v, dtype="int64"))


def reshape(data, newshape, allowzero=False):
    """Reshape to the value of the 1-D int tensor ``newshape`` (0 copies, -1 infers)."""
    return call("dyn.reshape", [data, _shape_expr(newshape)], allowzero=allowzero)


def broadcast_to(data, shape):
    """Broadcast to the value of the 1-D int tensor ``shape``."""
    return call("dyn.broadcast_to", [data, _shape_expr(shape)])


def tile(data, reps):
    """numpy ``tile`` by the value of the 1-D int tensor ``reps``."""
    return call("dyn.tile", [data, _shape_expr(reps)])


def strided_slice(data, begin, end, strides, axes=None, slice_mode="end"):
    """``strided_slice`` whose begin/end/strides are 1-D int tensors."""
    return call("dyn.strided_slice",
                [data, _shape_expr(begin), _shape_expr(end), _shape_expr(strides)],
                axes=axes, slice_mode=slice_mode)


def zeros(shape, dtype="float32"):
    return call("dyn.zeros", [_shape_expr(shape)], dtype=dtype)


def ones(shape, dtype="float32"):
    return call("dyn.ones", [_shape_expr(shape)], dtype=dtype)


def full(fill_value, shape, dtype=None):
    """A run-time shape filled with the scalar expression ``fill_value``."""
    return call("dyn.full", [fill_value, _shape_expr(shape)], dtype=dtype)


def arange(start, stop, step, dtype=None):
    """numpy ``arange`` of scalar expressions (``dtype=None``: start's)."""
    return call("dyn.arange", [start, stop, step], dtype=dtype)


def pad(data, pad_width, pad_value, pad_mode="constant"):
    """``nn.pad`` with ``pad_width`` an int tensor of shape ``(ndim, 2)``."""
    return call("dyn.nn.pad", [data, _shape_expr(pad_width), pad_value], pad_mode=pad_mode)


def segment_sum(data, segment_ids, num_segments):
    """``segment_sum`` whose number of segments is an int scalar expression."""
    return call("dyn.segment_sum", [data, segment_ids, _shape_expr(num_segments)])


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value):
    """``sparse_to_dense`` whose output shape is a 1-D int tensor."""
    return call("dyn.sparse_to_dense", [sparse_indices, _shape_expr(output_shape),
                                        sparse_values, default_value])


def argwhere(condition):
    """The indices of the nonzero entries of ``condition``: shape ``(count, ndim)``."""
    return call("argwhere", [condition])


def unique(data, is_sorted=True, axis=None):
    """``(values, first indices, inverse indices, counts)`` (a tuple-typed call)."""
    return call("unique", [data], is_sorted=is_sorted, axis=axis)


def shape_of(data, dtype="int64"):
    """The shape of ``data`` as a 1-D tensor."""
    return call("shape_of", [data], dtype=dtype)


__all__ = ["DYNAMIC", "DataShapeUnknown", "DynamicOp", "arange", "argwhere", "broadcast_to",
           "full", "ones", "pad", "register_dynamic", "reshape", "segment_sum",
           "shape_arg", "shape_of", "sparse_to_dense", "strided_slice", "tile", "unique",
           "zeros"]
