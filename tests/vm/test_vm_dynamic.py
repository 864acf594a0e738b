"""The VM with dynamic shapes: one kernel per primitive function serves every shape
(shape functions allocate the outputs), a data-dependent If, recursion over a List of
any length, and clear errors for inputs that contradict the function's type."""

import numpy as np
import pytest

import relayir as relay
from relayir import Any, SymbolicDim, TensorType
from relayir.runtime.values import values_equal
from relayir.testing.models.bert import bert, make_inputs_of_length
from relayir.testing.models.lstm import list_value, lstm_recursive
from relayir.vm.bytecode import Opcode
from relayir.vm.shape_func import ShapeFunction

TARGETS = ["numpy", "cpu"]
BERT = dict(num_layers=2, hidden=64, heads=4, intermediate=128, vocab=100, max_position=128)


def reference(mod, *args):
    return relay.create_executor("debug", mod).evaluate()(*args)


def opcodes(exe) -> set:
    return {ins.op for f in exe.functions for ins in f.instructions}


@pytest.fixture
def no_new_kernels(monkeypatch):
    """After ``arm()``, lowering or compiling a kernel fails the test."""
    import relayir.backend.lowering as lowering
    from relayir.runtime import numpy_kernels

    def forbidden(*_, **__):
        raise AssertionError("a kernel was compiled after vm.compile")

    def arm():
        monkeypatch.setattr(lowering, "compile_source", forbidden)
        monkeypatch.setattr(lowering, "lower_primitive", forbidden)
        monkeypatch.setattr(lowering, "NumpyKernel", forbidden)
        monkeypatch.setattr(numpy_kernels, "NumpyKernel", forbidden)

    return arm


@pytest.mark.parametrize("seq_dim", ["seq", Any()], ids=["symbolic", "any"])
@pytest.mark.parametrize("target", TARGETS)
def test_bert_compiled_once_runs_every_sequence_length(target, seq_dim, no_new_kernels):
    mod, params = bert(seq_len=seq_dim, **BERT)
    exe = relay.vm.compile(mod, target=target, params=params)
    assert Opcode.InvokeShapeFunc in opcodes(exe) and Opcode.AllocTensorReg in opcodes(exe)
    if target == "cpu":  # every primitive function is ONE C kernel with dims arguments
        assert all(type(k).__name__ == "CKernel" for k in exe.kernels if k is not None)
        assert any(k.dim_names for k in exe.kernels if k is not None)
    vm = relay.vm.VirtualMachine(exe)
    static = {}
    for n in (1, 7, 64, 128):  # the static builds first: then nothing may compile
        smod, sparams = bert(seq_len=n, **BERT)
        static[n] = relay.vm.VirtualMachine(relay.vm.compile(smod, target=target,
                                                             params=sparams))
    no_new_kernels()
    for n in (1, 7, 64, 128):
        inp = make_inputs_of_length(mod, np.random.default_rng(n), n)
        got = vm.run(inp["input_ids"], inp["position_ids"])
        want = static[n].run(inp["input_ids"])
        assert got.shape == (1, n, BERT["hidden"])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dynamic_bert_equals_the_reference_interpreter():
    mod, params = bert(seq_len="seq", **BERT)
    inp = make_inputs_of_length(mod, np.random.default_rng(0), 5)
    want = relay.create_executor("debug", mod).evaluate()(**inp, **params)
    exe = relay.vm.compile(mod, target="cpu", params=params)
    got = relay.vm.VirtualMachine(exe).run(inp["input_ids"], inp["position_ids"])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_recursive_lstm_over_lists_of_any_length(target):
    mod, params = lstm_recursive(batch_size=1, seq_len=4, input_size=8, hidden_size=16)
    weights = list(params.values())
    exe = relay.vm.compile(mod, target=target)
    vm = relay.vm.VirtualMachine(exe)
    rng = np.random.default_rng(0)
    h0 = np.zeros((1, 16), "float32")
    for steps in (0, 1, 3, 9):
        xs = [rng.standard_normal((1, 8)).astype("float32") for _ in range(steps)]
        got = vm.invoke("lstm", list_value(mod, xs), h0, h0, *weights)
        want = relay.create_executor("debug", mod).evaluate(mod.get_global_var("lstm"))(
            list_value(mod, xs), h0, h0, *weights)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


