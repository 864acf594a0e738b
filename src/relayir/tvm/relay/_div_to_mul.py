"""``relay.transform.DivToMul``: ``x / c`` with ``c`` a float constant becomes
``x * (1 / c)``, the reciprocal computed once in ``c``'s dtype, as Relay's pass does.

A multiply is cheaper than a divide, but ``x * (1/c)`` may differ from ``x / c`` by an
ulp unless every ``c`` is a power of two; relayir's own pipeline never does this
(its rule 7: the numpy target's answer on every target), so only this Relay pass does.
A divisor whose reciprocal would not be a finite normal number (0, ±inf, NaN, huge
values) is left as a division."""

from __future__ import annotations

import numpy as np

from ...ir.expr import Constant, Op
from ...ir.functor import ExprMutator
from ...op.tensor import multiply


def _reciprocal(c: Constant) -> np.ndarray | None:
    data = c.data
    if data.dtype.kind != "f" or data.size == 0:
        return None
    with np.errstate(all="ignore"):
        inv = (np.ones((), data.dtype) / data).astype(data.dtype)
    if not np.all(np.isfinite(inv)) or np.any(np.abs(inv) < np.finfo(data.dtype).tiny):
        return None
    return inv


class _DivToMul(ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if not (isinstance(new.op, Op) and new.op.name == "divide"
                and isinstance(new.args[1], Constant)):
            return new
        inv = _reciprocal(new.args[1])
        return new if inv is None else multiply(new.args[0], Constant(inv))


def div_to_mul(mod):
    """``mod`` with every division by a float constant made a multiplication."""
    return mod.with_functions({gv: _DivToMul().visit(fn) for gv, fn in mod.functions.items()})


__all__ = ["div_to_mul"]
