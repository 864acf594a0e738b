"""Where Relay's behaviour differs from relayir's own API, ``relayir.tvm`` follows
Relay: constructor rules, op defaults, multi-output ops, shape arguments given as
expressions, ``InferType``'s annotations, pass contexts, executors, workloads, the
prelude's names. Each test states the Relay behaviour and checks it (and, where it
matters, that relayir's own API keeps its behaviour)."""

import numpy as np
import pytest

import relayir
import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.relay import testing
from relayir.tvm.relay.loops import while_loop
from relayir.tvm.relay.scope_builder import ScopeBuilder


def _run(expr, *args, kind="debug"):
    return relay.create_executor(kind, target="numpy").evaluate(expr)(*args)


def test_var_follows_relays_annotation_rules():
    assert relay.var("x", shape=(2,), dtype="int8").type_annotation == relay.TensorType(
        (2,), "int8")
    assert relay.var("x", "int32").type_annotation == relay.TensorType((), "int32")
    assert relay.var("x", dtype="int32").type_annotation is None  # Relay ignores it
    assert relayir.var("x", dtype="int32").type_annotation is not None  # relayir does not
    with pytest.raises(relayir.Error, match="not both"):
        relay.var("x", relay.TensorType((1,)), shape=(1,))


def test_shape_of_is_int32_by_default():
    x = relay.var("x", shape=(2, 3))
    assert testing.run_infer_type(relay.shape_of(x)).checked_type == relay.TensorType(
        (2,), "int32")


def test_multi_output_ops_return_a_tuple_wrapper():
    x = relay.var("x", shape=(6,))
    parts = relay.split(x, 3)
    assert isinstance(parts, relay.TupleWrapper) and len(parts) == 3
    f = relay.Function([x], relay.Tuple([parts[0], parts[2]]))
    out = _run(f, np.arange(6, dtype="float32"))
    assert [v.numpy().tolist() for v in out] == [[0.0, 1.0], [4.0, 5.0]]
    assert isinstance(parts.astuple(), relay.Call)
    mv = relay.mean_variance(x, axis=0)
    m, v = _run(relay.Function([x], mv.astuple()), np.arange(6, dtype="float32"))
    assert m.numpy() == pytest.approx(2.5) and v.numpy() == pytest.approx(35 / 12)


def test_shape_arguments_given_as_expressions_pick_the_dyn_ops():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    assert relay.reshape(x, s).op.name == "dyn.reshape"
    static = relay.reshape(x, relay.const(np.array([3, 2])))
    assert static.op.name == "reshape"
    assert testing.run_infer_type(static).checked_type == relay.TensorType((3, 2))
    f = relay.Function([x, s], relay.reshape(x, s))
    out = _run(f, np.arange(6, dtype="float32").reshape(2, 3), np.array([3, 2]))
    assert out.shape == (3, 2)
    assert relay.zeros(s, "float32").op.name == "dyn.zeros"
    assert relay.trilu(x, relay.const(1)).attrs.k == 1
    y = relay.var("y", shape=(1, 2, 1, 2, 1))
    axis = relay.var("axis", shape=(2,), dtype="int64")
    assert relay.squeeze(y, axis=axis).op.name == "dyn.squeeze"
    assert relay.squeeze(y, axis=relay.const(np.array([0]))).op.name == "squeeze"
    data = np.arange(4, dtype="float32").reshape(1, 2, 1, 2, 1)
    out = _run(relay.Function([y, axis], relay.squeeze(y, axis=axis)), data, np.array([0, 2]))
    np.testing.assert_array_equal(out, data.reshape(2, 2, 1))


def test_gradient_is_higher_order_by_default():
    x = relay.var("x", shape=(3,))
    f = testing.run_infer_type(relay.Function([x], x * x))
    ours = relay.transform.gradient(f)
    higher = relayir.transform.gradient(f, mode="higher_order")
    first = relayir.transform.gradient(f)  # relayir's default
    assert tvm.ir.structural_equal(ours, higher)
    assert not tvm.ir.structural_equal(ours, first)
    _, (dx,) = _run(testing.run_infer_type(ours), np.array([1, 2, 3], "float32"))
    np.testing.assert_allclose(dx.numpy(), [2.0, 4.0, 6.0])


def test_text_without_metadata_and_fromtext_with_a_version():
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], x + relay.const(np.ones(2, "float32"))))
    text = mod.astext(show_meta_data=False)
    assert "meta[relay.Constant][0]" in text and "#[metadata]" not in text
    parsed = relay.fromtext('#[version = "0.0.5"]\n'
                            "def @main(%x: Tensor[(2), float32]) { nn.relu(%x) }")
    assert isinstance(parsed, tvm.IRModule)
    assert parsed["main"].body.op.name == "nn.relu"


