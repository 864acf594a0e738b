"""Computes of the blocked convolutions ``nn.contrib_conv2d_NCHWc`` and
``nn.contrib_depthwise_conv2d_NCHWc``.

The direct convolution is written so that ``tir/matmul.py`` tiles it in its *direct*
form: the weight ``W[oc, ic, kh, kw, ib, ob]`` is contiguous along the output block
``ob`` and does not vary with the output column ``w``; the input does not vary with
``ob``. A tile is ``mi`` output columns × one block of ``ob`` (``acc[mi][ob]`` in
registers), and the weight is read in place: it was packed into this layout when the
model was built. A 1×1 stride-1 convolution without padding is a GEMM: its output rows
and columns fuse into one loop of ``H·W`` pixels (the same compute, no special case).

The depthwise convolution has no reduction over channels: its nest keeps one block of
channels in a row of accumulators, the window loops outside the channel loop, so the
inner loop runs along contiguous channels of input and weight (vectorised over the
block), with a fused bias / ReLU6 applied as it stores; a strided one reads its zero
padding through a condition on the load instead of a padded copy of the input.
"""

from __future__ import annotations

from .. import expr as E
from .. import tensor as te
from ..tensor import compute
from .common import COMPUTE, static
from .conv import padded
from .nn import product_acc

# Lowering hint: read the packed weight in place (``tir/matmul.py``'s direct form).
DIRECT = {"schedule": {"tile_form": "direct"}}


def _geometry(attrs, weight):
    kh, kw = static(weight.shape[2]), static(weight.shape[3])
    if kh is None or kw is None:
        raise E.TEError("a blocked convolution needs a static kernel size")
    return kh, kw


@COMPUTE.register("nn.contrib_conv2d_NCHWc")
def conv2d_nchwc(attrs, inputs, out):
    data, weight = inputs
    kh, kw = _geometry(attrs, weight)
    in_blocks, ib = weight.shape[1], weight.shape[4]
    out_blocks = static(weight.shape[0])
    if out_blocks is None:
        raise E.TEError("a blocked convolution needs a static number of output channels")
    blocks_per_group = out_blocks // attrs.groups
    x = padded(data, "NCHWc", "HW", attrs.padding)
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    acc = product_acc(out.dtype)

    def fn(n, oc, h, w, ob):
        rc = te.reduce_axis(in_blocks, "rc")
        rh, rw = te.reduce_axis(kh, "rh"), te.reduce_axis(kw, "rw")
        rb = te.reduce_axis(ib, "rb")
        ic = rc.var if attrs.groups == 1 else (
            E.truncdiv(oc, blocks_per_group) * in_blocks + rc.var)
        src = (E.cast(acc, x[n, ic, h * sh + rh.var * dh, w * sw + rw.var * dw, rb.var])
               * E.cast(acc, weight[oc, rc.var, rh.var, rw.var, rb.var, ob]))
        return E.cast(out.dtype, te.sum(src, [rc, rh, rw, rb], dtype=acc))

    return compute(out.shape, fn, name="conv2d_NCHWc", tag="conv", attrs=DIRECT)


@COMPUTE.register("nn.contrib_depthwise_conv2d_NCHWc")
def depthwise_conv2d_nchwc(attrs, inputs, out):
    data, weight = inputs
    kh, kw = _geometry(attrs, weight)
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    # A strided window reads a quarter of its input (stride 2): a padded copy would
    # write and read all of it again, so the padding becomes a condition on the load
    # (mobilenet_v2's strided layers alone: 1.5x faster). At stride 1 every input value
    # is read 9 times and the condition in the inner loop costs more than the copy
    # (1.3-1.5x slower): the padded copy stays.
    x = padded(data, "NCHWc", "HW", attrs.padding, materialize=(sh, sw) == (1, 1))
    acc = product_acc(out.dtype)

    def fn(n, c, h, w, b):
        rh, rw = te.reduce_axis(kh, "rh"), te.reduce_axis(kw, "rw")
        src = (E.cast(acc, x[n, c, h * sh + rh.var * dh, w * sw + rw.var * dw, b])
               * E.cast(acc, weight[c, 0, rh.var, rw.var, 0, b]))
        return E.cast(out.dtype, te.sum(src, [rh, rw], dtype=acc))

    return compute(out.shape, fn, name="depthwise_conv2d_NCHWc", tag="conv")
