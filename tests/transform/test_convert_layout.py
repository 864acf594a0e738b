"""ConvertLayout: text before → text after, edge-only transforms, semantics on ResNet-18."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error
from relayir.ir.expr import Call
from relayir.ir.functor import post_order
from relayir.testing.models import get_workload, make_inputs
from relayir.testing.pass_check import assert_same_results, random_inputs, results
from relayir.transform import bind_params
from relayir.transform.convert_layout import ConvertLayout

NHWC = {"nn.conv2d": ["NHWC", "default"]}


def transforms(mod) -> list[Call]:
    return [n for n in post_order(mod["main"].body)
            if type(n) is Call and getattr(n.op, "name", None) == "layout_transform"]


def data_path_transforms(mod) -> list[Call]:
    """Transforms of activations (not of weights: a weight's source is a parameter
    whose name starts with ``w`` or a constant)."""
    def is_weight(e):
        return type(e) is relay.Constant or (type(e) is relay.Var and e.name_hint[0] == "w")

    return [t for t in transforms(mod) if not is_weight(t.args[0])]


def check(before: str, after: str | None, desired=None, consts=None):
    mod = relay.parse(before)
    if consts:
        mod = bind_params(mod, {k: relay.const(v) for k, v in consts.items()})
    out = ConvertLayout(desired or NHWC)(mod)
    if after is not None:
        expected = relay.parse(after)
        if consts:
            expected = bind_params(expected, {k: relay.const(v) for k, v in consts.items()
                                              if k in [p.name_hint for p in
                                                       expected["main"].params]})
        relay.assert_structural_equal(out["main"], expected["main"])
    args = random_inputs(mod)
    assert_same_results(results(out, args), results(mod, args), atol=1e-5)
    assert relay.parse(out.astext())  # the result prints and parses back
    return out


def test_chain_conv_bias_relu_conv_pool():
    out = check("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w1: Tensor[(8, 4, 3, 3), float32],
          %b: Tensor[(8), float32], %w2: Tensor[(8, 8, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w2, padding=[1, 1, 1, 1]);
  nn.max_pool2d(%3, pool_size=[2, 2], strides=[2, 2])
}
""", """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w1: Tensor[(8, 4, 3, 3), float32],
          %b: Tensor[(8), float32], %w2: Tensor[(8, 8, 3, 3), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="HWIO");
  %2 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], data_layout="NHWC");
  %3 = nn.bias_add(%2, %b, axis=3);
  %4 = nn.relu(%3);
  %5 = layout_transform(%w2, src_layout="OIHW", dst_layout="HWIO");
  %6 = nn.conv2d(%4, %5, padding=[1, 1, 1, 1], data_layout="NHWC");
  %7 = nn.max_pool2d(%6, pool_size=[2, 2], strides=[2, 2], layout="NHWC");
  layout_transform(%7, src_layout="NHWC", dst_layout="NCHW")
}
""")
    assert len(data_path_transforms(out)) == 2 and len(transforms(out)) == 4


