"""What ONNX converters share: the versioned table, the opset being imported, shapes of
the expressions built so far, and constant folding of shape-like inputs.

A converter is ``fn(*inputs, **attributes)``: ONNX inputs positionally (``None`` for an
omitted optional input), attributes by their ONNX names. ``OnnxTable.register(op,
since=n)`` adds a variant used from opset ``n`` on (ONNX's ``since_version``).
"""

from __future__ import annotations

import numpy as np

from ... import op as _op  # noqa: F401  (registers the ops the constructors call)
from ...ir.expr import Constant, Expr
from ...typing.infer import infer_expr
from ..common import ConversionError, ConverterTable

_OPSET: list[int] = []


class OnnxTable(ConverterTable):
    """op type -> [(since_version, converter)], the newest variant last."""

    def register(self, *names: str, since: int = 1):
        def wrap(fn):
            for name in names:
                self.setdefault(name, []).append((since, fn))
                self[name].sort(key=lambda p: p[0])
            return fn

        return wrap

    def lookup(self, name: str, opset: int):
        usable = [fn for since, fn in self[name] if since <= opset]
        if not usable:
            raise ConversionError(f"{name} is not defined at opset {opset}")
        return usable[-1]


def opset() -> int:
    return _OPSET[-1]


def ttype(x: Expr):
    if not x.has_type:
        infer_expr(x, incremental=True)
    return x.checked_type


def shape(x: Expr) -> tuple:
    return tuple(ttype(x).shape)


def ndim(x: Expr) -> int:
    return len(shape(x))


def dtype(x: Expr) -> str:
    return ttype(x).dtype


def value(x, what: str = "input") -> np.ndarray:
    """The numpy value of a constant input (shape-like inputs must be static)."""
    if isinstance(x, Constant):
        return x.data
    raise ConversionError(f"the {what} must be a constant (dynamic {what} not supported yet)")


def ints(x, what: str = "input") -> list[int] | None:
    return None if x is None else [int(v) for v in np.asarray(value(x, what)).reshape(-1)]


def axis(a: int, n: int) -> int:
    return int(a) + n if a < 0 else int(a)
