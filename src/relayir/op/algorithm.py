"""Algorithms over tensors: sorting (topk, sort, argsort), scans (cumsum, cumprod),
triangles (trilu), einsum, one_hot and arange.

Sorting is stable: equal values keep the order of their indices, in both directions
(ONNX TopK's and torch.sort(stable=True)'s tie order), and NaN sorts as the largest
value. ``einsum`` takes numpy's equation language, ellipsis and repeated indices
included; ``expand_einsum`` turns an equation into plain letters, which the compute
and the gradient rule use too.
"""

from __future__ import annotations

import dataclasses
import math
import string

import numpy as np

from ..errors import OpError
from ..ir.expr import Constant, Expr, Tuple, as_expr
from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import Any, TensorType, TupleType, is_float, is_int
from .attrs_util import attr_dtype, attr_int, set_fields
from .transform.convert import cast_values
from .type_rel import (
    broadcast_dim,
    check_axis,
    fail,
    show_type,
    tensor,
    tensors,
    tuple_of_tensors,
)

# ---------------------------------------------------------------- sorting


def stable_order(x: np.ndarray, axis: int, ascending: bool) -> np.ndarray:
    """Indices sorting ``x`` along ``axis``; ties keep index order either way."""
    if ascending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - flipped, axis)


@dataclasses.dataclass(frozen=True)
class TopKAttrs(Attrs):
    """``k < 1`` takes the whole axis (Relay); ``ret_type`` "both" gives (values,
    indices), "values" or "indices" one tensor."""

    k: int = 1
    axis: int = -1
    ret_type: str = "both"
    is_ascend: bool = False
    dtype: str = "int32"

    def __post_init__(self):
        if self.ret_type not in ("both", "values", "indices"):
            raise ValueError(f"ret_type must be 'both', 'values' or 'indices', "
                             f"found {self.ret_type!r}")
        dtype = attr_dtype(self.dtype)
        if not is_int(dtype):
            raise ValueError(f"dtype of the indices must be an integer type, found {dtype}")
        set_fields(self, k=attr_int(self.k, "k"), axis=attr_int(self.axis, "axis"),
                   is_ascend=bool(self.is_ascend), dtype=dtype)


def _topk_rel(types, attrs):
    t = tensor(types[0])
    axis = check_axis(attrs.axis, t.ndim, of=f"data {show_type(t)}")
    shape = list(t.shape)
    if attrs.k >= 1:
        if isinstance(shape[axis], int) and attrs.k > shape[axis]:
            fail(f"k {attrs.k} is larger than axis {attrs.axis} of data {show_type(t)}")
        shape[axis] = attrs.k
    values = TensorType(tuple(shape), t.dtype)
    indices = TensorType(tuple(shape), attrs.dtype)
    return {"both": TupleType((values, indices)), "values": values,
            "indices": indices}[attrs.ret_type]


def _topk_ref(x, attrs):
    axis = attrs.axis % x.ndim
    k = x.shape[axis] if attrs.k < 1 else attrs.k
    if k > x.shape[axis]:
        raise ValueError(f"k {k} is larger than axis {axis} ({x.shape[axis]})")
    order = np.take(stable_order(x, axis, attrs.is_ascend), np.arange(k), axis=axis)
    values = np.take_along_axis(x, order, axis=axis)
    indices = order.astype(attrs.dtype)
    return {"both": (values, indices), "values": values, "indices": indices}[attrs.ret_type]


register_op("topk", rel=_topk_rel, ref=_topk_ref, pattern=OpPattern.OPAQUE, num_inputs=1,
            attrs=TopKAttrs)


@dataclasses.dataclass(frozen=True)
class SortAttrs(Attrs):
    axis: int = -1
    is_ascend: bool = True
    dtype: str = "int32"  # of argsort's indices

    def __post_init__(self):
        dtype = attr_dtype(self.dtype)
        if not is_int(dtype):
            raise ValueError(f"dtype of the indices must be an integer type, found {dtype}")
        set_fields(self, axis=attr_int(self.axis, "axis"), is_ascend=bool(self.is_ascend),
                   dtype=dtype)


def _sort_rel(types, attrs):
    t = tensor(types[0])
    check_axis(attrs.axis, t.ndim, of=f"data {show_type(t)}")
    return t


def _argsort_rel(types, attrs):
    return TensorType(_sort_rel(types, attrs).shape, attrs.dtype)


def _sort_ref(x, attrs):
    order = stable_order(x, attrs.axis % x.ndim, attrs.is_ascend)
    return np.take_along_axis(x, order, axis=attrs.axis)


def _argsort_ref(x, attrs):
    return stable_order(x, attrs.axis % x.ndim, attrs.is_ascend).astype(attrs.dtype)


