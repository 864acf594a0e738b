"""Helpers for writing type relations.

A relation is ``rel(arg_types, attrs) -> out_type``. It is called once every argument
type is known (dimensions may still be ``Any`` or symbolic). Relations compute new dims
with ``dim_add`` / ``dim_sub`` / ``dim_mul`` / ``floordiv`` (re-exported from
``ir.dim_expr``): exact on ints, symbolic expressions on named dims, ``Any`` on ``Any``.
It reports a bad program by calling ``fail``; the type checker prefixes the op name and
appends the call's text, so messages read
``nn.dense: units mismatch: ... in nn.dense(%x, %w) at 3:5``.
"""

from __future__ import annotations

from typing import NoReturn

from ..errors import TypeInferenceError
from ..ir.dim_expr import (  # noqa: F401  (dim_add ... re-exported for relations)
    DimExpr,
    certainly_differ,
    dim_add,
    dim_mul,
    dim_sub,
    dim_symbols,
    floordiv,
)
from ..ir.types import Any, Dim, TensorType, TupleType, Type, is_float, is_int


def fail(message: str) -> NoReturn:
    raise TypeInferenceError(message)


def tensor(ty: Type, what: str = "data") -> TensorType:
    if not isinstance(ty, TensorType):
        fail(f"{what} must be a tensor, found {ty}")
    return ty


def tensors(types, names) -> list[TensorType]:
    return [tensor(t, n) for t, n in zip(types, names)]


def tuple_of_tensors(ty: Type, what: str = "data") -> list[TensorType]:
    if not isinstance(ty, TupleType):
        fail(f"{what} must be a tuple of tensors, found {ty}")
    return [tensor(f, f"{what}.{i}") for i, f in enumerate(ty.fields)]


def same_dtype(a: TensorType, b: TensorType, names=("lhs", "rhs")) -> str:
    if a.dtype != b.dtype:
        fail(f"dtype mismatch: {names[0]} is {a} but {names[1]} is {b}")
    return a.dtype


def require_float(t: TensorType, what: str = "data") -> None:
    if not is_float(t.dtype):
        fail(f"{what} must have a float dtype, found {t}")


def require_int(t: TensorType, what: str = "data") -> None:
    if not is_int(t.dtype):
        fail(f"{what} must have an integer dtype, found {t}")


def dim_may_equal(a: Dim, b: Dim) -> bool:
    """False only when ``a`` and ``b`` are certainly different (``3`` and ``4``, ``n`` and
    ``n + 1``, ``2 * n`` and ``3``)."""
    return not certainly_differ(a, b)


# The VM names the ``Any`` dims of a primitive function ``anydim0``, ``anydim1``...
# (``vm/shape_func.py`` ``name_any_dims``) to give its kernel loop bounds: they are still
# unknowns, and broadcast as ``Any`` does.
ANY_DIM_PREFIX = "anydim"


def _unknown(d: Dim) -> bool:
    """``Any``, or a dim computed from one the VM named (``min(2, anydim2 - 2)``)."""
    return isinstance(d, Any) or (isinstance(d, DimExpr) and any(
        n.startswith(ANY_DIM_PREFIX) for n in dim_symbols(d)))


def broadcast_dim(a: Dim, b: Dim) -> Dim | None:
    """The broadcast of two dims, or None when they cannot broadcast. An unknown dim
    (``Any``) against an extent gives the extent (the run-time check is the kernel's).
    A named dim (``seq``) against a static extent other than 1 is refused: it would hold
    only when the name is that extent, which a dim named to vary never is (an importer
    that meets it has baked an example's size into the graph)."""
    if a == b:
        return a
    if a == 1:
        return b
    if b == 1:
        return a
    if isinstance(a, int):
        return a if _unknown(b) else None
    if isinstance(b, int):
        return b if _unknown(a) else None
    return Any()


def broadcast_shapes(a: TensorType, b: TensorType, names=("lhs", "rhs")) -> tuple:
    sa, sb = a.shape, b.shape
    n = max(len(sa), len(sb))
    sa = (1,) * (n - len(sa)) + sa
    sb = (1,) * (n - len(sb)) + sb
    out = []
    for i, (x, y) in enumerate(zip(sa, sb)):
        d = broadcast_dim(x, y)
        if d is None:
            fail(
                f"shapes do not broadcast: {names[0]} is {a} but {names[1]} is {b} "
                f"(dimension {i - n} is {x} vs {y})"
            )
        out.append(d)
    return tuple(out)


def show_type(t: TensorType) -> str:
    """``Tensor[(2, ?, n), float32]``, independent of the text printer."""
    return f"Tensor[({', '.join(repr(d) for d in t.shape)}), {t.dtype}]"


def check_axis(axis: int, ndim: int, what: str = "axis", of: str = "") -> int:
    """``axis`` in ``[-ndim, ndim)`` as a non-negative index (a 0-d tensor has no axis).

    ``of`` names the tensor in the message (``"data Tensor[(2, 3), float32]"``);
    by default it is "a tensor of rank ``ndim``"."""
    if not -ndim <= axis < ndim:
        expected = f"{-ndim} <= {what} < {ndim}" if ndim else "no axis"
        fail(f"{what} {axis} is out of range for {of or f'a tensor of rank {ndim}'} "
             f"(expected {expected})")
    return axis + ndim if axis < 0 else axis


def check_insert_axis(axis: int, ndim: int) -> int:
    """An axis for a new dimension: ``[-ndim-1, ndim]`` (expand_dims, stack)."""
    if not -ndim - 1 <= axis <= ndim:
        fail(f"axis {axis} is out of range for a new axis of a rank-{ndim} tensor "
             f"(expected {-ndim - 1} <= axis <= {ndim})")
    return axis + ndim + 1 if axis < 0 else axis


def check_axes(axes, ndim: int, what: str = "axis") -> list[int]:
    out = [check_axis(a, ndim, what) for a in axes]
    if len(set(out)) != len(out):
        fail(f"{what} {tuple(axes)} repeats an axis")
    return out


def dim_unify(a, b):
    """The dim two must-be-equal dims share; None if they certainly differ."""
    if a == b:
        return a
    if certainly_differ(a, b):
        return None
    if isinstance(a, int):
        return a
    if isinstance(b, int):
        return b
    return Any()


def num_elements(shape) -> int | None:
    """The product of a static shape, or None if any dim is not static."""
    n = 1
    for d in shape:
        if not isinstance(d, int):
            return None
        n *= d
    return n


def runtime_checked(ref):
    """A reference whose shape helpers ``fail`` only when dynamic dims meet bad values at
    run time; the interpreter then reports it as its own error, naming the op."""

    def wrapped(*args):
        try:
            return ref(*args)
        except TypeInferenceError as exc:
            raise ValueError(str(exc)) from None

    wrapped.__name__ = ref.__name__
    return wrapped


# ---------------------------------------------------------------- common relations


def identity_rel(types, attrs) -> Type:
    return tensor(types[0])


def float_identity_rel(types, attrs) -> Type:
    t = tensor(types[0])
    require_float(t)
    return t


def broadcast_rel(types, attrs) -> Type:
    a, b = tensors(types, ("lhs", "rhs"))
    dtype = same_dtype(a, b)
    return TensorType(broadcast_shapes(a, b), dtype)


def broadcast_bool_rel(types, attrs) -> Type:
    a, b = tensors(types, ("lhs", "rhs"))
    same_dtype(a, b)
    return TensorType(broadcast_shapes(a, b), "bool")


def bool_identity_rel(types, attrs) -> Type:
    return TensorType(tensor(types[0]).shape, "bool")
