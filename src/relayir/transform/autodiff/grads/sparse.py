"""Gradient status of the COO sparse ops (``op/sparse.py``).

``sparse_reshape`` gives integers (indices and a shape): no gradient. The values that
``sparse_fill_empty_rows`` gives do depend on ``sparse_values`` and ``default_value``,
but their count is known only at run time, and the transforms build zero adjoints from
static types: asking for its gradient is a clear error, never a silent zero. So is
``sparse_to_dense``'s, whose values at a repeated index are overwritten (only the last
one's adjoint is not zero, which no rule here tells apart yet).
"""

from __future__ import annotations

NON_DIFFERENTIABLE = frozenset({"sparse_reshape"})

REFUSED = {
    "sparse_fill_empty_rows": "its number of values is known only at run time (it adds one "
                              "per empty row): no static-shape adjoint",
    "sparse_to_dense": "a repeated index keeps only its last value: no rule tells which "
                       "values reach the output",
}
