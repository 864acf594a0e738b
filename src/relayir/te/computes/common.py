"""What every compute rule shares: the table, the output spec, broadcasting, axes.

A rule is ``rule(attrs, inputs, out) -> Tensor | list[Tensor]``: ``inputs`` holds one
``Tensor`` per op input (a list of tensors for a tuple input such as concatenate's),
``out`` is an ``OutType`` (``shape`` as ``int64`` expressions, ``dtype``), or a list of
them for an op with a tuple result.
"""

from __future__ import annotations

from typing import NamedTuple

from ...ir.op import OpTable, get_op
from .. import expr as E
from ..tensor import Tensor, compute

COMPUTE = OpTable("compute")

# Ops with no tensor-expression compute, each with the reason: data-dependent output
# shapes (``dyn.*``) or algorithms loop IR does not express well (sorting). The cpu
# target runs a primitive function that contains one through the op's numpy reference.
REFERENCE_ONLY: dict[str, str] = {}


def declare_reference_only(op_name: str, reason: str) -> None:
    get_op(op_name)  # fail early on a typo
    REFERENCE_ONLY[op_name] = reason


class OutType(NamedTuple):
    shape: tuple
    dtype: str


def static(d) -> int | None:
    """The value of a static dimension, else None."""
    v = E.const_value(d)
    return None if v is None else int(v)


def broadcast_read(t: Tensor, index: tuple, out_shape: tuple | None = None) -> E.Expr:
    """``t`` read at an output index under numpy broadcasting (trailing dims aligned).
    A symbolic dim of ``t`` that is not the output's own dim (``out_shape``) may be 1 at
    run time (an ``Any`` dim broadcast against a larger one): it reads index 0 then."""
    lead = len(index) - t.ndim
    return t[tuple(broadcast_index(d, None if out_shape is None else out_shape[lead + k],
                                   index[lead + k]) for k, d in enumerate(t.shape))]


def broadcast_index(dim, out_dim, i: E.Expr) -> E.Expr:
    """The index along an input axis of extent ``dim`` read at output index ``i`` of an
    axis of extent ``out_dim`` (None: unknown) under broadcasting: 0 for a static 1, a
    run-time test for a symbolic dim that is not the output's own."""
    if static(dim) == 1:
        return E.IntImm(0)
    if static(dim) is None and out_dim is not None and dim is not out_dim:
        return E.select(E.equal(dim, E.IntImm(1)), E.IntImm(0), i)
    return i


def elementwise(out: OutType, inputs, fn, name: str, tag: str = "elemwise") -> Tensor:
    """``out[i] = fn(*[x[i] broadcast])``."""

    def body(*i):
        return fn(*[broadcast_read(x, i, out.shape) for x in inputs])

    return compute(out.shape, body, name=name, tag=tag, dtype=out.dtype)


def norm_axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


def prod(dims) -> E.Expr:
    out: E.Expr = E.IntImm(1)
    for d in dims:
        out = out * d
    return out


def ravel(index, shape) -> E.Expr:
    """Row-major linear position of ``index`` in ``shape``."""
    out: E.Expr = E.IntImm(0)
    for i, d in zip(index, shape):
        out = out * d + i
    return out


def unravel(pos: E.Expr, shape) -> tuple:
    """The index of the row-major linear position ``pos`` in ``shape``."""
    out = []
    for k in range(len(shape) - 1, -1, -1):
        d = shape[k]
        out.append(E.truncmod(pos, d) if k else pos)
        pos = E.truncdiv(pos, d)
    return tuple(reversed(out))


def product_acc(dtype: str) -> str:
    """Accumulator dtype of products: float32 stays float32, as numpy multiplies it (a
    float64 product kept -1.4e-45 * 0.11 from underflowing to -0.0, so a later -inf gave
    +inf where numpy gives NaN); other dtypes as ``float_acc``."""
    return dtype if dtype in ("float32", "float64") else float_acc(dtype)


def float_acc(dtype: str) -> str:
    """Accumulator dtype of float sums and means: float64 (matches numpy closely)."""
    return "float64" if E.is_float(dtype) else ("int64" if not E.is_unsigned(dtype)
                                                  else "uint64")
