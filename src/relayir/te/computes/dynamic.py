"""Ops whose output shape is a run-time value (``dyn.*``, ``argwhere``, ``unique``,
``shape_of``): no compute; the cpu target runs them through their numpy reference."""

from ...op.dynamic import DYNAMIC
from .common import declare_reference_only

for _name in DYNAMIC:
    declare_reference_only(_name, "its output shape is the value of a tensor input")
for _name in ("argwhere", "unique"):
    declare_reference_only(_name, "its output extent depends on the data")
declare_reference_only("shape_of", "reads the run-time shape; DynamicToStatic folds it to a "
                                   "constant when the shape is static")