def test_concatenate_of_two_converted_branches():
    out = check("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w1: Tensor[(8, 4, 3, 3), float32],
          %w2: Tensor[(2, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = nn.conv2d(%x, %w2);
  %2 = concatenate((%0, %1), axis=1);
  nn.relu(%2)
}
""", """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w1: Tensor[(8, 4, 3, 3), float32],
          %w2: Tensor[(2, 4, 1, 1), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
  %1 = nn.conv2d(%0, layout_transform(%w1, src_layout="OIHW", dst_layout="HWIO"),
                 padding=[1, 1, 1, 1], data_layout="NHWC");
  %2 = nn.conv2d(%0, layout_transform(%w2, src_layout="OIHW", dst_layout="HWIO"),
                 data_layout="NHWC");
  %3 = concatenate((%1, %2), axis=3);
  %4 = nn.relu(%3);
  layout_transform(%4, src_layout="NHWC", dst_layout="NCHW")
}
""")
    assert len(data_path_transforms(out)) == 2


def test_per_channel_constant_moves_with_the_data():
    mod = relay.parse("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %b: Tensor[(8, 1, 1), float32], %hw: Tensor[(6, 6), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = add(%0, %b);
  %2 = multiply(%b, %1);
  %3 = subtract(%2, %hw);
  maximum(%3, 0f)
}
""")
    out = ConvertLayout(NHWC)(mod)
    text = out.astext()
    assert 'layout_transform(%b, src_layout="CHW", dst_layout="HWC")' in text
    assert text.count("%b, src_layout") == 1  # moved once, used twice
    assert "expand_dims(%hw, num_newaxis=2)" in text  # (H, W) → (1, 1, H, W) → NHWC
    assert len(data_path_transforms(out)) == 4  # x in, b, hw, result out
    args = random_inputs(mod)
    assert_same_results(results(out, args), results(mod, args), atol=1e-5)


def test_unconverted_consumers_get_the_original_layout():
    out = check("""
def @main(%x: Tensor[(1, 4, 4, 4), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %w2: Tensor[(3, 32), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.relu(%0);
  %2 = nn.batch_flatten(%1);
  %3 = nn.dense(%2, %w2);
  (%3, %1)
}
""", """
def @main(%x: Tensor[(1, 4, 4, 4), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %w2: Tensor[(3, 32), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
  %1 = nn.conv2d(%0, layout_transform(%w, src_layout="OIHW", dst_layout="HWIO"),
                 data_layout="NHWC");
  %2 = nn.relu(%1);
  %3 = layout_transform(%2, src_layout="NHWC", dst_layout="NCHW");
  %4 = nn.batch_flatten(%3);
  (nn.dense(%4, %w2), %3)
}
""")
    assert len(data_path_transforms(out)) == 2


def test_nhwc_to_nchw_and_explicit_kernel_layout():
    check("""
def @main(%x: Tensor[(1, 5, 5, 4), float32], %w: Tensor[(3, 3, 4, 8), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], data_layout="NHWC");
  nn.global_avg_pool2d(%0, layout="NHWC")
}
""", """
def @main(%x: Tensor[(1, 5, 5, 4), float32], %w: Tensor[(3, 3, 4, 8), float32]) {
  %0 = layout_transform(%x, src_layout="NHWC", dst_layout="NCHW");
  %1 = layout_transform(%w, src_layout="HWIO", dst_layout="OHWI");
  %2 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], kernel_layout="OHWI");
  %3 = nn.global_avg_pool2d(%2);
  layout_transform(%3, src_layout="NCHW", dst_layout="NHWC")
}
""", desired={"nn.conv2d": ["NCHW", "OHWI"]})


def test_reductions_and_batch_norm_follow_the_layout():
    out = check("""
def @main(%x: Tensor[(2, 4, 5, 5), float32], %w: Tensor[(6, 4, 3, 3), float32],
          %g: Tensor[(6), float32], %b: Tensor[(6), float32], %m: Tensor[(6), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.batch_norm(%0, %g, %b, %m, multiply(%g, %g));
  %2 = %1.0;
  %3 = mean(%2, axis=[2, 3], keepdims=True);
  %4 = sum(%2, axis=[1], exclude=True);
  (subtract(%2, %3), %4, %1.1)
}
""", None)
    text = out.astext()
    assert "axis=3" in text and "axis=[1, 2], keepdims=True" in text  # bn, mean over H, W
    assert "axis=[0, 1, 2])" in text  # the sum over N, H, W in NHWC, now unconverted
    assert text.count("nn.batch_norm") == 1 and "%4.1" in text  # moving mean read directly
    assert len(data_path_transforms(out)) == 2  # in; out of the subtract


def test_listed_pool_without_conv():
    check("""
def @main(%x: Tensor[(1, 3, 8, 8), float32]) {
  nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2])
}
""", """
def @main(%x: Tensor[(1, 3, 8, 8), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
  %1 = nn.avg_pool2d(%0, pool_size=[2, 2], strides=[2, 2], layout="NHWC");
  layout_transform(%1, src_layout="NHWC", dst_layout="NCHW")
}
""", desired={"nn.avg_pool2d": ["NHWC"]})


def test_nothing_to_convert_returns_the_same_function():
    mod = relay.parse("""
def @main(%x: Tensor[(1, 5, 5, 4), float32], %w: Tensor[(3, 3, 4, 8), float32]) {
  nn.relu(nn.conv2d(%x, %w, data_layout="NHWC"))
}
""")
    out = ConvertLayout(NHWC)(mod)
    assert out["main"] is mod["main"] or relay.structural_equal(out["main"], mod["main"])
    assert not transforms(out)


@pytest.mark.parametrize("desired, fragment", [
    ({"nn.conv4d": ["NDHWC"]}, "unknown operator"),
    ({"nn.relu": ["NHWC"]}, "cannot choose the layout of nn.relu"),
    ({"nn.conv2d": ["NCHW8c"]}, "plain layout"),
    ({"nn.conv2d": []}, "list of layout strings"),
    ("NHWC", "takes a dict"),
])
def test_bad_desired_layouts(desired, fragment):
    with pytest.raises(Error, match=fragment):
        ConvertLayout(desired)


def test_desired_layout_that_does_not_fit_the_op():
    mod = relay.parse("""
def @main(%x: Tensor[(1, 4, 4, 4), float32], %w: Tensor[(8, 4, 3, 3), float32]) {
  nn.conv2d(%x, %w)
}
""")
    with pytest.raises(Error, match="do not suit nn.conv2d"):
        ConvertLayout({"nn.conv2d": ["NHWC", "OIHW8o"]})(mod)


# ---------------------------------------------------------------- resnet18


@pytest.fixture(scope="module")
def resnet18():
    mod, params, _ = get_workload("resnet18", image_size=32)
    mod = bind_params(mod, {k: relay.const(v) for k, v in params.items()})
    inputs = list(make_inputs("resnet18", mod).values())
    return mod, inputs, results(mod, inputs)


def test_resnet18_nhwc_with_batch_norm(resnet18):
    mod, inputs, expected = resnet18
    out = ConvertLayout(NHWC)(mod)
    convs = [n for n in post_order(out["main"].body)
             if type(n) is Call and getattr(n.op, "name", None) == "nn.conv2d"]
    assert len(convs) == 20 and all(c.attrs.data_layout == "NHWC" for c in convs)
    assert len(data_path_transforms(out)) == 2  # the input, and before batch_flatten
    assert_same_results(results(out, inputs), expected, rtol=1e-5, atol=1e-5)


def test_resnet18_nhwc_after_simplify_inference_then_fold_constant(resnet18):
    from relayir.transform.fold_constant import FoldConstant
    from relayir.transform.simplify_inference import SimplifyInference

    mod, inputs, expected = resnet18
    out = FoldConstant()(ConvertLayout(NHWC)(FoldConstant()(SimplifyInference()(mod))))
    assert len(transforms(out)) == 2  # weight and (C, 1, 1) transforms all folded
    assert_same_results(results(out, inputs), expected, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- random conv programs


def random_conv_program(seed: int):
    """A small random NCHW or NHWC network: convs (grouped, depthwise), per-channel
    scales of either sign, biases, relus, residual adds, concatenations, pools."""
    import random

    r, rng = random.Random(seed), np.random.default_rng(seed)
    lay = r.choice(["NCHW", "NHWC"])
    cax, c0 = (1 if lay == "NCHW" else 3), r.choice([2, 4])
    shape = (1, c0, 5, 5) if lay == "NCHW" else (1, 5, 5, c0)
    x = relay.var("x", shape=shape)
    pool = [(x, c0)]

    def per_channel(c, values):
        if lay == "NCHW":
            return relay.const(values.astype("float32").reshape([(c, 1, 1), (1, c, 1, 1)][
                r.randrange(2)]))
        return relay.const(values.astype("float32").reshape([(c,), (1, 1, 1, c)][r.randrange(2)]))

    for _ in range(r.randint(3, 10)):
        e, c = r.choice(pool[-3:])
        k = r.randrange(8)
        if k == 0:
            o, ks = r.choice([2, 4, 6]), r.choice([1, 3])
            groups = c if r.random() < 0.3 and o % c == 0 else 1
            wshape = (o, c // groups, ks, ks) if lay == "NCHW" else (ks, ks, c // groups, o)
            w = relay.const(rng.normal(size=wshape).astype("float32"))
            e, c = relay.nn.conv2d(e, w, padding=ks // 2, groups=groups, data_layout=lay), o
        elif k == 1:
            sign = 1 if r.random() < 0.7 else rng.choice([-1, 1], c)
            e = relay.multiply(e, per_channel(c, rng.uniform(0.5, 2, c) * sign))
        elif k == 2:
            b = per_channel(c, rng.normal(size=c))
            e = relay.add(e, b) if r.random() < 0.5 else relay.subtract(b, e)
        elif k == 3:
            e = relay.nn.bias_add(e, relay.const(rng.normal(size=c).astype("float32")), axis=cax)
        elif k == 4:
            e = relay.nn.relu(e)
        elif k == 5:
            same = [p for p in pool if p[1] == c and p[0] is not e]
            e = relay.add(e, r.choice(same)[0]) if same else e
        elif k == 6:
            f, c2 = r.choice(pool)
            e, c = relay.concatenate([e, f], axis=cax), c + c2
        else:
            e = relay.nn.max_pool2d(e, pool_size=3, padding=1, layout=lay)
        pool.append((e, c))
    outs = [p[0] for p in pool[-2:]]
    body = relay.Tuple(outs) if r.random() < 0.5 else outs[-1]
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    return mod, [rng.normal(size=shape).astype("float32")], lay


@pytest.mark.parametrize("seed", range(24))
def test_random_conv_programs_keep_their_meaning(seed):
    from relayir.transform.fold_constant import FoldConstant
    from relayir.transform.fold_scale_axis import FoldScaleAxis

    mod, args, lay = random_conv_program(seed)
    other = "NHWC" if lay == "NCHW" else "NCHW"
    expected = results(mod, args)
    pipelines = [
        ConvertLayout({"nn.conv2d": [other, "default"]}),
        ConvertLayout({"nn.conv2d": [other, "OHWI"], "nn.max_pool2d": ["NHWC"]}),
        FoldScaleAxis(),
    ]
    pipelines.append(lambda m: FoldScaleAxis()(FoldConstant()(pipelines[0](m))))
    scale = max(1.0, *(float(np.abs(e).max()) for e in expected))
    for p in pipelines:
        got = results(FoldConstant()(p(mod)), args)
        assert_same_results(got, expected, rtol=1e-4, atol=1e-4 * scale)


def test_an_empty_tuple_beside_a_converted_conv_is_left_as_it_is():
    # the pipeline runs the int8 ConvertLayout on every cpu build: programs with () in
    # them (the VM's reference tests) crashed it
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(np.ones((4, 3, 3, 3), "float32"))
    body = relay.Tuple([relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))), relay.Tuple([])])
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))
    with relay.transform.PassContext(opt_level=3):
        out = ConvertLayout({"nn.conv2d": ["NHWC", "default"]})(mod)
    assert out["main"].body.fields[1].fields == ()
    args = random_inputs(mod)
    assert_same_results(results(out, args), results(mod, args), atol=1e-5)
