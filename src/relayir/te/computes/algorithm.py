"""Computes of ``op/algorithm.py`` and ``op/bitwise.py``.

Loop IR has no sequential scan, so ``cumsum``/``cumprod`` are a masked reduction over
the scanned axis (quadratic in its length, exact). Sorting needs data-dependent
control flow: those run through their numpy references (``declare_reference_only``).
"""

from __future__ import annotations

import numpy as np

from ...op.algorithm import arange_length, expand_einsum, one_hot_axis
from .. import expr as E
from .. import tensor as te
from ..tensor import compute
from .common import (
    COMPUTE,
    broadcast_index,
    declare_reference_only,
    elementwise,
    float_acc,
    norm_axis,
    product_acc,
    static,
    unravel,
)

for _op in ("topk", "sort", "argsort"):
    declare_reference_only(_op, "sorting needs data-dependent control flow")
for _op in ("random.threefry_generate", "random.threefry_split"):
    declare_reference_only(_op, "no C compute for the Threefry rounds yet")


def _scan(combiner: str, identity: int):
    def rule(attrs, inputs, out):
        x = inputs[0]
        dtype = out.dtype
        acc = float_acc(dtype) if combiner == "sum" else product_acc(dtype)
        if combiner == "prod" and dtype == "float16":
            acc = dtype  # numpy rounds each step of a float16 cumprod (and its subnormals)
        flat = attrs.axis is None
        axis = 0 if flat else norm_axis(attrs.axis, x.ndim)
        n = out.shape[axis]

        def kept(i, name):
            """The scanned axis ``k`` and, for output index ``i``, whether ``k`` is in its
            prefix and the element there."""
            k = te.reduce_axis(n, name)
            # a reverse scan runs from the end, as numpy's (flip, scan, flip): a float
            # product's rounding, underflow and inf * 0 follow the order (fuzz seed
            # 51118: [-inf, 5e-324, 5e-324] gives NaN first, not -inf)
            j = (n - 1) - k.var if attrs.reverse else k.var
            if attrs.reverse:
                keep = (j > i[axis]) if attrs.exclusive else (j >= i[axis])
            else:
                keep = (j < i[axis]) if attrs.exclusive else (j <= i[axis])
            read = x[unravel(j, x.shape)] if flat else x[i[:axis] + (j,) + i[axis + 1:]]
            return k, keep, read

        def body(*i):
            k, keep, read = kept(i, "k")
            value = E.cast(acc, read)
            src = E.select(keep, value, E.const(identity, acc))
            total = E.Reduce(combiner, src, (k,), dtype, acc)
            if combiner != "sum" or not E.is_float(dtype):
                return total
            # numpy accumulates from the first element, not from +0.0: a prefix of -0.0
            # sums to -0.0 (the sum from +0.0 gives +0.0; any other zero is +0.0 as well)
            k2, keep2, read2 = kept(i, "k2")
            zero = E.const(0.0, read2.dtype)
            negative_zero = E.logical_and(E.equal(read2, zero),  # 1 / -0.0 is -inf
                                          E.const(1.0, read2.dtype) / read2 < zero)
            all_negative = E.Reduce("and", E.select(keep2, negative_zero, E.const(1, "bool")),
                                    (k2,), "bool", "bool")
            some = (i[axis] > 0) if attrs.exclusive and not attrs.reverse else (
                i[axis] < n - 1) if attrs.exclusive else E.const(1, "bool")
            return E.select(E.logical_and(all_negative, some), E.const(-0.0, dtype), total)

        return compute(out.shape, body, name=combiner.replace("sum", "cumsum").replace(
            "prod", "cumprod"), tag="reduce")

    return rule


COMPUTE.register("cumsum")(_scan("sum", 0))
COMPUTE.register("cumprod")(_scan("prod", 1))


@COMPUTE.register("trilu")
def trilu(attrs, inputs, out):
    x = inputs[0]
    zero = E.const(0, x.dtype)

    def fn(*i):
        row, col = i[-2], i[-1]
        keep = (col - row >= attrs.k) if attrs.upper else (col - row <= attrs.k)
        return E.select(keep, x[i], zero)

    return compute(out.shape, fn, name="trilu", tag="injective")


def _letter_extents(terms, shapes, out_term, out_shape) -> dict:
    """letter -> the extent its loop runs over: the output's dim for an output letter;
    for a summed one a static extent other than 1 if an operand has one, else a
    symbolic dim, else 1 (the type relation has checked that they agree)."""
    dims = dict(zip(out_term, out_shape))
    rank = {}  # 0: static 1, 1: symbolic, 2: static and not 1
    for term, shape in zip(terms, shapes):
        for c, d in zip(term, shape):
            if c in out_term:
                continue
            v = static(d)
            r = 1 if v is None else (0 if v == 1 else 2)
            if r > rank.get(c, -1):
                rank[c], dims[c] = r, (d if v is None else v)
    return dims