IF_TEXT = """
def @main(%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] {
  if (greater(sum(%x), 0f)) { multiply(%x, 2f) } else { subtract(%x, 1f) }
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_if_on_a_condition_computed_from_data(target):
    mod = relay.parse(IF_TEXT)
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))
    for n, sign in ((2, 1), (2, -1), (5, 1), (5, -1)):
        x = sign * np.abs(np.random.default_rng(n).standard_normal((n, 3))).astype("float32")
        got, want = vm.run(x), reference(mod, x)
        assert values_equal(got, want, rtol=1e-6, atol=1e-6), (got, want)
        np.testing.assert_allclose(got, x * 2 if sign > 0 else x - 1, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_dynamic_reshape_is_a_view_and_tuples_come_back(target):
    x = relay.var("x", TensorType((SymbolicDim("n"), 4), "float32"))
    y = relay.exp(x)
    body = relay.Tuple([relay.reshape(y, (-1,)), relay.sum(y, axis=0)])
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    exe = relay.vm.compile(mod, target=target)
    vm = relay.vm.VirtualMachine(exe)
    for n in (1, 6):
        a = np.random.default_rng(n).standard_normal((n, 4)).astype("float32")
        flat, total = vm.run(a)
        np.testing.assert_allclose(flat, np.exp(a).reshape(-1), rtol=1e-6)
        np.testing.assert_allclose(total, np.exp(a).sum(0), rtol=1e-5)


def test_disassembly_of_dynamic_calls():
    import re

    # registers are renumbered by the liveness pass: match the shape of each line
    x = relay.var("x", TensorType((SymbolicDim("n"), 4), "float32"))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.reshape(x, (-1,))))
    text = str(relay.vm.compile(mod, target="numpy").bytecode)
    assert re.search(r"0: invoke_shape_func \$r\d+ vm_fused_0\(\$r0\)", text), text
    assert re.search(r"reshape_tensor \$r\d+ \$r0 shape \$r\d+", text), text
    assert "invoke_packed" not in text  # a reshape is a view: no kernel
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    text = str(relay.vm.compile(mod, target="numpy").bytecode)
    assert re.search(r"alloc_tensor_reg \$r\d+ shape \$r\d+ float32", text), text
    assert re.search(r"invoke_packed vm_fused_0 in\(\$r0\) out\(\$r\d+\)", text), text


def test_shape_function_is_the_type_relations_and_is_cached():
    x = relay.var("x", TensorType((SymbolicDim("n"), 4), "float32"))
    w = relay.var("w", TensorType((8, 4), "float32"))
    fn = relay.Function([x, w], relay.reshape(relay.nn.dense(x, w), (-1, 2)))
    fn = relay.transform.InferType()(relay.IRModule.from_expr(fn))["main"]
    sf = ShapeFunction("f", fn)
    assert sf(np.empty((3, 4)), np.empty((8, 4))) == ((12, 2),)
    assert sf(np.empty((5, 4)), np.empty((8, 4))) == ((20, 2),)
    assert len(sf.cache) == 2
    sf(np.empty((3, 4)), np.empty((8, 4)))
    assert len(sf.cache) == 2
    with pytest.raises(relay.Error, match="nn.dense"):
        sf(np.empty((3, 5)), np.empty((8, 4)))


WRONG_TEXT = """
def @main(%x: Tensor[(n, 4), float32], %y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
  add(%x, %y)
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_wrong_inputs_are_clear_errors_before_any_kernel(target):
    vm = relay.vm.VirtualMachine(relay.vm.compile(relay.parse(WRONG_TEXT), target=target))
    ok = np.ones((3, 4), "float32")
    np.testing.assert_allclose(vm.run(ok, ok), 2 * ok)
    with pytest.raises(relay.Error, match=r"input x of @main.*shape"):
        vm.run(np.ones((3, 4, 1), "float32"), ok)  # rank
    with pytest.raises(relay.Error, match=r"input y of @main.*dtype float32"):
        vm.run(ok, np.ones((3, 4), "float64"))  # dtype
    with pytest.raises(relay.Error, match=r"input y of @main.*shape"):
        vm.run(ok, np.ones((3, 5), "float32"))  # contradicts the static 4
    with pytest.raises(relay.Error, match=r"input y of @main: dim n .* is 5.* x has n = 3"):
        vm.run(ok, np.ones((5, 4), "float32"))  # one symbolic dim, two values


@pytest.mark.parametrize("target", TARGETS)
def test_two_dynamic_dims_broadcast_when_one_is_one(target):
    x = relay.var("x", TensorType((Any(), 4), "float32"))
    y = relay.var("y", TensorType((Any(), 4), "float32"))
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.exp(x) + relay.exp(y)))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))
    a = np.ones((3, 4), "float32")
    np.testing.assert_allclose(vm.run(a, a), 2 * np.exp(a), rtol=1e-6)
    # the cpu kernel reads both inputs at the output's row (one dim name): for a 1 that
    # broadcasts, the VM runs the function's reference for that call instead
    b = np.full((1, 4), 2, "float32")
    np.testing.assert_allclose(vm.run(a, b), np.exp(a) + np.exp(b), rtol=1e-6)
    np.testing.assert_allclose(vm.run(b, a), np.exp(a) + np.exp(b), rtol=1e-6)
    np.testing.assert_allclose(vm.run(a, a), 2 * np.exp(a), rtol=1e-6)  # the kernel again
    with pytest.raises(relay.Error, match="broadcast|anydim|cannot take"):
        vm.run(a, np.ones((2, 4), "float32"))  # 3 against 2: no broadcast


