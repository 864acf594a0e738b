"""Every op's gradient rule against central finite differences (float64), torch.autograd
where torch has the op, and the completeness of the gradient table."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as r
from relayir.ir.op import get_op, list_ops
from relayir.transform.autodiff import GRADIENT, NON_DIFFERENTIABLE, gradient, gradient_status

F = "float64"


def rnd(*shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(F)


def pos(*shape, seed=0):
    return rnd(*shape, seed=seed, low=0.5, high=2.0)


def ints(values):
    return np.asarray(values, dtype="int32")


def _build(op_name, inputs, attrs, weights):
    """fn(float inputs) = op(...) * weights (a fixed random cotangent, per output)."""
    params, args, feeds = [], [], []
    for i, x in enumerate(inputs):
        if isinstance(x, list):
            vs = [r.var(f"x{i}_{j}", shape=a.shape, dtype=F) for j, a in enumerate(x)]
            params += vs
            feeds += x
            args.append(r.Tuple(vs))
        elif x.dtype.kind == "f":
            v = r.var(f"x{i}", shape=x.shape, dtype=F)
            params.append(v)
            feeds.append(x)
            args.append(v)
        else:
            args.append(r.const(x))
    call = r.op.call(op_name, args, **(attrs or {}))
    if isinstance(weights, list):
        body = r.Tuple([r.TupleGetItem(call, i) * r.const(w) if w is not None
                        else r.TupleGetItem(call, i) for i, w in enumerate(weights)])
    else:
        body = call * r.const(weights)
    return r.Function(params, body), feeds


def _forward_np(op_name, inputs, attrs, weights):
    op = get_op(op_name)
    call = r.op.call(op_name, [r.const(np.zeros(1))] * op.num_inputs, **(attrs or {})) \
        if op.num_inputs > 0 else None
    a = call.attrs if call is not None else None
    out = op.reference(*inputs, a)
    if isinstance(weights, list):
        return sum(float(np.sum(o * w)) for o, w in zip(out, weights) if w is not None)
    return float(np.sum(out * weights))


def _weights(op_name, inputs, attrs):
    op = get_op(op_name)
    a = r.op.call(op_name, [r.const(np.zeros(1))] * op.num_inputs, **(attrs or {})).attrs
    out = op.reference(*inputs, a)
    if isinstance(out, tuple):
        return [rnd(*np.shape(o), seed=7 + i) if np.asarray(o).dtype.kind == "f" else None
                for i, o in enumerate(out)]
    return rnd(*np.shape(out), seed=7)


def numeric_grads(op_name, inputs, attrs, weights, eps=1e-6):
    grads = []
    for k, x in enumerate(inputs):
        arrays = x if isinstance(x, list) else [x]
        for j, a in enumerate(arrays):
            if a.dtype.kind != "f":
                continue
            g = np.zeros_like(a)
            for idx in np.ndindex(a.shape):
                vals = []
                for d in (eps, -eps):
                    b = a.copy()
                    b[idx] += d
                    new = list(inputs)
                    if isinstance(x, list):
                        new[k] = [b if jj == j else aa for jj, aa in enumerate(arrays)]
                    else:
                        new[k] = b
                    vals.append(_forward_np(op_name, new, attrs, weights))
                g[idx] = (vals[0] - vals[1]) / (2 * eps)
            grads.append(g)
    return grads


def symbolic_grads(op_name, inputs, attrs, weights):
    fn, feeds = _build(op_name, inputs, attrs, weights)
    gfn = gradient(fn)
    out = r.create_executor("debug", r.IRModule.from_expr(gfn)).evaluate()(*feeds)
    return [np.asarray(g) for g in out[1]]


X34 = rnd(3, 4)
CASES = [
    ("add", [rnd(3, 4), rnd(4, seed=1)], None),
    ("subtract", [rnd(3, 1), rnd(1, 4, seed=1)], None),
    ("multiply", [rnd(2, 3, 4), rnd(3, 1, seed=1)], None),
    ("divide", [rnd(3, 4), pos(4, seed=1)], None),
    ("power", [pos(3, 4), rnd(3, 4, seed=1)], None),
    ("maximum", [rnd(3, 4), rnd(3, 4, seed=1)], None),
    ("minimum", [rnd(3, 4), rnd(4, seed=1)], None),
    ("mod", [rnd(3, 4) * 3, pos(3, 4, seed=1)], None),
    ("floor_mod", [rnd(3, 4) * 3, pos(3, 4, seed=1)], None),
    *[(n, [X34], None) for n in ("exp", "tanh", "sigmoid", "erf", "sin", "cos", "tan",
                                 "abs", "negative", "copy", "sinh", "cosh", "atan", "asinh")],
    *[(n, [X34 * 0.4], None) for n in ("asin", "acos", "atanh")],
    ("acosh", [pos(3, 4) + 1.1], None),
    *[(n, [pos(3, 4)], None) for n in ("log", "log2", "log10", "sqrt", "rsqrt")],
    ("nn.dense", [rnd(2, 3, 4), rnd(5, 4, seed=1)], None),
    ("nn.matmul", [rnd(3, 4), rnd(4, 5, seed=1)], None),
    ("nn.matmul", [rnd(4, 3), rnd(5, 4, seed=1)], dict(transpose_a=True, transpose_b=True)),
    ("nn.batch_matmul", [rnd(2, 3, 4), rnd(2, 5, 4, seed=1)], None),
    ("nn.batch_matmul", [rnd(2, 4, 3), rnd(1, 4, 5, seed=1)],
     dict(transpose_a=True, transpose_b=False)),
    ("nn.bias_add", [rnd(2, 3, 4), rnd(3, seed=1)], None),
    ("nn.relu", [X34], None),
    ("nn.leaky_relu", [X34], dict(alpha=0.2)),
    ("nn.prelu", [rnd(2, 3, 4), rnd(3, seed=1)], None),
    ("nn.softmax", [X34], None),
    ("nn.softmax", [rnd(3, 4, 2)], dict(axis=1)),
    ("nn.log_softmax", [X34], None),
    ("nn.conv2d", [rnd(2, 3, 5, 5), rnd(4, 3, 3, 3, seed=1)], dict(padding=(1, 1))),
    ("nn.conv2d", [rnd(1, 4, 7, 6), rnd(6, 2, 2, 3, seed=1)],
     dict(strides=(2, 2), padding=(1, 0, 0, 2), dilation=(2, 1), groups=2)),
    ("nn.conv2d", [rnd(1, 3, 6, 6), rnd(3, 1, 3, 3, seed=1)],
     dict(strides=(2, 1), padding=(2, 2), groups=3)),
    ("nn.conv1d", [rnd(2, 2, 7), rnd(3, 2, 3, seed=1)], dict(strides=2, padding=1)),
    ("nn.max_pool2d", [rnd(2, 2, 5, 5)], dict(pool_size=(2, 2), strides=(2, 2))),
    ("nn.max_pool2d", [rnd(1, 2, 6, 5)], dict(pool_size=(3, 3), strides=(2, 1), padding=(1, 1),
                                              ceil_mode=True)),
    ("nn.avg_pool2d", [rnd(2, 2, 5, 5)], dict(pool_size=(2, 2), strides=(2, 2))),
    ("nn.avg_pool2d", [rnd(1, 2, 6, 5)], dict(pool_size=(3, 3), strides=(2, 1),
                                              padding=(1, 1), ceil_mode=True)),
    ("nn.avg_pool2d", [rnd(1, 1, 5, 5)], dict(pool_size=(3, 3), strides=(2, 2),
                                              padding=(1, 1), count_include_pad=True)),
    ("nn.global_avg_pool2d", [rnd(2, 3, 4, 4)], None),
    ("nn.global_max_pool2d", [rnd(2, 3, 4, 4)], None),
    ("nn.adaptive_avg_pool2d", [rnd(1, 2, 5, 7)], dict(output_size=(3, 4))),
    ("nn.batch_norm", [rnd(2, 3, 4), rnd(3, seed=1), rnd(3, seed=2), rnd(3, seed=3),
                       pos(3, seed=4)], None),
    ("nn.layer_norm", [rnd(3, 5), rnd(5, seed=1), rnd(5, seed=2)], None),
    ("nn.group_norm", [rnd(2, 4, 3), rnd(4, seed=1), rnd(4, seed=2)], dict(num_groups=2)),
    ("nn.instance_norm", [rnd(2, 3, 4), rnd(3, seed=1), rnd(3, seed=2)], None),
    ("nn.dropout", [X34], None),
    ("nn.pad", [X34, np.asarray(0.5)], dict(pad_width=((1, 0), (2, 1)))),
    ("nn.batch_flatten", [rnd(2, 3, 2)], None),
    ("reshape", [X34], dict(newshape=(2, 6))),
    ("reshape_like", [X34, rnd(6, 2)], None),
    ("meshgrid", [[rnd(3), rnd(2, seed=1), rnd(4, seed=2)]], dict(indexing="xy")),
    ("squeeze", [rnd(3, 1, 4)], dict(axis=(1,))),
    ("expand_dims", [X34], dict(axis=1)),
    ("transpose", [rnd(2, 3, 4)], dict(axes=(1, 2, 0))),
    ("concatenate", [[rnd(2, 3), rnd(2, 1, seed=1), rnd(2, 2, seed=2)]], dict(axis=1)),
    ("stack", [[rnd(2, 3), rnd(2, 3, seed=1)]], dict(axis=1)),
    ("split", [rnd(6, 2)], dict(indices_or_sections=(1, 4))),
    ("strided_slice", [rnd(5, 6)], dict(begin=(1, 5), end=(5, 0), strides=(2, -2))),
    ("strided_slice", [rnd(4, 5)], dict(begin=(1,), end=(3,), axes=(1,))),
    ("take", [rnd(5, 3), ints([[0, 4], [4, 2]])], dict(axis=0)),
    ("take", [rnd(2, 4), ints([1, 3, 9])], dict(axis=1, mode="clip")),
    ("take", [rnd(2, 4), ints([1, -1])], dict(mode="wrap")),
    ("cast", [X34], dict(dtype="float64")),
    ("clip", [X34], dict(a_min=-1.0, a_max=0.5)),
    ("where", [rnd(3, 4) > 0, rnd(3, 4, seed=1), rnd(4, seed=2)], None),
    ("full", [np.asarray(1.5)], dict(shape=(2, 3), dtype=F)),
    ("full_like", [X34, np.asarray(1.5)], None),
    ("broadcast_to", [rnd(3, 1)], dict(shape=(2, 3, 4))),
    ("tile", [rnd(2, 3)], dict(reps=(2, 1, 2))),
    ("repeat", [rnd(2, 3)], dict(repeats=2, axis=1)),
    ("reverse", [X34], dict(axis=1)),
    ("layout_transform", [rnd(1, 4, 2, 3)], dict(src_layout="NCHW", dst_layout="NHWC")),
    ("sum", [rnd(2, 3, 4)], dict(axis=(0, 2))),
    ("sum", [rnd(2, 3, 4)], dict(axis=(1,), keepdims=True, exclude=True)),
    ("mean", [rnd(2, 3, 4)], dict(axis=(1,))),
    ("max", [rnd(2, 3, 4)], dict(axis=(2,))),
    ("min", [rnd(2, 3, 4)], None),
    ("prod", [pos(2, 3)], dict(axis=(1,))),
    ("variance", [rnd(2, 5)], dict(axis=(1,))),
    ("variance", [rnd(2, 5)], dict(axis=(1,), unbiased=True)),
    ("std", [rnd(2, 5)], dict(axis=(0,), unbiased=True)),
    ("logsumexp", [rnd(2, 5)], dict(axis=(1,))),
    # op/algorithm.py and op/scatter.py
    ("gather", [rnd(3, 4), ints([[0, 2, 2, -1], [1, 1, 0, 2]])], dict(axis=0)),
    ("gather_nd", [rnd(3, 4), ints([[0, 2, 0], [1, 3, 1]])], None),
    ("gather_nd", [rnd(2, 3, 4), ints([[[1, 0], [2, 2]]])], dict(batch_dims=1)),
    ("cumsum", [rnd(3, 4)], dict(axis=1)),
    ("cumsum", [rnd(3, 4)], dict(axis=0, exclusive=True, reverse=True)),
    ("cumsum", [rnd(2, 3)], None),
    ("cumprod", [pos(3, 4)], dict(axis=1, exclusive=True)),
    ("cumprod", [pos(2, 3)], dict(reverse=True)),
    ("trilu", [rnd(2, 3, 4)], dict(k=1, upper=False)),
    ("einsum", [[rnd(3, 4), rnd(4, 5, seed=1)]], dict(equation="ij,jk->ik")),
    ("einsum", [[rnd(2, 3, 4), rnd(4, seed=1)]], dict(equation="...j,j->...")),
    ("einsum", [[rnd(1, 3, 4), rnd(2, 4, 5, seed=1)]], dict(equation="...ij,...jk->...ik")),
    ("einsum", [[rnd(3, 4), rnd(5, seed=1)]], dict(equation="ij,k->i")),
    ("einsum", [[rnd(2, 3, 3)]], dict(equation="bii->bi")),
    ("einsum", [[rnd(3, 3), rnd(3, seed=1)]], dict(equation="ii,i->")),
    ("one_hot", [ints([[0, 3], [2, 2]]), np.asarray(0.7), np.asarray(-0.2)],
     dict(depth=4, axis=1, dtype="float64")),
    ("topk", [rnd(3, 5)], dict(k=2)),
    ("topk", [rnd(3, 5)], dict(k=3, axis=0, ret_type="values", is_ascend=True)),
    ("sort", [rnd(3, 5)], dict(axis=1, is_ascend=False)),
    ("scatter_elements", [rnd(3, 4), ints([[1, 0, 2, 2], [2, 1, 0, 1]]), rnd(2, 4, seed=1)],
     dict(axis=0)),
    ("scatter_elements", [rnd(3, 4), ints([[1, 0, 2, 2], [1, 1, 0, 1]]), rnd(2, 4, seed=1)],
     dict(axis=0, reduction="add")),
    ("scatter_nd", [rnd(3, 4), ints([[0, 2], [1, 3]]), rnd(2, seed=1)], None),
    ("scatter_nd", [rnd(3, 4), ints([[0, 0, 2]]), rnd(3, 4, seed=1)], dict(mode="add")),
    ("segment_sum", [rnd(3, 4), ints([2, 0, 2])], dict(num_segments=4)),
    ("segment_sum", [rnd(4, 2), ints([1, 1])], dict(num_segments=2)),  # rows 2, 3 unused
    # spatial ops (issue 6)
    ("nn.conv3d", [rnd(1, 2, 4, 3, 4), rnd(4, 1, 2, 2, 3, seed=1)],
     dict(strides=(2, 1, 1), padding=(1, 0, 1, 0, 1, 0), dilation=(1, 2, 1), groups=2)),
    ("nn.conv2d_transpose", [rnd(1, 4, 3, 4), rnd(4, 3, 3, 2, seed=1)],
     dict(strides=(2, 1), padding=(1, 0, 0, 1), output_padding=(1, 0), groups=2)),
    ("nn.conv1d_transpose", [rnd(2, 2, 5), rnd(2, 3, 3, seed=1)],
     dict(strides=2, padding=(1, 0), dilation=2, output_padding=1)),
    ("nn.conv3d_transpose", [rnd(1, 2, 2, 3, 2), rnd(2, 2, 2, 2, 3, seed=1)],
     dict(strides=(1, 2, 1), padding=(0, 1, 1, 0, 0, 0))),
    ("nn.max_pool1d", [rnd(2, 2, 9)], dict(pool_size=3, strides=2, padding=1, ceil_mode=True)),
    ("nn.avg_pool1d", [rnd(2, 2, 9)], dict(pool_size=3, strides=2, padding=1)),
    ("nn.max_pool3d", [rnd(1, 2, 4, 5, 3)], dict(pool_size=(2, 3, 2), strides=(2, 1, 1),
                                                  padding=(0, 1, 1, 1, 0, 0))),
    ("nn.avg_pool3d", [rnd(1, 2, 4, 5, 3)], dict(pool_size=(2, 2, 2), strides=2, padding=1,
                                                  count_include_pad=True, ceil_mode=True)),
    ("nn.lrn", [rnd(2, 5, 3)], dict(size=3, alpha=0.3, beta=0.75, bias=1.5)),
    ("nn.lrn", [rnd(1, 3, 6)], dict(size=4, axis=2, alpha=0.5, beta=0.5, bias=2.0)),
    ("image.resize2d", [rnd(1, 2, 4, 5)], dict(size=(7, 3), method="cubic",
                                               cubic_exclude=1)),
    ("image.resize2d", [rnd(1, 2, 4, 5)], dict(
        size=(3, 4), method="linear", coordinate_transformation_mode="tf_crop_and_resize",
        roi=(0.1, -0.2, 0.8, 1.1), extrapolation_value=2.0)),
    ("image.resize2d", [rnd(1, 1, 7, 6)], dict(size=(3, 4), method="linear", antialias=True)),
    ("image.resize1d", [rnd(2, 2, 5)], dict(size=(8,), method="nearest_neighbor",
                                            coordinate_transformation_mode="asymmetric")),
    ("image.resize3d", [rnd(1, 1, 3, 2, 4)], dict(size=(4, 3, 2), method="linear",
                                                  coordinate_transformation_mode="align_corners")),
    ("nn.upsampling", [rnd(1, 2, 3, 4)], dict(scale_h=2, scale_w=1.5, method="linear")),
    ("nn.depth_to_space", [rnd(1, 8, 2, 3)], dict(block_size=2, mode="CRD")),
    ("nn.space_to_depth", [rnd(1, 2, 4, 6)], dict(block_size=2)),
    ("image.grid_sample", [rnd(2, 2, 4, 5), rnd(2, 2, 3, 2, seed=1, low=-1.2, high=1.2)],
     dict(method="bilinear", padding_mode="zeros", align_corners=False)),
    ("image.grid_sample", [rnd(1, 2, 4, 5), rnd(1, 2, 3, 3, seed=2, low=-1.6, high=1.6)],
     dict(method="bicubic", padding_mode="reflection", align_corners=False)),
    ("image.grid_sample", [rnd(1, 1, 4, 3), rnd(1, 2, 2, 3, seed=3, low=-1.4, high=1.4)],
     dict(method="bilinear", padding_mode="border", align_corners=True)),
    ("image.grid_sample", [rnd(1, 2, 3, 4), rnd(1, 2, 2, 2, seed=4)], dict(method="nearest")),
    # recurrent sequences (issue 12): packed weights whose last block is padded
    ("nn.lstm_sequence", [rnd(3, 2, 12), rnd(2, 3, seed=1), rnd(2, 3, seed=2),
                          rnd(1, 3, 4, 4, seed=3) / 2], None),
    ("nn.lstm_sequence", [rnd(3, 2, 12), rnd(2, 3, seed=1), rnd(2, 3, seed=2),
                          rnd(2, 3, 4, 2, seed=3) / 2], dict(reverse=True)),
    ("nn.gru_sequence", [rnd(3, 2, 9), rnd(2, 3, seed=1), rnd(2, 3, 3, 2, seed=2) / 2,
                         rnd(9, seed=3)], None),
    ("nn.gru_sequence", [rnd(3, 2, 9), rnd(2, 3, seed=1), rnd(1, 3, 3, 4, seed=2) / 2,
                         rnd(9, seed=3)], dict(linear_before_reset=False, reverse=True)),
    ("nn.rnn_sequence", [rnd(3, 2, 3), rnd(2, 3, seed=1), rnd(1, 3, 1, 4, seed=2) / 2], None),
    ("nn.rnn_sequence", [rnd(3, 2, 3), rnd(2, 3, seed=1), rnd(2, 3, 1, 2, seed=2) / 2],
     dict(activation="relu", reverse=True)),
    ("image.grid_sample", [rnd(1, 1, 3, 2, 4), rnd(1, 3, 2, 1, 2, seed=5, low=-1.5, high=1.5)],
     dict(method="bilinear", padding_mode="reflection", align_corners=True, layout="NCDHW")),
]


def _id(case):
    return case[0]


@pytest.mark.parametrize("op_name,inputs,attrs", CASES, ids=[_id(c) for c in CASES])
def test_op_gradient_matches_finite_differences(op_name, inputs, attrs):
    weights = _weights(op_name, inputs, attrs)
    expected = numeric_grads(op_name, inputs, attrs, weights)
    got = symbolic_grads(op_name, inputs, attrs, weights)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=op_name)


# the ops the issue asks for explicitly: all must be covered
REQUIRED = {
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "exp", "log",
    "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "sin", "cos", "abs", "negative",
    "nn.dense", "nn.matmul", "nn.batch_matmul", "nn.conv2d", "nn.max_pool2d",
    "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.adaptive_avg_pool2d", "nn.softmax",
    "nn.log_softmax", "nn.layer_norm", "nn.batch_norm", "nn.relu", "nn.leaky_relu",
    "nn.bias_add", "reshape", "transpose", "concatenate", "split", "strided_slice", "take",
    "squeeze", "expand_dims", "sum", "mean", "max", "min", "where", "clip", "cast",
}


def test_gradient_table_completeness():
    status = gradient_status()
    assert set(status) == set(list_ops())
    missing = sorted(n for n, s in status.items() if s == "missing")
    print("\n".join(f"{n:28s} {s}" for n, s in sorted(status.items())))
    assert not (REQUIRED & set(missing)), missing
    assert not missing, f"ops with no gradient status: {missing}"
    assert not (set(GRADIENT.covered()) & NON_DIFFERENTIABLE)


def test_every_covered_op_is_checked():
    checked = {c[0] for c in CASES} | set(DYNAMIC_SHAPE_CASES)
    assert set(GRADIENT.covered()) <= checked, sorted(set(GRADIENT.covered()) - checked)


def test_non_differentiable_gives_zero_and_missing_rule_errors():
    x = r.var("x", shape=(3,), dtype=F)
    fn = r.Function([x], r.floor(x) + x * r.const(2.0, F))
    out = r.create_executor("debug", r.IRModule.from_expr(gradient(fn))).evaluate()(
        np.array([0.5, 1.5, -2.2]))
    np.testing.assert_allclose(out[1][0], [2.0, 2.0, 2.0])
    saved = GRADIENT._entries.pop("exp")
    try:
        fn = r.Function([x], r.exp(x))
        with pytest.raises(r.Error, match="exp"):
            gradient(fn)
    finally:
        GRADIENT._entries["exp"] = saved


def test_gradient_through_a_run_time_shape_is_a_clear_error_then_works_static():
    from relayir.op import dynamic as D

    x = r.var("x", shape=(2, 3), dtype="float64")
    s = r.var("s", shape=(2,), dtype="int64")
    f = r.Function([x, s], r.exp(D.tile(x, s)))
    with pytest.raises(r.Error, match="dyn.tile: needs static shapes"):
        gradient(f)
    # with the shape bound as a constant, DynamicToStatic gives reshape, which has a rule
    g = r.Function([x], r.exp(D.reshape(x, r.const(np.array([3, 2]), "int64"))))
    mod = r.transform.DynamicToStatic()(r.IRModule.from_expr(g))
    out = r.create_executor("debug", r.IRModule.from_expr(
        gradient(mod["main"]))).evaluate()(np.ones((2, 3)))
    np.testing.assert_allclose(np.asarray(out[1][0]), np.full((2, 3), np.e))


# ops whose result has run-time extents: the cotangent is ones of the result's run-time
# shape (the rules of the static ops after them need static shapes), and the gradient is
# the data's shape again
DYNAMIC_SHAPE_CASES = {  # op → (data shape, shape input, result shape)
    "dyn.reshape": ((2, 3), [3, 2], (3, 2)),
    "dyn.squeeze": ((2, 1, 3), [1], (2, 3)),
    "dyn.unsqueeze": ((2, 3), [0, 2], (1, 2, 1, 3)),
}


@pytest.mark.parametrize("name", sorted(DYNAMIC_SHAPE_CASES))
def test_gradient_of_a_run_time_reshape_is_the_data_shape(name):
    shape, value, result = DYNAMIC_SHAPE_CASES[name]
    x = r.var("x", shape=shape, dtype=F)
    s = r.var("s", shape=(len(value),), dtype="int64")
    g = gradient(r.Function([x, s], r.ir.expr.Call(get_op(name), (x, s))))
    data = rnd(*shape)
    out, (dx, ds) = r.create_executor("vm", r.IRModule.from_expr(g)).evaluate()(
        data, np.array(value, "int64"))
    np.testing.assert_array_equal(np.asarray(out), data.reshape(result))
    np.testing.assert_array_equal(np.asarray(dx), np.ones(shape))
    np.testing.assert_array_equal(np.asarray(ds), np.zeros(len(value)))


def test_a_refused_gradient_names_the_op_and_why():
    from relayir.op import vision

    x = r.var("x", shape=(1, 2, 4, 4), dtype="float64")
    rois = r.const(np.array([[0, 0.5, 0.5, 3.0, 3.0]]), "float64")
    f = r.Function([x], vision.roi_align(x, rois, pooled_size=(2, 2), spatial_scale=1.0))
    with pytest.raises(r.Error, match="vision.roi_align: no gradient rule yet"):
        gradient(f)
    assert gradient_status()["vision.roi_align"] == "refused"