@COMPUTE.register("einsum")
def einsum(attrs, inputs, out):
    xs = inputs[0]
    terms, out_term = expand_einsum(attrs.equation, [x.ndim for x in xs])
    dims = _letter_extents(terms, [x.shape for x in xs], out_term, out.shape)
    summed = sorted({c for t in terms for c in t} - set(out_term))
    dtype = xs[0].dtype
    acc = float_acc(dtype) if dtype != "bool" else "bool"

    def fn(*i):
        rvars = {c: te.reduce_axis(E.as_index(dims[c]), f"r{c}") for c in summed}
        var = {**dict(zip(out_term, i)), **{c: r.var for c, r in rvars.items()}}
        term = None
        for x, t in zip(xs, terms):
            idx = tuple(broadcast_index(d, dims[c], var[c]) for c, d in zip(t, x.shape))
            read = E.cast(acc, x[idx])
            term = read if term is None else term * read
        if not summed:
            if len(xs) > 1 and E.is_float(acc):  # numpy sums products into a zeroed
                term = term + E.const(0.0, acc)  # output: -0.0 * 5 gives +0.0 there
            return E.cast(dtype, term)
        return E.Reduce("sum", term, tuple(rvars[c] for c in summed), dtype, acc)

    return compute(out.shape, fn, name="einsum", tag="reduce")


@COMPUTE.register("one_hot")
def one_hot(attrs, inputs, out):
    idx, on, off = inputs
    axis = one_hot_axis(attrs.axis, idx.ndim)

    def fn(*i):
        hit = E.equal(E.cast(E.INDEX, idx[i[:axis] + i[axis + 1:]]), i[axis])
        return E.select(hit, E.cast(out.dtype, on[()]), E.cast(out.dtype, off[()]))

    return compute(out.shape, fn, name="one_hot", tag="injective")


@COMPUTE.register("arange")
def arange(attrs, inputs, out):
    assert static(out.shape[0]) == arange_length(attrs)
    if E.is_float(out.dtype):
        def fn(i):
            v = E.const(attrs.start, "float64") + E.const(attrs.step, "float64") * E.cast(
                "float64", i)
            return E.cast(out.dtype, v)
    else:
        def fn(i):
            return E.cast(out.dtype, i * int(attrs.step) + int(attrs.start))

    return compute(out.shape, fn, name="arange", tag="injective")


def _bitwise(bit_op):
    def rule(attrs, inputs, out):
        return elementwise(out, inputs, bit_op, name=rule.__name__)

    return rule


for _name, _bit in (("bitwise_and", E.BitAnd), ("bitwise_or", E.BitOr),
                    ("bitwise_xor", E.BitXor)):
    COMPUTE.register(_name)(_bitwise(_bit))


def _shift(left: bool):
    """``x << s`` / ``x >> s`` with numpy's results where C's are undefined: a shift by
    a negative amount or by the bit width or more gives 0 (or -1 for a negative ``x``
    shifted right)."""

    def fn(x, s):
        bits = np.dtype(x.dtype).itemsize * 8
        undefined = E.Or(E.LT(s, E.const(0, s.dtype)), E.GE(s, E.const(bits, s.dtype)))
        if left or E.is_unsigned(x.dtype):
            beyond = E.const(0, x.dtype)
        else:
            beyond = E.Select(E.LT(x, E.const(0, x.dtype)), E.const(-1, x.dtype),
                              E.const(0, x.dtype))
        safe = E.Select(undefined, E.const(0, s.dtype), s)
        shifted = E.ShiftLeft(x, safe) if left else E.ShiftRight(x, safe)
        return E.Select(undefined, beyond, shifted)

    return fn


COMPUTE.register("left_shift")(lambda attrs, inputs, out: elementwise(
    out, inputs, _shift(True), name="left_shift"))
COMPUTE.register("right_shift")(lambda attrs, inputs, out: elementwise(
    out, inputs, _shift(False), name="right_shift"))


@COMPUTE.register("bitwise_not")
def bitwise_not(attrs, inputs, out):
    x = inputs[0]
    if x.dtype == "bool":
        return compute(out.shape, lambda *i: E.Not(x[i]), name="bitwise_not",
                       tag="elemwise")
    if E.is_unsigned(x.dtype):  # ~x = max - x
        return compute(out.shape, lambda *i: E.max_value(x.dtype) - x[i], name="bitwise_not",
                       tag="elemwise")
    # ~x = -1 - x in two's complement (never overflows, unlike -x - 1)
    return compute(out.shape, lambda *i: E.const(-1, x.dtype) - x[i], name="bitwise_not",
                   tag="elemwise")
