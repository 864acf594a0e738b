"""``relay.nn.dilate`` and ``relay.nn.mirror_pad`` as graphs of relayir ops (shapes may
be dynamic: every step reads its extents at run time).

- ``dilate(data, strides, dilation_value)``: along each axis with stride ``s > 1``, each
  element followed by ``s - 1`` fill values, the trailing fill dropped:
  ``expand_dims`` → ``pad`` with the value → ``reshape`` merging the two axes (``-3``)
  → ``strided_slice`` ending ``s - 1`` before the end;
- ``mirror_pad(data, pad_width, mode)``: ``REFLECT`` is ``nn.pad``'s ``reflect``;
  ``SYMMETRIC`` (the edge repeated, numpy's ``symmetric``) concatenates the reversed
  first ``before`` and last ``after`` slices of each axis around it;
- ``nll_loss(predictions, targets, weights, reduction, ignore_index)``: ``-pred[n,
  target, ...] * weight[target]`` (a ``gather`` along the class axis and a ``take``),
  zero where the target is ``ignore_index``; ``mean`` divides the sum by the weights of
  the targets counted, as PyTorch and Relay do.
"""

from __future__ import annotations

from ....errors import Error
from ....ir.expr import Constant
from ....op.nn import pad
from ....op.reduce import sum as _sum
from ....op.scatter import gather
from ....op.tensor import divide, multiply, negative, not_equal
from ....op.transform import (
    concatenate,
    expand_dims,
    reshape,
    reverse,
    squeeze,
    strided_slice,
    take,
    where,
)
from ._composed import _const, _type_of


def dilate(data, strides, dilation_value=0.0):
    dtype = _type_of(data, "nn.dilate")
    nd = len(dtype.shape)
    strides = [int(s) for s in strides]
    if len(strides) != nd or min(strides, default=1) < 1:
        raise Error(f"relay.nn.dilate: needs {nd} strides >= 1 (one per axis), found {strides}")
    fill = dilation_value if isinstance(dilation_value, Constant) else \
        _const(dilation_value, dtype.dtype)
    out = data
    for k, s in enumerate(strides):
        if s == 1:
            continue
        out = expand_dims(out, k + 1)
        widths = [(0, 0)] * (nd + 1)
        widths[k + 1] = (0, s - 1)
        out = pad(out, widths, fill)
        out = reshape(out, [0] * k + [-3] + [0] * (nd - k - 1))
        out = strided_slice(out, [0], [-(s - 1)], axes=[k])
    return out


def mirror_pad(data, pad_width, mode: str = "SYMMETRIC"):
    widths = [tuple(int(v) for v in w) for w in pad_width]
    if mode == "REFLECT":
        return pad(data, widths, pad_mode="reflect")
    if mode != "SYMMETRIC":
        raise Error(f"relay.nn.mirror_pad: mode is SYMMETRIC or REFLECT, found {mode!r}")
    out = data
    for axis, (before, after) in enumerate(widths):
        if min(before, after) < 0:
            raise Error(f"relay.nn.mirror_pad: pad widths must be >= 0, found {widths}")
        parts = []
        if before:
            parts.append(reverse(strided_slice(out, [0], [before], axes=[axis]), axis))
        parts.append(out)
        if after:
            parts.append(reverse(strided_slice(out, [-after], [2 ** 62], axes=[axis]), axis))
        if len(parts) > 1:
            out = concatenate(parts, axis)
    return out


REDUCTIONS = ("mean", "sum", "none")


def nll_loss(predictions, targets, weights, reduction: str = "mean", ignore_index: int = -100):
    if reduction not in REDUCTIONS:
        raise Error(f"relay.nn.nll_loss: reduction is one of {REDUCTIONS}, found {reduction!r}")
    pt, tt = _type_of(predictions, "nn.nll_loss"), _type_of(targets, "nn.nll_loss")
    if len(pt.shape) < 2 or len(tt.shape) != len(pt.shape) - 1:
        raise Error(f"relay.nn.nll_loss: predictions (N, C, d...) and targets (N, d...), "
                    f"found {pt} and {tt}")
    counted = not_equal(targets, _const(ignore_index, tt.dtype))
    safe = where(counted, targets, _const(0, tt.dtype))   # an ignored target reads class 0
    picked = squeeze(gather(predictions, 1, expand_dims(safe, 1)), axis=[1])
    weight = where(counted, take(weights, safe, axis=0), _const(0, pt.dtype))
    loss = negative(multiply(picked, weight))
    if reduction == "none":
        return loss
    total = _sum(loss)
    return total if reduction == "sum" else divide(total, _sum(weight))


__all__ = ["dilate", "mirror_pad", "nll_loss"]
