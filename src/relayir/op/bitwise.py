"""Bitwise operators on integer (and bool) tensors: and, or, xor, not, shifts.

Shifts follow numpy on the two's-complement values: ``right_shift`` of a signed value
is arithmetic (ONNX BitShift is defined on unsigned types only, where both agree);
a shift by the bit width or more gives 0 (or -1 for a negative value shifted right),
where C would be undefined.
"""

from __future__ import annotations

import numpy as np

from ..ir.op import OpPattern, call, register_op
from ..ir.types import TensorType, is_int
from .tensor import binary_constructor
from .type_rel import broadcast_rel, fail, show_type, tensor, tensors


def _int_or_bool(t, what):
    if not (is_int(t.dtype) or t.dtype == "bool"):
        fail(f"{what} must have an integer or bool dtype, found {show_type(t)}")


def _bitwise_rel(types, attrs):
    a, b = tensors(types, ("lhs", "rhs"))
    _int_or_bool(a, "lhs")
    return broadcast_rel(types, attrs)


def _shift_rel(types, attrs):
    a, b = tensors(types, ("lhs", "rhs"))
    if not is_int(a.dtype):
        fail(f"lhs must have an integer dtype, found {show_type(a)}")
    return broadcast_rel(types, attrs)


def _not_rel(types, attrs):
    t = tensor(types[0])
    _int_or_bool(t, "data")
    return TensorType(t.shape, t.dtype)


def _shift(x, s, left: bool):
    bits = x.dtype.itemsize * 8
    s64 = s.astype("int64")
    big = (s64 >= bits) | (s64 < 0)
    safe = np.where(big, 0, s64).astype(x.dtype)
    with np.errstate(over="ignore"):
        out = np.left_shift(x, safe) if left else np.right_shift(x, safe)
    if left:
        return np.where(big, np.zeros_like(out), out)
    return np.where(big, np.where(x < 0, -1, 0).astype(x.dtype), out)


_BINARY = {
    "bitwise_and": (_bitwise_rel, lambda a, b, attrs=None: np.bitwise_and(a, b)),
    "bitwise_or": (_bitwise_rel, lambda a, b, attrs=None: np.bitwise_or(a, b)),
    "bitwise_xor": (_bitwise_rel, lambda a, b, attrs=None: np.bitwise_xor(a, b)),
    "left_shift": (_shift_rel, lambda a, b, attrs=None: _shift(a, b, True)),
    "right_shift": (_shift_rel, lambda a, b, attrs=None: _shift(a, b, False)),
}

for _name, (_rel, _ref) in _BINARY.items():
    register_op(_name, rel=_rel, ref=_ref, pattern=OpPattern.BROADCAST, num_inputs=2,
                arg_names=("lhs", "rhs"))
register_op("bitwise_not", rel=_not_rel, ref=lambda x, attrs=None: np.invert(x),
            pattern=OpPattern.ELEMWISE, num_inputs=1)


def bitwise_not(data):
    """Elementwise bitwise complement (logical not for bool)."""
    return call("bitwise_not", [data])


_EXPORTS = {n: binary_constructor(n) for n in _BINARY}
globals().update(_EXPORTS)
__all__ = sorted([*_EXPORTS, "bitwise_not"])
