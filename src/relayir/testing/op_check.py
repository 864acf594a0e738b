"""Helpers for table-driven operator tests.

``check_op`` builds ``fn(inputs) { op(inputs, attrs) }``, type-checks it, compares the
inferred output type with the array numpy computes, evaluates it through the reference
interpreter and compares values (and dtypes) with the expected result.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Function, Var
from ..ir.module import IRModule
from ..ir.op import call
from ..ir.types import TensorType, TupleType
from ..runtime.interpreter import Interpreter
from ..typing.infer import infer_module


def type_of_value(value):
    if isinstance(value, (tuple, list)):
        return TupleType(tuple(type_of_value(v) for v in value))
    value = np.asarray(value)
    return TensorType(value.shape, value.dtype.name)


def make_call_module(op_name: str, inputs: list, attrs: dict | None = None):
    """``@main(%a0, %a1, ...) { op(%a0, %a1, ..., attrs) }``; a tuple input is one param."""
    params = [Var(f"a{i}", type_of_value(x)) for i, x in enumerate(inputs)]
    body = call(op_name, params, **(attrs or {}))
    return IRModule.from_expr(Function(params, body))


def infer_op_type(op_name: str, inputs: list, attrs: dict | None = None):
    """The output type the op's relation gives for these input values."""
    mod = infer_module(make_call_module(op_name, inputs, attrs))
    return mod["main"].body.checked_type


def run_op(op_name: str, inputs: list, attrs: dict | None = None):
    mod = infer_module(make_call_module(op_name, inputs, attrs))
    interp = Interpreter(mod)
    closure = interp.global_closure(mod.get_global_var("main"))
    args = [tuple(np.asarray(v) for v in x) if isinstance(x, (tuple, list)) else np.asarray(x)
            for x in inputs]
    return interp.call_closure(closure, args), mod["main"].body.checked_type


def check_op(op_name: str, inputs: list, expected, attrs: dict | None = None,
             rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Assert type relation and reference agree with ``expected`` (array or tuple)."""
    out, ty = run_op(op_name, inputs, attrs)
    assert_value_matches(out, ty, expected, rtol, atol, op_name)


def assert_value_matches(out, ty, expected, rtol, atol, where="") -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(ty, TupleType), f"{where}: type {ty} is not a tuple"
        assert isinstance(out, tuple) and len(out) == len(expected), f"{where}: {out!r}"
        for o, t, e in zip(out, ty.fields, expected):
            assert_value_matches(o, t, e, rtol, atol, where)
        return
    expected = np.asarray(expected)
    assert isinstance(ty, TensorType), f"{where}: type {ty} is not a tensor"
    assert out.dtype.name == ty.dtype, f"{where}: value dtype {out.dtype} but type {ty}"
    assert ty.dtype == expected.dtype.name, f"{where}: type {ty} but expected {expected.dtype}"
    assert tuple(ty.shape) == expected.shape, f"{where}: type {ty} but expected {expected.shape}"
    assert out.shape == expected.shape, f"{where}: value shape {out.shape} vs {expected.shape}"
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol, err_msg=where)


def rand(shape, dtype="float32", seed: int = 0, low=-2.0, high=2.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("int") or dtype.startswith("uint"):
        lo = 0 if dtype.startswith("uint") else int(low) * 5
        return rng.integers(lo, int(high) * 5 + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)
