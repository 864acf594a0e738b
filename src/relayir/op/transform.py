"""Tensor transforms: reshape, layout, slicing, gathering, joining, creation, cast.

Each op is one definition (attrs, relation, numpy reference, registration) followed by
its Relay-style constructor at the end of the file. Shapes are computed once: where
the reference needs a shape (``reshape``, ``strided_slice``) it calls the same helper
the relation uses, so the value and the type cannot disagree.

Dimensions that are ``Any()`` or symbolic pass through unchanged where an op only
moves them (transpose, concatenate's other axes), and become ``Any()`` where the output
would need arithmetic on them (``n * 3``, a slice of an unknown extent).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import OpError
from ..ir.expr import Expr, Tuple, as_expr, const
from ..ir.types import Any, SymbolicDim, TensorType, TupleType, is_float, is_int
from .attrs_util import attr_dtype, attr_int, attr_ints, set_fields
from .registry import Attrs, OpPattern, call, register_op
from .type_rel import (
    broadcast_dim,
    check_axes,
    check_axis,
    check_insert_axis,
    dim_mul,
    dim_unify,
    fail,
    num_elements,
    runtime_checked,
    show_type,
    tensor,
    tensors,
    tuple_of_tensors,
)


def _check_tensor_list(ty, what: str = "data") -> list[TensorType]:
    ts = tuple_of_tensors(ty, what)
    if not ts:
        fail(f"{what} must hold at least one tensor, found an empty tuple")
    return ts


# ---------------------------------------------------------------- reshape


@dataclasses.dataclass(frozen=True)
class ReshapeAttrs(Attrs):
    """``newshape`` entries: n > 0 literal, 0 copy, -1 infer, -2 copy rest, -3 merge two,
    -4 split one into the two values that follow (either may be -1)."""

    newshape: tuple = ()
    allowzero: bool = False

    def __post_init__(self):
        shape = attr_ints(self.newshape, "newshape")
        bad = [v for v in shape if v < -4]
        if bad:
            raise ValueError(f"newshape {shape} holds unsupported value {bad[0]}")
        set_fields(self, newshape=shape, allowzero=bool(self.allowzero))


def _infer_dim(ishape, used_in, oshape, skip_out):
    """Product of the unused input dims over the product of the unused output dims."""
    num, num_sym = 1, []
    for j, d in enumerate(ishape):
        if j in used_in:
            continue
        if isinstance(d, int):
            num *= d
        elif isinstance(d, SymbolicDim):
            num_sym.append(d)
        else:
            return Any()
    den, den_sym = 1, []
    for j, d in enumerate(oshape):
        if j in skip_out:
            continue
        if isinstance(d, int):
            den *= d
        elif isinstance(d, SymbolicDim):
            den_sym.append(d)
        else:
            return Any()
    for s in den_sym:
        if s not in num_sym:
            return Any()
        num_sym.remove(s)
    if num_sym:
        return num_sym[0] if len(num_sym) == 1 and num == den != 0 else Any()
    if den == 0 or num % den:
        return None
    return num // den


def reshape_shape(ishape: tuple, newshape: tuple, allowzero: bool = False) -> tuple:
    """Relay's ``InferNewShape``; ``fail``s on a newshape that cannot apply."""
    oshape: list = []
    used_in: set[int] = set()
    used_out: set[int] = set()
    src = 0
    infer_at = -1
    i = 0

    def copy_dim():
        nonlocal src
        if src >= len(ishape):
            fail(f"newshape {newshape} copies input dimension {src}, but the input has "
                 f"rank {len(ishape)}")
        used_in.add(src)
        used_out.add(len(oshape))
        oshape.append(ishape[src])
        src += 1

    while i < len(newshape):
        v = newshape[i]
        if v > 0 or (v == 0 and allowzero):
            oshape.append(v)
            src += 1
        elif v == 0:
            copy_dim()
        elif v == -1:
            if infer_at >= 0:
                fail(f"newshape {newshape} has more than one -1")
            infer_at = len(oshape)
            oshape.append(1)
            src += 1
        elif v == -2:
            while src < len(ishape):
                copy_dim()
        elif v == -3:
            if src + 1 >= len(ishape):
                fail(f"newshape {newshape} merges input dimensions {src} and {src + 1} "
                     f"(-3), but the input has rank {len(ishape)}")
            used_in.update((src, src + 1))
            used_out.add(len(oshape))
            oshape.append(dim_mul(ishape[src], ishape[src + 1]))
            src += 2
        else:  # -4
            if i + 2 >= len(newshape) or src >= len(ishape):
                fail(f"newshape {newshape}: -4 needs an input dimension to split and two "
                     f"values after it")
            d0 = ishape[src]
            used_in.add(src)
            src += 1
            d1, d2 = newshape[i + 1], newshape[i + 2]
            i += 2
            if min(d1, d2) < -1 or 0 in (d1, d2) or d1 == d2 == -1:
                fail(f"newshape {newshape}: -4 must be followed by two positive values "
                     f"(one may be -1), found {d1}, {d2}")
            if -1 in (d1, d2):
                known = d2 if d1 == -1 else d1
                if isinstance(d0, int):
                    if d0 % known:
                        fail(f"newshape {newshape}: cannot split dimension {d0} by {known}")
                    rest = d0 // known
                else:
                    rest = d0 if known == 1 else Any()
                d1, d2 = (rest, d2) if d1 == -1 else (d1, rest)
            elif isinstance(d0, int) and d1 * d2 != d0:
                fail(f"newshape {newshape}: cannot split dimension {d0} into {d1} x {d2}")
            used_out.update((len(oshape), len(oshape) + 1))
            oshape += [d1, d2]
        i += 1

    if infer_at >= 0:
        dim = _infer_dim(ishape, used_in, oshape, used_out | {infer_at})
        if dim is None:
            fail(f"cannot reshape shape ({', '.join(map(repr, ishape))}) to newshape "
                 f"{newshape}: the -1 dimension is not a whole number")
        oshape[infer_at] = dim
    n_in, n_out = num_elements(ishape), num_elements(oshape)
    if n_in is not None and n_out is not None and n_in != n_out:
        fail(f"cannot reshape shape ({', '.join(map(repr, ishape))}) ({n_in} elements) to "
             f"newshape {newshape} = {tuple(oshape)} ({n_out} elements)")
    return tuple(oshape)


