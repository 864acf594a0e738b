"""Computes of the ``nn`` ops: dense/matmul/batch_matmul, softmax, normalisations,
dropout. (Activations are in ``elementwise.py``; pools and convolutions have their own
modules.)

Softmax, log_softmax and layer_norm in float32/float64 are one call of a hand-written
C routine each (``te.extern``; ``codegen/routines_norm.py``): one pass over memory with
each row kept in cache for its sweeps, one parallel loop. Other dtypes use the
tensor-expression computes below (row statistics as separate stages).

Products accumulate in the output dtype for floats (float32, as TVM and BLAS do: tests
of these ops use a tolerance of 1e-4) and in 64 bits for integers (wrapping on the cast
back exactly as the reference does).
"""

from __future__ import annotations

from .. import expr as E
from .. import tensor as te
from ..tensor import Tensor, compute, extern
from .common import COMPUTE, broadcast_index, float_acc, norm_axis, prod

_ROUTINE_SUFFIX = {"float32": "f32", "float64": "f64"}  # dtypes with a C routine


def product_acc(dtype: str) -> str:
    if E.is_float(dtype):
        return "float32" if dtype == "float16" else dtype
    return "uint64" if E.is_unsigned(dtype) else "int64"


def _dot(a_read, b_read, k_extent, out_dtype: str) -> E.Expr:
    """``sum_k a(k) * b(k)`` accumulated in ``product_acc(out_dtype)``."""
    acc = product_acc(out_dtype)
    k = te.reduce_axis(k_extent, "k")
    src = E.cast(acc, a_read(k.var)) * E.cast(acc, b_read(k.var))
    return E.cast(out_dtype, te.sum(src, k, dtype=acc))


@COMPUTE.register("nn.dense")
def dense(attrs, inputs, out):
    data, weight = inputs

    def fn(*i):
        rows, j = i[:-1], i[-1]
        return _dot(lambda k: data[rows + (k,)], lambda k: weight[j, k], data.shape[-1],
                    out.dtype)

    return compute(out.shape, fn, name="dense", tag="dense")


@COMPUTE.register("nn.contrib_dense_pack")
def dense_pack(attrs, inputs, out):
    """``out[.., j] = sum_k data[.., k] * weight[j // n, k, j % n]``: the weight is in the
    panel layout ``NC[n]n`` (``op/nn/dense_pack.py``), which ``tir/matmul.py`` reads in
    place, ``n`` columns per register tile."""
    data, weight = inputs
    n = E.const_value(weight.shape[2])
    if n is None:
        raise E.TEError("contrib_dense_pack needs a static weight block")

    def fn(*i):
        rows, j = i[:-1], i[-1]
        jo, jj = E.truncdiv(j, E.IntImm(n)), E.truncmod(j, E.IntImm(n))
        return _dot(lambda k: data[rows + (k,)], lambda k: weight[jo, k, jj], data.shape[-1],
                    out.dtype)

    return compute(out.shape, fn, name="dense_pack", tag="dense")


@COMPUTE.register("nn.matmul")
def matmul(attrs, inputs, out):
    a, b = inputs
    ta, tb = attrs.transpose_a, attrs.transpose_b
    k_extent = a.shape[-2] if ta else a.shape[-1]

    def fn(*i):
        j = i[-1]
        if ta:
            lead, m = i[:-2], i[-2]
            read_a = lambda k: a[lead + (k, m)]  # noqa: E731
        else:
            read_a = lambda k: a[i[:-1] + (k,)]  # noqa: E731
        read_b = (lambda k: b[j, k]) if tb else (lambda k: b[k, j])
        return _dot(read_a, read_b, k_extent, out.dtype)

    return compute(out.shape, fn, name="matmul", tag="dense")


@COMPUTE.register("nn.batch_matmul")
def batch_matmul(attrs, inputs, out):
    a, b = inputs
    ta, tb = attrs.transpose_a, attrs.transpose_b
    k_extent = a.shape[1] if ta else a.shape[2]

    def batch(t, n):
        return broadcast_index(t.shape[0], out.shape[0], n)

    def fn(n, m, j):
        na, nb = batch(a, n), batch(b, n)
        read_a = (lambda k: a[na, k, m]) if ta else (lambda k: a[na, m, k])
        read_b = (lambda k: b[nb, j, k]) if tb else (lambda k: b[nb, k, j])
        return _dot(read_a, read_b, k_extent, out.dtype)

    return compute(out.shape, fn, name="batch_matmul", tag="dense")


