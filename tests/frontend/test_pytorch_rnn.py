"""PyTorch frontend, recurrent layers (issue 6): ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` (one
``aten.lstm.input`` / ``gru.input`` / ``rnn_tanh.input`` / ``rnn_relu.input`` node each) and
the one-step cells, unrolled by ``pytorch_ops/rnn.py``; each compared with eager torch
through the debug executor (rtol 1e-4 / atol 1e-5), a sample also built for the cpu target."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from torch import nn

import relayir
from relayir.frontend import ConversionError, from_pytorch
from relayir.frontend.pytorch_ops import rnn
from relayir.frontend.pytorch_ops.base import TorchImport, importing

SEQ, BATCH, FEATURES, HIDDEN = 4, 2, 3, 5
# torch's own export notice about nn.RNNBase's flat weight list; the weights stay parameters
pytestmark = pytest.mark.filterwarnings("ignore:The tensor attributes:UserWarning")


class Returns(nn.Module):
    """Runs ``layer`` and returns its outputs flat: ``(output, h_n[, c_n])``."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x, *state):
        if isinstance(self.layer, nn.LSTM) and state:
            state = (tuple(state),)
        out, hidden = self.layer(x, *state)
        return (out, *hidden) if isinstance(hidden, tuple) else (out, hidden)


def run(model, inputs, target=None):
    """``model`` imported and run on ``inputs`` by the debug executor (or built for
    ``target`` and run by the graph executor), compared with eager torch; returns the
    largest absolute error."""
    model = model.eval()
    infos = [(f"x{i}", tuple(x.shape)) for i, x in enumerate(inputs)]
    mod, params = from_pytorch(model, infos)
    arrays = [x.numpy() for x in inputs]
    if target is None:
        got = relayir.create_executor("debug", mod).evaluate()(*arrays, **params)
    else:
        with relayir.transform.PassContext(opt_level=3):
            lib = relayir.build(mod, target=target, params=params)
        m = relayir.graph_executor.GraphModule(lib)
        for (name, _), a in zip(infos, arrays):
            m.set_input(name, a)
        m.run()
        got = [m.get_output(i) for i in range(m.get_num_outputs())]
    with torch.no_grad():
        want = model(*inputs)
    wants = want if isinstance(want, tuple) else (want,)
    gots = got if isinstance(want, tuple) else (got,)
    assert len(gots) == len(wants)
    error = 0.0
    for g, w in zip(gots, wants):
        g = np.asarray(g)
        assert g.shape == tuple(w.shape) and g.dtype == np.float32
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-5)
        error = max(error, float(np.abs(g - w.numpy()).max()))
    return error


def _states(layer, batch=BATCH):
    """Random initial states shaped as ``layer`` expects them."""
    dirs = 2 if layer.bidirectional else 1
    out = layer.proj_size or layer.hidden_size
    h0 = torch.randn(layer.num_layers * dirs, batch, out)
    if isinstance(layer, nn.LSTM):
        return [h0, torch.randn(layer.num_layers * dirs, batch, layer.hidden_size)]
    return [h0]


LAYERS = {
    "lstm": lambda **kw: nn.LSTM(FEATURES, HIDDEN, **kw),
    "gru": lambda **kw: nn.GRU(FEATURES, HIDDEN, **kw),
    "rnn_tanh": lambda **kw: nn.RNN(FEATURES, HIDDEN, nonlinearity="tanh", **kw),
    "rnn_relu": lambda **kw: nn.RNN(FEATURES, HIDDEN, nonlinearity="relu", **kw),
}
GRID = list(itertools.product(LAYERS, (False, True), (False, True), (1, 2), (False, True)))


@pytest.mark.parametrize(("kind", "batch_first", "bidirectional", "num_layers", "with_state"),
                         GRID, ids=["-".join(str(v) for v in case) for case in GRID])
def test_layer_matches_torch(kind, batch_first, bidirectional, num_layers, with_state):
    torch.manual_seed(0)
    layer = LAYERS[kind](batch_first=batch_first, bidirectional=bidirectional,
                         num_layers=num_layers)
    x = torch.randn(BATCH, SEQ, FEATURES) if batch_first else torch.randn(SEQ, BATCH, FEATURES)
    run(Returns(layer), [x, *(_states(layer) if with_state else [])])


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_with_projection(bidirectional):
    torch.manual_seed(1)
    layer = nn.LSTM(FEATURES, HIDDEN, num_layers=2, proj_size=2, bidirectional=bidirectional,
                    batch_first=True)
    run(Returns(layer), [torch.randn(BATCH, SEQ, FEATURES), *_states(layer)])


@pytest.mark.parametrize("kind", list(LAYERS))
def test_without_biases_unbatched_and_single_step(kind):
    torch.manual_seed(2)
    run(Returns(LAYERS[kind](bias=False)), [torch.randn(SEQ, BATCH, FEATURES)])
    run(Returns(LAYERS[kind]()), [torch.randn(SEQ, FEATURES)])  # unbatched (seq, features)
    run(Returns(LAYERS[kind]()), [torch.randn(1, BATCH, FEATURES)])