def _reshape_rel(types, attrs):
    t = tensor(types[0])
    return TensorType(reshape_shape(t.shape, attrs.newshape, attrs.allowzero), t.dtype)


def _reshape_ref(x, attrs):
    return np.reshape(x, reshape_shape(x.shape, attrs.newshape, attrs.allowzero))


register_op("reshape", rel=_reshape_rel, ref=runtime_checked(_reshape_ref),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=ReshapeAttrs)


# ---------------------------------------------------------------- transpose, squeeze, expand


@dataclasses.dataclass(frozen=True)
class TransposeAttrs(Attrs):
    axes: tuple | None = None  # None reverses the axes

    def __post_init__(self):
        set_fields(self, axes=None if self.axes is None else attr_ints(self.axes, "axes"))


def transpose_perm(ndim, attrs) -> list[int]:
    if attrs.axes is None:
        return list(range(ndim))[::-1]
    if len(attrs.axes) != ndim:
        fail(f"axes {attrs.axes} must list all {ndim} axes of the data")
    return check_axes(attrs.axes, ndim, "axes")


def _transpose_rel(types, attrs):
    t = tensor(types[0])
    return TensorType(tuple(t.shape[a] for a in transpose_perm(t.ndim, attrs)), t.dtype)


def _transpose_ref(x, attrs):
    return np.transpose(x, transpose_perm(x.ndim, attrs))


register_op("transpose", rel=_transpose_rel, ref=_transpose_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=1, attrs=TransposeAttrs)


