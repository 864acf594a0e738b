"""``FakeQuantizationToInteger``: dequantize → float op → quantize chains become QNN
integer ops; patterns that do not fit stay float."""

from __future__ import annotations

import relayir as relay
from relayir.ir.structural import assert_structural_equal

HEAD = '#[version = "0.0.5"]\n'


def fq2i(text: str) -> relay.IRModule:
    mod = relay.transform.InferType()(relay.parse(HEAD + text))
    mod = relay.transform.FakeQuantizationToInteger()(mod)
    return relay.transform.DeadCodeElimination()(mod)


def typed(text: str) -> relay.IRModule:
    return relay.transform.InferType()(relay.parse(HEAD + text))


def test_a_dequantize_quantize_pair_with_the_same_parameters_disappears():
    got = fq2i("""def @main(%q: Tensor[(4), uint8]) {
  qnn.quantize(qnn.dequantize(%q, 0.5f, 3), 0.5f, 3, out_dtype="uint8") }""")
    assert_structural_equal(got, typed("def @main(%q: Tensor[(4), uint8]) { %q }"))


def test_other_parameters_become_a_requantize():
    got = fq2i("""def @main(%q: Tensor[(4), uint8]) {
  qnn.quantize(qnn.dequantize(%q, 0.5f, 3), 0.25f, 0) }""")
    want = typed("""def @main(%q: Tensor[(4), uint8]) {
  qnn.requantize(%q, 0.5f, 3, 0.25f, 0, out_dtype="int8") }""")
    assert_structural_equal(got, want)


def test_max_pool_and_relu_run_on_the_integers():
    """One float op between each dequantize / quantize pair, as QDQ models have it."""
    got = fq2i("""def @main(%q: Tensor[(1, 2, 4, 4), int8]) {
  %0 = qnn.quantize(nn.max_pool2d(qnn.dequantize(%q, 0.5f, -3), pool_size=[2, 2]), 0.5f, -3);
  qnn.quantize(nn.relu(qnn.dequantize(%0, 0.5f, -3)), 0.5f, -3) }""")
    text = got.astext()
    assert "dequantize" not in text and "maximum" in text and "max_pool2d" in text


def test_a_dense_with_an_int32_bias_in_the_product_scale_becomes_qnn_dense():
    got = fq2i("""def @main(%x: Tensor[(2, 4), uint8], %w: Tensor[(3, 4), int8],
                   %b: Tensor[(3), int32]) {
  %0 = nn.dense(qnn.dequantize(%x, 0.5f, 3), qnn.dequantize(%w, 0.25f, 0));
  %1 = add(%0, qnn.dequantize(%b, 0.125f, 0));
  qnn.quantize(%1, 2f, 5, out_dtype="uint8") }""")
    want = typed("""def @main(%x: Tensor[(2, 4), uint8], %w: Tensor[(3, 4), int8],
                   %b: Tensor[(3), int32]) {
  %0 = qnn.dense(%x, %w, 3, 0, 0.5f, 0.25f);
  qnn.requantize(add(%0, %b), multiply(0.5f, 0.25f), 0, 2f, 5, out_dtype="uint8") }""")
    assert_structural_equal(got, want)


def test_a_bias_in_another_scale_keeps_the_float_product():
    got = fq2i("""def @main(%x: Tensor[(2, 4), uint8], %w: Tensor[(3, 4), int8],
                   %b: Tensor[(3), int32]) {
  %0 = nn.dense(qnn.dequantize(%x, 0.5f, 3), qnn.dequantize(%w, 0.25f, 0));
  %1 = add(%0, qnn.dequantize(%b, 0.3f, 0));
  qnn.quantize(%1, 2f, 5, out_dtype="uint8") }""")
    assert "qnn.dense" not in got.astext() and "nn.dense" in got.astext()
