"""Shape transforms: ``reshape``, ``reshape_like``, ``transpose``, ``squeeze``,
``expand_dims``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.dim_expr import certainly_differ, dim_product, exact_div, floordiv
from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import Any, TensorType
from ..attrs_util import attr_int, attr_ints, set_fields
from ..type_rel import (
    check_axes,
    check_insert_axis,
    dim_mul,
    fail,
    runtime_checked,
    show_type,
    tensor,
)

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
    """Product of the unused input dims over the product of the unused output dims:
    exact when it divides (``(2, n, 64)`` to ``(-1, 64)`` is ``2 * n``), a floor
    division by a static product (the shape function checks it is whole at run time),
    else ``Any``; None when static products do not divide."""
    num = dim_product(d for j, d in enumerate(ishape) if j not in used_in)
    den = dim_product(d for j, d in enumerate(oshape) if j not in skip_out)
    if isinstance(num, Any) or isinstance(den, Any):
        return Any()
    if isinstance(num, int) and isinstance(den, int):
        return None if den == 0 or num % den else num // den
    q = exact_div(num, den)
    if q is not None:
        return q
    return floordiv(num, den) if isinstance(den, int) and den > 0 else Any()


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
                    q = exact_div(d0, known)
                    rest = q if q is not None else floordiv(d0, known)
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
    n_in, n_out = dim_product(ishape), dim_product(oshape)
    if certainly_differ(n_in, n_out):
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


# ---------------------------------------------------------------- reshape_like


@dataclasses.dataclass(frozen=True)
class ReshapeLikeAttrs(Attrs):
    """data's axes ``[lhs_begin, lhs_end)`` become shape_like's ``[rhs_begin, rhs_end)``
    (None: to the last axis; negative: from the end), as Relay's ``reshape_like``."""

    lhs_begin: int = 0
    lhs_end: int | None = None
    rhs_begin: int = 0
    rhs_end: int | None = None

    def __post_init__(self):
        set_fields(self, **{k: None if getattr(self, k) is None else attr_int(getattr(self, k), k)
                            for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")})


def _span(begin, end, ndim: int, what: str) -> tuple[int, int]:
    b = begin + ndim if begin < 0 else begin
    e = ndim if end is None else (end + ndim if end < 0 else end)
    if not 0 <= b <= e <= ndim:
        fail(f"{what} axes [{begin}, {end}) are not a range of the {ndim} axes")
    return b, e


def reshape_like_shape(data_shape, like_shape, attrs) -> tuple:
    lb, le = _span(attrs.lhs_begin, attrs.lhs_end, len(data_shape), "data")
    rb, re = _span(attrs.rhs_begin, attrs.rhs_end, len(like_shape), "shape_like")
    shape = (*data_shape[:lb], *like_shape[rb:re], *data_shape[le:])
    if certainly_differ(dim_product(data_shape), dim_product(shape)):
        fail(f"cannot reshape ({', '.join(map(repr, data_shape))}) to "
             f"({', '.join(map(repr, shape))}): the element counts differ")
    return shape


def _reshape_like_rel(types, attrs):
    data, like = tensor(types[0]), tensor(types[1], "shape_like")
    return TensorType(reshape_like_shape(data.shape, like.shape, attrs), data.dtype)


def _reshape_like_ref(x, like, attrs):
    return np.reshape(x, reshape_like_shape(x.shape, like.shape, attrs))


register_op("reshape_like", rel=_reshape_like_rel, ref=runtime_checked(_reshape_like_ref),
            pattern=OpPattern.INJECTIVE, num_inputs=2, arg_names=("data", "shape_like"),
            attrs=ReshapeLikeAttrs,
            description="reshape to (part of) another tensor's shape")


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
        if certainly_differ(t.shape[a], 1):
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


def reshape(data, newshape, allowzero=False):
    """Reshape; ``newshape`` takes Relay's special values 0, -1, -2, -3, -4."""
    return call("reshape", [data], newshape=newshape, allowzero=allowzero)


def reshape_like(data, shape_like, lhs_begin=0, lhs_end=None, rhs_begin=0, rhs_end=None):
    """Reshape ``data``'s axes ``[lhs_begin, lhs_end)`` to ``shape_like``'s
    ``[rhs_begin, rhs_end)`` (all of both by default)."""
    return call("reshape_like", [data, shape_like], lhs_begin=lhs_begin, lhs_end=lhs_end,
                rhs_begin=rhs_begin, rhs_end=rhs_end)


def transpose(data, axes=None):
    """Permute the axes; ``axes=None`` reverses them."""
    return call("transpose", [data], axes=axes)


def squeeze(data, axis=None):
    """Remove the given size-1 axes (all static size-1 axes when ``axis`` is None)."""
    return call("squeeze", [data], axis=axis)


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` size-1 axes at ``axis`` (in ``[-ndim-1, ndim]``)."""
    return call("expand_dims", [data], axis=axis, num_newaxis=num_newaxis)
