"""Arrays at the boundary between the user and the kernels: one rule for inputs, one
aligned allocator. Every executor (interpreter, graph executor, VM, AOT) checks inputs
with ``check_input`` and allocates kernel storage with ``aligned_empty``.

The input rule (``check_input``): a value is converted to the input's dtype only when
that changes no value, as numpy's own promotion rules (NEP 50) decide:

- a numpy array or scalar (a torch tensor is taken as its numpy view, no copy on the
  CPU) of another dtype is converted when numpy's ``safe`` casting allows it (``int32``
  to ``int64``, ``float16`` to ``float32``, ``bool`` to anything): widening changes no
  value. A narrowing or kind-changing dtype (``float64`` to ``float32``, ``int64`` to
  ``int32``, ``float`` to ``int``) is refused, with the ``astype`` to write;
- Python numbers (a scalar or nested lists) have no dtype of their own, so they are
  weakly typed as numpy's scalars are: a float converts to any float dtype (rounded to
  it, as ``x32 + 0.1`` is), an int to any integer dtype that holds it or to a float
  dtype, a bool to any dtype; a float for an integer input, or an int out of the
  input's range, is refused;
- a non-native byte order (a big-endian ``>f4`` array is ``float32``) is converted.

Static dims must match; a symbolic dim matches any extent (the VM then checks that a
name means one extent).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import Error
from ..ir.types import TensorType, dtype_range, is_float, is_int, numpy_dtype

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
    """A torch tensor as its numpy array (no copy on the CPU; a bfloat16 one as ml_dtypes'
    bfloat16, which numpy lacks); anything else unchanged."""
    if not isinstance(value, np.ndarray) and hasattr(value, "detach") and hasattr(
            value, "numpy"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":  # the same bits, seen as int16 first
            import torch  # a torch tensor was given: torch is installed and imported

            return value.view(torch.int16).numpy().view(numpy_dtype("bfloat16"))
        return value.numpy()
    return value


def shape_text(shape) -> str:
    """``(1, ?, 64)``: a shape with its symbolic dims named."""
    dims = [str(d) if isinstance(d, (int, np.integer)) else str(getattr(d, "name", "?") or "?")
            for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


# the numpy dtype of each dtype name, native byte order (the per-call fast path's)
_NATIVE = {name: np.dtype(name) for name in (
    "float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool")}
_FOREIGN = object()  # no dtype equals it


def check_input(what: str, value, dtype: str, shape: Sequence, error: type = Error
                ) -> np.ndarray:
    """``value`` as an array of ``dtype`` whose shape fits ``shape`` (ints must match;
    anything else is a symbolic dim), by the rule of the module docstring; ``error``
    (a ``relayir.Error`` subclass) names ``what`` otherwise."""
    if type(value) is np.ndarray and value.shape == shape and value.dtype == _NATIVE.get(
            dtype, _FOREIGN):
        return value  # the common case, checked in ~0.3 µs: exactly what the model takes
    if value is None:
        raise error(f"input {what}: no value given")
    value = as_numpy(value)
    if isinstance(value, np.generic):  # a numpy scalar has a dtype: typed, as an array
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        value = _typed(what, value, dtype, shape, error)
    else:
        value = _untyped(what, value, dtype, error)
    if value.ndim != len(shape) or any(
            isinstance(d, (int, np.integer)) and d != s for d, s in zip(shape, value.shape)):
        raise error(f"input {what}: expected shape {shape_text(shape)}, found shape "
                    f"{shape_text(value.shape)}")
    return value


def _typed(what: str, value: np.ndarray, dtype: str, shape, error) -> np.ndarray:
    """An array: its own dtype (in native byte order), or a safe widening of it."""
    found = value.dtype
    if found.name == dtype:
        return value if found.isnative else value.astype(found.newbyteorder("="))
    want = numpy_dtype(dtype)
    if np.can_cast(found, want, "safe"):
        return value.astype(want)
    raise error(f"input {what}: expected dtype {dtype}, found {found.name} (expected shape "
                f"{shape_text(shape)}, found {shape_text(value.shape)}); {found.name} does "
                f"not convert to {dtype} without changing values: pass "
                f"value.astype({dtype!r}) if that is intended")


def _untyped(what: str, value, dtype: str, error) -> np.ndarray:
    """Python numbers (a scalar or nested lists), weakly typed: see the module docstring."""
    try:
        natural = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise error(f"input {what}: cannot make a {dtype} array of {_short(value)}: {exc}"
                    ) from None
    kind = natural.dtype.kind
    fits = (natural.dtype.name == dtype or kind == "b"
            or (kind in "iu" and (is_int(dtype) or is_float(dtype)))
            or (kind == "f" and is_float(dtype)))
    if not fits:
        found = {"f": "floats", "c": "complex numbers", "i": "ints", "u": "ints",
                 "U": "strings", "S": "bytes"}.get(kind, f"{natural.dtype.name} values")
        raise error(f"input {what}: expected dtype {dtype}, found Python {found} "
                    f"({_short(value)}), which {dtype} cannot hold without changing them")
    want = numpy_dtype(dtype)
    try:
        if kind in "iu" and is_int(dtype) and natural.size:
            lo, hi = dtype_range(dtype)  # int4's too (ml_dtypes)
            if natural.min() < lo or natural.max() > hi:
                raise OverflowError(f"values out of {dtype}'s range [{lo}, {hi}]")
        with np.errstate(over="ignore"):
            out = np.asarray(natural, dtype=want)
    except (TypeError, ValueError, OverflowError) as exc:
        raise error(f"input {what}: cannot make a {dtype} array of {_short(value)}: {exc}"
                    ) from None
    if kind == "f" and not np.array_equal(np.isfinite(out), np.isfinite(natural)):
        raise error(f"input {what}: {_short(value)} overflows {dtype} (values beyond its "
                    f"largest finite value would become inf)")
    return out


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_tensor_input(what: str, value, ty, error: type = Error):
    """``check_input`` against a ``TensorType``; other types pass ``value`` through."""
    if not isinstance(ty, TensorType):
        return value
    return check_input(what, value, ty.dtype, ty.shape, error)


__all__ = ["ALIGNMENT", "aligned_array", "aligned_empty", "as_numpy", "check_input",
           "check_tensor_input", "shape_text"]
