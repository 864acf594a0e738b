"""Neural-network operators (``nn.*``): dense layers, convolutions, pooling, normalisation.

Each op is defined once here: attrs dataclass, type relation, numpy reference, fusion
pattern, and a constructor with Relay's Python signature (``relayir.nn.conv2d``).

Semantic choices where Relay leaves room (all references run in inference mode):

- Layouts are any permutation of the canonical letters (``NCHW``/``NHWC``/..., ``OIHW``/
  ``HWIO``/...). An empty ``kernel_layout`` means the usual partner of ``data_layout``
  (``NHWC`` → ``HWIO``, otherwise ``OIHW``); an ``out_layout`` equal to the data layout
  is stored as ``""`` so equal programs have equal attrs.
- ``padding`` is stored as ``(before..., after...)`` per spatial axis: conv2d/pool2d
  ``(top, left, bottom, right)``, conv1d ``(left, right)``.
- Pooling with ``ceil_mode`` uses PyTorch's rule: a last window that would start in the
  right padding is dropped (TVM's formula keeps it and pools only padding there).
- ``count_include_pad`` counts the user's padding, never the ceil-mode overhang (PyTorch).
- Float references accumulate in float64 and cast back; integer ones in int64.
- Ops whose maths needs fractions (leaky_relu, prelu, softmax, norms) require floats.
"""

from . import (  # noqa: F401  (registration)
    activation,
    conv,
    conv_nchwc,
    conv_transpose,
    deformable,
    dense_pack,
    depth_space,
    layers,
    linear,
    norm,
    pool,
    response_norm,
    winograd,
)
from .activation import bias_add, leaky_relu, log_softmax, prelu, relu, softmax
from .conv import conv1d, conv2d, conv3d
from .conv_nchwc import contrib_conv2d_NCHWc, contrib_depthwise_conv2d_NCHWc
from .conv_transpose import conv1d_transpose, conv2d_transpose, conv3d_transpose
from .deformable import deformable_conv2d
from .dense_pack import contrib_dense_pack
from .depth_space import depth_to_space, space_to_depth, upsampling
from .layers import batch_flatten, dropout, dropout_raw, pad
from .linear import batch_matmul, dense, matmul
from .norm import batch_norm, group_norm, instance_norm, layer_norm
from .pool import (
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    global_avg_pool2d,
    global_max_pool2d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from .recurrent import (  # noqa: F401  (pack_recurrent_weight: a helper, not an op)
    gru_sequence,
    lstm_sequence,
    pack_recurrent_weight,
    rnn_sequence,
)
from .response_norm import lrn
from .winograd import contrib_conv2d_winograd_NCHWc, contrib_conv2d_winograd_weight_transform

__all__ = [
    "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_flatten",
    "batch_matmul", "batch_norm", "bias_add", "contrib_conv2d_NCHWc",
    "contrib_conv2d_winograd_NCHWc", "contrib_conv2d_winograd_weight_transform",
    "contrib_dense_pack", "contrib_depthwise_conv2d_NCHWc", "conv1d", "conv1d_transpose", "conv2d",
    "conv2d_transpose", "conv3d", "conv3d_transpose", "deformable_conv2d", "dense",
    "depth_to_space", "dropout", "dropout_raw",
    "global_avg_pool2d", "global_max_pool2d", "group_norm", "gru_sequence", "instance_norm",
    "layer_norm", "leaky_relu", "log_softmax", "lrn", "lstm_sequence", "matmul", "max_pool1d",
    "max_pool2d", "max_pool3d", "pad", "prelu", "relu", "rnn_sequence",
    "softmax", "space_to_depth", "upsampling",
]
