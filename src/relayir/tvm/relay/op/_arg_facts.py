"""What the ``relayir.tvm`` op wrappers can tell about an argument before type
inference (a constant's value, a variable's annotated type), which decides whether a
call takes the static op or its ``dyn`` twin."""

from __future__ import annotations

import numpy as np

from ....ir.expr import Constant, Expr, Var
from ....ir.types import TensorType, is_float
from ....op.transform.convert import cast as _cast


def constant_value(arg):
    """A ``Constant`` as its Python value; anything else unchanged."""
    if isinstance(arg, Constant):
        data = np.asarray(arg.data)
        return data.tolist()
    return arg


def any_expr(*args) -> bool:
    return any(isinstance(a, Expr) for a in args)


def known_type(e):
    """``e``'s tensor type where it is known before type inference, else None."""
    if isinstance(e, Constant):
        return TensorType(e.data.shape, e.data.dtype.name)
    ty = e.type_annotation if isinstance(e, Var) else None
    if ty is None and isinstance(e, Expr) and e.has_type:
        ty = e.checked_type
    return ty if isinstance(ty, TensorType) else None


def known_dtype(e):
    ty = known_type(e)
    return None if ty is None else ty.dtype


def as_int64(shape):
    """A run-time shape argument of a known float dtype, cast to int64 (Relay reads any
    number dtype; relayir's ``dyn`` ops take integer tensors)."""
    dtype = known_dtype(shape) if isinstance(shape, Expr) else None
    return _cast(shape, "int64") if dtype is not None and is_float(dtype) else shape


def int64_const(v) -> Constant:
    return Constant(np.array(v, "int64"))
