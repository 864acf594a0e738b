"""What converters may ask about the graph being imported: each argument's shape and dtype
(from the exported graph's fake tensors), the current node's output, and small helpers
for the Relay expressions converters build.

The importer makes its ``TorchImport`` current (``importing``); converters call
``shape(x)``, ``dtype(x)``, ``out_shape()`` rather than taking a context argument, so their
signatures stay those of the aten schema.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from contextvars import ContextVar

import numpy as np
import torch

from ... import op as _op  # noqa: F401  (registers the ops the constructors call)
from ...ir.dim_expr import Any, SymbolicDim, dim_add, dim_max, dim_min, dim_mul, floordiv, floormod
from ...ir.expr import Expr, const
from ...op import dynamic as D
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, current, entered

_DTYPES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8",
    torch.uint8: "uint8", torch.bool: "bool", torch.bfloat16: "bfloat16",
}


def relay_dtype(dtype: torch.dtype) -> str:
    if dtype not in _DTYPES:
        raise ConversionError(f"dtype {dtype} has no Relay equivalent")
    return _DTYPES[dtype]


class TorchImport:
    """Per-import state: expression id -> fake tensor, the node being converted, symbols."""

    def __init__(self):
        self.meta: dict[int, object] = {}
        self.keep: list = []  # keeps ids stable while the import runs
        self.node_val = None
        self.sym_source: dict[str, tuple[Expr, int]] = {}  # "s0" -> (tensor, axis)

    def record(self, expr, val) -> None:
        if isinstance(expr, Expr) and isinstance(val, torch.Tensor):
            self.meta[id(expr)] = val
            self.keep.append(expr)


CURRENT_IMPORT: ContextVar[TorchImport] = ContextVar("relayir.frontend.pytorch.import")


def current_import() -> TorchImport:
    """The PyTorch import running in this thread; ``NoImportInProgressError`` outside one."""
    return current(CURRENT_IMPORT, "PyTorch")


def importing(state: TorchImport) -> AbstractContextManager[TorchImport]:
    """``with importing(state):`` makes ``state`` the current import, restoring the
    previous one (if any) on the way out."""
    return entered(CURRENT_IMPORT, state)


def _val(x):
    try:
        return current_import().meta[id(x)]
    except KeyError:
        raise ConversionError(f"no shape known for {type(x).__name__}") from None


def dim(d):
    """An int for a static dimension, the symbol's name (``"s0"``) for a dynamic one."""
    if isinstance(d, torch.SymInt):
        n = d.node.maybe_as_int()
        return str(d) if n is None else int(n)
    return d if isinstance(d, str) else int(d)


def is_dyn(d) -> bool:
    return isinstance(d, (str, torch.SymInt))


def shape(x) -> tuple:
    return tuple(dim(d) for d in _val(x).shape)


def ndim(x) -> int:
    return _val(x).dim()


def dtype(x) -> str:
    if isinstance(x, Expr):
        return relay_dtype(_val(x).dtype)
    return "bool" if isinstance(x, bool) else "int64" if isinstance(x, int) else "float32"


def out_val():
    return current_import().node_val


def out_shape(i: int | None = None) -> tuple:
    v = out_val() if i is None else out_val()[i]
    return tuple(dim(d) for d in v.shape)


def out_dtype(i: int | None = None) -> str:
    v = out_val() if i is None else out_val()[i]
    return relay_dtype(v.dtype)


def axis(a: int, n: int) -> int:
    return a + n if a < 0 else a


def static(*dims) -> bool:
    return all(isinstance(d, int) for d in dims)


def scalar(value, dtype_: str) -> Expr:
    if isinstance(value, Expr):
        return value
    if is_symbolic(value):
        return cast_to(sym_expr(value), dtype_)
    return const(np.asarray(value).astype(dtype_))


def is_symbolic(v) -> bool:
    """A size torch knows only as an expression of the inputs' dims (``s0``, ``s0 + 1``)."""
    return isinstance(v, torch.SymInt) and v.node.maybe_as_int() is None


