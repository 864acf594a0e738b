"""AlterOpLayout: text before → text after (NCHW[x]c end to end, transforms only at the
edges), folded weights, the per-layer algorithm choice, and models that keep their
results (the interpreter, and PyTorch through a cpu build)."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Call, Constant
from relayir.ir.functor import post_order
from relayir.op.layout import transform_array
from relayir.op.nn.winograd import weight_transform
from relayir.testing.models import get_workload, make_inputs
from relayir.testing.pass_check import (
    assert_same_results,
    check_pass,
    random_inputs,
    results,
)
from relayir.tir.machine import MACHINES
from relayir.transform import PassContext, bind_params
from relayir.transform.alter_op_layout import (
    ALGORITHM_KEY,
    BLOCK_KEY,
    PAD_KEY,
    WINOGRAD_TILE_KEY,
    AlterOpLayout,
    AlterOpLayoutError,
    choose_algorithm,
    choose_block,
    conv_workload,
    winograd_pays,
)
from relayir.transform.fold_constant import FoldConstant
from relayir.transform.pipeline import optimize
from relayir.typing.infer import infer_module


def calls(mod, name: str) -> list[Call]:
    return [n for n in post_order(mod["main"].body)
            if type(n) is Call and getattr(n.op, "name", None) == name]


def data_transforms(mod) -> list[tuple[str, str]]:
    """The layout transforms of activations (not of constants or weight parameters)."""
    return [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls(mod, "layout_transform")
            if not (type(c.args[0]) is Constant or getattr(c.args[0], "name_hint", "x")[0] == "w"
                    or getattr(c.args[0], "op", None) is not None
                    and c.args[0].op.name == "nn.contrib_conv2d_winograd_weight_transform")]


def keeps_results(before, after, atol=1e-5):
    args = random_inputs(before)
    assert_same_results(results(after, args), results(before, args), rtol=1e-4, atol=atol)


CHAIN = """
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32],
          %b: Tensor[(32, 1, 1), float32], %w2: Tensor[(32, 32, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w2);
  %4 = add(%3, %2);
  nn.max_pool2d(%4, pool_size=[2, 2], strides=[2, 2])
}
"""


def test_conv_bias_relu_residual_pool_stay_blocked():
    out = check_pass(AlterOpLayout(), CHAIN, """
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32],
          %b: Tensor[(32, 1, 1), float32], %w2: Tensor[(32, 32, 1, 1), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW16i16o");
  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]);
  %3 = expand_dims(%b, axis=0);
  %4 = layout_transform(%3, src_layout="NCHW", dst_layout="NCHW16c");
  %5 = add(%2, %4);
  %6 = nn.relu(%5);
  %7 = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW16i16o");
  %8 = nn.contrib_conv2d_NCHWc(%6, %7, channels=32, kernel_size=[1, 1]);
  %9 = add(%8, %6);
  %10 = nn.max_pool2d(%9, pool_size=[2, 2], strides=[2, 2], layout="NCHW16c");
  layout_transform(%10, src_layout="NCHW16c", dst_layout="NCHW")
}
""", opt_level=3)
    keeps_results(relay.parse(CHAIN), out)


def test_winograd_weight_is_transformed_then_packed():
    before = """
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  nn.relu(%0)
}
"""
    out = check_pass(AlterOpLayout(conv_algorithm="winograd", winograd_tile=4), before, """
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  %1 = nn.contrib_conv2d_winograd_weight_transform(%w, tile_size=4);
  %2 = layout_transform(%1, src_layout="HWOI", dst_layout="HWOI16i16o");
  %3 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW16i16o");
  %4 = nn.contrib_conv2d_winograd_NCHWc(%0, %2, %3, padding=[1, 1, 1, 1], channels=16);
  %5 = nn.relu(%4);
  layout_transform(%5, src_layout="NCHW16c", dst_layout="NCHW")
}
""", opt_level=3)
    keeps_results(relay.parse(before), out, atol=1e-4)


MOBILE = """
def @main(%x: Tensor[(1, 3, 10, 10), float32], %w0: Tensor[(24, 3, 3, 3), float32],
          %w1: Tensor[(24, 1, 3, 3), float32], %w2: Tensor[(16, 24, 1, 1), float32],
          %w3: Tensor[(8, 24, 1, 1), float32], %s: Tensor[(24, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w0, strides=[2, 2], padding=[1, 1, 1, 1]);
  %1 = multiply(%0, %s);
  %2 = clip(%1, a_min=0f, a_max=6f);
  %3 = nn.conv2d(%2, %w1, padding=[1, 1, 1, 1], groups=24);
  %4 = clip(%3, a_min=0f, a_max=6f);
  %5 = nn.conv2d(%4, %w2);
  %6 = nn.conv2d(%4, %w3);
  %7 = (%5, %6);
  %8 = concatenate(%7, axis=1);
  %9 = nn.adaptive_avg_pool2d(%8, output_size=[1, 1]);
  nn.batch_flatten(%9)
}
"""


def test_depthwise_scale_clip_concat_in_blocks_of_8_without_padding():
    """24 channels unpadded: blocks of 8 (the vector width does not divide 24); the RGB
    input is read in one block of 3; 16 + 8 channels meet in blocks of 8 to concatenate."""
    mod = relay.parse(MOBILE)
    with PassContext(opt_level=3, config={PAD_KEY: False}):
        out = AlterOpLayout()(mod)
    # in: the image and the scale constant (folded once bound); out: the pooled features
    assert sorted(data_transforms(out)) == [("NCHW", "NCHW3c"), ("NCHW", "NCHW8c"),
                                            ("NCHW16c", "NCHW8c"), ("NCHW8c", "NCHW")]
    (conv0, conv2, conv3), (dw,) = (calls(out, "nn.contrib_conv2d_NCHWc"),
                                    calls(out, "nn.contrib_depthwise_conv2d_NCHWc"))
    assert (conv0.attrs.data_layout, conv0.attrs.kernel_layout) == ("NCHW3c", "OIHW3i8o")
    assert (dw.attrs.kernel_layout, dw.attrs.groups) == ("OIHW1i8o", 24)
    assert conv2.attrs.out_layout == "NCHW16c" and conv3.attrs.out_layout == "NCHW8c"
    (cat,) = calls(out, "concatenate")
    assert cat.attrs.axis == 1 and cat.checked_type.shape == (1, 3, 5, 5, 8)
    (pool,) = calls(out, "nn.adaptive_avg_pool2d")
    assert pool.attrs.layout == "NCHW8c"
    keeps_results(mod, out)


def test_channels_padded_to_whole_vectors():
    """Channel counts the vector width does not divide are padded with zero filters
    (folded into the weights); the padding rides through relu into the next conv, whose
    weights read it with zero taps, and a strided_slice drops it at the edge."""
    before = """
def @main(%x: Tensor[(1, 5, 6, 6), float32], %w1: Tensor[(10, 5, 3, 3), float32],
          %w2: Tensor[(12, 10, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %w2, strides=[2, 2])
}
"""
    out = check_pass(AlterOpLayout(), before, """
def @main(%x: Tensor[(1, 5, 6, 6), float32], %w1: Tensor[(10, 5, 3, 3), float32],
          %w2: Tensor[(12, 10, 3, 3), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW5c");
  %1 = nn.pad(%w1, 0f, pad_width=[[0, 6], [0, 0], [0, 0], [0, 0]]);
  %2 = layout_transform(%1, src_layout="OIHW", dst_layout="OIHW5i16o");
  %3 = nn.contrib_conv2d_NCHWc(%0, %2, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3],
                               data_layout="NCHW5c", kernel_layout="OIHW5i16o");
  %4 = nn.relu(%3);
  %5 = nn.pad(%w2, 0f, pad_width=[[0, 4], [0, 6], [0, 0], [0, 0]]);
  %6 = layout_transform(%5, src_layout="OIHW", dst_layout="OIHW16i16o");
  %7 = nn.contrib_conv2d_NCHWc(%4, %6, strides=[2, 2], channels=16, kernel_size=[3, 3]);
  %8 = layout_transform(%7, src_layout="NCHW16c", dst_layout="NCHW");
  strided_slice(%8, begin=[0], end=[12], axes=[1])
}
""", opt_level=3)
    keeps_results(relay.parse(before), out)


def test_padding_through_scale_depthwise_and_back_before_a_concat():
    mod = relay.parse(MOBILE)
    with PassContext(opt_level=3):
        out = AlterOpLayout()(mod)
    (conv0, conv2, conv3), (dw,) = (calls(out, "nn.contrib_conv2d_NCHWc"),
                                    calls(out, "nn.contrib_depthwise_conv2d_NCHWc"))
    assert [c.attrs.channels for c in (conv0, dw, conv2, conv3)] == [32, 32, 16, 16]
    assert dw.attrs.groups == 32
    # the per-channel scale, padded with zeros like the channels it multiplies
    assert [c.checked_type.shape for c in calls(out, "nn.pad")].count((1, 32, 1, 1)) == 1
    # concatenate cannot take the padding: its inputs come back, the padded one sliced
    (cut,) = calls(out, "strided_slice")
    assert cut.checked_type.shape == (1, 8, 5, 5) and calls(out, "concatenate")
    keeps_results(mod, out)


def test_ops_that_cannot_take_the_layout_get_it_back():
    before = relay.parse("""
def @main(%x: Tensor[(1, 16, 6, 6), float32], %w: Tensor[(16, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.softmax(%0, axis=1);
  %2 = nn.relu(%0);
  %3 = mean(%2, axis=[2, 3], keepdims=True);
  %4 = mean(%2, axis=[1]);
  (%1, %3, %4)
}
""")
    with PassContext(opt_level=3):
        out = AlterOpLayout()(before)
    # softmax and the mean over channels read NCHW (one transform back, shared); the
    # spatial mean stays blocked, and its result goes back at the function's edge
    assert sorted(data_transforms(out)) == [("NCHW", "NCHW16c"), ("NCHW16c", "NCHW"),
                                            ("NCHW16c", "NCHW"), ("NCHW16c", "NCHW")]
    means = {c.attrs.axis: c.checked_type.shape for c in calls(out, "mean")}
    assert means == {(2, 3): (1, 1, 1, 1, 16), (1,): (1, 6, 6)}
    keeps_results(before, out)


def test_folded_weights_are_constants_and_nothing_repacks_at_run_time():
    rng = np.random.default_rng(0)
    shapes = {"w1": (32, 16, 3, 3), "b": (32, 1, 1), "w2": (32, 32, 1, 1)}
    params = {k: rng.standard_normal(s).astype("float32") for k, s in shapes.items()}
    mod = bind_params(relay.parse(CHAIN), {k: relay.const(v) for k, v in params.items()})
    with PassContext(opt_level=3, config={ALGORITHM_KEY: "winograd", WINOGRAD_TILE_KEY: 4}):
        out = FoldConstant()(AlterOpLayout()(mod))
    assert data_transforms(out) == [("NCHW", "NCHW16c"), ("NCHW16c", "NCHW")]
    assert len(calls(out, "layout_transform")) == 2  # no weight transform is left
    (wino,) = calls(out, "nn.contrib_conv2d_winograd_NCHWc")
    (direct,) = calls(out, "nn.contrib_conv2d_NCHWc")  # the 1×1 one
    u = transform_array(weight_transform(params["w1"], 4).astype("float32"), "HWOI",
                        "HWOI16i16o")
    assert type(wino.args[1]) is Constant
    np.testing.assert_allclose(wino.args[1].data, u, rtol=1e-6, atol=1e-6)
    assert type(direct.args[1]) is Constant
    np.testing.assert_array_equal(direct.args[1].data,
                                  transform_array(params["w2"], "OIHW", "OIHW16i16o"))
    add_bias = calls(out, "add")[0]  # post order: the bias add comes first
    assert type(add_bias.args[1]) is Constant and add_bias.args[1].data.shape == (1, 2, 1, 1, 16)
    keeps_results(mod, out, atol=1e-4)


def test_block_choice():
    assert [choose_block(c, 16) for c in (64, 3, 24, 40, 5, 96, 8, 1)] == [
        16, 3, 8, 8, 5, 16, 8, 1]
    assert choose_block(24, 8) == 8 and choose_block(64, 8) == 8


def test_a_narrower_vector():
    before = relay.parse("""
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(24, 8, 3, 3), float32],
          %w2: Tensor[(12, 24, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %w2, strides=[2, 2])
}
""")
    with PassContext(opt_level=3, config={BLOCK_KEY: 4}):
        out = AlterOpLayout()(before)
    assert [(c.attrs.data_layout, c.attrs.out_layout, c.attrs.channels)
            for c in calls(out, "nn.contrib_conv2d_NCHWc")] == [
        ("NCHW4c", "NCHW4c", 24), ("NCHW4c", "NCHW4c", 12)]
    keeps_results(before, out)


def test_config_errors_name_the_key():
    mod = relay.parse(CHAIN)
    for key, value in ((BLOCK_KEY, 0), (ALGORITHM_KEY, "fft"), (PAD_KEY, 1),
                       (WINOGRAD_TILE_KEY, 3), (WINOGRAD_TILE_KEY, {"k": 5}),
                       (WINOGRAD_TILE_KEY, True)):
        with PassContext(opt_level=3, config={key: value}), pytest.raises(
                AlterOpLayoutError, match=key):
            AlterOpLayout()(mod)


# ---------------------------------------------------------------- the cost rule


def _resnet18_convs():
    mod, _, _ = get_workload("resnet18", image_size=224)
    mod = infer_module(mod.copy())
    return {w.key: w for w in (conv_workload(c) for c in calls(mod, "nn.conv2d"))}


def test_cost_rule_picks_a_tile_per_layer_on_resnet18():
    # F(4×4) on the large maps, F(2×2) at 14² (a third of F(4×4)'s weight bytes),
    # direct at 7×7×512 (benchmarks/micro.py --choices measured each in the model)
    chosen = {k: choose_algorithm(w) for k, w in _resnet18_convs().items()}
    key = "conv2d_n1_c{0}_{1}x{1}_o{0}_k3x3_s1x1_p1x1x1x1_d1x1_g1".format
    assert {k: v for k, v in chosen.items() if v[0] == "winograd"} == {
        key(64, 56): ("winograd", 4), key(128, 28): ("winograd", 4),
        key(256, 14): ("winograd", 2)}
    assert chosen[key(512, 7)] == ("direct", None)
    assert {k for k, w in _resnet18_convs().items() if winograd_pays(w, 4)} == {
        key(64, 56), key(128, 28)}


def test_per_layer_algorithm_override():
    mod = relay.parse(CHAIN)
    key = "conv2d_n1_c16_8x8_o32_k3x3_s1x1_p1x1x1x1_d1x1_g1"
    with PassContext(opt_level=3, config={ALGORITHM_KEY: {key: "winograd"}}):
        out = AlterOpLayout()(mod)
    assert len(calls(out, "nn.contrib_conv2d_winograd_NCHWc")) == 1
    assert len(calls(out, "nn.contrib_conv2d_NCHWc")) == 1  # the 1×1 conv cannot


def test_per_layer_tile_override():
    mod = relay.parse(CHAIN)
    key = "conv2d_n1_c16_8x8_o32_k3x3_s1x1_p1x1x1x1_d1x1_g1"
    for tile in (2, 4, 6):
        with PassContext(opt_level=3, config={ALGORITHM_KEY: "winograd",
                                              WINOGRAD_TILE_KEY: {key: tile}}):
            out = AlterOpLayout()(mod)
        (conv,) = calls(out, "nn.contrib_conv2d_winograd_NCHWc")
        assert conv.attrs.tile_size == tile
        keeps_results(mod, out)


# ---------------------------------------------------------------- models


@pytest.mark.parametrize("name,algorithm", [("resnet18", "auto"), ("resnet18", "winograd"),
                                            ("mobilenet_v2", "auto")])
def test_models_keep_their_results_with_edges_only(name, algorithm):
    mod, params, _ = get_workload(name, image_size=32)
    mod = bind_params(mod, {k: relay.const(v) for k, v in params.items()})
    inputs = make_inputs(name, mod)
    with PassContext(opt_level=3, config={ALGORITHM_KEY: algorithm}):
        out = optimize(mod, fuse=False, target="cpu")
    assert len(data_transforms(out)) == 2  # the input in, the last feature map out
    assert not calls(out, "nn.conv2d")
    want = results(mod, inputs)
    scale = max(float(np.max(np.abs(w))) for w in want)
    assert_same_results(results(out, inputs), want, rtol=1e-4, atol=1e-5 * scale)


def test_pipeline_reads_the_vector_width_from_the_target():
    class Narrow:  # a Target whose CPU has 8-float vectors (AVX2)
        kind = "cpu"

        @staticmethod
        def machine():
            return MACHINES["avx2"]  # the machine table's block: 8

    with PassContext(opt_level=3):
        out = optimize(relay.parse(CHAIN), fuse=False, target=Narrow())
        plain = optimize(relay.parse(CHAIN), fuse=False, target="numpy")
    assert {c.attrs.out_layout for c in calls(out, "nn.contrib_conv2d_NCHWc")} == {"NCHW8c"}
    assert len(calls(plain, "nn.conv2d")) == 2


def test_build_for_cpu_alters_numpy_does_not():
    mod = relay.parse(CHAIN)
    rng = np.random.default_rng(1)
    params = {p.name_hint: rng.standard_normal([int(d) for d in p.type_annotation.shape])
              .astype("float32") for p in mod["main"].params[1:]}
    with PassContext(opt_level=3):
        cpu = relay.build(mod, target="cpu", params=params)
        ref = relay.build(mod, target="numpy", params=params)
    text_cpu, text_ref = cpu.ir_mod.astext(), ref.ir_mod.astext()
    assert "nn.contrib_conv2d_NCHWc" in text_cpu and "nn.contrib_conv2d" not in text_ref
    x = rng.standard_normal((1, 16, 8, 8)).astype("float32")
    outs = []
    for lib in (cpu, ref):
        m = relay.graph_executor.GraphModule(lib)
        m.set_input("x", x)
        m.run()
        outs.append(m.get_output(0))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-4)


def test_resnet18_with_winograd_matches_pytorch():
    """Every 3×3 stride-1 layer by F(4×4, 3×3), built for the cpu target, against PyTorch
    float32: within rtol 1e-4 / atol 1e-5 · max|y| (the Winograd layers' own bound is
    ``WINOGRAD_ERROR``; averaged by the global pool, the logits stay within this)."""
    torch = pytest.importorskip("torch")
    from relayir.frontend import from_pytorch
    from relayir.testing.models import torch_models as tm

    model = tm.build("resnet18", num_classes=10).eval()
    data = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(0))
    mod, params = from_pytorch(model, [("data", (1, 3, 64, 64))])
    with PassContext(opt_level=3, config={ALGORITHM_KEY: "winograd"}):
        lib = relay.build(mod, target="cpu", params=params)
    assert "nn.contrib_conv2d_winograd_NCHWc" in lib.ir_mod.astext()
    m = relay.graph_executor.GraphModule(lib)
    m.set_input("data", data.numpy())
    m.run()
    with torch.no_grad():
        want = model(data).numpy()
    scale = float(np.max(np.abs(want)))
    np.testing.assert_allclose(m.get_output(0), want, rtol=1e-4, atol=1e-5 * scale)


def test_a_100000_op_chain_stays_blocked_without_recursion():
    x = relay.var("x", shape=(1, 16, 2, 2))
    w = relay.const(np.ones((16, 16, 1, 1), "float32"))
    e = relay.nn.conv2d(x, w)
    for i in range(100_000):
        e = relay.nn.relu(e) if i % 2 else relay.negative(e)
    mod = relay.IRModule.from_expr(relay.Function([x], e))
    with PassContext(opt_level=3):
        out = AlterOpLayout()(mod)
    assert data_transforms(out) == [("NCHW", "NCHW16c"), ("NCHW16c", "NCHW")]
    assert out["main"].body.args[0].checked_type.shape == (1, 1, 2, 2, 16)


# ---------------------------------------------------------------- dense


def _dense_module(units: int, batch: int = 4, in_features: int = 24):
    x = relay.var("x", shape=(batch, in_features))
    w = relay.const(np.random.default_rng(0).standard_normal((units, in_features), "float32"))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.dense(x, w))))


def _alter(mod, block=16):
    with PassContext(opt_level=3):
        return infer_module(AlterOpLayout(block=block)(infer_module(mod)))


@pytest.mark.parametrize("units, layout", [(64, "NC32n"), (48, "NC16n")])
def test_a_dense_with_a_constant_weight_gets_panels_that_fold(units, layout):
    mod = _dense_module(units)
    after = _alter(mod)
    (packed,) = calls(after, "nn.contrib_dense_pack")
    assert packed.attrs.weight_layout == layout and packed.attrs.units == units
    assert calls(after, "nn.dense") == []
    with PassContext(opt_level=3):
        folded = FoldConstant()(after)
    (packed,) = calls(folded, "nn.contrib_dense_pack")
    assert type(packed.args[1]) is Constant  # packed once, at build time
    keeps_results(mod, folded)


def test_a_dense_the_block_does_not_divide_or_with_a_runtime_weight_stays():
    assert calls(_alter(_dense_module(10)), "nn.dense")  # 10 units: no whole panel
    x, w = relay.var("x", shape=(4, 24)), relay.var("w", shape=(64, 24))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    assert calls(_alter(mod), "nn.dense")  # a weight given at run time is not packed


def test_mlp_built_for_cpu_uses_packed_dense_and_matches_the_reference():
    mod, params, reference = get_workload("mlp", batch_size=8)
    inputs = make_inputs("mlp", mod)
    with PassContext(opt_level=3):
        lib = relay.build(mod, target="cpu", params=params)
    assert "nn_contrib_dense_pack" in lib.get_graph_json()
    gm = relay.graph_executor.GraphModule(lib)
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0), reference(params, *inputs.values()),
                               rtol=1e-4, atol=1e-5)