@dataclasses.dataclass(frozen=True)
class SqueezeAttrs(Attrs):
    axis: tuple | None = None  # None removes every static 1

    def __post_init__(self):
        set_fields(self, axis=None if self.axis is None else attr_ints(self.axis, "axis"))


def _squeeze_axes(t, attrs) -> list[int]:
    if attrs.axis is None:
        if not t.is_static:
            fail(f"squeeze needs an explicit axis for data {show_type(t)} with dynamic "
                 f"dimensions")
        return [i for i, d in enumerate(t.shape) if d == 1]
    axes = check_axes(attrs.axis, t.ndim)
    for a in axes:
        if isinstance(t.shape[a], int) and t.shape[a] != 1:
            fail(f"cannot squeeze axis {a} of data {show_type(t)}: its size is "
                 f"{t.shape[a]}, not 1")
    return axes


def _squeeze_rel(types, attrs):
    t = tensor(types[0])
    axes = _squeeze_axes(t, attrs)
    return TensorType(tuple(d for i, d in enumerate(t.shape) if i not in axes), t.dtype)


def _squeeze_ref(x, attrs):
    axes = _squeeze_axes(TensorType(x.shape, x.dtype.name), attrs)
    return np.squeeze(x, axis=tuple(axes))


register_op("squeeze", rel=_squeeze_rel, ref=runtime_checked(_squeeze_ref),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=SqueezeAttrs)


@dataclasses.dataclass(frozen=True)
class ExpandDimsAttrs(Attrs):
    axis: int = 0
    num_newaxis: int = 1

    def __post_init__(self):
        n = attr_int(self.num_newaxis, "num_newaxis")
        if n < 0:
            raise ValueError(f"num_newaxis must be >= 0, found {n}")
        set_fields(self, axis=attr_int(self.axis, "axis"), num_newaxis=n)


def _expand_shape(shape, attrs) -> tuple:
    axis = check_insert_axis(attrs.axis, len(shape))
    return shape[:axis] + (1,) * attrs.num_newaxis + shape[axis:]


def _expand_dims_rel(types, attrs):
    t = tensor(types[0])
    return TensorType(_expand_shape(t.shape, attrs), t.dtype)


def _expand_dims_ref(x, attrs):
    return np.reshape(x, _expand_shape(x.shape, attrs))


register_op("expand_dims", rel=_expand_dims_rel, ref=_expand_dims_ref,
            pattern=OpPattern.BROADCAST, num_inputs=1, attrs=ExpandDimsAttrs)


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
    shape[axis] = sum(sizes) if all(isinstance(d, int) for d in sizes) else Any()
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
        return axis, [d if spec == 1 else Any()] * spec
    if isinstance(d, int) and spec and spec[-1] > d:
        fail(f"split indices {spec} exceed the size {d} of axis {axis} of data {show_type(t)}")
    bounds = (0, *spec)
    sizes = [b - a for a, b in zip(bounds, bounds[1:])]
    return axis, sizes + [d - bounds[-1] if isinstance(d, int) else Any()]


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


# ---------------------------------------------------------------- strided_slice


@dataclasses.dataclass(frozen=True)
class StridedSliceAttrs(Attrs):
    """numpy slicing per axis. ``axes=None``: begin/end apply to the leading axes.
    ``slice_mode="size"``: ``end`` holds sizes (-1: to the end) and strides are 1."""

    begin: tuple = ()
    end: tuple = ()
    strides: tuple | None = None
    axes: tuple | None = None
    slice_mode: str = "end"

    def __post_init__(self):
        begin, end = attr_ints(self.begin, "begin"), attr_ints(self.end, "end")
        strides = None if self.strides is None else attr_ints(self.strides, "strides")
        axes = None if self.axes is None else attr_ints(self.axes, "axes")
        if len(begin) != len(end):
            raise ValueError(f"begin {begin} and end {end} must have the same length")
        if strides is not None and (len(strides) > max(len(begin), 1) or 0 in strides):
            raise ValueError(f"strides {strides} must be nonzero, at most one per begin value")
        if axes is not None and len(axes) != len(begin):
            raise ValueError(f"axes {axes} must have one entry per begin value {begin}")
        if self.slice_mode not in ("end", "size"):
            raise ValueError(f"slice_mode must be 'end' or 'size', found {self.slice_mode!r}")
        set_fields(self, begin=begin, end=end, strides=strides, axes=axes)