class CellLoop(nn.Module):
    """A cell stepped over the sequence in Python: exports as one cell op per step."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, xs, h):
        state = (h, torch.tanh(h)) if isinstance(self.cell, nn.LSTMCell) else h
        outs = []
        for x in xs.unbind(0):
            state = self.cell(x, state)
            outs.append(state[0] if isinstance(state, tuple) else state)
        return torch.stack(outs), *(state if isinstance(state, tuple) else (state,))


CELLS = {
    "lstm_cell": nn.LSTMCell(FEATURES, HIDDEN),
    "gru_cell": nn.GRUCell(FEATURES, HIDDEN),
    "rnn_tanh_cell": nn.RNNCell(FEATURES, HIDDEN),
    "rnn_relu_cell": nn.RNNCell(FEATURES, HIDDEN, nonlinearity="relu", bias=False),
}


@pytest.mark.parametrize("name", list(CELLS))
def test_cell_in_a_loop(name):
    torch.manual_seed(3)
    model = CellLoop(CELLS[name])
    ep = torch.export.export(model.eval(), (torch.randn(SEQ, BATCH, FEATURES),
                                            torch.randn(BATCH, HIDDEN)))
    ops = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert ops.count(f"aten.{name}.default") == SEQ
    run(model, [torch.randn(SEQ, BATCH, FEATURES), torch.randn(BATCH, HIDDEN)])


@pytest.mark.parametrize("kind", list(LAYERS))
def test_graph_executor_on_cpu(kind):
    torch.manual_seed(4)
    layer = LAYERS[kind](num_layers=2, bidirectional=True, batch_first=True)
    run(Returns(layer), [torch.randn(BATCH, SEQ, FEATURES), *_states(layer)], target="cpu")


@pytest.mark.parametrize(("kind", "op"), [("lstm", "nn.lstm_sequence"),
                                        ("gru", "nn.gru_sequence"),
                                        ("rnn_tanh", "nn.rnn_sequence")])
def test_one_projection_then_one_sequence_op(kind, op):
    """Per layer and direction: one dense over the whole sequence, then the recurrence as
    one sequence op (every step in one kernel); no dense per step."""
    mod, _ = from_pytorch(Returns(LAYERS[kind](bidirectional=True)).eval(),
                          [("x", (SEQ, BATCH, FEATURES))])
    text = mod.astext()
    assert text.count("nn.dense(%x") == 2
    assert text.count("nn.dense(") == 2
    assert text.count(f"{op}(") == 2


def test_lstm_with_projection_stays_unrolled():
    """The sequence ops have no projection ``W_hr``: such an LSTM is unrolled per step."""
    layer = nn.LSTM(FEATURES, HIDDEN, proj_size=2)
    mod, _ = from_pytorch(Returns(layer).eval(), [("x", (SEQ, BATCH, FEATURES))])
    text = mod.astext()
    assert "nn.lstm_sequence(" not in text and text.count("nn.dense(") == 1 + 2 * SEQ


def test_dynamic_sequence_length_is_a_clear_error():
    """torch.export itself specialises the length of an ``aten.lstm`` input today; should
    a symbolic one reach the converter, it names the problem."""
    x = relayir.var("x", shape=(1, BATCH, FEATURES))
    context = TorchImport()
    context.meta[id(x)] = type("Fake", (), {"shape": ("s0", BATCH, FEATURES)})()
    with importing(context), pytest.raises(ConversionError,
                                           match=r"sequence length is dynamic \(s0\)"):
        rnn.gru(x, x, [x, x], False, 1, 0.0, False, False, False)


def test_training_dropout_between_layers_is_refused():
    layer = nn.GRU(FEATURES, HIDDEN, num_layers=2, dropout=0.5).train()
    ep = torch.export.export(Returns(layer).train(), (torch.randn(SEQ, BATCH, FEATURES),))
    with pytest.raises(ConversionError, match="dropout=0.5 between layers in training mode"):
        from_pytorch(ep, [("x", (SEQ, BATCH, FEATURES))])


def test_a_dim_name_shared_by_inputs_is_one_dynamic_dim():
    # the batch of x and of the initial state must be one torch Dim, or export refuses
    torch.manual_seed(0)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 5, batch_first=True)

        def forward(self, x, h, c):
            return self.lstm(x, (h, c))[0]

    model = Model().eval()
    mod, params = from_pytorch(model, [("x", ("batch", 4, 3)), ("h", (1, "batch", 5)),
                                       ("c", (1, "batch", 5))])
    run = relayir.create_executor("debug", mod, params=params).evaluate()
    for batch in (2, 3):
        x, h, c = torch.randn(batch, 4, 3), torch.randn(1, batch, 5), torch.randn(1, batch, 5)
        want = model(x, h, c).detach().numpy()
        np.testing.assert_allclose(np.asarray(run(x.numpy(), h.numpy(), c.numpy())), want,
                                   rtol=1e-4, atol=1e-5)
