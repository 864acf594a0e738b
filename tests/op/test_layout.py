"""``layout_transform`` and layout parsing: relation, reference and errors against numpy.

Every expected value is written with explicit numpy reshapes and transposes, not with
the op's own helper.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relayir
from relayir import Any, IRModule, SymbolicDim
from relayir.errors import OpError, TypeInferenceError
from relayir.ir.expr import Function
from relayir.op import OpPattern, get_op
from relayir.op.layout import layout_transform, parse_layout
from relayir.runtime.interpreter import Interpreter
from relayir.testing.op_check import check_op, infer_op_type, rand
from relayir.typing import infer_module

X = rand((2, 16, 3, 5))  # NCHW
W = rand((8, 4, 3, 2), seed=1)  # OIHW
XI = rand((1, 8, 2, 2), "int32", seed=2)


def blocked(x, block):
    """NCHW → NCHW{block}c."""
    n, c, h, w = x.shape
    return x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2)


def case(inputs, src, dst, expected, id):
    return pytest.param(inputs, {"src_layout": src, "dst_layout": dst}, expected, id=id)


CASES = [
    case([X], "NCHW", "NHWC", X.transpose(0, 2, 3, 1), "nchw-nhwc"),
    case([X.transpose(0, 2, 3, 1)], "NHWC", "NCHW", X, "nhwc-nchw"),
    case([W], "OIHW", "HWIO", W.transpose(2, 3, 1, 0), "oihw-hwio"),
    case([W.transpose(2, 3, 1, 0)], "HWIO", "OIHW", W, "hwio-oihw"),
    case([W], "OIHW", "OHWI", W.transpose(0, 2, 3, 1), "oihw-ohwi"),
    case([X], "NCHW", "NCHW", X, "identity"),
    case([X], "NCHW", "NCHW8c", blocked(X, 8), "nchw-nchw8c"),
    case([X], "NCHW", "NCHW16c", blocked(X, 16), "nchw-nchw16c"),
    case([blocked(X, 8)], "NCHW8c", "NCHW", X, "nchw8c-nchw"),
    case([blocked(X, 4)], "NCHW4c", "NCHW8c", blocked(X, 8), "reblock-4c-8c"),
    case([blocked(X, 8)], "NCHW8c", "NHWC", X.transpose(0, 2, 3, 1), "nchw8c-nhwc"),
    case([X.transpose(0, 2, 3, 1)], "NHWC", "NCHW4c", blocked(X, 4), "nhwc-nchw4c"),
    case([W], "OIHW", "OIHW2i4o",
         W.reshape(2, 4, 2, 2, 3, 2).transpose(0, 2, 4, 5, 3, 1), "oihw-oihw2i4o"),
    case([X[0]], "CHW", "HWC", X[0].transpose(1, 2, 0), "rank3-chw-hwc"),
    case([rand((8, 1, 1))], "CHW", "HWC", rand((8, 1, 1)).reshape(1, 1, 8), "per-channel"),
    case([XI], "NCHW", "NHWC", XI.transpose(0, 2, 3, 1), "int32"),
    case([XI], "NCHW", "NCHW2c", blocked(XI, 2), "int32-blocked"),
]


@pytest.mark.parametrize("inputs, attrs, expected", CASES)
def test_layout_transform(inputs, attrs, expected):
    check_op("layout_transform", inputs, expected, attrs)


@pytest.mark.parametrize("src, dst", [("NCHW", "NCHW8c"), ("NHWC", "NCHW4c"),
                                      ("NCHW2c", "NHWC"), ("NCHW16c", "NCHW4c")])
def test_round_trip(src, dst):
    shape = {"N": 2, "C": 16, "H": 3, "W": 5}
    x = rand(tuple(shape[a] for a in src if a.isupper()), seed=5)
    if src.endswith("c"):
        x = relayir.op.layout.transform_array(rand((2, 16, 3, 5), seed=5), "NCHW", src)
    there = relayir.op.layout.transform_array(x, src, dst)
    back = relayir.op.layout.transform_array(there, dst, src)
    np.testing.assert_array_equal(back, x)


BAD = [
    ([rand((1, 6, 2, 2))], "NCHW", "NCHW4c",
     ["extent 6", "block size 4", "does not divide", "does not pad"]),
    ([X], "NCHW8c", "NCHW", ["rank 4", "5 axes"]),
    ([rand((1, 2, 2, 2, 4))], "NCHW8c", "NCHW", ["'c'", "extent 8", "found 4"]),
    ([rand((3, 3))], "NCHW", "NHWC", ["rank 2", "4 axes"]),
]


@pytest.mark.parametrize("inputs, src, dst, fragments", BAD,
                         ids=[f"bad-{i}" for i in range(len(BAD))])
def test_bad_input(inputs, src, dst, fragments):
    with pytest.raises(TypeInferenceError) as info:
        infer_op_type("layout_transform", inputs, {"src_layout": src, "dst_layout": dst})
    message = str(info.value)
    assert message.startswith("layout_transform: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@pytest.mark.parametrize("src, dst, fragment", [
    ("NCHW", "NCH", "primal axes differ"),
    ("NCHW", "OIHW", "primal axes differ"),
    ("NCHW8", "NCHW", "unexpected '8'"),
    ("NHW8c", "NHW", "needs its primal axis 'C'"),
    ("NCHC", "NCHC", "repeats axis 'C'"),
    ("NCHW0c", "NCHW", "positive block size"),
    ("NCHWc", "NCHW", "positive block size"),
    ("N8CHW", "NCHW", "block size goes before a lower-case"),
    ("NC-HW", "NCHW", "unexpected '-HW'"),
    ("", "NCHW", "non-empty string"),
])
def test_bad_layouts(src, dst, fragment):
    with pytest.raises(OpError, match="layout_transform") as info:
        layout_transform(relayir.var("x", shape=(1, 8, 2, 2)), src, dst)
    assert fragment in str(info.value), str(info.value)


def test_layout_transform_needs_both_layouts():
    with pytest.raises(OpError, match="dst_layout"):
        relayir.ir.op.call("layout_transform", [relayir.var("x", shape=(1,))],
                                 src_layout="N")


def test_parse_layout():
    lay = parse_layout("NCHW16c")
    assert lay.primal == "NCHW" and lay.letters == "NCHWc" and len(lay) == 5
    assert lay.factor("C") == 16 and lay.factor("H") is None
    assert lay.index("c") == 4 and not lay.is_plain and parse_layout("NHWC").is_plain
    assert parse_layout("OIHW4i4o").factor("O") == 4 and parse_layout("NCHW16c") is lay


def test_dynamic_shapes():
    n = SymbolicDim("n")
    ty = infer_op_type_of((n, 16, Any(), 4), "NCHW", "NHWC")
    assert ty.shape == (n, Any(), 4, 16)
    ty = infer_op_type_of((n, Any(), 2, 2), "NCHW", "NCHW8c")
    assert ty.shape == (n, Any(), 2, 2, 8)
    ty = infer_op_type_of((n, Any(), 2, 2, 8), "NCHW8c", "NHWC")
    assert ty.shape == (n, 2, 2, Any())


def infer_op_type_of(shape, src, dst):
    x = relayir.var("x", shape=shape)
    mod = infer_module(IRModule.from_expr(Function([x], layout_transform(x, src, dst))))
    return mod["main"].body.checked_type


def test_dynamic_indivisible_fails_at_run_time():
    x = relayir.var("x", shape=(1, Any(), 2, 2))
    mod = infer_module(IRModule.from_expr(Function([x], layout_transform(x, "NCHW", "NCHW4c"))))
    interp = Interpreter(mod)
    closure = interp.global_closure(mod.get_global_var("main"))
    out = interp.call_closure(closure, [rand((1, 8, 2, 2))])
    np.testing.assert_array_equal(out, blocked(rand((1, 8, 2, 2)), 4))
    with pytest.raises(Exception, match="does not divide"):
        interp.call_closure(closure, [rand((1, 6, 2, 2))])


def test_registered_injective():
    op = get_op("layout_transform")
    assert op.pattern == OpPattern.INJECTIVE and op.num_inputs == 1


def test_text_round_trip():
    x = relayir.var("x", shape=(1, 16, 4, 4))
    mod = IRModule.from_expr(Function([x], layout_transform(
        layout_transform(x, "NCHW", "NCHW8c"), "NCHW8c", "NHWC")))
    text = mod.astext()
    assert 'layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c")' in text
    relayir.assert_structural_equal(relayir.parse(text)["main"], mod["main"])


def test_all_permutations_of_nchw_agree_with_transpose():
    x = rand((2, 3, 4, 5), seed=3)
    for src, dst in itertools.product(["NCHW", "NHWC", "CHWN", "WNCH"], repeat=2):
        xs = x.transpose(["NCHW".index(a) for a in src])
        expected = x.transpose(["NCHW".index(a) for a in dst])
        out = relayir.op.layout.transform_array(xs, src, dst)
        np.testing.assert_array_equal(out, expected, err_msg=f"{src} -> {dst}")