register_op("sort", rel=_sort_rel, ref=_sort_ref, pattern=OpPattern.OPAQUE, num_inputs=1,
            attrs=SortAttrs)
register_op("argsort", rel=_argsort_rel, ref=_argsort_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=SortAttrs)


# ---------------------------------------------------------------- cumsum, cumprod


@dataclasses.dataclass(frozen=True)
class ScanAttrs(Attrs):
    """``axis=None`` scans the flattened data; ``exclusive`` starts from the identity
    (ONNX CumSum's exclusive), ``reverse`` scans from the end."""

    axis: int | None = None
    dtype: str | None = None  # of the output (and accumulation); None: the input's
    exclusive: bool = False
    reverse: bool = False

    def __post_init__(self):
        set_fields(self, axis=None if self.axis is None else attr_int(self.axis, "axis"),
                   dtype=None if self.dtype in (None, "") else attr_dtype(self.dtype),
                   exclusive=bool(self.exclusive), reverse=bool(self.reverse))


def _scan_rel(types, attrs):
    t = tensor(types[0])
    if t.dtype == "bool" and attrs.dtype is None:
        fail(f"data {show_type(t)} is bool: give dtype for the running total")
    dtype = attrs.dtype or t.dtype
    if attrs.axis is None:
        n = 1
        for d in t.shape:
            n = n * d if isinstance(d, int) and isinstance(n, int) else Any()
        return TensorType((n,), dtype)
    check_axis(attrs.axis, t.ndim, of=f"data {show_type(t)}")
    return TensorType(t.shape, dtype)


def _scan_ref(ufunc):
    def ref(x, attrs):
        dtype = attrs.dtype or x.dtype
        x = cast_values(x, dtype)
        if attrs.axis is None:
            x, axis = x.reshape(-1), 0
        else:
            axis = attrs.axis % x.ndim
        if attrs.reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=dtype) if x.size else x.copy()
        if attrs.exclusive and x.size:
            lead = np.full_like(np.take(out, [0], axis=axis), ufunc.identity)
            out = np.concatenate([lead, np.take(out, np.arange(x.shape[axis] - 1), axis)],
                                 axis=axis)
        return np.flip(out, axis) if attrs.reverse else out

    return ref


for _name, _ufunc in (("cumsum", np.add), ("cumprod", np.multiply)):
    register_op(_name, rel=_scan_rel, ref=_scan_ref(_ufunc), pattern=OpPattern.OPAQUE,
                num_inputs=1, attrs=ScanAttrs)


# ---------------------------------------------------------------- trilu


@dataclasses.dataclass(frozen=True)
class TriluAttrs(Attrs):
    """Keep the upper (``upper``) or lower triangle of the last two axes, from the
    ``k``-th diagonal (k > 0 above the main one); zero the rest."""

    k: int = 0
    upper: bool = True

    def __post_init__(self):
        set_fields(self, k=attr_int(self.k, "k"), upper=bool(self.upper))


def _trilu_rel(types, attrs):
    t = tensor(types[0])
    if t.ndim < 2:
        fail(f"data must have rank >= 2, found {show_type(t)}")
    return t


def _trilu_ref(x, attrs):
    return np.triu(x, attrs.k) if attrs.upper else np.tril(x, attrs.k)


register_op("trilu", rel=_trilu_rel, ref=_trilu_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=1, attrs=TriluAttrs)


# ---------------------------------------------------------------- einsum


@dataclasses.dataclass(frozen=True)
class EinsumAttrs(Attrs):
    equation: str = ""

    def __post_init__(self):
        if not isinstance(self.equation, str) or not self.equation:
            raise ValueError(f"equation must be a non-empty string, found {self.equation!r}")
        set_fields(self, equation=self.equation.replace(" ", ""))


