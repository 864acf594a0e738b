"""CanonicalizeOps: ``nn.bias_add`` → broadcasting ``add``, text → expected text."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Call, Op
from relayir.ir.functor import ExprMutator, post_order
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import TensorType
from relayir.testing.random_programs import random_program
from relayir.transform import PassContext, Sequential
from relayir.transform.canonicalize_ops import CanonicalizeOps
from relayir.typing.infer import infer_module

HEAD = '#[version = "0.0.5"]\n'


def fn(params: str, body: str) -> relay.IRModule:
    return relay.parse(f"{HEAD}def @main({params}) {{\n{body}\n}}")


def assert_typed(mod):
    """Every node carries a type, and it is the one a fresh inference gives it."""
    kept = {}
    for f in mod.functions.values():
        for node in post_order(f):
            if not isinstance(node, (Op, relay.GlobalVar)):
                assert node.has_type, f"untyped {type(node).__name__}"
                kept[node] = node.checked_type
    infer_module(mod.copy())  # types the same nodes again
    for node, ty in kept.items():
        assert node.checked_type == ty, f"{ty} kept, {node.checked_type} inferred"


def check(params: str, before: str, after: str) -> relay.IRModule:
    out = CanonicalizeOps()(fn(params, before))
    assert_structural_equal(out, fn(params, after))
    assert_typed(out)
    return out


@pytest.mark.parametrize("shape,axis,after", [
    ("(2, 3, 4, 5)", 1, "expand_dims(%b, axis=1, num_newaxis=2)"),
    ("(2, 3, 4, 5)", -3, "expand_dims(%b, axis=1, num_newaxis=2)"),
    ("(2, 3, 4, 5)", 0, "expand_dims(%b, axis=1, num_newaxis=3)"),
    ("(2, 3, 4, 5)", 2, "expand_dims(%b, axis=1)"),
    ("(2, 3, 4, 5)", -1, "%b"),
    ("(3)", 0, "%b"),
])
def test_bias_add(shape, axis, after):
    dims = [int(d) for d in shape.strip("()").split(",")]
    c = dims[axis]
    params = f"%x: Tensor[{shape}, float32], %b: Tensor[({c}), float32]"
    check(params, f"nn.bias_add(%x, %b, axis={axis})", f"add(%x, {after})")


def test_dynamic_and_other_dtypes():
    check("%x: Tensor[(?, 4), int32], %b: Tensor[(4), int32]", "nn.bias_add(%x, %b, axis=1)",
          "add(%x, %b)")
    check("%x: Tensor[(?, 4, ?), float16], %b: Tensor[(4), float16]", "nn.bias_add(%x, %b)",
          "%0 = expand_dims(%b, axis=1); add(%x, %0)")


def test_declines_when_add_would_change_the_type():
    # a bias of unknown length on an unknown channel axis: add would give (2, ?) again,
    # but a static bias would make the type more precise than bias_add's
    text = fn("%x: Tensor[(2, ?), float32], %b: Tensor[(5), float32]", "nn.bias_add(%x, %b)")
    assert_structural_equal(CanonicalizeOps()(text), text)


def test_only_at_opt_level_3():
    text = fn("%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]", "nn.bias_add(%x, %b)")
    seq = Sequential([CanonicalizeOps()])
    assert CanonicalizeOps().info.opt_level == 3
    assert_structural_equal(seq(text), text)  # default opt level 2: not run
    with PassContext(opt_level=3):
        assert_structural_equal(seq(text), fn("%x: Tensor[(2, 3), float32], "
                                              "%b: Tensor[(3), float32]", "add(%x, %b)"))


def _inject_bias_adds(mod, seed):
    rng = np.random.default_rng(seed)
    relay.transform.infer_type(mod["main"])

    class Inject(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            ty = call.checked_type
            if not isinstance(ty, TensorType) or not ty.shape:
                return new
            axis = int(rng.integers(-len(ty.shape), len(ty.shape)))
            b = rng.standard_normal(ty.shape[axis]).astype("float32")
            return relay.nn.bias_add(new, relay.const(b), axis=axis)

    f = mod["main"]
    return relay.IRModule.from_expr(relay.Function(f.params, Inject().visit(f.body)))


def _run(mod, inputs):
    return relay.create_executor("debug", mod).evaluate()(*inputs)


def _assert_same(a, b):
    if isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    else:
        np.testing.assert_array_equal(a, b)  # the same additions, in the same order


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    mod, inputs = random_program(seed)
    injected = _inject_bias_adds(mod, seed)
    out = CanonicalizeOps()(injected)
    _assert_same(_run(out, inputs), _run(injected, inputs))
    assert not any(isinstance(n, Call) and isinstance(n.op, Op) and n.op.name == "nn.bias_add"
                   for n in post_order(out["main"]))


def test_chain_of_100000_ops():
    x = relay.var("x", shape=(2, 3))
    b = relay.var("b", shape=(3,))
    e = x
    for _ in range(100_000):
        e = relay.nn.bias_add(e, b)
    out = CanonicalizeOps()(relay.IRModule.from_expr(relay.Function([x, b], e)))
    calls = [n for n in post_order(out["main"]) if isinstance(n, Call)]
    assert len(calls) == 100_000 and all(c.op.name == "add" for c in calls)