def test_parse_takes_an_init_meta_table():
    c = relay.const(np.arange(3, dtype="float32"))
    text = '#[version = "0.0.5"]\ndef @main() { meta[relay.Constant][0] }'
    mod = relay.parse(text, "from_string", None, {"relay.Constant": [c]})
    np.testing.assert_array_equal(mod["main"].body.data, c.data)
    with pytest.raises(relayir.Error, match="relay.Constant only"):
        relay.parse(text, init_meta_table={"VirtualDevice": [tvm.cpu()]})


def test_gradient_of_a_global():
    mod = tvm.IRModule()
    x = relay.var("x", shape=(2,))
    mod["square"] = relay.Function([x], x * x)
    mod = relay.transform.InferType()(mod)
    grad = relay.transform.gradient(mod.get_global_var("square"), mod, mode="first_order")
    _, (dx,) = _run(testing.run_infer_type(grad), np.array([3, 4], "float32"))
    np.testing.assert_allclose(dx.numpy(), [6.0, 8.0])


def test_infer_type_writes_the_inferred_types_into_the_program():
    x = relay.var("x", shape=(2,))
    y = relay.var("y")  # no annotation
    f = relay.Function([x], relay.Let(y, x * relay.const(2.0), y))
    typed = relay.transform.InferType()(tvm.IRModule.from_expr(f))["main"]
    assert typed.ret_type == relay.TensorType((2,))
    assert typed.body.var.type_annotation == relay.TensorType((2,))
    plain = relayir.transform.InferType()(relayir.IRModule.from_expr(f))["main"]
    assert plain.ret_type is None and plain.body.var.type_annotation is None


def test_relay_function_passes_leave_annotations_and_module_passes_do_not():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.add(x, relay.const(1.0)))
    fused = relay.transform.FuseOps(fuse_opt_level=2)(tvm.IRModule.from_expr(f))
    assert fused["main"].ret_type == relay.TensorType((2,))
    dce = relay.transform.DeadCodeElimination()(tvm.IRModule.from_expr(f))
    assert dce["main"].ret_type is None


def test_pass_context_takes_relays_arguments():
    with tvm.transform.PassContext(opt_level=4, required_pass=None, disabled_pass=None,
                                   config=None, instruments=None) as ctx:
        assert tvm.transform.PassContext.current() is ctx
        assert ctx.opt_level == 3  # relayir's highest level
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], x + relay.const(1.0) * relay.const(2.0)))
    seq = tvm.transform.Sequential([relay.transform.FoldConstant()])
    with tvm.transform.PassContext(opt_level=3, disabled_pass=["FoldConstant"]):
        kept = seq(mod)
    with tvm.transform.PassContext(opt_level=3):
        folded = seq(mod)
    assert "multiply" in kept.astext() and "multiply" not in folded.astext()


def test_create_executor_keywords_and_evaluate_on_every_kind():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = relay.Function([x, y], x - y)
    ex = relay.create_executor("vm", mod=tvm.IRModule.from_expr(f), device=tvm.cpu(0),
                               target="numpy")
    a, b = np.ones(2, "float32"), np.array([0.5, 2.0], "float32")
    np.testing.assert_array_equal(ex.evaluate()(a, b).numpy(), a - b)
    # evaluate(expr) on the vm and graph kinds (relayir's vm takes @main only)
    for kind in ("vm", "graph"):
        got = relay.create_executor(kind, target="numpy").evaluate(f)(a, b)
        np.testing.assert_array_equal(got.numpy(), a - b)
    assert relay.create_executor("debug").target.kind.name == "llvm"  # Relay's default


def test_graph_executor_takes_inputs_by_position_even_with_equal_names():
    xs = [relay.var("input", shape=(2,)) for _ in range(3)]
    f = relay.Function(xs, relay.stack(xs, axis=0))
    data = [np.full(2, i, "float32") for i in range(3)]
    out = relay.create_executor("graph", target="numpy").evaluate(f)(*data)
    np.testing.assert_array_equal(out.numpy(), np.stack(data))


def test_workloads_have_relays_inputs():
    mod, params = testing.resnet.get_workload(num_layers=18, batch_size=2, num_classes=10,
                                              image_shape=(3, 32, 32))
    main = mod["main"]
    assert main.params[0].name_hint == "data"
    assert main.params[0].type_annotation == relay.TensorType((2, 3, 32, 32))
    assert set(params) == {p.name_hint for p in main.params[1:]}
    assert all(isinstance(v, tvm.nd.NDArray) for v in params.values())
    typed = relay.transform.InferType()(mod)
    assert typed["main"].ret_type == relay.TensorType((2, 10))

    mod, params = testing.mlp.get_workload(batch_size=2, num_classes=10)
    assert mod["main"].params[0].type_annotation == relay.TensorType((2, 1, 28, 28))
    data = np.random.default_rng(0).standard_normal((2, 1, 28, 28)).astype("float32")
    out = relay.create_executor("debug", mod=mod, params=params).evaluate()(data)
    expected = relayir.testing.models.mlp_reference(
        {k: v.numpy() for k, v in params.items()}, data.reshape(2, -1))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(relayir.Error, match="square 3-channel"):
        testing.resnet.get_workload(image_shape=(3, 32, 48))


