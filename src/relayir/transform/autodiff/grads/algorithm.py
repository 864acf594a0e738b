"""Gradients of ``op/algorithm.py`` and ``op/scatter.py``: what a gather reads, the
gradient scatters back (and the reverse); scans run backwards; einsum swaps an
operand with the output in its equation; sorting routes each gradient to the
position its value came from.
"""

from __future__ import annotations

import string

import numpy as np

from ....errors import Error
from ....ir.expr import TupleGetItem, const
from ....op import algorithm as _a
from ....op import reduce as _r
from ....op import scatter as _s
from ....op import tensor as _e
from ....op import transform as _t
from . import GRADIENT
from ._util import dtype_of, shape_of

# integer or boolean outputs, and constants
NON_DIFFERENTIABLE = frozenset({
    "argsort", "arange",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "left_shift", "right_shift",
})


@GRADIENT.register("one_hot")
def _one_hot(call, out, g):
    """``on_value`` gets the adjoint summed where the index hits, ``off_value`` elsewhere."""
    dtype, a = dtype_of(call), call.attrs
    hit = _a.one_hot(call.args[0], const(1, dtype), const(0, dtype), a.depth, a.axis, dtype)
    on = _r.sum(_e.multiply(g, hit))
    return [None, on, _e.subtract(_r.sum(g), on)]


def _scatter_add_along(x, indices, g, axis):
    return _s.scatter_elements(_t.zeros_like(x), indices, g, axis=axis, reduction="add")


@GRADIENT.register("gather")
def _gather(call, out, g):
    x, indices = call.args
    return [_scatter_add_along(x, indices, g, call.attrs.axis), None]


def _with_batch_rows(indices, batch_dims: int):
    """Index tuples (M, B..., Y...) with the batch positions prepended as rows."""
    shape = shape_of(indices)
    dtype = dtype_of(indices)
    rows = []
    for k in range(batch_dims):
        view = [1] * len(shape)
        view[1 + k] = shape[1 + k]
        row = _t.reshape(_a.arange(shape[1 + k], dtype=dtype), view)
        rows.append(_t.broadcast_to(row, (1,) + shape[1:]))
    return _t.concatenate([*rows, indices], axis=0) if rows else indices


@GRADIENT.register("gather_nd")
def _gather_nd(call, out, g):
    x, indices = call.args
    idx = _with_batch_rows(indices, call.attrs.batch_dims)
    return [_s.scatter_nd(_t.zeros_like(x), idx, g, mode="add"), None]


def _scan_setup(call, g):
    x = call.args[0]
    a = call.attrs
    dtype = dtype_of(x)
    if not dtype.startswith("float"):
        raise Error(f"gradient of {call.op.name}: data must be float, found {dtype}")
    axis = 0 if a.axis is None else a.axis
    if dtype_of(call) != dtype:
        g = _t.cast(g, dtype)
    return x, a, axis, g


def _unflatten(call, grad):
    return _t.reshape(grad, shape_of(call.args[0])) if call.attrs.axis is None else grad


@GRADIENT.register("cumsum")
def _cumsum(call, out, g):
    x, a, axis, g = _scan_setup(call, g)
    back = _a.cumsum(g, axis=axis, exclusive=a.exclusive, reverse=not a.reverse)
    return [_unflatten(call, back)]


@GRADIENT.register("cumprod")
def _cumprod(call, out, g):
    """d out_k / d x_j = out_k / x_j for every j the product k includes: exact where x
    has no zeros (like the textbook rule; a zero gives inf/nan)."""
    x, a, axis, g = _scan_setup(call, g)
    y = out if dtype_of(call) == dtype_of(x) else _t.cast(out, dtype_of(x))
    back = _a.cumsum(_e.multiply(g, y), axis=axis, exclusive=a.exclusive,
                     reverse=not a.reverse)
    flat_x = _t.reshape(x, (-1,)) if a.axis is None else x
    return [_unflatten(call, _e.divide(back, flat_x))]


@GRADIENT.register("trilu")
def _trilu(call, out, g):
    return [_a.trilu(g, call.attrs.k, call.attrs.upper)]


