"""Input types an op's attributes imply, for arguments that have no type yet.

Relay's type relations may assign a type to an *input*: ``nn.conv2d(x, w, channels=8,
kernel_size=(3, 3))`` types an unannotated ``w`` from ``x``'s channels and the
attributes, ``nn.bias_add(x, b)`` types ``b`` as the vector of ``x``'s channel axis.
relayir's relations run forward only (input types to output type), so the solver asks
these rules once it is stuck: a rule gets the input types (``None`` where one is not
known yet) and the attributes, and returns a type per input (``None`` where it cannot
tell). The solver unifies what it returns with the unknown inputs and runs the forward
relation, which then checks everything as usual.

Each rule needs only the data input (the first); what it assigns is the data's dtype.
"""

from __future__ import annotations

from .. import op as _op  # noqa: F401  (registers the ops the table names)
from ..ir.op import OpTable
from ..ir.types import TensorType
from ..op.nn.conv import _conv_rel
from ..op.nn.deformable import offset_shape

INPUT_RULES = OpTable("input type rules")


def _data(known) -> TensorType | None:
    data = known[0] if known else None
    return data if isinstance(data, TensorType) else None


def _channel_vector(known, axis: int, count: int):
    """``count`` inputs after the data, each the vector of the data's ``axis``."""
    data = _data(known)
    if data is None or not -data.ndim <= axis < data.ndim:
        return None
    vec = TensorType((data.shape[axis],), data.dtype)
    return [None] + [vec] * count


@INPUT_RULES.register("nn.bias_add", "nn.prelu")
def _bias_like(known, attrs):
    return _channel_vector(known, attrs.axis, 1)


@INPUT_RULES.register("nn.batch_norm")
def _batch_norm(known, attrs):
    return _channel_vector(known, attrs.axis, 4)


@INPUT_RULES.register("nn.layer_norm", "nn.group_norm", "nn.instance_norm")
def _affine_norm(known, attrs):
    return _channel_vector(known, attrs.axis, 2)


def _kernel_shape(data: TensorType, attrs, dims: dict):
    """The weight's shape in ``attrs.kernel_layout``: ``dims`` gives ``O`` and ``I``, the
    spatial letters take ``kernel_size`` in the data layout's order."""
    spatial = [c for c in attrs.data_layout if c not in "NC"]
    if attrs.kernel_size is None or len(attrs.kernel_size) != len(spatial):
        return None
    dims = {**dims, **dict(zip(spatial, attrs.kernel_size))}
    layout = attrs.kernel_layout
    if sorted(layout) != sorted(dims):  # a blocked layout (OIHW16o): no rule
        return None
    return TensorType(tuple(dims[c] for c in layout), data.dtype)


def _data_channels(data: TensorType, attrs):
    layout = attrs.data_layout
    if len(layout) != data.ndim or "C" not in layout:
        return None
    c = data.shape[layout.index("C")]
    return c if isinstance(c, int) else None


@INPUT_RULES.register("nn.conv1d", "nn.conv2d", "nn.conv3d")
def _conv_weight(known, attrs):
    """Relay's ``(channels, C / groups, k...)`` in ``kernel_layout``."""
    data = _data(known)
    c = None if data is None else _data_channels(data, attrs)
    if c is None or attrs.channels is None or c % attrs.groups:
        return None
    weight = _kernel_shape(data, attrs, {"O": attrs.channels, "I": c // attrs.groups})
    return None if weight is None else [None, weight]


@INPUT_RULES.register("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")
def _conv_transpose_weight(known, attrs):
    """Relay's ``(C, channels / groups, k...)`` in ``kernel_layout`` (``IO...``)."""
    data = _data(known)
    c = None if data is None else _data_channels(data, attrs)
    if c is None or attrs.channels is None or attrs.channels % attrs.groups:
        return None
    weight = _kernel_shape(data, attrs, {"I": c, "O": attrs.channels // attrs.groups})
    return None if weight is None else [None, weight]


@INPUT_RULES.register("nn.dense")
def _dense_weight(known, attrs):
    data = _data(known)
    if data is None or data.ndim < 1 or attrs.units is None:
        return None
    return [None, TensorType((attrs.units, data.shape[-1]), data.dtype)]


@INPUT_RULES.register("nn.matmul")
def _matmul_weight(known, attrs):
    data = _data(known)
    if data is None or attrs.units is None or data.ndim < (2 if attrs.transpose_a else 1):
        return None
    k = data.shape[-2] if attrs.transpose_a else data.shape[-1]
    shape = (attrs.units, k) if attrs.transpose_b else (k, attrs.units)
    return [None, TensorType(shape, data.dtype)]


@INPUT_RULES.register("nn.deformable_conv2d")
def _deformable_conv_inputs(known, attrs):
    """The weight as a convolution's, the offset of the output's pixels."""
    conv = _conv_weight(known, attrs)
    if conv is None:
        return None
    weight = known[2] if isinstance(known[2], TensorType) else conv[1]
    out = _conv_rel([known[0], weight], attrs)
    kernel = [dict(zip(attrs.kernel_layout, weight.shape))[a] for a in "HW"]
    return [None, TensorType(offset_shape(attrs, out, kernel), known[0].dtype), weight]