def slice_plan(shape: tuple, attrs) -> list[tuple[int, int, int, int]]:
    """``(axis, begin, end, stride)`` per sliced axis, with begin/end raw."""
    ndim = len(shape)
    n = len(attrs.begin)
    if attrs.axes is None:
        if n > ndim:
            fail(f"begin {attrs.begin} has {n} entries but the data has rank {ndim}")
        axes = list(range(n))
    else:
        axes = check_axes(attrs.axes, ndim, "axes")
    strides = list(attrs.strides or ())
    strides += [1] * (n - len(strides))
    if attrs.slice_mode == "size":
        strides = [1] * n
    return list(zip(axes, attrs.begin, attrs.end, strides))


def slice_range(dim: int, begin: int, end: int, stride: int, mode: str) -> range:
    if mode == "size":
        start = min(max(begin + dim if begin < 0 else begin, 0), dim)
        return range(start, dim if end < 0 else min(start + end, dim))
    return range(*slice(begin, end, stride).indices(dim))


def _strided_slice_rel(types, attrs):
    t = tensor(types[0])
    shape = list(t.shape)
    for axis, b, e, s in slice_plan(t.shape, attrs):
        d = shape[axis]
        shape[axis] = len(slice_range(d, b, e, s, attrs.slice_mode)) if isinstance(d, int) \
            else Any()
    return TensorType(tuple(shape), t.dtype)


def _strided_slice_ref(x, attrs):
    index = [slice(None)] * x.ndim
    for axis, b, e, s in slice_plan(x.shape, attrs):
        r = slice_range(x.shape[axis], b, e, s, attrs.slice_mode)
        index[axis] = slice(r.start, r.stop if r.stop >= 0 else None, r.step)
    return x[tuple(index)]


register_op("strided_slice", rel=_strided_slice_rel, ref=runtime_checked(_strided_slice_ref),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=StridedSliceAttrs)


# ---------------------------------------------------------------- take


@dataclasses.dataclass(frozen=True)
class TakeAttrs(Attrs):
    """``mode``: "clip" clamps indices to [0, n-1] (negatives too, as in TVM), "wrap" takes
    them modulo n, "fast" assumes they are in range (the reference raises otherwise)."""

    axis: int | None = None  # None: index the flattened data
    batch_dims: int = 0
    mode: str = "clip"

    def __post_init__(self):
        if self.mode not in ("clip", "wrap", "fast"):
            raise ValueError(f"mode must be 'clip', 'wrap' or 'fast', found {self.mode!r}")
        set_fields(self, axis=None if self.axis is None else attr_int(self.axis, "axis"),
                   batch_dims=attr_int(self.batch_dims, "batch_dims"))


def _take_layout(dshape: tuple, ishape: tuple, attrs) -> tuple[int | None, int]:
    """(axis, batch_dims), both normalised."""
    if attrs.axis is None:
        if attrs.batch_dims:
            fail(f"batch_dims {attrs.batch_dims} needs an axis")
        return None, 0
    axis = check_axis(attrs.axis, len(dshape))
    bd = attrs.batch_dims + len(ishape) if attrs.batch_dims < 0 else attrs.batch_dims
    if not 0 <= bd <= min(axis, len(ishape)):
        fail(f"batch_dims {attrs.batch_dims} must lie in [0, min(axis={axis}, "
             f"indices rank={len(ishape)})]")
    return axis, bd


