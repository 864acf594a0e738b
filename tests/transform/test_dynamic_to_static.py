"""DynamicToStatic: ``dyn.*`` calls with constant shape inputs → static ops, text →
expected text, and the same results before and after."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error
from relayir.ir.structural import assert_structural_equal
from relayir.op import dynamic as D
from relayir.testing.pass_check import (
    assert_same_results,
    assert_types_are_inferred_ones,
    check_main,
    evaluate,
    parse,
    parse_main,
    run_pass,
)
from relayir.transform.dynamic_to_static import (
    DEBUG_KEY,
    DynamicToStatic,
    dynamic_to_static_rules,
)
from relayir.transform.rewrite import Rule, is_op, rewrite, wildcard

check = functools.partial(check_main, DynamicToStatic())
X = "%x: Tensor[(2, 3), float32]"


@pytest.mark.parametrize("before,after,shape_value", [
    ("dyn.reshape(%x, meta[relay.Constant][0])", "reshape(%x, newshape=[3, -1])", [3, -1]),
    ("dyn.broadcast_to(%x, meta[relay.Constant][0])", "broadcast_to(%x, shape=[4, 2, 3])",
     [4, 2, 3]),
    ("dyn.tile(%x, meta[relay.Constant][0])", "tile(%x, reps=[2, 1])", [2, 1]),
    ("dyn.zeros(meta[relay.Constant][0], dtype=\"int32\")",
     "zeros(shape=[2, 5], dtype=\"int32\")", [2, 5]),
    ("dyn.full(sum(%x), meta[relay.Constant][0])", "%0 = sum(%x); full(%0, shape=[3])",
     [3]),
    ("dyn.ones(meta[relay.Constant][0])", "ones(shape=[2, 2])", [2, 2]),
])
def test_constant_shape_becomes_the_static_op(before, after, shape_value):
    out = check(X, before, after, np.asarray(shape_value, "int64"))
    want = evaluate(relay.transform.InferType()(
        relay.testing.pass_check.parse_main(X, before, np.asarray(shape_value, "int64"))),
        [np.arange(6, dtype="float32").reshape(2, 3)])
    assert_same_results(evaluate(out, [np.arange(6, dtype="float32").reshape(2, 3)]), want)


def test_strided_slice_and_pad_take_all_their_shape_inputs():
    b, e, s = (np.asarray(v, "int64") for v in ([1], [-1], [2]))
    check(X, "dyn.strided_slice(%x, meta[relay.Constant][0], meta[relay.Constant][1], "
             "meta[relay.Constant][2], axes=[1])",
          "strided_slice(%x, begin=[1], end=[-1], strides=[2], axes=[1])", b, e, s)
    w = np.asarray([[1, 0], [0, 2]], "int64")
    check(X, "dyn.nn.pad(%x, meta[relay.Constant][0], 0f)",
          "nn.pad(%x, 0f, pad_width=[[1, 0], [0, 2]])", w)


def test_arange_takes_its_scalar_inputs():
    start, stop, step = (np.asarray(v, "int32") for v in (1, 7, 2))
    check(X, "dyn.arange(meta[relay.Constant][0], meta[relay.Constant][1], "
             "meta[relay.Constant][2])",
          'arange(start=1.0, stop=7.0, step=2.0, dtype="int32")', start, stop, step)


def test_shape_of_a_static_tensor_is_a_constant():
    check(X, 'shape_of(%x, dtype="int32")', "meta[relay.Constant][0]",
          np.asarray([2, 3], "int32"))
    check("%x: Tensor[(?, 3), float32]", "shape_of(%x)", "shape_of(%x)")


def test_every_dyn_op_has_a_rule_named_after_it():
    assert [r.name for r in dynamic_to_static_rules()] == ["shape_of", *D.DYNAMIC]


def test_run_time_shapes_stay_dynamic():
    params = f"{X}, %s: Tensor[(2), int64]"
    check(params, "dyn.reshape(%x, %s)", "dyn.reshape(%x, %s)")


def test_a_shape_computed_from_static_extents_folds_in_later_sweeps():
    # shape_of(%x) is static → a constant; the concatenation then folds; the reshape goes
    x = relay.var("x", shape=(2, 3))
    s = D.shape_of(x)
    target = relay.concatenate([relay.strided_slice(s, [1], [2]), relay.const(
        np.asarray([-1], "int64"))], 0)
    fn = relay.Function([x], relay.nn.relu(D.reshape(x, target)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(fn))
    assert str(mod["main"].ret_type) != str(relay.TensorType((3, 2)))
    out = DynamicToStatic()(mod)
    text = out.astext()
    assert "dyn." not in text and "shape_of" not in text
    assert out["main"].body.checked_type == relay.TensorType((3, 2), "float32")
    data = np.arange(-3, 3, dtype="float32").reshape(2, 3)
    assert_same_results(evaluate(out, [data]), evaluate(mod, [data]))
    assert_same_results(evaluate(out, [data]), np.maximum(data.reshape(3, 2), 0))


def test_is_in_the_pipeline_before_folding():
    from relayir.transform.pipeline import optimize_passes

    names = [p.info.name for p in optimize_passes(fuse=False).passes]
    assert "DynamicToStatic" in names
    assert names.index("DynamicToStatic") < names.index("FoldConstant")


def _shape_chain(n: int, lets: bool) -> relay.IRModule:
    """``n`` reshapes, each to a shape computed from the shape before (as ONNX exports
    ``Reshape(x, Concat(Slice(Shape(x))))``), in graph form or one ``let`` per value."""
    x = relay.var("x", shape=(2, 3))
    e, binds = x, []

    def bind(name, value):
        if not lets:
            return value
        v = relay.var(name)
        binds.append((v, value))
        return v

    for i in range(n):
        s = bind(f"s{i}", D.shape_of(e))
        swapped = relay.concatenate([relay.strided_slice(s, [1], [2]),
                                     relay.strided_slice(s, [0], [1])], 0)
        e = bind(f"e{i}", relay.nn.relu(D.reshape(e, bind(f"t{i}", swapped))))
    for v, value in reversed(binds):
        e = relay.Let(v, value, e)
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], e)))


@pytest.mark.parametrize("n,lets", [(40, False), (6, True)], ids=["graph", "lets"])
def test_a_long_chain_of_computed_shapes_is_typed_incrementally(n, lets, monkeypatch):
    # each reshape's static type makes the next shape_of a constant: in graph form one
    # bottom-up sweep re-types as it goes; let-bound shapes take a fold and a sweep per
    # level. Either way the module is never re-inferred.
    mod = _shape_chain(n, lets)

    def no_module_inference(mod):
        raise AssertionError("DynamicToStatic re-inferred the whole module")

    monkeypatch.setattr("relayir.transform.rewrite.infer_module", no_module_inference)
    out = DynamicToStatic()(mod)
    monkeypatch.undo()
    text = out.astext()
    assert "dyn." not in text and "shape_of" not in text
    assert out["main"].body.checked_type == relay.TensorType((3, 2) if n % 2 else (2, 3))
    assert_types_are_inferred_ones(out)
    data = np.arange(6, dtype="float32").reshape(2, 3)
    assert_same_results(evaluate(out, [data]), evaluate(mod, [data]))


def test_debug_reports_which_rules_fired(capsys):
    with relay.transform.PassContext(config={DEBUG_KEY: True}):
        DynamicToStatic()(_shape_chain(3, lets=False))
    assert capsys.readouterr().out == "DynamicToStatic: rules fired: dyn.reshape x3, shape_of x3\n"
    with relay.transform.PassContext(config={DEBUG_KEY: True}):
        DynamicToStatic()(parse_main(X, "nn.relu(%x)"))
    assert capsys.readouterr().out == "DynamicToStatic: rules fired: none\n"


def test_a_global_whose_type_became_static_retypes_its_callers():
    c = np.asarray([3, -1], "int64")
    before = parse("""
