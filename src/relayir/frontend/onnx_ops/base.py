"""What ONNX converters share: the versioned table, the import in progress (its opset,
its subgraph converter), shapes of the expressions built so far, and constant folding
of shape-like inputs.

A converter is ``fn(*inputs, **attributes)``: ONNX inputs positionally (``None`` for an
omitted optional input), attributes by their ONNX names. ``OnnxTable.register(op,
since=n)`` adds a variant used from opset ``n`` on (ONNX's ``since_version``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from ... import op as _op  # noqa: F401  (registers the ops the constructors call)
from ...ir.expr import Constant, Expr
from ...typing.infer import infer_expr
from ..common import (
    ConversionError,
    Converter,
    ConverterTable,
    DuplicateConverterError,
    current,
    entered,
)


class OnnxTable(ConverterTable):
    """op type -> [(since_version, converter)], the newest variant last. One converter
    per (op type, since version): another ``since`` for the same op is a new variant,
    the same one again raises ``DuplicateConverterError``."""

    def register(self, *names: str, since: int = 1) -> Callable[[Converter], Converter]:
        def wrap(fn: Converter) -> Converter:
            for name in names:
                self.add(name, fn, since)
            return fn

        return wrap

    def add(self, name: str, fn: Converter, since: int = 1) -> None:
        variants = self.setdefault(name, [])
        for version, first in variants:
            if version == since:
                raise DuplicateConverterError(f"{name} (since opset {since})", first, fn)
        variants.append((since, fn))
        variants.sort(key=lambda p: p[0])

    def merge(self, family: OnnxTable) -> None:
        for name, variants in family.items():
            for since, fn in variants:
                self.add(name, fn, since)

    def lookup(self, name: str, opset: int) -> Converter:
        usable = [fn for since, fn in self[name] if since <= opset]
        if not usable:
            raise ConversionError(f"{name} is not defined at opset {opset}")
        return usable[-1]


@dataclass(frozen=True)
class OnnxImport:
    """What converters may ask about the ONNX import in progress: its opset, and how to
    convert a subgraph (an ``If`` branch, a ``Loop`` body) in the importer's scope."""

    opset: int
    convert_subgraph: Callable[[object, dict], list]


CURRENT_IMPORT: ContextVar[OnnxImport] = ContextVar("relayir.frontend.onnx.import")


def current_import() -> OnnxImport:
    """The ONNX import running in this thread; ``NoImportInProgressError`` outside one."""
    return current(CURRENT_IMPORT, "ONNX")


def importing(state: OnnxImport) -> AbstractContextManager[OnnxImport]:
    """``with importing(state):`` makes ``state`` the current import, restoring the
    previous one (if any) on the way out."""
    return entered(CURRENT_IMPORT, state)


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


class ConstantInputRequired(ConversionError):
    """A converter needs the value of an input that depends on graph inputs (an axes
    list fixes the result's rank: Relay's types need it at compile time). Bind those
    inputs with ``from_onnx(..., const_inputs={name: value})``; ``input_names`` lists
    them (ONNX names once the importer has seen the error)."""

    def __init__(self, message: str, input_names: list[str]):
        super().__init__(message)
        self.input_names = list(input_names)



def constant_value(x) -> np.ndarray | None:
    """The value of ``x`` if it is a constant or folds to one (a shape computation over
    constants: ``Shape`` → ``Gather`` → ``Concat``), else None."""
    if x is None:
        return None
    if isinstance(x, Constant):
        return x.data
    from ...ir.analysis import free_vars
    from ...transform.fold_constant import fold_constant

    if free_vars(x):
        return None
    try:
        ttype(x)
        folded = fold_constant(x)
    except Exception:  # noqa: BLE001  (not foldable: the caller decides what that means)
        return None
    return folded.data if isinstance(folded, Constant) else None


def value(x, what: str = "input") -> np.ndarray:
    """The numpy value of an input that must be known when importing."""
    v = constant_value(x)
    if v is not None:
        return v
    from ...ir.analysis import free_vars

    names = [fv.name_hint for fv in free_vars(x)]
    raise ConstantInputRequired(
        f"the {what} must be known when importing; it depends on graph input(s) "
        f"{', '.join(names) or '?'} (bind them with from_onnx(const_inputs=...))", names)


def ints(x, what: str = "input") -> list[int] | None:
    return None if x is None else [int(v) for v in np.asarray(value(x, what)).reshape(-1)]


def ints_or_none(x) -> list[int] | None:
    """The ints of a constant (or foldable) input, None when only known at run time."""
    v = constant_value(x)
    return None if v is None else [int(i) for i in np.asarray(v).reshape(-1)]


def run_time(x, what: str = "input"):
    """``x``, a parameter input (axes, k, sizes) known only at run time, for a ``dyn`` op
    (``op/dynamic_params.py``): the op's result rank comes from ``x``'s static length, so
    ``x`` must be a scalar or a 1-D tensor of static length; otherwise it is needed when
    importing (``ConstantInputRequired`` names the graph inputs to bind)."""
    t = ttype(x)
    if t.ndim > 1 or not all(isinstance(d, int) for d in t.shape):
        value(x, what)  # raises: not a constant either
    return x


def axis(a: int, n: int) -> int:
    return int(a) + n if a < 0 else int(a)


def convert_subgraph(graph, inputs: dict) -> list:
    """Convert an ONNX subgraph (a ``then_branch``, a ``Loop`` body) with its formal
    inputs bound to ``inputs`` (name -> Expr); names of the enclosing graphs stay
    visible. Returns the expressions of its outputs."""
    return current_import().convert_subgraph(graph, inputs)