@pytest.mark.parametrize("target", TARGETS)
def test_a_dynamic_dim_of_one_broadcasts_against_a_static_dim(target):
    x = relay.var("x", TensorType((Any(), 4), "float32"))
    y = relay.var("y", TensorType((3, 4), "float32"))
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.nn.relu(x) * y))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))
    b = np.arange(12, dtype="float32").reshape(3, 4)
    for rows in (1, 3):  # 1: the kernel reads row 0 of x for every output row
        a = np.linspace(-1, 1, rows * 4, dtype="float32").reshape(rows, 4)
        np.testing.assert_array_equal(vm.run(a, b), np.maximum(a, 0) * b)


@pytest.mark.parametrize("target", TARGETS)
def test_data_dependent_ops_run_by_their_references(target):
    from relayir.op import dynamic as dyn

    x = relay.var("x", TensorType((Any(),), "float32"))
    y = relay.var("y", TensorType((Any(), Any()), "float32"))
    n = relay.var("n", TensorType((), "int64"))
    shaped = dyn.reshape(relay.exp(x), dyn.shape_of(y)) + y  # shape = y's, a value
    steps = dyn.arange(relay.const(np.int64(0)), n, relay.const(np.int64(1)))
    body = relay.Tuple([shaped, steps * relay.const(np.int64(2))])
    mod = relay.IRModule.from_expr(relay.Function([x, y, n], body))
    exe = relay.vm.compile(mod, target=target)
    assert {Opcode.ShapeOf, Opcode.InvokeDataDependent} <= opcodes(exe)
    vm = relay.vm.VirtualMachine(exe)
    for p, q in ((2, 3), (4, 5)):
        rng = np.random.default_rng(p)
        xv = rng.standard_normal(p * q).astype("float32")
        yv = rng.standard_normal((p, q)).astype("float32")
        got = vm.run(xv, yv, np.array(p + q, "int64"))
        assert values_equal(got, reference(mod, xv, yv, np.array(p + q, "int64")),
                            rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[0], np.exp(xv).reshape(p, q) + yv, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got[1], 2 * np.arange(p + q))


def test_pytorch_bert_with_a_dynamic_sequence_runs_on_the_vm():
    torch = pytest.importorskip("torch")
    from relayir.frontend import from_pytorch
    from relayir.testing.models import torch_models as tm

    torch.manual_seed(0)
    model = tm.build("bert", num_layers=2, hidden=32, heads=4, intermediate=64, vocab=50,
                     max_position=64).eval()
    mod, params = from_pytorch(model, [("input_ids", ((1, "seq"), "int64"))])
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params))
    for n in (1, 12, 64):
        ids = torch.randint(0, 50, (1, n))
        with torch.no_grad():
            want = model(ids).numpy()
        np.testing.assert_allclose(vm.run(ids.numpy()), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_ops_whose_result_size_depends_on_values_run_through_their_reference(target):
    # argwhere's result length is known only from the values: no shape function can say
    x = relay.var("x", shape=(2, 3), dtype="float32")
    body = relay.dyn.argwhere(relay.greater(x, relay.const(0.0)))
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))
    for data in (np.array([[1, -1, 2], [0, 3, -4]], "float32"), -np.ones((2, 3), "float32")):
        np.testing.assert_array_equal(vm.run(data), np.argwhere(data > 0))
