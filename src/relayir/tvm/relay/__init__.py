"""``tvm.relay``: relayir's public API under Relay's names, with Relay's semantics where
they differ (docs/tvm-compat.md lists every difference).

Everything is relayir's own object (``relay.Function is relayir.Function``); what
differs is wrapped here: ``build`` / ``create_executor`` (default target ``"llvm"``,
TVM values out), the multi-output ops (``TupleWrapper``), the shape-taking ops (``dyn``
when a shape is an expression), ``var``, ``shape_of`` (int32), ``gradient``
(higher order by default) and the ``Prelude`` attribute names. ``relay.testing`` and
``relay.frontend`` are imported on first use.
"""

from __future__ import annotations

import importlib

from ...ir import *  # noqa: F403
from ...ir.parser import parse_expr as _parse_expr
from ...ir.types import Kind, SymbolicDim
from ...typing.infer import infer_expr
from ..error import missing_attribute, not_in_relayir
from . import (
    adt,
    analysis,
    backend,
    build_module,
    expr,
    function,
    loops,
    op,
    prelude,
    qnn,
    quantize,
    scope_builder,
    transform,
    ty,
    type_functor,
    vm,
)
from ._text import fromtext, parse
from .build_module import bind_params_by_name, build, create_executor, optimize
from .expr import TupleWrapper, bind, const, var
from .op import *  # noqa: F403
from .op import nn
from .prelude import Prelude
from .scope_builder import ScopeBuilder
from .transform import build_config, gradient
from .type_functor import TypeFunctor, TypeMutator, TypeVisitor

image = op.image
random = op.random
vision = op.vision
dyn = op.dyn
ShapeVar = SymbolicDim
TypeKind = Kind
annotation = importlib.import_module(f"{__name__}.annotation")
SpanCheck = not_in_relayir("tvm.relay.SpanCheck", "relayir's nodes carry spans from the "
                           "parser; there is no span-checking pass")
_LAZY = ("testing", "frontend")


def __getattr__(name: str):
    """``relay.testing`` and ``relay.frontend`` on first use (Relay imports them only on
    ``from tvm.relay import testing``; here attribute access works too)."""
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise missing_attribute(__name__, name)


def parse_expr(code: str, source_name: str = ""):
    """Relay's ``parse_expr``: a ``%x`` no parameter, let or pattern binds is an error
    (declare it with ``free_var``), as in Relay; relayir's own makes it a free variable."""
    return _parse_expr(code, source_name, free_vars=False)


def type_of(e):
    return infer_expr(e).checked_type