@GRADIENT.register("einsum")
def _einsum(call, out, g):
    """d/d operand i: einsum of the output gradient with the other operands, giving
    operand i's subscripts; subscripts only operand i has are broadcast back, and a
    repeated subscript (a diagonal) is spread back onto the diagonal by identities."""
    fields = call.args[0].checked_type.fields
    shapes = [tuple(int(d) for d in f.shape) for f in fields]
    terms, out_term = _a.expand_einsum(call.attrs.equation, [len(s) for s in shapes])
    full = _a.einsum_dims(terms, shapes)
    operands = [TupleGetItem(call.args[0], i) for i in range(len(fields))]
    spare = iter(c for c in string.ascii_letters if c not in full)
    grads = []
    for i, term in enumerate(terms):
        unique = "".join(dict.fromkeys(term))
        others = [t for j, t in enumerate(terms) if j != i]
        seen = set(out_term).union(*others)
        kept = "".join(c for c in unique if c in seen)
        eq = ",".join([out_term, *others]) + "->" + kept
        grad = _a.einsum([g, *[o for j, o in enumerate(operands) if j != i]], eq)
        dims = dict(zip(term, shapes[i]))
        if kept != unique:
            grad = _t.reshape(grad, [full[c] if c in kept else 1 for c in unique])
        # an operand's size-1 (broadcast) ellipsis dims: sum the gradient over them
        summed = [k for k, c in enumerate(unique) if dims[c] == 1 != full[c]]
        if summed:
            grad = _r.sum(grad, axis=summed, keepdims=True)
        grad = _t.broadcast_to(grad, [dims[c] for c in unique])
        if unique != term:
            grad = _onto_diagonals(grad, unique, term, dims, spare, dtype_of(call))
        grads.append(grad)
    return [grads]


def _onto_diagonals(grad, unique: str, term: str, dims: dict, spare, dtype: str):
    """``grad`` over ``unique`` subscripts, placed on the diagonals of ``term`` (each
    repeat of a subscript gets a fresh letter tied to the first by an identity)."""
    seen, target, eyes, eye_terms = set(), "", [], []
    for c in term:
        if c in seen:
            fresh = next(spare)
            target += fresh
            eyes.append(const(np.eye(dims[c], dtype=dtype)))
            eye_terms.append(c + fresh)
        else:
            seen.add(c)
            target += c
    return _a.einsum([grad, *eyes], ",".join([unique, *eye_terms]) + "->" + target)


def _route_back(x, indices, g, axis):
    """Each value's gradient to where the value came from (sort, topk)."""
    return _scatter_add_along(x, indices, g, axis)


@GRADIENT.register("topk")
def _topk(call, out, g):
    x = call.args[0]
    a = call.attrs
    if a.ret_type == "indices":
        return [None]
    if a.ret_type == "both":
        g, indices = g[0], TupleGetItem(out, 1)
    else:
        indices = _a.topk(x, a.k, a.axis, "indices", a.is_ascend, a.dtype)
    return [_route_back(x, indices, g, a.axis)]


@GRADIENT.register("sort")
def _sort(call, out, g):
    x = call.args[0]
    indices = _a.argsort(x, call.attrs.axis, call.attrs.is_ascend)
    return [_route_back(x, indices, g, call.attrs.axis)]


def _scatter_mode(call, mode):
    if mode not in ("update", "add"):
        raise Error(f"gradient of {call.op.name} with reduction {mode!r} is not supported "
                    f"(only 'update' and 'add')")


@GRADIENT.register("scatter_elements")
def _scatter_elements(call, out, g):
    """Assumes distinct indices for "update" (ONNX leaves duplicates undefined)."""
    x, indices, updates = call.args
    a = call.attrs
    _scatter_mode(call, a.reduction)
    gx = g if a.reduction == "add" else _s.scatter_elements(
        g, indices, _t.zeros_like(updates), axis=a.axis)
    return [gx, None, _s.gather(g, a.axis, indices)]


@GRADIENT.register("segment_sum")
def _segment_sum(call, out, g):
    """Each data row gets its segment's adjoint; rows past the last id get zero."""
    x, ids = call.args
    gx = _t.take(g, ids, axis=0)
    rows, used = shape_of(x)[0], shape_of(ids)[0]
    if used < rows:
        gx = _t.concatenate([gx, _t.zeros((rows - used, *shape_of(x)[1:]), dtype_of(x))], 0)
    return [gx, None]


@GRADIENT.register("scatter_nd")
def _scatter_nd(call, out, g):
    x, indices, updates = call.args
    _scatter_mode(call, call.attrs.mode)
    gx = g if call.attrs.mode == "add" else _s.scatter_nd(g, indices, _t.zeros_like(updates))
    return [gx, None, _s.gather_nd(g, indices)]
