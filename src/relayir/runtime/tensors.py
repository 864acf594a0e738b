"""Arrays at the boundary between the user and the kernels: one rule for inputs, one
aligned allocator. Every executor (interpreter, graph executor, VM) checks inputs with
``check_input`` and allocates kernel storage with ``aligned_empty``.

The input rule: a numpy array must have the input's dtype (a different dtype is refused,
never silently rounded; only a non-native byte order is converted); a torch tensor is
taken as its numpy view (no copy on the CPU); a Python scalar or list is converted to
the input's dtype as ``np.asarray(value, dtype)`` would. Static dims must match; a
symbolic dim matches any extent (the VM then checks that a name means one extent).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import Error
from ..ir.types import TensorType

ALIGNMENT = 64  # bytes: a cache line, and what 512-bit vector loads like


def aligned_empty(nbytes: int, alignment: int = ALIGNMENT) -> np.ndarray:
    """An uninitialised ``uint8`` buffer of ``nbytes`` (at least 1) whose address is a
    multiple of ``alignment``."""
    n = max(int(nbytes), 1)
    raw = np.empty(n + alignment, dtype=np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset: offset + n]


def aligned_array(shape: Sequence[int], dtype) -> np.ndarray:
    """An uninitialised C-contiguous array at an ``ALIGNMENT``-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return aligned_empty(nbytes)[:nbytes].view(dtype).reshape(shape)


def as_numpy(value):
    """A torch tensor as its numpy array (no copy on the CPU); anything else unchanged."""
    if not isinstance(value, np.ndarray) and hasattr(value, "detach") and hasattr(
            value, "numpy"):
        return value.detach().cpu().numpy()
    return value


def shape_text(shape) -> str:
    """``(1, ?, 64)``: a shape with its symbolic dims named."""
    dims = [str(d) if isinstance(d, (int, np.integer)) else str(getattr(d, "name", "?") or "?")
            for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def check_input(what: str, value, dtype: str, shape: Sequence, error: type = Error
                ) -> np.ndarray:
    """``value`` as an array of ``dtype`` whose shape fits ``shape`` (ints must match;
    anything else is a symbolic dim), by the rule of the module docstring; ``error``
    (a ``relayir.Error`` subclass) names ``what`` otherwise."""
    if value is None:
        raise error(f"input {what}: no value given")
    value = as_numpy(value)
    if not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value, dtype=dtype)
        except (TypeError, ValueError, OverflowError) as exc:
            raise error(f"input {what}: cannot make a {dtype} array of {value!r}: {exc}"
                        ) from None
    if value.dtype.name != dtype:
        raise error(f"input {what}: expected dtype {dtype}, found {value.dtype.name} "
                    f"(expected shape {shape_text(shape)}, found {shape_text(value.shape)})")
    if not value.dtype.isnative:
        value = value.astype(value.dtype.newbyteorder("="))
    if value.ndim != len(shape) or any(
            isinstance(d, (int, np.integer)) and d != s for d, s in zip(shape, value.shape)):
        raise error(f"input {what}: expected shape {shape_text(shape)}, found shape "
                    f"{shape_text(value.shape)}")
    return value


def check_tensor_input(what: str, value, ty, error: type = Error):
    """``check_input`` against a ``TensorType``; other types pass ``value`` through."""
    if not isinstance(ty, TensorType):
        return value
    return check_input(what, value, ty.dtype, ty.shape, error)


__all__ = ["ALIGNMENT", "aligned_array", "aligned_empty", "as_numpy", "check_input",
           "check_tensor_input", "shape_text"]
