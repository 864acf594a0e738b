"""Relay ops relayir spells as its own ops, read off the argument types when the call is
made (so the types must be known then: annotated variables, constants or typed
expressions; a symbolic extent where a number is needed is an error naming the op):

- ``broadcast_to_like(x, y)``: ``broadcast_to`` to ``y``'s shape;
- ``collapse_sum_like(x, y)`` / ``collapse_sum_to(x, shape)``: ``sum`` over the axes
  broadcasting added (leading ones, and those of extent 1 in the target), then ``reshape``;
- ``cast_like(x, y)``: ``cast`` to ``y``'s dtype;
- ``slice_like(x, y, axes)``: ``strided_slice`` of ``x`` to ``y``'s extents on ``axes``;
- ``reverse_reshape(x, newshape)``: ``reshape`` whose special values (0, -1, ...) are
  read from the right, as Relay's op reads them;
- ``sequence_mask(data, valid_length, mask_value, axis)``: ``where`` positions along
  ``axis`` (of the batch axis ``1 - axis``) are past their valid length, ``mask_value``;
- ``nn.cross_entropy`` / ``nn.cross_entropy_with_logits``: ``-sum(log(p) * t) / batch``
  and ``-sum(x * t) / batch``;
- ``nn.l2_normalize(x, eps, axis)``: ``x / sqrt(max(sum(x * x, axis), eps))``.
"""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import Constant
from ....op import reduce as _reduce
from ....op import tensor as _tensor
from ....op import transform as _t
from ....op.algorithm import arange
from ....op.transform.shape import reshape_shape
from ._arg_facts import known_type


def _type(e, op: str, what: str):
    ty = known_type(e)
    if ty is None:
        raise Error(f"relay.{op}: the type of {what} must be known when the call is made "
                    "(annotate its variable)")
    return ty


def _static_shape(e, op: str, what: str) -> tuple:
    shape = _type(e, op, what).shape
    if not all(isinstance(d, int) for d in shape):
        raise Error(f"relay.{op}: {what} must have a static shape, found {shape}")
    return tuple(shape)


def broadcast_to_like(data, broadcast_type):
    return _t.broadcast_to(data, _static_shape(broadcast_type, "broadcast_to_like", "the like"))


def collapse_sum_to(data, shape):
    if isinstance(shape, Constant):
        shape = tuple(int(d) for d in np.asarray(shape.data).reshape(-1))
    shape = tuple(int(d) for d in shape)
    have = _static_shape(data, "collapse_sum_to", "data")
    lead = len(have) - len(shape)
    if lead < 0:
        raise Error(f"relay.collapse_sum_to: cannot collapse {have} to the longer {shape}")
    axes = [*range(lead),
            *(lead + i for i, d in enumerate(shape) if d == 1 and have[lead + i] != 1)]
    out = _reduce.sum(data, axis=axes, keepdims=True) if axes else data
    return _t.reshape(out, shape) if tuple(have) != shape else out


def collapse_sum_like(data, collapse_type):
    return collapse_sum_to(data, _static_shape(collapse_type, "collapse_sum_like", "the like"))


def cast_like(data, dtype_like):
    return _t.cast(data, _type(dtype_like, "cast_like", "the like").dtype)


def slice_like(data, shape_like, axes=None):
    have = _static_shape(data, "slice_like", "data")
    like = _static_shape(shape_like, "slice_like", "the like")
    picked = range(min(len(have), len(like))) if axes is None else [
        a + len(have) if a < 0 else a for a in axes]
    end = list(have)
    for a in picked:
        end[a] = like[a]
    return _t.strided_slice(data, [0] * len(have), end)


def reverse_reshape(data, newshape):
    have = _static_shape(data, "reverse_reshape", "data")
    newshape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    out = reshape_shape(have[::-1], newshape[::-1])[::-1]
    return _t.reshape(data, tuple(out))


def sequence_mask(data, valid_length, mask_value=0, axis: int = 0):
    ty = _type(data, "sequence_mask", "data")
    if axis not in (0, 1) or ty.ndim < 2:
        raise Error(f"relay.sequence_mask: axis must be 0 or 1 of data of rank >= 2, found "
                    f"axis {axis} of {ty}")
    steps = ty.shape[axis]
    if not isinstance(steps, int):
        raise Error(f"relay.sequence_mask: the length axis must be static, found {ty}")
    lengths = _type(valid_length, "sequence_mask", "valid_length")
    index = arange(0, steps, 1, dtype="int64")
    valid = _t.cast(valid_length, "int64") if lengths.dtype != "int64" else valid_length
    # (steps, batch) for axis 0, (batch, steps) for axis 1, then the trailing axes
    keep = (_tensor.less(_t.expand_dims(index, 1), _t.expand_dims(valid, 0)) if axis == 0
            else _tensor.less(_t.expand_dims(index, 0), _t.expand_dims(valid, 1)))
    keep = _t.reshape(keep, tuple(ty.shape[:2]) + (1,) * (ty.ndim - 2))
    return _t.where(keep, data, Constant(np.array(mask_value, ty.dtype)))


def _mean_over_batch(predictions, product, op: str):
    """``-sum(product) / batch`` (the batch is the predictions' first extent)."""
    n = _static_shape(predictions, op, "predictions")[0]
    dtype = _type(predictions, op, "predictions").dtype
    total = _reduce.sum(product)
    return _tensor.divide(_tensor.negative(total), Constant(np.array(n, dtype)))


def cross_entropy(predictions, targets):
    return _mean_over_batch(predictions, _tensor.multiply(_tensor.log(predictions), targets),
                            "nn.cross_entropy")


def cross_entropy_with_logits(predictions, targets):
    return _mean_over_batch(predictions, _tensor.multiply(predictions, targets),
                            "nn.cross_entropy_with_logits")


def l2_normalize(data, eps, axis=None):
    squares = _reduce.sum(_tensor.multiply(data, data), axis=axis, keepdims=True)
    dtype = _type(data, "nn.l2_normalize", "data").dtype
    floor = Constant(np.array(eps, dtype))
    return _tensor.divide(data, _tensor.sqrt(_tensor.maximum(squares, floor)))