def expand_einsum(equation: str, ranks) -> tuple[list[str], str]:
    """(input subscripts, output subscripts) with every ``...`` replaced by letters the
    equation does not use (aligned to the right, as numpy broadcasts them); raises
    ``ValueError`` naming what does not fit."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"equation {equation!r} has {len(terms)} operand(s), "
                         f"found {len(ranks)} input(s)")
    used = set(equation) - set(".,->")
    bad = sorted(c for c in used if c not in string.ascii_letters)
    if bad:
        raise ValueError(f"equation {equation!r} has invalid subscript {bad[0]!r}")
    spare = [c for c in string.ascii_letters if c not in used]
    n_ell = 0
    for term, rank in zip(terms, ranks):
        if "..." in term:
            n_ell = max(n_ell, rank - len(term.replace("...", "")))
    ell = "".join(spare[:n_ell])
    out_terms = []
    for i, (term, rank) in enumerate(zip(terms, ranks)):
        if term.count("...") > 1 or "." in term.replace("...", ""):
            raise ValueError(f"operand {i} of {equation!r} has a malformed ellipsis")
        named = len(term.replace("...", ""))
        if "..." in term:
            if rank < named:
                raise ValueError(f"operand {i} ({term!r}) needs rank >= {named}, found {rank}")
            term = term.replace("...", ell[n_ell - (rank - named):] if rank > named else "")
        elif named != rank:
            raise ValueError(f"operand {i} ({term!r}) has {named} subscript(s) but rank {rank}")
        out_terms.append(term)
    if arrow:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise ValueError(f"the output of {equation!r} has a malformed ellipsis")
        out = rhs.replace("...", ell)
        inputs = set("".join(out_terms))
        missing = [c for c in out if c not in inputs]
        if missing or len(set(out)) != len(out):
            raise ValueError(f"output subscripts of {equation!r} must be distinct input "
                             f"subscripts")
    else:
        counts = {c: "".join(out_terms).count(c) for c in set("".join(out_terms))}
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return out_terms, out


def einsum_dims(terms, shapes, ellipsis_letters="") -> dict:
    """letter -> dim, checking that repeated letters agree (size 1 broadcasts)."""
    dims: dict = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        for c, d in zip(term, shape):
            if c not in dims:
                dims[c] = d
                continue
            merged = broadcast_dim(dims[c], d)
            if merged is None:
                raise ValueError(f"subscript {c!r} of operand {i} has size {d}, "
                                 f"but {dims[c]} elsewhere")
            dims[c] = merged
    return dims


def _einsum_rel(types, attrs):
    ts = tuple_of_tensors(types[0])
    if not ts:
        fail("einsum needs at least one operand")
    for t in ts[1:]:
        if t.dtype != ts[0].dtype:
            fail(f"dtype mismatch: operands are {', '.join(show_type(t) for t in ts)}")
    try:
        terms, out = expand_einsum(attrs.equation, [t.ndim for t in ts])
        dims = einsum_dims(terms, [t.shape for t in ts])
    except ValueError as exc:
        fail(str(exc))
    return TensorType(tuple(dims[c] for c in out), ts[0].dtype)


def _einsum_ref(xs, attrs):
    terms, out = expand_einsum(attrs.equation, [x.ndim for x in xs])
    eq = ",".join(terms) + "->" + out
    if xs[0].dtype.isbuiltin != 1:  # bfloat16 (ml_dtypes): numpy's einsum lacks it
        return np.asarray(np.einsum(eq, *[x.astype("float32") for x in xs])).astype(
            xs[0].dtype)
    return np.asarray(np.einsum(eq, *xs)).astype(xs[0].dtype)


register_op("einsum", rel=_einsum_rel, ref=_einsum_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, arg_names=("data",), attrs=EinsumAttrs)


# ---------------------------------------------------------------- one_hot


@dataclasses.dataclass(frozen=True)
class OneHotAttrs(Attrs):
    """A new axis of length ``depth`` at ``axis`` (-1: last): ``on_value`` where it equals
    the index, ``off_value`` elsewhere (an index outside [0, depth) is all off)."""

    depth: int = 1
    axis: int = -1
    dtype: str = "float32"

    def __post_init__(self):
        depth = attr_int(self.depth, "depth")
        if depth < 0:
            raise ValueError(f"depth must be >= 0, found {depth}")
        set_fields(self, depth=depth, axis=attr_int(self.axis, "axis"),
                   dtype=attr_dtype(self.dtype))


def one_hot_axis(axis: int, ndim: int) -> int:
    if not -ndim - 1 <= axis <= ndim:
        fail(f"axis {axis} is out of range for the new axis of indices of rank {ndim} "
             f"(expected {-ndim - 1} <= axis <= {ndim})")
    return axis + ndim + 1 if axis < 0 else axis


def _one_hot_rel(types, attrs):
    idx, on, off = tensors(types, ("indices", "on_value", "off_value"))
    if not is_int(idx.dtype):
        fail(f"indices must have an integer dtype, found {show_type(idx)}")
    for t, what in ((on, "on_value"), (off, "off_value")):
        if t.ndim != 0:
            fail(f"{what} must be a scalar (0-d) tensor, found {show_type(t)}")
    axis = one_hot_axis(attrs.axis, idx.ndim)
    shape = idx.shape[:axis] + (attrs.depth,) + idx.shape[axis:]
    return TensorType(shape, attrs.dtype)


def _one_hot_ref(idx, on, off, attrs):
    axis = attrs.axis + idx.ndim + 1 if attrs.axis < 0 else attrs.axis
    hit = np.expand_dims(idx, axis) == np.arange(attrs.depth).reshape(
        [-1 if k == axis else 1 for k in range(idx.ndim + 1)])
    return cast_values(np.where(hit, on, off), attrs.dtype)


register_op("one_hot", rel=_one_hot_rel, ref=_one_hot_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=3, arg_names=("indices", "on_value", "off_value"), attrs=OneHotAttrs)


# ---------------------------------------------------------------- arange


@dataclasses.dataclass(frozen=True)
class ArangeAttrs(Attrs):
    """``start + step * i`` for ``i < ceil((stop - start) / step)``, in ``dtype``."""

    start: float = 0.0
    stop: float = 0.0
    step: float = 1.0
    dtype: str = "float32"

    def __post_init__(self):
        vals = {}
        for name in ("start", "stop", "step"):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
                raise TypeError(f"{name} must be a number, found {v!r}")
            if not math.isfinite(float(v)):
                raise ValueError(f"{name} must be finite, found {v!r}")
            vals[name] = float(v)
        if vals["step"] == 0:
            raise ValueError("step must not be 0")
        set_fields(self, dtype=attr_dtype(self.dtype), **vals)


def arange_length(attrs) -> int:
    return max(int(math.ceil((attrs.stop - attrs.start) / attrs.step)), 0)


def _arange_rel(types, attrs):
    return TensorType((arange_length(attrs),), attrs.dtype)


def _arange_ref(attrs):
    n = arange_length(attrs)
    if is_float(attrs.dtype):
        return (attrs.start + attrs.step * np.arange(n, dtype="float64")).astype(attrs.dtype)
    return (int(attrs.start) + int(attrs.step) * np.arange(n, dtype="int64")).astype(
        attrs.dtype)


register_op("arange", rel=_arange_rel, ref=_arange_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=0, arg_names=(), attrs=ArangeAttrs)


# ---------------------------------------------------------------- Relay-style constructors


def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """The ``k`` largest (``is_ascend``: smallest) along ``axis``; a (values, indices)
    tuple-typed call for ``ret_type="both"``."""
    return call("topk", [data], k=k, axis=axis, ret_type=ret_type, is_ascend=is_ascend,
                dtype=dtype)


def sort(data, axis=-1, is_ascend=True):
    """Stable sort along ``axis``."""
    return call("sort", [data], axis=axis, is_ascend=is_ascend)


def argsort(data, axis=-1, is_ascend=True, dtype="int32"):
    """Indices of a stable sort along ``axis``."""
    return call("argsort", [data], axis=axis, is_ascend=is_ascend, dtype=dtype)


def cumsum(data, axis=None, dtype=None, exclusive=False, reverse=False):
    """Running sum along ``axis`` (the flattened data when None)."""
    return call("cumsum", [data], axis=axis, dtype=dtype, exclusive=exclusive, reverse=reverse)


def cumprod(data, axis=None, dtype=None, exclusive=False, reverse=False):
    """Running product along ``axis`` (the flattened data when None)."""
    return call("cumprod", [data], axis=axis, dtype=dtype, exclusive=exclusive,
                reverse=reverse)


def trilu(data, k=0, upper=True):
    """Keep the upper or lower triangle of the last two axes."""
    return call("trilu", [data], k=k, upper=upper)


def tril(data, k=0):
    return trilu(data, k, upper=False)


def triu(data, k=0):
    return trilu(data, k, upper=True)


def einsum(data, equation):
    """numpy's ``einsum`` over a list of tensors (or a tuple-typed expression)."""
    if not isinstance(data, Expr):
        data = Tuple([as_expr(d) for d in data])
    return call("einsum", [data], equation=equation)


def one_hot(indices, on_value, off_value, depth, axis=-1, dtype="float32"):
    """One-hot encode ``indices`` into a new axis of length ``depth``."""
    return call("one_hot", [indices, as_expr(on_value, dtype), as_expr(off_value, dtype)],
                depth=depth, axis=axis, dtype=dtype)


def _number(v, what):
    if isinstance(v, Constant):
        if v.data.ndim != 0:
            raise OpError(f"arange: {what} must be a scalar, found shape {v.data.shape}")
        return v.data.item()
    return v


def arange(start, stop=None, step=1, dtype="float32"):
    """numpy's ``arange``; bounds are numbers or scalar constants (the length is static)."""
    start, stop, step = (_number(v, w) for v, w in ((start, "start"), (stop, "stop"),
                                                    (step, "step")))
    if stop is None:
        start, stop = 0, start
    return call("arange", [], start=start, stop=stop, step=step, dtype=dtype)


__all__ = ["arange", "argsort", "cumprod", "cumsum", "einsum", "one_hot", "sort", "topk",
           "tril", "trilu", "triu"]
