"""The gradient table: ``GRADIENT[op_name](call, out, grad) -> [grad per input]``.

``call`` is the original call (its arguments are typed atoms), ``out`` the variable
bound to its result, ``grad`` the adjoint of ``out`` (a list of per-field adjoints for
tuple-valued ops). A rule returns one gradient expression per input, or ``None`` for
an input that gets no gradient (integer indices, a constant fill value, ...).
Ops in ``NON_DIFFERENTIABLE`` give a zero gradient (Relay's convention for
comparisons, rounding, logic, arg-reductions and constant initialisers).
"""

from __future__ import annotations

from ...op.registry import OpTable, list_ops

GRADIENT = OpTable("gradient")

NON_DIFFERENTIABLE = frozenset({
    # comparisons and logic: boolean outputs
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf", "isfinite",
    "all", "any",
    # piecewise constant
    "floor", "ceil", "round", "trunc", "sign", "floor_divide",
    # integer outputs
    "argmax", "argmin",
    # constant initialisers
    "zeros", "ones", "zeros_like", "ones_like",
})

from . import nn, reduce, tensor, transform  # noqa: E402,F401  (fill the table)


def gradient_status() -> dict[str, str]:
    """Every registered op → ``"covered"``, ``"non-differentiable"`` or ``"missing"``."""
    out = {}
    for name in list_ops():
        if name in GRADIENT:
            out[name] = "covered"
        elif name in NON_DIFFERENTIABLE:
            out[name] = "non-differentiable"
        else:
            out[name] = "missing"
    return out