def @f(%x: Tensor[(2, 3), float32]) { dyn.reshape(%x, meta[relay.Constant][0]) }
def @main(%y: Tensor[(2, 3), float32]) { %0 = @f(%y); dyn.reshape(%0, shape_of(%0)) }""", c)
    after = parse("""
def @f(%x: Tensor[(2, 3), float32]) { reshape(%x, newshape=[3, -1]) }
def @main(%y: Tensor[(2, 3), float32]) { %0 = @f(%y); reshape(%0, newshape=[3, 2]) }""")
    out = run_pass(DynamicToStatic(), before)
    assert_structural_equal(out, after)
    assert out["main"].checked_type.ret_type == relay.TensorType((3, 2))


def test_an_annotated_let_keeps_its_annotation_type():
    c = np.asarray([3, -1], "int64")
    out = check(X, "let %v: Tensor[(?, ?), float32] = dyn.reshape(%x, meta[relay.Constant][0]);"
                   " nn.relu(%v)",
                "let %v: Tensor[(?, ?), float32] = reshape(%x, newshape=[3, -1]); nn.relu(%v)",
                c)
    assert str(out["main"].body.checked_type) == str(relay.TensorType((relay.Any(),) * 2))


def test_a_rule_that_refines_a_type_must_say_so():
    mod = parse_main(X, "dyn.reshape(%x, meta[relay.Constant][0])", np.asarray([3, 2], "int64"))
    fn = relay.transform.InferType()(mod)["main"]

    def static(m):
        return relay.reshape(m["x"], (3, 2))

    pattern = is_op("dyn.reshape")(wildcard("x"), wildcard())
    with pytest.raises(Error, match="rewrite rule to-static changed the type"):
        rewrite(fn, [Rule("to-static", pattern, static)])
    out = rewrite(fn, [Rule("to-static", pattern, static, refines_type=True)])
    assert out.body.checked_type == relay.TensorType((3, 2))


def test_a_function_typed_before_the_pass_gets_the_static_type():
    """Inference wrote ``-> Tensor[(?, ?)]`` on the function before the pass; once the
    body is static the function's type is too (the graph executor builds it)."""
    x = relay.var("x", shape=(2, 3, 4))
    y = relay.var("y", shape=(8, 3))
    fn = relay.Function([x, y], D.reshape(x, D.shape_of(y)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(fn))
    assert str(mod["main"].checked_type.ret_type) == "Tensor[(?, ?), float32]"
    out = relay.transform.DynamicToStatic()(mod)
    assert out["main"].checked_type.ret_type == relay.TensorType((8, 3), "float32")
    data = np.arange(24, dtype="float32").reshape(2, 3, 4)
    got = relay.create_executor("graph", mod=out).evaluate()(data, np.zeros((8, 3), "float32"))
    np.testing.assert_array_equal(np.asarray(got), data.reshape(8, 3))
