"""Automatic differentiation: the ``gradient`` transform and the op-gradient table.

``gradient(fn)`` turns ``fn(x1..xn) -> y`` into ``fn(x1..xn) -> (y, (dx1..dxn))``
(Relay's convention: the gradient of ``sum(y)``). ``mode="first_order"`` handles
dataflow programs (``gradient.py``); ``mode="higher_order"`` also ``if``, closures,
references, recursion and ADTs through adjoint cells and a back-propagator
(``higher_order.py``). Both apply the same per-op rules, which live in
``grads/`` (one file per op family), in the ``GRADIENT`` table keyed by op name;
ops declared in ``NON_DIFFERENTIABLE`` contribute a zero gradient.
"""

from .gradient import gradient
from .grads import GRADIENT, NON_DIFFERENTIABLE, gradient_status

__all__ = ["GRADIENT", "NON_DIFFERENTIABLE", "gradient", "gradient_status"]
