"""``relay.op``: every operator constructor (Relay's names), ``get``, and the op
families as submodules (``relay.op.nn``, ``image``, ``vision``, ``dyn``)."""

from ....ir.expr import Op
from ....ir.op import OpPattern, list_ops
from ....ir.op import get_op as get
from ....op import algorithm, image, reduce, tensor, vision
from ....op import dynamic as dyn
from ....op import transform as transform
from ....op.algorithm import *  # noqa: F403
from ....op.bitwise import *  # noqa: F403
from ....op.layout import layout_transform
from ....op.reduce import *  # noqa: F403
from ....op.scatter import *  # noqa: F403
from ....op.tensor import *  # noqa: F403
from ....op.transform import *  # noqa: F403
from . import nn
from ._dyn_dispatch import (
    arange,
    argwhere,
    broadcast_to,
    full,
    gather_nd,
    ones,
    reshape,
    shape_of,
    strided_slice,
    tile,
    trilu,
    zeros,
)
from ._tuple_ops import mean_std, mean_variance, split, topk, unique

ELEMWISE = OpPattern.ELEMWISE
BROADCAST = OpPattern.BROADCAST
INJECTIVE = OpPattern.INJECTIVE
COMM_REDUCE = OpPattern.COMM_REDUCE
OUT_ELEMWISE_FUSABLE = OpPattern.OUT_ELEMWISE_FUSABLE
OPAQUE = OpPattern.OPAQUE


def list_op_names() -> list[str]:
    return list_ops()




# ``relay.transform`` is the pass namespace, not the op family of the same name
__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "transform")
