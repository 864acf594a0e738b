"""Which ops ``ToMixedPrecision`` runs in the low-precision type (Relay's defaults).

- ``ALWAYS``: worth it whatever the inputs (convolutions and products: the arithmetic
  that dominates a model); their inputs are cast to the mixed type;
- ``FOLLOW``: run in the mixed type when every floating input already is one (or is a
  variable or a constant, which casts for free), else in float32;
- ``NEVER``: results that grow much larger than their inputs, or large sums (``exp``,
  ``softmax``, ``sum``, ``mean``, ``arange``, ...); their inputs are cast back to float32.

An op in no list is treated as ``NEVER``. The lists name Relay's ops; names relayir does
not register are skipped where they are read.
"""

from __future__ import annotations

ALWAYS, FOLLOW, NEVER = 0, 1, 2

ALWAYS_OPS = frozenset({
    "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
    "nn.conv3d_transpose", "nn.dense", "nn.batch_matmul",
})

FOLLOW_OPS = frozenset({
    # data movement and new data
    "nn.pad", "nn.batch_flatten", "concatenate", "zeros", "split", "squeeze", "transpose",
    "expand_dims", "reshape", "dyn.reshape", "broadcast_to_like", "dyn.broadcast_to",
    "strided_slice", "dyn.strided_slice", "take", "argwhere", "where", "tile", "dyn.tile",
    "scatter", "scatter_elements", "scatter_nd", "full", "dyn.full", "nn.depth_to_space",
    # comparisons, copies and casts
    "less", "greater", "less_equal", "greater_equal", "copy", "cast", "cast_like",
    # simple arithmetic and activations
    "add", "subtract", "multiply", "divide", "nn.bias_add", "nn.batch_norm", "sqrt",
    "shape_of", "max", "min", "maximum", "minimum", "argmax", "argmin", "nn.relu",
    "nn.leaky_relu", "nn.prelu", "nn.dropout", "sigmoid", "tanh", "fast_tanh", "fast_exp",
    "fast_erf", "clip",
    # pooling and resizing
    "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
    "nn.avg_pool3d", "nn.global_max_pool2d", "nn.adaptive_max_pool1d",
    "nn.adaptive_max_pool2d", "nn.adaptive_max_pool3d", "image.resize2d",
})

NEVER_OPS = frozenset({
    "exp", "power", "nn.cross_entropy", "nn.cross_entropy_with_logits", "nn.softmax",
    "nn.l2_normalize", "erf", "arange", "nn.global_avg_pool2d", "nn.adaptive_avg_pool1d",
    "nn.adaptive_avg_pool2d", "nn.adaptive_avg_pool3d", "sum", "mean", "variance",
    "nn.layer_norm",
})


def category(op_name: str) -> int | None:
    """``ALWAYS``, ``FOLLOW`` or ``NEVER``; None for an op in no list."""
    if op_name in ALWAYS_OPS:
        return ALWAYS
    if op_name in FOLLOW_OPS:
        return FOLLOW
    if op_name in NEVER_OPS:
        return NEVER
    return None