def sym_expr(v) -> Expr:
    """An int64 scalar expression computing the symbolic size ``v`` at run time: its
    symbols are read from the inputs' shapes (``shape_of(ids)[1]`` for ``seq``), so no
    example size is ever baked in. Integers, +, *, floor division, modulo, min and max
    are supported (what sizes are made of)."""
    if not is_symbolic(v):
        return const(np.asarray(int(v), "int64"))
    sources = current_import().sym_source
    stack, done = [v.node.expr], {}
    while stack:  # post-order over the sympy tree, no recursion
        e = stack[-1]
        pending = [a for a in e.args if a not in done] if not e.is_Atom else []
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        if e in done:
            continue
        if e.is_Integer:
            done[e] = const(np.asarray(int(e), "int64"))
        elif e.is_Symbol:
            if str(e) not in sources:
                raise ConversionError(f"the size {v} uses {e}, which is no input's dimension")
            src, ax = sources[str(e)]
            done[e] = T.take(D.shape_of(src), const(np.asarray(ax, "int64")))
        else:
            done[e] = _sym_call(e, [done[a] for a in e.args])
    return done[v.node.expr]


_DIM_OPS = {"Add": dim_add, "Mul": dim_mul, "FloorDiv": floordiv, "CleanDiv": floordiv,
            "PythonMod": floormod, "Mod": floormod, "Min": dim_min, "Max": dim_max}


def sym_dim(expr, names: dict):
    """The Relay dim of a torch size expression (a sympy tree over torch's symbols:
    ``s0 // 4``, ``2*s0``, ``s0 - 1``): a dim expression over the named dims ``names``
    gives each symbol (``"s0" -> "seq"``), ``Any()`` where a symbol has no name or an
    operation no dim form. Sizes are small trees: recursion over one is fine."""
    if expr.is_Integer:
        return int(expr)
    if expr.is_Symbol:
        name = names.get(str(expr))
        return SymbolicDim(name) if name else Any()
    kind = type(expr).__name__
    if kind == "Pow" and expr.args[1].is_Integer and int(expr.args[1]) > 0:
        args = [sym_dim(expr.args[0], names)] * int(expr.args[1])
        kind = "Mul"
    else:
        args = [sym_dim(a, names) for a in expr.args]
    if kind not in _DIM_OPS or not args:
        return Any()
    return functools.reduce(_DIM_OPS[kind], args)  # Any absorbs


def _sym_call(e, args: list) -> Expr:
    name = type(e).__name__
    binary = {"Add": E.add, "Mul": E.multiply, "FloorDiv": E.floor_divide,
              "PythonMod": E.floor_mod, "Mod": E.floor_mod, "Max": E.maximum,
              "Min": E.minimum}
    if name not in binary:
        raise ConversionError(f"a symbolic size {e} ({name}) has no run-time form yet")
    out = args[0]
    for a in args[1:]:
        out = binary[name](out, a)
    return out


def cast_to(x, dtype_: str):
    """``x`` as a Relay expression of ``dtype_`` (Python scalars become constants)."""
    if not isinstance(x, Expr):
        return scalar(x, dtype_)
    if id(x) not in current_import().meta:  # built by a converter: already of the dtype it chose
        return x
    return x if dtype(x) == dtype_ else T.cast(x, dtype_)


def reshape_to(x, target, src=None) -> Expr:
    """Reshape to ``target`` whose entries are ints or symbol names: a symbol at the same
    position as in ``x`` is copied (Relay's 0), one other symbol is inferred (-1)."""
    src = tuple(dim(d) for d in src) if src is not None else shape(x)
    target = tuple(dim(d) for d in target)
    if src == target:
        return x
    newshape, inferred = [], 0
    for i, d in enumerate(target):
        if isinstance(d, int):
            if d == 0:
                raise ConversionError("reshape to a zero-size dimension")
            newshape.append(d)
        elif i < len(src) and src[i] == d:
            newshape.append(0)
        else:
            inferred += 1
            newshape.append(-1)
    if inferred > 1:  # symbols moved: the target shape is computed when the model runs
        return _run_time_reshape(x)
    return T.reshape(x, newshape)


def _run_time_reshape(x) -> Expr:
    """``dyn.reshape`` to the current node's output shape (``out_shape_expr``)."""
    return D.reshape(x, out_shape_expr())


def out_shape_expr() -> Expr:
    """The current node's output shape as an int64 tensor computed when the model runs,
    each symbolic extent from the inputs' shapes (``sym_expr``)."""
    dims = [T.reshape(sym_expr(d), (1,)) for d in out_val().shape]
    return T.concatenate(dims, 0) if len(dims) > 1 else dims[0]