def _axis_stats(x: Tensor, axis: int):
    """Row maximum and ``sum(exp(x - max))`` along ``axis``, both keepdims."""
    keep = tuple(E.IntImm(1) if k == axis else d for k, d in enumerate(x.shape))

    def along(i, r):
        return x[i[:axis] + (r,) + i[axis + 1:]]

    def row_max(*i):
        r = te.reduce_axis(x.shape[axis], "r")
        return te.max(along(i, r.var), r)

    m = compute(keep, row_max, name="softmax_max", tag="reduce")
    acc = float_acc(x.dtype)

    def row_sum(*i):
        r = te.reduce_axis(x.shape[axis], "r")
        return te.sum(E.exp(along(i, r.var) - m[i]), r, acc_dtype=acc, dtype=acc)

    s = compute(keep, row_sum, name="softmax_sum", tag="reduce")
    return m, s


def _at_keep(i, axis):
    return i[:axis] + (E.IntImm(0),) + i[axis + 1:]


def _rows(x: Tensor, axis: int) -> tuple:
    """``x`` viewed as ``(outer, n, inner)`` around ``axis``."""
    return prod(x.shape[:axis]), x.shape[axis], prod(x.shape[axis + 1:])


def _softmax_routine(x: Tensor, axis: int, out, log: bool) -> Tensor:
    routine = f"rl_softmax_{_ROUTINE_SUFFIX[x.dtype]}"
    name = "log_softmax" if log else "softmax"
    return extern([(out.shape, out.dtype)], [x], routine, (*_rows(x, axis), int(log)),
                  name=name, tag="softmax")[0]


@COMPUTE.register("nn.softmax")
def softmax(attrs, inputs, out):
    x = inputs[0]
    axis = norm_axis(attrs.axis, x.ndim)
    if x.dtype in _ROUTINE_SUFFIX:
        return _softmax_routine(x, axis, out, log=False)
    m, s = _axis_stats(x, axis)

    def fn(*i):
        j = _at_keep(i, axis)
        return E.cast(x.dtype, E.cast(s.dtype, E.exp(x[i] - m[j])) / s[j])

    return compute(out.shape, fn, name="softmax", tag="softmax")


@COMPUTE.register("nn.log_softmax")
def log_softmax(attrs, inputs, out):
    x = inputs[0]
    axis = norm_axis(attrs.axis, x.ndim)
    if x.dtype in _ROUTINE_SUFFIX:
        return _softmax_routine(x, axis, out, log=True)
    m, s = _axis_stats(x, axis)

    def fn(*i):
        j = _at_keep(i, axis)
        return x[i] - m[j] - E.cast(x.dtype, E.log(s[j]))

    return compute(out.shape, fn, name="log_softmax", tag="softmax")


@COMPUTE.register("nn.dropout")
def dropout(attrs, inputs, out):
    x = inputs[0]
    return [compute(out[0].shape, lambda *i: x[i], name="dropout", tag="elemwise"),
            compute(out[1].shape, lambda *i: E.const(1, x.dtype), name="dropout_mask",
                    tag="elemwise")]


def _affine(y: E.Expr, c, gamma, beta, attrs) -> E.Expr:
    if attrs.scale:
        y = y * gamma[c]
    if attrs.center:
        y = y + beta[c]
    return y


@COMPUTE.register("nn.batch_norm")
def batch_norm(attrs, inputs, out):
    x, gamma, beta, mean, var = inputs
    axis = norm_axis(attrs.axis, x.ndim)
    eps = E.const(attrs.epsilon, x.dtype)

    def fn(*i):
        c = i[axis]
        y = (x[i] - mean[c]) / E.sqrt(var[c] + eps)
        return _affine(y, c, gamma, beta, attrs)

    y = compute(out[0].shape, fn, name="batch_norm", tag="elemwise")
    copy_mean = compute(out[1].shape, lambda c: mean[c], name="batch_norm_mean",
                        tag="elemwise")
    copy_var = compute(out[2].shape, lambda c: var[c], name="batch_norm_var", tag="elemwise")
    return [y, copy_mean, copy_var]


def _normalise(x: Tensor, reduced, stat_index, source_index, count, eps, name: str):
    """Mean and variance (two passes) of ``x`` over the ``reduced`` extents.

    ``stat_index(i)`` maps an index of ``x`` to the statistics' index; ``source_index(s,
    rvars)`` maps a statistics index and reduce variables back into ``x``.
    Returns ``normalised(i)``: ``(x[i] - mean) / sqrt(var + eps)`` in ``x.dtype``.
    """
    acc = float_acc(x.dtype)
    n = E.cast(acc, count)
    shape = stat_index(None)

    def mean_fn(*s):
        rv = [te.reduce_axis(d, f"r{k}") for k, d in enumerate(reduced)]
        return te.sum(E.cast(acc, x[source_index(s, rv)]), rv, dtype=acc) / n

    mean = compute(shape, mean_fn, name=f"{name}_mean", tag="reduce")

    def var_fn(*s):
        rv = [te.reduce_axis(d, f"r{k}") for k, d in enumerate(reduced)]
        d = E.cast(acc, x[source_index(s, rv)]) - mean[s]
        return te.sum(d * d, rv, dtype=acc) / n

    var = compute(shape, var_fn, name=f"{name}_var", tag="reduce")

    def normalised(i):
        s = stat_index(i)
        y = (E.cast(acc, x[i]) - mean[s]) / E.sqrt(var[s] + E.const(eps, acc))
        return E.cast(x.dtype, y)

    return normalised


