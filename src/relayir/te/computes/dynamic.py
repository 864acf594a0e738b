"""Ops whose output shape is a run-time value (``dyn.*``, ``argwhere``, ``unique``,
``shape_of``).

A ``dyn`` op whose static twin's compute reads only the data inputs and the output's
shape (``VALUE_SHAPED``: reshape, broadcast_to, tile, zeros, ones, full, squeeze,
unsqueeze, sparse_to_dense) has that compute:
the VM learns the output shape from the shape inputs' values (``vm/shape_func.py``) and
the C kernel takes it as run-time dims. The others have no compute: the cpu target runs
them through their numpy reference.
"""

from ...op.dynamic import DYNAMIC
from .common import COMPUTE, declare_reference_only

# dyn op -> the static compute it runs, one that needs no attribute value (a squeeze or
# an unsqueeze moves no element: it is a reshape to the shape its values give)
VALUE_SHAPED = {"dyn.reshape": "reshape", "dyn.broadcast_to": "broadcast_to",
                "dyn.tile": "tile", "dyn.zeros": "zeros", "dyn.ones": "ones",
                "dyn.full": "full", "dyn.squeeze": "reshape", "dyn.unsqueeze": "reshape",
                "dyn.sparse_to_dense": "sparse_to_dense"}


def _twin(name: str):
    spec, static = DYNAMIC[name], VALUE_SHAPED[name]

    def rule(attrs, inputs, out):
        data = [t for i, t in enumerate(inputs) if i not in spec.shape_args]
        return COMPUTE.get(static)(None, data, out)

    return rule


for _name in VALUE_SHAPED:
    COMPUTE.register(_name)(_twin(_name))
for _name in DYNAMIC:
    if _name not in VALUE_SHAPED:
        declare_reference_only(_name, "its output shape is the value of a tensor input")
for _name in ("argwhere", "unique"):
    declare_reference_only(_name, "its output extent depends on the data")
declare_reference_only("shape_of", "reads the run-time shape; DynamicToStatic folds it to a "
                                   "constant when the shape is static")