def _take_rel(types, attrs):
    data, indices = tensors(types, ("data", "indices"))
    if not is_int(indices.dtype):
        fail(f"indices must have an integer dtype, found {show_type(indices)}")
    axis, bd = _take_layout(data.shape, indices.shape, attrs)
    if axis is None:
        return TensorType(indices.shape, data.dtype)
    for k in range(bd):
        if dim_unify(data.shape[k], indices.shape[k]) is None:
            fail(f"batch dimension {k} differs: data is {show_type(data)} but indices is "
                 f"{show_type(indices)}")
    shape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:]
    return TensorType(shape, data.dtype)


def _fix_indices(idx, n: int, mode: str):
    idx = idx.astype("int64")
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if mode == "wrap":
        return np.mod(idx, n)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"take mode 'fast': an index is outside [0, {n})")
    return idx


def _take_ref(data, indices, attrs):
    axis, bd = _take_layout(data.shape, indices.shape, attrs)
    if axis is None:
        return np.take(data.reshape(-1), _fix_indices(indices, data.size, attrs.mode))
    idx = _fix_indices(indices, data.shape[axis], attrs.mode)
    if bd == 0:
        return np.take(data, idx, axis=axis)
    out_shape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:]
    batch = int(np.prod(data.shape[:bd]))
    d = data.reshape((batch,) + data.shape[bd:])
    i = idx.reshape((batch,) + indices.shape[bd:])
    parts = [np.take(d[b], i[b], axis=axis - bd) for b in range(batch)]
    return np.reshape(np.stack(parts) if parts else np.zeros(out_shape, data.dtype), out_shape)


register_op("take", rel=_take_rel, ref=runtime_checked(_take_ref), pattern=OpPattern.INJECTIVE,
            num_inputs=2, arg_names=("data", "indices"), attrs=TakeAttrs)


# ---------------------------------------------------------------- cast, clip, where


@dataclasses.dataclass(frozen=True)
class CastAttrs(Attrs):
    dtype: str = "float32"

    def __post_init__(self):
        set_fields(self, dtype=attr_dtype(self.dtype))


def _cast_rel(types, attrs):
    return TensorType(tensor(types[0]).shape, attrs.dtype)


def _cast_ref(x, attrs):
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(attrs.dtype)


register_op("cast", rel=_cast_rel, ref=_cast_ref, pattern=OpPattern.ELEMWISE, num_inputs=1,
            attrs=CastAttrs)


@dataclasses.dataclass(frozen=True)
class ClipAttrs(Attrs):
    a_min: float = float("-inf")
    a_max: float = float("inf")

    def __post_init__(self):
        for name in ("a_min", "a_max"):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
                raise TypeError(f"{name} must be a number, found {v!r}")
            object.__setattr__(self, name, float(v))


def _clip_rel(types, attrs):
    t = tensor(types[0])
    if t.dtype == "bool":
        fail(f"data must be a numeric tensor, found {show_type(t)}")
    return t


def _bound(value: float, dtype: np.dtype):
    """A clip bound cast to the data's dtype as TVM does (ints truncate, saturating)."""
    if is_float(dtype.name):
        return dtype.type(value)
    info = np.iinfo(dtype)
    return dtype.type(min(max(np.trunc(value), info.min), info.max))


def _clip_ref(x, attrs):
    # TVM's order, max(min(x, a_max), a_min): a_min wins when a_min > a_max.
    return np.maximum(np.minimum(x, _bound(attrs.a_max, x.dtype)), _bound(attrs.a_min, x.dtype))


register_op("clip", rel=_clip_rel, ref=_clip_ref, pattern=OpPattern.ELEMWISE, num_inputs=1,
            attrs=ClipAttrs)


