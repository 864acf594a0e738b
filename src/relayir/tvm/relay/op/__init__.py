"""``relay.op``: every operator constructor (Relay's names), ``get``, and the op
families as submodules (``relay.op.nn``, ``image``, ``vision``, ``dyn``)."""

from ....ir.expr import Op
from ....ir.op import OpPattern, list_ops
from ....ir.op import get_op as get
from ....op import algorithm, reduce, tensor
from ....op import dynamic as dyn
from ....op import transform as transform
from ....op.algorithm import *  # noqa: F403
from ....op.bitwise import *  # noqa: F403
from ....op.layout import layout_transform
from ....op.reduce import *  # noqa: F403
from ....op.scatter import *  # noqa: F403
from ....op.tensor import *  # noqa: F403
from ....op.transform import *  # noqa: F403
from ...error import missing_attribute
from . import image, nn, op, random, vision
from ._composed import (
    adv_index,
    fixed_point_multiply,
    ndarray_size,
    reverse_sequence,
    searchsorted,
    sliding_window,
    stft,
)
from ._dyn_dispatch import (
    arange,
    argwhere,
    broadcast_to,
    expand_dims,
    full,
    gather_nd,
    one_hot,
    ones,
    reshape,
    segment_sum,
    shape_of,
    sparse_to_dense,
    squeeze,
    strided_slice,
    tile,
    trilu,
    zeros,
)
from ._like_ops import (
    broadcast_to_like,
    cast_like,
    collapse_sum_like,
    collapse_sum_to,
    reverse_reshape,
    sequence_mask,
    slice_like,
)
from ._matrix_set_diag import matrix_set_diag
from ._tuple_ops import (
    mean_std,
    mean_variance,
    meshgrid,
    sparse_fill_empty_rows,
    sparse_reshape,
    split,
    topk,
    unique,
)
from .op import (
    OpStrategy,
    debug,
    register_alter_op_layout,
    register_compute,
    register_convert_op_layout,
    register_external_compiler,
    register_fake_quantization_to_integer,
    register_gradient,
    register_injective_schedule,
    register_legalize,
    register_mixed_precision_conversion,
    register_optional_fake_quantization_to_integer,
    register_pattern,
    register_reduce_schedule,
    register_shape_func,
    register_strategy,
)

ELEMWISE = OpPattern.ELEMWISE
BROADCAST = OpPattern.BROADCAST
INJECTIVE = OpPattern.INJECTIVE
COMM_REDUCE = OpPattern.COMM_REDUCE
OUT_ELEMWISE_FUSABLE = OpPattern.OUT_ELEMWISE_FUSABLE
OPAQUE = OpPattern.OPAQUE


def list_op_names() -> list[str]:
    return list_ops()


def __getattr__(name: str):
    raise missing_attribute(__name__, name)


# ``relay.transform`` is the pass namespace, not the op family of the same name; ``op``
# is the registry module (``relay.op.op``), not ``relay.op`` itself
__all__ = sorted(n for n in dir() if not n.startswith("_") and n not in ("transform", "op"))
