"""Dim expressions through the VM: a module whose shapes hold ``floordiv(d, 4)``,
``2 * d`` and ``d - 1`` round-trips through the text, type-checks, compiles for both
targets and runs at three sizes of ``d`` equal to numpy; inputs whose dims break the
expressions are refused before any kernel runs."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.codegen import has_compiler
from relayir.ir.dim_expr import SymbolicDim, floordiv
from relayir.ir.types import TensorType
from relayir.vm.executable import Executable

TEXT = """#[version = "0.0.5"]
def @main(%x: Tensor[(d, 4), float32], %q: Tensor[(floordiv(d, 4), 16), float32], \
%t: Tensor[(2 * d, 4), float32], %w: Tensor[(d - 1, 4), float32], %o: Tensor[(1, 4), float32]) {
  %0 = reshape(%x, newshape=[-1, 16]);
  %1 = add(%0, %q);
  %2 = concatenate((%x, %x));
  %3 = multiply(%2, %t);
  %4 = concatenate((%w, %o));
  %5 = subtract(%4, %x);
  %6 = concatenate((%w, %x));
  %7 = strided_slice(%6, begin=[1], end=[2147483647]);
  (%1, %3, %5, nn.relu(%7))
}
"""
d = SymbolicDim("d")


def _inputs(n: int) -> list:
    rng = np.random.default_rng(n)
    shapes = [(n, 4), (n // 4, 16), (2 * n, 4), (n - 1, 4), (1, 4)]
    return [rng.standard_normal(s).astype("float32") for s in shapes]


def _expected(x, q, t, w, o) -> list:
    return [x.reshape(-1, 16) + q, np.concatenate([x, x]) * t,
            np.concatenate([w, o]) - x, np.maximum(np.concatenate([w, x])[1:], 0)]


def test_text_round_trip_and_types():
    mod = relay.parse(TEXT)
    assert relay.parse(mod.astext()).astext() == mod.astext()
    typed = relay.transform.InferType()(mod)
    out = typed["main"].body.checked_type.fields
    assert out[0] == TensorType((floordiv(d, 4), 16))
    assert out[1] == TensorType((2 * d, 4))
    assert out[2] == TensorType((d, 4))
    assert out[3].shape[0] == relay.ir.dim_expr.dim_max(2 * d - 2, 0)
    assert "Tensor[(floordiv(d, 4), 16), float32]" in typed.astext()


TARGETS = ["numpy", pytest.param("cpu", marks=pytest.mark.skipif(
    not has_compiler(), reason="needs a C compiler"))]


@pytest.mark.parametrize("target", TARGETS)
def test_runs_at_three_sizes(target):
    exe = relay.vm.compile(relay.parse(TEXT), target=target)
    vm = relay.vm.VirtualMachine(exe)
    for n in (4, 8, 20):
        args = _inputs(n)
        outs = vm.invoke("main", *args)
        for got, want in zip(outs, _expected(*args)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    if target == "cpu":  # every kernel is C: expressions are computed or read as dims
        assert exe.kernel_library.describe_references() == "all 4 kernels are C"


def test_inputs_that_break_an_expression_are_refused():
    vm = relay.vm.VirtualMachine(relay.vm.compile(relay.parse(TEXT), target="numpy"))
    x, q, t, w, o = _inputs(8)
    with pytest.raises(relay.Error, match=r"dim 2 \* d \(axis 0\) is 10, but the other "
                                          r"inputs give 16 \(d = 8\)"):
        vm.invoke("main", x, q, t[:10], w, o)
    with pytest.raises(relay.Error, match=r"dim d - 1 \(axis 0\) is 8"):
        vm.invoke("main", x, q, t, np.zeros((8, 4), "float32"), o)


def test_an_expression_binds_its_name():
    """``n`` appears only as ``2 * n``: the VM solves it from the input's extent."""
    n = SymbolicDim("n")
    x = relay.var("x", TensorType((2 * n, 3)))
    y = relay.reshape(x, (-1, 2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.sum(y, axis=1)))
    assert relay.transform.InferType()(mod)["main"].body.checked_type == TensorType((n, 3))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="numpy"))
    data = np.arange(18, dtype="float32").reshape(6, 3)
    np.testing.assert_allclose(np.asarray(vm.invoke("main", data)),
                               data.reshape(3, 2, 3).sum(1))
    with pytest.raises(relay.Error, match=r"cannot be 5 for any value"):
        vm.invoke("main", np.zeros((5, 3), "float32"))


def test_saved_executable_keeps_the_expressions(tmp_path):
    relay.vm.compile(relay.parse(TEXT), target="numpy").save(tmp_path / "e.relayir")
    vm = relay.vm.VirtualMachine(Executable.load(tmp_path / "e.relayir"))
    args = _inputs(12)
    for got, want in zip(vm.invoke("main", *args), _expected(*args)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    with pytest.raises(relay.Error, match=r"dim 2 \* d \(axis 0\) is 3"):
        vm.invoke("main", args[0], args[1], args[2][:3], args[3], args[4])
