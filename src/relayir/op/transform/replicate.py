"""Replication: ``broadcast_to``, ``tile``, ``repeat``, ``reverse``, ``meshgrid``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType, TupleType
from ..attrs_util import attr_int, attr_ints, set_fields
from ..type_rel import (
    check_axis,
    dim_mul,
    fail,
    show_type,
    tensor,
)
from ._common import _attr_shape, _check_tensor_list
from .join import _tensor_list

# ---------------------------------------------------------------- broadcast_to, tile, repeat


@dataclasses.dataclass(frozen=True)
class BroadcastToAttrs(Attrs):
    shape: tuple = ()

    def __post_init__(self):
        set_fields(self, shape=_attr_shape(self.shape))


def _broadcast_to_rel(types, attrs):
    t = tensor(types[0])
    target = attrs.shape
    ok = t.ndim <= len(target)
    for d, s in zip(reversed(t.shape), reversed(target)):
        ok = ok and (d == s or d == 1 or not isinstance(d, int))
    if not ok:
        fail(f"cannot broadcast data {show_type(t)} to shape {target}")
    return TensorType(target, t.dtype)


def _broadcast_to_ref(x, attrs):
    return np.array(np.broadcast_to(x, attrs.shape))


register_op("broadcast_to", rel=_broadcast_to_rel, ref=_broadcast_to_ref,
            pattern=OpPattern.BROADCAST, num_inputs=1, attrs=BroadcastToAttrs)


@dataclasses.dataclass(frozen=True)
class TileAttrs(Attrs):
    """numpy ``tile``: the shorter of shape and reps is padded with leading 1s."""

    reps: tuple = ()

    def __post_init__(self):
        reps = attr_ints(self.reps, "reps")
        if any(r < 0 for r in reps):
            raise ValueError(f"reps {reps} must be >= 0")
        set_fields(self, reps=reps)


def _tile_rel(types, attrs):
    t = tensor(types[0])
    n = max(t.ndim, len(attrs.reps))
    shape = (1,) * (n - t.ndim) + t.shape
    reps = (1,) * (n - len(attrs.reps)) + attrs.reps
    return TensorType(tuple(dim_mul(d, r) for d, r in zip(shape, reps)), t.dtype)


register_op("tile", rel=_tile_rel, ref=lambda x, attrs: np.tile(x, attrs.reps),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=TileAttrs)


@dataclasses.dataclass(frozen=True)
class RepeatAttrs(Attrs):
    repeats: int = 1
    axis: int = 0

    def __post_init__(self):
        repeats = attr_int(self.repeats, "repeats")
        if repeats < 1:
            raise ValueError(f"repeats must be >= 1, found {repeats}")
        set_fields(self, repeats=repeats, axis=attr_int(self.axis, "axis"))


def _repeat_rel(types, attrs):
    t = tensor(types[0])
    axis = check_axis(attrs.axis, t.ndim)
    shape = list(t.shape)
    shape[axis] = dim_mul(shape[axis], attrs.repeats)
    return TensorType(tuple(shape), t.dtype)


register_op("repeat", rel=_repeat_rel,
            ref=lambda x, attrs: np.repeat(x, attrs.repeats, axis=attrs.axis),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=RepeatAttrs)


@dataclasses.dataclass(frozen=True)
class ReverseAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"))


def _reverse_rel(types, attrs):
    t = tensor(types[0])
    check_axis(attrs.axis, t.ndim)
    return t


register_op("reverse", rel=_reverse_rel, ref=lambda x, attrs: np.flip(x, axis=attrs.axis),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=ReverseAttrs)


# ---------------------------------------------------------------- meshgrid


@dataclasses.dataclass(frozen=True)
class MeshgridAttrs(Attrs):
    """numpy's ``indexing``: "ij" (matrix: output axis k runs along input k) or "xy"
    (Cartesian: the first two axes swap)."""

    indexing: str = "ij"

    def __post_init__(self):
        if self.indexing not in ("ij", "xy"):
            raise ValueError(f"indexing must be 'ij' or 'xy', found {self.indexing!r}")


def meshgrid_axes(n: int, indexing: str) -> list[int]:
    """The output axis each of the ``n`` inputs runs along."""
    axes = list(range(n))
    if indexing == "xy" and n >= 2:
        axes[0], axes[1] = 1, 0
    return axes


def _meshgrid_rel(types, attrs):
    ts = _check_tensor_list(types[0])
    for k, t in enumerate(ts):
        if t.ndim > 1 or t.dtype != ts[0].dtype:
            fail(f"data.{k} {show_type(t)} must be 0-D or 1-D with the dtype of data.0 "
                 f"{show_type(ts[0])}")
    lengths = [t.shape[0] if t.ndim else 1 for t in ts]
    shape = [1] * len(ts)
    for length, axis in zip(lengths, meshgrid_axes(len(ts), attrs.indexing)):
        shape[axis] = length
    return TupleType(tuple(TensorType(tuple(shape), ts[0].dtype) for _ in ts))


register_op("meshgrid", rel=_meshgrid_rel,
            ref=lambda xs, attrs: tuple(np.meshgrid(*xs, indexing=attrs.indexing)),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=MeshgridAttrs,
            description="coordinate grids from 1-D tensors (numpy's meshgrid)")


def meshgrid(data, indexing="ij"):
    """One grid per input (a tuple-typed call); a 0-D input counts as length 1."""
    return call("meshgrid", [_tensor_list(data)], indexing=indexing)


def broadcast_to(data, shape):
    """Broadcast to a static shape with numpy's rules."""
    return call("broadcast_to", [data], shape=shape)


def tile(data, reps):
    """numpy ``tile``."""
    return call("tile", [data], reps=reps)


def repeat(data, repeats, axis):
    """Repeat each element ``repeats`` times along ``axis``."""
    return call("repeat", [data], repeats=repeats, axis=axis)


def reverse(data, axis):
    """Reverse the order of elements along ``axis``."""
    return call("reverse", [data], axis=axis)