@COMPUTE.register("nn.layer_norm")
def layer_norm(attrs, inputs, out):
    x, gamma, beta = inputs
    axis = norm_axis(attrs.axis, x.ndim)
    if x.dtype in _ROUTINE_SUFFIX:
        scalars = (*_rows(x, axis), float(attrs.epsilon), int(attrs.scale), int(attrs.center))
        return extern([(out.shape, out.dtype)], [x, gamma, beta],
                      f"rl_layer_norm_{_ROUTINE_SUFFIX[x.dtype]}", scalars, name="layer_norm",
                      tag="norm")[0]

    def stat_index(i):
        if i is None:
            return tuple(E.IntImm(1) if k == axis else d for k, d in enumerate(x.shape))
        return _at_keep(i, axis)

    def source_index(s, rv):
        return s[:axis] + (rv[0].var,) + s[axis + 1:]

    norm = _normalise(x, [x.shape[axis]], stat_index, source_index, x.shape[axis],
                      attrs.epsilon, "layer_norm")
    return compute(out.shape, lambda *i: _affine(norm(i), i[axis], gamma, beta, attrs),
                   name="layer_norm", tag="norm")


def _per_sample(x: Tensor, axis: int, groups: int):
    """Statistics per (sample, group) over every axis but 0 and ``axis``'s group."""
    others = [k for k in range(1, x.ndim) if k != axis]
    cg = E.truncdiv(x.shape[axis], groups)
    reduced = [x.shape[k] for k in others]
    if E.const_value(x.shape[axis]) != groups:
        reduced.append(cg)
    count = E.IntImm(1)
    for d in reduced:
        count = count * d

    def stat_index(i):
        if i is None:
            return (x.shape[0], E.IntImm(groups))
        return (i[0], E.truncdiv(i[axis], cg))

    def source_index(s, rv):
        idx = [s[0]] + [None] * (x.ndim - 1)
        for k, r in zip(others, rv):
            idx[k] = r.var
        idx[axis] = s[1] * cg + rv[len(others)].var if len(rv) > len(others) else s[1]
        return tuple(idx)

    return reduced, stat_index, source_index, count


def _group_like(attrs, inputs, out, groups: int, name: str):
    x, gamma, beta = inputs
    axis = norm_axis(attrs.axis, x.ndim)
    reduced, stat_index, source_index, count = _per_sample(x, axis, groups)
    norm = _normalise(x, reduced, stat_index, source_index, count, attrs.epsilon, name)
    return compute(out.shape, lambda *i: _affine(norm(i), i[axis], gamma, beta, attrs),
                   name=name, tag="norm")


@COMPUTE.register("nn.instance_norm")
def instance_norm(attrs, inputs, out):
    x = inputs[0]
    channels = E.const_value(x.shape[norm_axis(attrs.axis, x.ndim)])
    if channels is None:
        raise E.TEError("instance_norm needs a static channel count")
    return _group_like(attrs, inputs, out, int(channels), "instance_norm")


@COMPUTE.register("nn.group_norm")
def group_norm(attrs, inputs, out):
    return _group_like(attrs, inputs, out, attrs.num_groups, "group_norm")


@COMPUTE.register("nn.lrn")
def lrn(attrs, inputs, out):
    """A window sum of squares along ``axis`` (bounds-checked), then one ``pow``."""
    x = inputs[0]
    axis = norm_axis(attrs.axis, x.ndim)
    before, _ = attrs.window
    acc = float_acc(x.dtype)

    def fn(*i):
        r = te.reduce_axis(attrs.size, "rc")
        c = i[axis] + r.var - before
        v = E.cast(acc, x[i[:axis] + (c,) + i[axis + 1:]])
        inside = E.logical_and(c >= 0, c < x.shape[axis])
        total = te.sum(E.select(inside, v * v, E.const(0, acc)), [r], dtype=acc)
        scale = E.const(attrs.bias, acc) + E.const(attrs.alpha / attrs.size, acc) * total
        return E.cast(x.dtype, E.cast(acc, x[i]) / E.pow(scale, E.const(attrs.beta, acc)))

    return compute(out.shape, fn, name="lrn", tag="norm")
