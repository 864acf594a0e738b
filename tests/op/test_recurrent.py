"""The recurrent sequence ops (issue 12): ``nn.lstm_sequence``, ``nn.gru_sequence``,
``nn.rnn_sequence``. The numpy references against torch's ``nn.LSTM`` / ``nn.GRU`` /
``nn.RNN`` (and, for ONNX's GRU without ``linear_before_reset``, a step written out here);
the cpu kernels (one C routine call) against the references, on the graph executor and
on the VM with a dynamic batch; the type relation's errors; the weight packing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import relayir as relay
from relayir.codegen.routines import ROUTINES
from relayir.errors import TypeInferenceError
from relayir.op.nn.recurrent import pack_recurrent_weight
from relayir.testing.op_check import check_op, infer_op_type

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
OPS = {"lstm": "nn.lstm_sequence", "gru": "nn.gru_sequence", "rnn_tanh": "nn.rnn_sequence",
       "rnn_relu": "nn.rnn_sequence"}


def _packed(w: np.ndarray, gates: int, block: int) -> np.ndarray:
    """The packing written directly in numpy: ``packed[b, k, g, v] = W[g*H + b*block + v, k]``."""
    hidden = w.shape[1]
    blocks = -(-hidden // block)
    out = np.zeros((blocks, hidden, gates, block), w.dtype)
    for b in range(blocks):
        for g in range(gates):
            for v in range(min(block, hidden - b * block)):
                out[b, :, g, v] = w[g * hidden + b * block + v]
    return out


def _torch_layer(kind, inputs, hidden):
    layer = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(kind)
    if layer is None:
        return torch.nn.RNN(inputs, hidden, nonlinearity=kind[4:])
    return layer(inputs, hidden)


def _case(kind, seq=6, batch=3, features=4, hidden=20, block=16, reverse=False, seed=0,
          dtype="float32"):
    """Inputs of the sequence op for a torch layer, the op's attrs, and torch's outputs
    (``(y, h_n[, c_n])``) for the same sequence (flipped in time when ``reverse``)."""
    torch.manual_seed(seed)
    layer = _torch_layer(kind, features, hidden).double().eval()
    x = torch.randn(seq, batch, features, dtype=torch.float64)
    h0 = torch.randn(1, batch, hidden, dtype=torch.float64)
    state = (h0, torch.randn(1, batch, hidden, dtype=torch.float64)) if kind == "lstm" else h0
    with torch.no_grad():
        xs = x.flip(0) if reverse else x
        y, st = layer(xs, state)
        y = y.flip(0) if reverse else y
    finals = [s[0].numpy() for s in (st if kind == "lstm" else (st,))]
    w_ih, w_hh = layer.weight_ih_l0.detach().numpy(), layer.weight_hh_l0.detach().numpy()
    b_ih, b_hh = layer.bias_ih_l0.detach().numpy(), layer.bias_hh_l0.detach().numpy()
    gates = GATES[kind]
    data = x.numpy() @ w_ih.T + b_ih
    if kind != "gru":
        data = data + b_hh
    packed = _packed(w_hh, gates, block)
    args = [data, h0[0].numpy()]
    if kind == "lstm":
        args += [state[1][0].numpy(), packed]
    elif kind == "gru":
        args += [packed, b_hh]
    else:
        args += [packed]
    attrs = {"reverse": reverse}
    if kind.startswith("rnn"):
        attrs["activation"] = kind[4:]
    args = [np.asarray(a, dtype) for a in args]
    return args, attrs, [np.asarray(o, dtype) for o in (y.numpy(), *finals)]


@pytest.mark.parametrize("kind", list(GATES))
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("block", [16, 32, 7])
def test_reference_matches_torch(kind, reverse, block):
    args, attrs, expected = _case(kind, block=block, reverse=reverse, dtype="float64")
    check_op(OPS[kind], args, tuple(expected), attrs, rtol=1e-10, atol=1e-12)


def _gru_reset_before_product(data, h0, w, bias):
    """ONNX's GRU with linear_before_reset=0, gates r, z, n, step by step."""
    hidden = h0.shape[1]
    h, ys = h0.astype("float64"), []
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    w_r, w_z, w_n = np.split(w.astype("float64"), 3)
    b_r, b_z, b_n = np.split(bias.astype("float64"), 3)
    for t in range(data.shape[0]):
        x_r, x_z, x_n = (data[t, :, k * hidden:(k + 1) * hidden] for k in range(3))
        r = sig(x_r + h @ w_r.T + b_r)
        z = sig(x_z + h @ w_z.T + b_z)
        n = np.tanh(x_n + (r * h) @ w_n.T + b_n)
        h = (1 - z) * n + z * h
        ys.append(h)
    return np.stack(ys), h


