"""``relay.testing``: Relay's test helpers and workloads, over relayir's.

``run_opt_pass``, ``run_infer_type``, ``check_grad``, ``create_workload``, ``rand``,
``count_ops`` and the nat helpers have Relay's signatures. The workloads
(``mlp``, ``resnet``, ``mobilenet``) are relayir's built-in models behind Relay's
``get_workload`` signatures: same input name (``data``), input and output shapes and
a params dict for every other parameter; the architectures are relayir's
(docs/tvm-compat.md lists how they differ from Relay's).
"""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import Function
from ....ir.module import IRModule
from ....runtime.values import ConstructorValue
from ...runtime.ndarray import NDArray, array
from ...target import enabled_targets
from .. import analysis
from ..build_module import create_executor
from ..prelude import Prelude
from ..transform import InferType, Legalize, Pass, gradient
from . import (
    _missing,
    dcgan,
    densenet,
    dqn,
    inception_v3,
    lstm,
    mlp,
    mobilenet,
    resnet,
    squeezenet,
    synthetic,
    temp_op_attr,
)
from .init import Xavier, create_workload


def run_opt_pass(expr, opt_pass: Pass, import_prelude: bool = False):
    """Apply ``opt_pass`` to ``expr`` as ``@main`` of a module (typed first); the result
    is the new ``@main`` (or its body when ``expr`` was not a function)."""
    if not isinstance(opt_pass, Pass):
        raise Error(f"run_opt_pass takes a Pass, found {type(opt_pass).__name__}")
    mod = IRModule.from_expr(expr)
    if import_prelude:
        Prelude(mod)
    mod = InferType()(mod)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, Function) else entry.body


def run_infer_type(expr):
    return run_opt_pass(expr, InferType())


def rand(dtype: str, *shape) -> NDArray:
    return array(np.random.rand(*shape).astype(dtype))


def count_ops(expr):
    return analysis.count_ops(expr)


def _randn_from_type(t, scale=1.0, mean=0.0) -> np.ndarray:
    res = mean + scale * np.random.randn(*(int(d) for d in t.shape))
    return np.asarray(res).astype(t.dtype)


def check_grad(func, inputs=None, test_inputs=None, eps: float = 1e-6, atol: float = 1e-5,
               rtol: float = 1e-3, scale=None, mean: float = 0.0, mode: str = "higher_order",
               target_devices=None, executor_kind: str = "debug") -> None:
    """Compare ``gradient(func)`` with two-sided numerical differences (Relay's
    ``check_grad``)."""
    fwd_func = run_infer_type(func)
    bwd_func = run_infer_type(gradient(fwd_func, mode=mode))
    bwd_func = run_opt_pass(bwd_func, Legalize())
    if scale is None:
        scale = 10 * eps
    if inputs is None:
        inputs = [_randn_from_type(p.checked_type, scale=scale, mean=mean)
                  for p in fwd_func.params]
    if test_inputs is None:
        test_inputs = inputs
    for target, dev in target_devices or enabled_targets():
        bwd = create_executor(executor_kind, device=dev, target=target).evaluate(bwd_func)
        fwd = create_executor(executor_kind, device=dev, target=target).evaluate(fwd_func)
        _, grads = bwd(*inputs)
        grads = [np.asarray(g).astype("float64") for g in grads]
        if inputs is not test_inputs:
            grads = [grads[next(i for i, x in enumerate(inputs) if x is t)]
                     for t in test_inputs]
        if not grads:
            raise Error("check_grad: test at least one gradient")
        for x, grad in zip(test_inputs, grads):
            approx = np.zeros(x.shape)
            for i in np.ndindex(*x.shape):
                x_i = x[i]
                x[i] = x_i + eps
                plus = np.asarray(fwd(*inputs)).astype("float64")
                x[i] = x_i - eps
                minus = np.asarray(fwd(*inputs)).astype("float64")
                x[i] = x_i
                approx[i] = np.sum((plus - minus) / (2 * eps))
            np.testing.assert_allclose(grad, approx, atol=atol, rtol=rtol)


# ---------------------------------------------------------------- nat


def _nat(prelude):
    _, z, s = prelude.mod.get_type("nat")
    return z, s


def count(prelude, n: ConstructorValue) -> int:
    """A nat value as a Python int (iteratively)."""
    z, s = _nat(prelude)
    total = 0
    while n.tag != z.tag:
        total += 1
        n = n.fields[0]
    return total


def make_nat_value(prelude, n: int) -> ConstructorValue:
    z, s = _nat(prelude)
    value = ConstructorValue(z.tag, (), z)
    for _ in range(n):
        value = ConstructorValue(s.tag, (value,), s)
    return value


def make_nat_expr(prelude, n: int):
    z, s = _nat(prelude)
    ret = z()
    for _ in range(n):
        ret = s(ret)
    return ret


__all__ = ["Xavier", "check_grad", "count", "count_ops", "create_workload", "make_nat_expr",
           "make_nat_value", "mlp", "mobilenet", "rand", "resnet", "run_infer_type",
           "run_as_python", "run_opt_pass"]

globals().update(_missing.install(__name__))
_np_randn_from_type = _randn_from_type  # Relay's private name, imported by its gradient tests


def run_as_python(expr, mod=None, target=None):
    """Relay's: ``expr`` written as Python and run (``relayir.runtime.python_source``;
    ops run their numpy references, so ``target`` is not used); the value as the
    interpreter's (``NDArray``, ``ADT``, ``ConstructorValue``, ``RefValue``)."""
    from ....runtime.python_source import run_as_python as _run_as_python
    from ....runtime.values import RefValue
    from ...runtime.container import to_tvm

    if hasattr(expr, "astuple"):  # a TupleWrapper (split, ...)
        expr = expr.astuple()
    value = _run_as_python(expr, mod)
    if isinstance(value, RefValue):
        return RefValue(to_tvm(value.value, "interpreter"))
    return to_tvm(value, "interpreter")
