"""Gradients of the dynamic-shape ops (``op/dynamic.py``).

``dyn.reshape``, ``dyn.squeeze`` and ``dyn.unsqueeze`` of data of a static shape have
a rule: the adjoint (of run-time extents) reshaped back to the data's shape.
``shape_of``, ``argwhere``, ``dyn.zeros``/``ones``/``full`` and ``dyn.arange`` are
non-differentiable by nature (integer or constant outputs). The other ``dyn.*`` ops (the
data-moving ones, and ``op/dynamic_params.py``'s reductions, scans, resizes...) and
``unique`` do have gradients, but the transforms materialise zero adjoints from
static types, which a result with run-time extents does not have: asking for one is a
clear error (``REFUSED``), never a silent zero. Differentiate after
``DynamicToStatic`` (shape inputs constant), which turns them into the static ops that
have rules.
"""

from __future__ import annotations

from ....op import transform as _t
from ....op.dynamic import DYNAMIC
from . import GRADIENT
from ._util import shape_of

NON_DIFFERENTIABLE_DYNAMIC = frozenset({
    "shape_of", "argwhere", "dyn.zeros", "dyn.ones", "dyn.full", "dyn.arange",
})


@GRADIENT.register("dyn.reshape", "dyn.squeeze", "dyn.unsqueeze")
def _reshape(call, out, g):
    return [_t.reshape(g, shape_of(call.args[0])), None]


REFUSED = dict.fromkeys(
    ("unique", *(n for n in DYNAMIC if n not in NON_DIFFERENTIABLE_DYNAMIC and n not in GRADIENT)),
    "needs static shapes (its result's extents are known only at run time): run "
    "transform.DynamicToStatic with its shape inputs bound as constants before gradient")
