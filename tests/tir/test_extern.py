"""``te.extern`` stages (issue 12): a hand-written C routine inside a kernel. Its inputs
are materialised even where they would be inlined, its outputs are buffers its
consumers read, one call writes all of them (an unused one gets a temporary), and the
module carries each routine's C text once."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from relayir.codegen.c_printer import render_module
from relayir.codegen.native import compile_kernels
from relayir.codegen.routines import UnknownRoutineError, routine_sources
from relayir.te import compute, exp, extern, placeholder
from relayir.tir import stmt as S
from relayir.tir.lower import lower_tensors

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")


def _calls(stmt) -> list:
    out, stack = [], [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, S.CallRoutine):
            out.append(s)
        elif isinstance(s, S.SeqStmt):
            stack.extend(s.stmts)
        elif isinstance(s, (S.Allocate, S.For)):
            stack.append(s.body)
    return out


def _softmax_between_computes():
    x = placeholder((6, 10), "float32", "x")
    doubled = compute((6, 10), lambda i, j: x[i, j] * 2.0, name="doubled", tag="elemwise")
    (soft,) = extern([((6, 10), "float32")], [doubled], "rl_softmax_f32", (6, 10, 1, 0),
                     name="soft", tag="softmax")
    out = compute((6, 10), lambda i, j: soft[i, j] + 1.0, name="plus", tag="elemwise")
    return x, doubled, soft, out


def test_inputs_are_materialised_and_one_call_is_made():
    x, doubled, soft, out = _softmax_between_computes()
    kernel = lower_tensors([x], [out], "k")
    assert kernel.info["stages"] == ["doubled", "soft", "plus"]
    calls = _calls(kernel.body)
    assert len(calls) == 1 and calls[0].routine == "rl_softmax_f32"
    assert [b.kind for b in calls[0].buffers] == ["temp", "temp"]


@needs_cc
def test_extern_between_computes_runs():
    x, _, _, out = _softmax_between_computes()
    kernel = lower_tensors([x], [out], "k_extern")
    source = render_module([kernel])
    assert source.count("int32_t rl_softmax_f32(") == 1
    fn = compile_kernels([kernel])["k_extern"]
    data = np.random.default_rng(0).standard_normal((6, 10)).astype("float32")
    e = np.exp(2 * data - (2 * data).max(1, keepdims=True))
    np.testing.assert_allclose(fn(data)[0], e / e.sum(1, keepdims=True) + 1, rtol=1e-5)


@needs_cc
def test_an_unused_output_gets_a_temporary():
    data = placeholder((4, 2, 3), "float32", "data")
    h0 = placeholder((2, 3), "float32", "h0")
    w = placeholder((1, 3, 1, 16), "float32", "w")
    y, h_n = extern([((4, 2, 3), "float32"), ((2, 3), "float32")], [data, h0, w],
                    "rl_rnn_sequence_f32", (4, 2, 3, 16, 0, 1), name="rnn", tag="recurrent")
    doubled = compute((2, 3), lambda i, j: exp(h_n[i, j]), name="e")
    kernel = lower_tensors([data, h0, w], [doubled], "k_rnn")
    (call,) = _calls(kernel.body)
    assert [b.kind for b in call.buffers[3:]] == ["temp", "temp"]
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32") for s in ((4, 2, 3), (2, 3), (1, 3, 1, 16))]
    h = args[1].astype("float64")
    w_hh = args[2][0, :, 0, :3].T.astype("float64")  # packed[0, k, 0, v] = W[v, k]
    for t in range(4):
        h = np.maximum(args[0][t] + h @ w_hh.T, 0)
    got = compile_kernels([kernel])["k_rnn"](*args)[0]
    np.testing.assert_allclose(got, np.exp(h), rtol=1e-5)


def test_unknown_routine_is_a_clear_error():
    with pytest.raises(UnknownRoutineError, match="no C routine named 'rl_nope'"):
        routine_sources(["rl_nope"])


def test_routine_text_comes_once_with_what_it_requires():
    text = routine_sources(["rl_lstm_sequence_f32", "rl_gru_sequence_f32",
                            "rl_lstm_sequence_f32"])
    assert text.count("int32_t rl_lstm_sequence_f32(") == 1
    assert text.count("static inline int rl_team(") == 1
    assert text.count("void rl_rec_panel_f32(") == 1
    assert text.index("rl_team(") < text.index("rl_rec_panel_f32(") < text.index(
        "rl_lstm_sequence_f32(")
