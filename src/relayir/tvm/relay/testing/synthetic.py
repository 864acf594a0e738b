"""``relay.testing.synthetic``: Relay's small many-op network, for tests that want a
real-looking graph (dense, conv2d, softmax, reshape_like, bias_add, batch_norm) that
builds and runs in seconds.

The net is one block, ``bias_add`` then ``batch_norm``, and the block again. A block
sends its input down two paths that meet in an ``add``: the rows of the last axis
through ``dense`` + ``relu`` (reshaped back to the input's shape), and a 3x3 ``conv2d``
keeping the channels, through ``softmax``. Every intermediate keeps the input's shape,
so the blocks chain. Only the input and the four weights carry types; the bias and
the batch-norm vectors get theirs from inference, as in Relay.
"""

from __future__ import annotations

import numpy as np

from .. import Function, analysis, nn, reshape, reshape_like, var
from . import layers
from .init import Xavier, create_workload


class _EvenWeights(Xavier):
    """Relay's ``Constant`` initializer, which this workload uses: every entry of a
    weight is ``1 / size``, so each weight sums to one (init.py has no such class)."""

    def _init_weight(self, arr: np.ndarray) -> None:
        arr[:] = 1.0 / arr.size


def _block(x, data, dense_name: str, conv_name: str, wtype: str):
    """Relay reshapes the dense path like the network's input in both blocks."""
    _, channels, _, width = data.type_annotation.shape
    rows = reshape(x, [-1, width])
    dense_w = var(dense_name, shape=(width, width), dtype=wtype)
    by_rows = reshape_like(nn.relu(nn.dense(rows, dense_w)), data)
    conv_w = var(conv_name, shape=(channels, channels, 3, 3), dtype=wtype)
    by_conv = nn.softmax(nn.conv2d(x, conv_w, padding=1, kernel_size=3))
    return by_rows + by_conv


def get_net(input_shape=(1, 3, 24, 12), dtype: str = "float32", wtype: str | None = None):
    """The network as a ``Function`` of ``%data: input_shape`` (NCHW) and its weights;
    ``wtype`` is the weights' dtype (``dtype`` when not given)."""
    wtype = wtype or dtype
    data = var("data", shape=input_shape, dtype=dtype)
    first = _block(data, data, "dense_weight", "conv_weight", wtype)
    normed = layers.batch_norm_infer(nn.bias_add(first, var("bias")), name="batch_norm")
    out = _block(normed, data, "dense2_weight", "conv2_weight", wtype)
    return Function(analysis.free_vars(out), out)


def get_workload(input_shape=(1, 3, 24, 12), dtype: str = "float32",
                 wtype: str | None = None):
    """``(mod, params)`` of :func:`get_net`, weights filled evenly (Relay's
    ``Constant`` initializer) and norm/bias vectors as ``create_workload`` sets them."""
    net = get_net(input_shape=input_shape, dtype=dtype, wtype=wtype)
    return create_workload(net, initializer=_EvenWeights())


__all__ = ["get_net", "get_workload"]