def test_gru_reset_before_the_product():
    rng = np.random.default_rng(1)
    seq, batch, hidden = 5, 2, 9
    data = rng.standard_normal((seq, batch, 3 * hidden))
    h0 = rng.standard_normal((batch, hidden))
    w = rng.standard_normal((3 * hidden, hidden)) / 3
    bias = rng.standard_normal(3 * hidden)
    expected = _gru_reset_before_product(data, h0, w, bias)
    check_op("nn.gru_sequence", [data, h0, _packed(w, 3, 4), bias], expected,
             {"linear_before_reset": False}, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- the cpu kernels


def _build_and_run(op, args, attrs, target, executor="graph"):
    params = [relay.var(f"a{i}", shape=a.shape, dtype=a.dtype.name) for i, a in enumerate(args)]
    mod = relay.IRModule.from_expr(relay.Function(params, relay.op.call(op, params, **attrs)))
    if executor == "vm":
        return None, mod
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target)
    m = relay.graph_executor.GraphModule(lib)
    for p, a in zip(params, args):
        m.set_input(p.name_hint, a)
    m.run()
    return [m.get_output(i) for i in range(m.get_num_outputs())], lib


CPU_CASES = [(kind, dict(block=block, reverse=reverse, hidden=hidden, batch=batch))
             for kind in GATES for block, reverse, hidden, batch in
             [(16, False, 20, 3), (32, True, 40, 1), (5, False, 12, 2), (16, False, 64, 4)]]


@pytest.mark.parametrize("kind,knobs", CPU_CASES,
                         ids=[f"{k}-{'-'.join(map(str, v.values()))}" for k, v in CPU_CASES])
def test_cpu_kernel_matches_torch(kind, knobs):
    args, attrs, expected = _case(kind, **knobs)
    got, lib = _build_and_run(OPS[kind], args, attrs, "cpu")
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    source = lib.get_lib().get_source()
    routine = f"rl_{OPS[kind][3:].split('_')[0]}_sequence_f32("
    assert source.count(routine) == 2  # its definition and the one call


def test_cpu_gru_reset_before_the_product_and_float64():
    rng = np.random.default_rng(2)
    seq, batch, hidden = 4, 3, 33
    for dtype, tol in (("float32", 1e-5), ("float64", 1e-12)):
        data = rng.standard_normal((seq, batch, 3 * hidden)).astype(dtype)
        h0 = rng.standard_normal((batch, hidden)).astype(dtype)
        w = (rng.standard_normal((3 * hidden, hidden)) / 6).astype(dtype)
        bias = rng.standard_normal(3 * hidden).astype(dtype)
        expected = _gru_reset_before_product(data, h0, w, bias)
        got, _ = _build_and_run("nn.gru_sequence", [data, h0, _packed(w, 3, 16), bias],
                                {"linear_before_reset": False}, "cpu")
        for g, e in zip(got, expected):
            assert g.dtype == dtype
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def test_empty_sequence_returns_the_initial_state():
    args, attrs, _ = _case("lstm", seq=1)
    args[0] = args[0][:0]
    got, _ = _build_and_run("nn.lstm_sequence", args, attrs, "cpu")
    assert got[0].shape == (0, 3, 20)
    np.testing.assert_array_equal(got[1], args[1])
    np.testing.assert_array_equal(got[2], args[2])


