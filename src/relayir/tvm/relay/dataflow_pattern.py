"""``tvm.relay.dataflow_pattern``: not part of relayir. relayir's rewrites are named
``(pattern, function)`` rules in ``relayir.transform.rewrite``, with their own pattern
language; TVM's ``is_op``, ``wildcard``, ``rewrite``, ``DFPatternCallback``, ... raise
``NotInRelayirError`` when used (importing them, star-importing them and subclassing
them at import time work)."""

from ..error import not_in_relayir, refusing_module

_WHY = "relayir's rewrites use relayir.transform.rewrite's own patterns"
# TVM's public names, bound so that ``from tvm.relay.dataflow_pattern import *`` works
_NAMES = ("AltPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DFPattern",
          "DFPatternCallback", "DataTypePattern", "DominatorPattern", "ExprPattern",
          "FunctionPattern", "IfPattern", "LetPattern", "ShapePattern", "TupleGetItemPattern",
          "TuplePattern", "TypePattern", "VarPattern", "WildcardPattern", "dominates",
          "has_attr", "has_dtype", "has_shape", "has_type", "is_constant", "is_expr", "is_if",
          "is_let", "is_op", "is_tuple", "is_tuple_get_item", "is_var", "match", "partition",
          "rewrite", "wildcard")
for _name in _NAMES:
    globals()[_name] = not_in_relayir(f"tvm.relay.dataflow_pattern.{_name}", _WHY)

__getattr__ = refusing_module(__name__, _WHY)
__all__ = [*_NAMES]
