"""``tvm.relay.expr_functor``: relayir's ``ExprFunctor``, ``ExprVisitor`` and
``ExprMutator`` (``relayir.ir.functor``, what ``tvm.relay.ExprVisitor`` is); other TVM
names of the module raise ``NotInRelayirError`` when used."""

from ...ir.functor import ExprFunctor, ExprMutator, ExprVisitor
from ..error import refusing_module

__getattr__ = refusing_module(__name__, "relayir's visitors are relayir.ir.functor's")

__all__ = ["ExprFunctor", "ExprMutator", "ExprVisitor"]
