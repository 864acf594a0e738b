"""``relay.nn.dilate`` and ``relay.nn.mirror_pad`` as graphs of relayir ops (shapes may
be dynamic: every step reads its extents at run time).

- ``dilate(data, strides, dilation_value)``: along each axis with stride ``s > 1``, each
  element followed by ``s - 1`` fill values, the trailing fill dropped:
  ``expand_dims`` → ``pad`` with the value → ``reshape`` merging the two axes (``-3``)
  → ``strided_slice`` ending ``s - 1`` before the end;
- ``mirror_pad(data, pad_width, mode)``: ``REFLECT`` is ``nn.pad``'s ``reflect``;
  ``SYMMETRIC`` (the edge repeated, numpy's ``symmetric``) concatenates the reversed
  first ``before`` and last ``after`` slices of each axis around it.
"""

from __future__ import annotations

from ....errors import Error
from ....ir.expr import Constant
from ....op.nn import pad
from ....op.transform import concatenate, expand_dims, reshape, reverse, strided_slice
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


__all__ = ["dilate", "mirror_pad"]
