"""``tvm.tir.expr``: the expression classes of ``tvm.tir`` (``from tvm.tir.expr import
*`` brings these, not ``tir``'s ``min``/``max``)."""

from . import Any, FloatImm, IntImm, SizeVar, Var

__all__ = ["Any", "FloatImm", "IntImm", "SizeVar", "Var"]