def _where_rel(types, attrs):
    cond, x, y = tensors(types, ("condition", "x", "y"))
    if cond.dtype != "bool":
        fail(f"condition must be a bool tensor, found {show_type(cond)}")
    if x.dtype != y.dtype:
        fail(f"dtype mismatch: x is {show_type(x)} but y is {show_type(y)}")
    n = max(cond.ndim, x.ndim, y.ndim)
    padded = [(1,) * (n - t.ndim) + t.shape for t in (cond, x, y)]
    shape = []
    for k, dims in enumerate(zip(*padded)):
        d = dims[0]
        for other in dims[1:]:
            d = None if d is None else broadcast_dim(d, other)
        if d is None:
            fail(f"shapes do not broadcast: condition is {show_type(cond)}, x is "
                 f"{show_type(x)}, y is {show_type(y)} (dimension {k - n})")
        shape.append(d)
    return TensorType(tuple(shape), x.dtype)


register_op("where", rel=_where_rel, ref=lambda c, x, y, attrs=None: np.where(c, x, y),
            pattern=OpPattern.BROADCAST, num_inputs=3, arg_names=("condition", "x", "y"))


# ---------------------------------------------------------------- creation: zeros, ones, full


def _attr_shape(value) -> tuple[int, ...]:
    shape = attr_ints(value, "shape")
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    return shape


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
    return np.full(attrs.shape, fill, dtype=attrs.dtype or fill.dtype)


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
            ref=lambda x, fill, attrs=None: np.full_like(x, fill),
            pattern=OpPattern.ELEMWISE, num_inputs=2, arg_names=("data", "fill_value"))


# ---------------------------------------------------------------- broadcast_to, tile, repeat


@dataclasses.dataclass(frozen=True)
class BroadcastToAttrs(Attrs):
    shape: tuple = ()

    def __post_init__(self):
        set_fields(self, shape=_attr_shape(self.shape))


def _broadcast_to_rel(types, attrs):
    t = tensor(types[0])
    target = attrs.shape
    ok = t.ndim <= len(target)
    for d, s in zip(reversed(t.shape), reversed(target)):
        ok = ok and (d == s or d == 1 or not isinstance(d, int))
    if not ok:
        fail(f"cannot broadcast data {show_type(t)} to shape {target}")
    return TensorType(target, t.dtype)


def _broadcast_to_ref(x, attrs):
    return np.array(np.broadcast_to(x, attrs.shape))


register_op("broadcast_to", rel=_broadcast_to_rel, ref=_broadcast_to_ref,
            pattern=OpPattern.BROADCAST, num_inputs=1, attrs=BroadcastToAttrs)


@dataclasses.dataclass(frozen=True)
class TileAttrs(Attrs):
    """numpy ``tile``: the shorter of shape and reps is padded with leading 1s."""

    reps: tuple = ()

    def __post_init__(self):
        reps = attr_ints(self.reps, "reps")
        if any(r < 0 for r in reps):
            raise ValueError(f"reps {reps} must be >= 0")
        set_fields(self, reps=reps)


def _tile_rel(types, attrs):
    t = tensor(types[0])
    n = max(t.ndim, len(attrs.reps))
    shape = (1,) * (n - t.ndim) + t.shape
    reps = (1,) * (n - len(attrs.reps)) + attrs.reps
    return TensorType(tuple(dim_mul(d, r) for d, r in zip(shape, reps)), t.dtype)


register_op("tile", rel=_tile_rel, ref=lambda x, attrs: np.tile(x, attrs.reps),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=TileAttrs)


@dataclasses.dataclass(frozen=True)
class RepeatAttrs(Attrs):
    repeats: int = 1
    axis: int = 0

    def __post_init__(self):
        repeats = attr_int(self.repeats, "repeats")
        if repeats < 1:
            raise ValueError(f"repeats must be >= 1, found {repeats}")
        set_fields(self, repeats=repeats, axis=attr_int(self.axis, "axis"))


def _repeat_rel(types, attrs):
    t = tensor(types[0])
    axis = check_axis(attrs.axis, t.ndim)
    shape = list(t.shape)
    shape[axis] = dim_mul(shape[axis], attrs.repeats)
    return TensorType(tuple(shape), t.dtype)