def test_prelude_has_relays_names():
    mod = tvm.IRModule()
    p = relay.Prelude(mod)
    _, cons, nil = mod.get_type("List")
    assert (cons, nil) == (p.cons, p.nil) and p.l == mod.get_global_type_var("List")
    xs = cons(relay.const(1), cons(relay.const(2), nil()))
    total = relay.create_executor("debug", mod=mod).evaluate(p.sum(xs))
    assert total.numpy() == 3
    three = relay.create_executor("debug", mod=mod).evaluate(testing.make_nat_expr(p, 3))
    assert testing.count(p, three) == 3
    assert testing.count(p, testing.make_nat_value(p, 4)) == 4


def test_scope_builder_and_while_loop():
    sb = ScopeBuilder()
    x = relay.var("x", "int32")
    y = sb.let("y", x + relay.const(1))
    with sb.if_scope(relay.greater(y, relay.const(2))):
        sb.ret(y)
    with sb.else_scope():
        sb.ret(relay.const(0))
    f = relay.Function([x], sb.get())
    assert _run(f, np.array(5, "int32")).numpy() == 6
    assert _run(f, np.array(0, "int32")).numpy() == 0

    i = relay.var("i", "int32")
    acc = relay.var("acc", "int32")
    loop = while_loop(lambda i, acc: relay.less(i, relay.const(5)), [i, acc],
                      lambda i, acc: [i + relay.const(1), acc + i])
    body = relay.TupleGetItem(loop(relay.const(0), relay.const(0)), 1)
    assert _run(relay.Function([], body)).numpy() == 0 + 1 + 2 + 3 + 4


def test_tvm_names_for_errors_and_loop_ir_values():
    x = relay.var("x", shape=(2,))
    with pytest.raises(tvm.error.TVMError):
        testing.run_infer_type(relay.nn.dense(x, x))
    assert isinstance(tvm.tir.IntImm("int32", 3), tvm.tir.IntImm)
    assert isinstance(tvm.te.size_var("n"), tvm.tir.Var)
    assert tvm.testing.enabled_targets() == [("llvm", tvm.cpu(0))]


def test_relays_node_api_on_relayirs_own_nodes():
    # operators and calls on expressions
    x = relay.var("x", "int32")
    assert (x < relay.const(1)).op.name == "less" and (x >= 1).op.name == "greater_equal"
    f = relay.var("f")
    assert isinstance(f(x), relay.Call) and f(x).op is f
    # modules hold type definitions under their type variable, as in Relay
    box = relay.GlobalTypeVar("Box")
    a = relay.TypeVar("a")
    ctor = relay.Constructor("box", [a], box)
    mod = tvm.IRModule()
    mod[box] = relay.TypeData(box, [a], [ctor])
    assert mod[box].constructors == (ctor,) and mod.get_type("Box") == (box, ctor)
    assert box(relay.scalar_type("int32")) == relay.TypeCall(box, [relay.scalar_type("int32")])
    # Relay's standard library files are relayir's one prelude
    mod.import_from_std("nat.rly")
    mod.import_from_std("prelude.rly")  # already there: nothing changes
    assert mod.has_type("List") and "nat_double" in mod
    with pytest.raises(relayir.Error, match="unknown file"):
        mod.import_from_std("gradient.rly")


def test_relays_prelude_functions():
    mod = tvm.IRModule()
    p = relay.Prelude(mod)
    xs = p.cons(relay.const(1), p.cons(relay.const(2), p.cons(relay.const(3), p.nil())))
    ev = relay.create_executor("debug", mod=mod).evaluate
    updated = ev(p.update(xs, relay.const(1), relay.const(7)))
    assert [int(v.numpy()) for v in relayir.runtime.to_list(updated)] == [1, 7, 3]
    a, b = relay.var("a", "int32"), relay.var("b", "int32")
    minus = relay.Function([a, b], a - b)
    assert int(ev(p.foldr1(minus, xs)).numpy()) == 1 - (2 - 3)
    assert int(ev(p.sum(xs)).numpy()) == 6
    two = testing.make_nat_expr(p, 2)
    assert testing.count(p, ev(p.nat_double(two))) == 4
    assert testing.count(p, ev(p.nat_add(two, testing.make_nat_expr(p, 3)))) == 5


def test_relay_parse_expr_refuses_an_unbound_variable_and_calls_take_none_type_args():
    with pytest.raises(relayir.Error, match="unbound variable %x"):
        relay.parse_expr("if (True) { let %x = (); () } else { %x }")
    declared = relay.parse_expr("free_var %x: float32; %x")
    assert isinstance(declared, relay.Var)
    assert isinstance(relayir.ir.parser.parse_expr("%x"), relay.Var)  # relayir's own: free
    f = relay.Var("f")
    assert relay.Call(f, [], None, None).type_args == ()
