"""``FuseRequantize``: an NHWC int8 convolution and the requantize ``CanonicalizeQNN``
writes after it become one requantizing convolution — only where every intermediate
has no other user — and the fused program computes the same bytes."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.ir.functor import post_order
from relayir.ir.op import call
from relayir.op.qnn.packed import contrib_depthwise_conv2d
from relayir.transform.fuse_requantize import FuseRequantize

R = np.random.default_rng(0)
SHAPE = (1, 6, 7, 20)  # NHWC


def _requantize(acc, scale, zp: int, lo: float, hi: float, channels_shape):
    """The ops CanonicalizeQNN writes for a requantize after a product."""
    y = call("add", [acc, relay.const(R.integers(-500, 500, channels_shape).astype("int32"))])
    y = call("add", [y, relay.const(np.int32(-37))])
    y = call("multiply", [call("cast", [y], dtype="float32"), relay.const(scale)])
    y = call("cast", [call("round", [call("clip", [y], a_min=lo, a_max=hi)])], dtype="int32")
    if zp:
        y = call("add", [y, relay.const(np.int32(zp))])
    return call("cast", [y], dtype="uint8")


def _program(scale, zp=3, lo=-3.0, hi=250.0, layout="NHWC", second_user=False):
    x = relay.var("x", shape=SHAPE if layout == "NHWC" else (1, 20, 6, 7), dtype="uint8")
    w = relay.const(R.integers(-128, 128, (20, 1, 3, 3)).astype("int8"))
    acc = contrib_depthwise_conv2d(x, w, 20, (3, 3), padding=(1, 1, 1, 1), pad_value=5,
                                   layout=layout)
    y = _requantize(acc, scale, zp, lo, hi, (1, 1, 1, 20) if layout == "NHWC" else (1, 20, 1, 1))
    body = relay.Tuple([y, acc]) if second_user else y
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))


def _ops(mod) -> list[str]:
    return [e.op.name for e in post_order(mod["main"]) if hasattr(getattr(e, "op", None), "name")]


def _run(mod, x):
    out = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
    return out if isinstance(out, list) else [out]


def _fused(mod):
    with relay.transform.PassContext(opt_level=3):
        return FuseRequantize()(mod)


@pytest.mark.parametrize("scale", [np.float32(0.013),
                                   R.uniform(0.001, 0.03, (1, 1, 1, 20)).astype("float32")],
                         ids=["per-tensor", "per-channel"])
def test_the_chain_becomes_one_op_with_the_same_bytes(scale):
    mod = _program(scale)
    fused = _fused(mod)
    assert _ops(fused) == ["qnn.contrib_depthwise_conv2d_requant"]
    x = R.integers(0, 256, SHAPE).astype("uint8")
    assert np.array_equal(_run(fused, x)[0], _run(mod, x)[0])


def test_an_accumulator_with_another_user_is_left_alone():
    mod = _program(np.float32(0.01), second_user=True)
    assert _fused(mod) is mod


@pytest.mark.parametrize("kwargs", [
    {"layout": "NCHW"},                       # the fused form is NHWC (a scalar scale)
    {"lo": -3.5},                             # a clamp between integers
    {"zp": 0, "lo": -3.0},                    # -3 + 0 < 0: the uint8 cast would wrap
])
def test_what_the_fused_form_cannot_say_is_left_alone(kwargs):
    mod = _program(np.float32(0.01), **kwargs)
    assert _fused(mod) is mod
