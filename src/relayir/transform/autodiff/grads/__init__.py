"""The gradient table: ``GRADIENT[op_name](call, out, grad) -> [grad per input]``.

``call`` is the original call (its arguments are typed atoms), ``out`` the variable
bound to its result, ``grad`` the adjoint of ``out`` (a list of per-field adjoints for
tuple-valued ops). A rule returns one gradient expression per input, or ``None`` for
an input that gets no gradient (integer indices, a constant fill value, ...).
Ops in ``NON_DIFFERENTIABLE`` give a zero gradient (Relay's convention for
comparisons, rounding, logic, arg-reductions and constant initialisers).
"""

from __future__ import annotations

from ....ir.op import OpTable, list_ops

GRADIENT = OpTable("gradient")

_CORE_NON_DIFFERENTIABLE = frozenset({
    # random bits and keys (op/random.py): integer outputs
    "random.threefry_generate", "random.threefry_split",
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

from . import (  # noqa: E402,F401
    algorithm,
    dynamic,  # noqa: E402
    image,
    nn,
    qnn,
    recurrent,
    reduce,
    sparse,
    tensor,
    transform,
    vision,
)

_FAMILIES = (algorithm, dynamic, image, nn, qnn, recurrent, reduce, sparse, tensor, transform,
             vision)
# a family module may declare its own non-differentiable ops (``NON_DIFFERENTIABLE``,
# zero gradient) and ops whose gradient it refuses with a reason (``REFUSED``: a clear
# error rather than a silent zero)
NON_DIFFERENTIABLE = _CORE_NON_DIFFERENTIABLE.union(
    dynamic.NON_DIFFERENTIABLE_DYNAMIC, *(getattr(m, "NON_DIFFERENTIABLE", ()) for m in _FAMILIES))
REFUSED: dict[str, str] = {k: v for m in _FAMILIES for k, v in getattr(m, "REFUSED", {}).items()}


def gradient_status() -> dict[str, str]:
    """Every registered op → ``"covered"``, ``"non-differentiable"``, ``"refused"`` (a
    clear error with the reason in ``REFUSED``) or ``"missing"``."""
    out = {}
    for name in list_ops():
        if name in GRADIENT:
            out[name] = "covered"
        elif name in NON_DIFFERENTIABLE:
            out[name] = "non-differentiable"
        elif name in REFUSED:
            out[name] = "refused"
        else:
            out[name] = "missing"
    return out


def no_rule_message(op_name: str) -> str:
    """Why ``op_name`` cannot be differentiated (it has no rule in ``GRADIENT``)."""
    if op_name in REFUSED:
        return f"the gradient of {op_name}: {REFUSED[op_name]}"
    return f"no gradient is registered for operator {op_name}"