register_op("repeat", rel=_repeat_rel,
            ref=lambda x, attrs: np.repeat(x, attrs.repeats, axis=attrs.axis),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=RepeatAttrs)


@dataclasses.dataclass(frozen=True)
class ReverseAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"))


def _reverse_rel(types, attrs):
    t = tensor(types[0])
    check_axis(attrs.axis, t.ndim)
    return t


register_op("reverse", rel=_reverse_rel, ref=lambda x, attrs: np.flip(x, axis=attrs.axis),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=ReverseAttrs)


# ---------------------------------------------------------------- Relay-style constructors


def _tensor_list(data) -> Expr:
    """A list/tuple of expressions becomes a ``Tuple``; a tuple-typed expression stays."""
    if isinstance(data, Expr):
        return data
    if not isinstance(data, (list, tuple)) or not data:
        raise OpError(f"expected a non-empty list of tensors, found {data!r}")
    return Tuple([as_expr(d) for d in data])


def reshape(data, newshape, allowzero=False):
    """Reshape; ``newshape`` takes Relay's special values 0, -1, -2, -3, -4."""
    return call("reshape", [data], newshape=newshape, allowzero=allowzero)


def transpose(data, axes=None):
    """Permute the axes; ``axes=None`` reverses them."""
    return call("transpose", [data], axes=axes)


def squeeze(data, axis=None):
    """Remove the given size-1 axes (all static size-1 axes when ``axis`` is None)."""
    return call("squeeze", [data], axis=axis)


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` size-1 axes at ``axis`` (in ``[-ndim-1, ndim]``)."""
    return call("expand_dims", [data], axis=axis, num_newaxis=num_newaxis)


def concatenate(data, axis):
    """Join a list of tensors (or a tuple-typed expression) along an existing axis."""
    return call("concatenate", [_tensor_list(data)], axis=axis)


def stack(data, axis):
    """Join a list of same-shaped tensors along a new axis."""
    return call("stack", [_tensor_list(data)], axis=axis)


def split(data, indices_or_sections, axis=0):
    """Split into equal sections or before the given indices; a tuple-typed call."""
    return call("split", [data], indices_or_sections=indices_or_sections, axis=axis)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end"):
    """numpy-style slicing with per-axis begin/end/stride."""
    return call("strided_slice", [data], begin=begin, end=end, strides=strides, axes=axes,
                slice_mode=slice_mode)


def take(data, indices, axis=None, batch_dims=0, mode="clip"):
    """Gather along ``axis`` (or from the flattened data when ``axis`` is None)."""
    return call("take", [data, indices], axis=axis, batch_dims=batch_dims, mode=mode)


def cast(data, dtype):
    """Convert to ``dtype``."""
    return call("cast", [data], dtype=dtype)


def clip(a, a_min, a_max):
    """Clamp to ``[a_min, a_max]``."""
    return call("clip", [a], a_min=a_min, a_max=a_max)


def where(condition, x, y):
    """Pick from ``x`` where ``condition`` holds, else from ``y`` (all broadcast)."""
    return call("where", [condition, x, y])


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


def broadcast_to(data, shape):
    """Broadcast to a static shape with numpy's rules."""
    return call("broadcast_to", [data], shape=shape)


def tile(data, reps):
    """numpy ``tile``."""
    return call("tile", [data], reps=reps)


def repeat(data, repeats, axis):
    """Repeat each element ``repeats`` times along ``axis``."""
    return call("repeat", [data], repeats=repeats, axis=axis)


def reverse(data, axis):
    """Reverse the order of elements along ``axis``."""
    return call("reverse", [data], axis=axis)


__all__ = [
    "broadcast_to", "cast", "clip", "concatenate", "expand_dims", "full", "full_like",
    "ones", "ones_like", "repeat", "reshape", "reverse", "split", "squeeze", "stack",
    "strided_slice", "take", "tile", "transpose", "where", "zeros", "zeros_like",
]