def test_vm_with_a_dynamic_batch():
    """The routine takes the batch from the kernel's dims at run time."""
    args, attrs, _ = _case("lstm", batch=3)
    hidden, features = 20, args[0].shape[2]
    data = relay.var("data", shape=(6, relay.Any(), features), dtype="float32")
    h0 = relay.var("h0", shape=(relay.Any(), hidden), dtype="float32")
    c0 = relay.var("c0", shape=(relay.Any(), hidden), dtype="float32")
    w = relay.const(args[3])
    out = relay.nn.lstm_sequence(data, h0, c0, w)
    mod = relay.IRModule.from_expr(relay.Function([data, h0, c0], out))
    exe = relay.vm.compile(mod, target="cpu")
    vm = relay.vm.VirtualMachine(exe)
    for batch in (3, 1):
        xs = [a[:, :batch] if k == 0 else a[:batch] for k, a in enumerate(args[:3])]
        got = vm.invoke("main", *xs)
        want = relay.op.get_op("nn.lstm_sequence").reference(*xs, args[3],
                                                             relay.op.call(
                                                                 "nn.lstm_sequence",
                                                                 [data, h0, c0, w]).attrs)
        for g, e in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5, atol=1e-6)


def test_every_sequence_routine_is_in_the_codegen_table():
    for cell in ("lstm", "gru", "rnn"):
        for suffix in ("f32", "f64"):
            assert f"rl_{cell}_sequence_{suffix}" in ROUTINES


# ---------------------------------------------------------------- packing and types


@pytest.mark.parametrize("hidden,block", [(20, 16), (32, 16), (5, 8)])
def test_pack_recurrent_weight_folds_to_the_packed_layout(hidden, block):
    w = np.random.default_rng(0).standard_normal((3 * hidden, hidden)).astype("float32")
    packed = pack_recurrent_weight(relay.const(w), 3, hidden, block)
    mod = relay.transform.FoldConstant()(relay.IRModule.from_expr(relay.Function([], packed)))
    body = mod["main"].body
    assert isinstance(body, relay.Constant)
    np.testing.assert_array_equal(body.data, _packed(w, 3, block))


def _types(*shapes):
    return [np.zeros(s, "float32") for s in shapes]


def test_type_relation():
    ty = infer_op_type("nn.lstm_sequence", _types((6, 2, 80), (2, 20), (2, 20), (2, 20, 4, 16)))
    assert [tuple(f.shape) for f in ty.fields] == [(6, 2, 20), (2, 20), (2, 20)]
    ty = infer_op_type("nn.gru_sequence", _types((6, 2, 60), (2, 20), (1, 20, 3, 32), (60,)))
    assert [tuple(f.shape) for f in ty.fields] == [(6, 2, 20), (2, 20)]


@pytest.mark.parametrize("op,shapes,message", [
    ("nn.lstm_sequence", [(6, 2, 81), (2, 20), (2, 20), (2, 20, 4, 16)], "4 \\* hidden = 80"),
    ("nn.lstm_sequence", [(6, 3, 80), (2, 20), (2, 20), (2, 20, 4, 16)], "batch"),
    ("nn.lstm_sequence", [(6, 2, 80), (2, 20), (2, 21), (2, 20, 4, 16)], "c0 must have"),
    ("nn.lstm_sequence", [(6, 2, 80), (2, 20), (2, 20), (3, 20, 4, 16)], "ceil\\(20 / 16\\)"),
    ("nn.lstm_sequence", [(6, 2, 80), (2, 20), (2, 20), (2, 20, 3, 16)], "packed"),
    ("nn.lstm_sequence", [(6, 2, 80), (2, 20), (2, 20), (20, 80)], "packed"),
    ("nn.rnn_sequence", [(6, 2, 20), (2, 20), (1, 20, 1, 65)], "between 1 and 64"),
    ("nn.gru_sequence", [(6, 2, 60), (2, 20), (2, 20, 3, 16), (20,)], "bias must be"),
])
def test_type_errors_name_the_problem(op, shapes, message):
    with pytest.raises(TypeInferenceError, match=message):
        infer_op_type(op, _types(*shapes))


def test_integer_data_is_refused():
    with pytest.raises(TypeInferenceError, match="float"):
        infer_op_type("nn.rnn_sequence", [np.zeros((2, 1, 4), "int32"),
                                          np.zeros((1, 4), "int32"),
                                          np.zeros((1, 4, 1, 4), "int32")])
