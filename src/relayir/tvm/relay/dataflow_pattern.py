"""``tvm.relay.dataflow_pattern``: Relay's pattern language over relayir's patterns.

Each TVM pattern (``is_op``, ``wildcard``, ``is_var``, ``is_constant``, ``is_expr``,
``is_tuple``, ``is_tuple_get_item``, ``is_if``, ``is_let``, ``FunctionPattern``, ``|``,
``optional``, ``has_attr``, ``has_type``, ``has_dtype``, ``has_shape``) is a node with
Relay's fields that builds one pattern of ``relayir.transform.rewrite`` (its wildcard,
alternation and ``structure``), and ``match`` is that pattern's. Relay's matching rules
carry over: a pattern object used twice matches one expression (each TVM pattern is a
named relayir pattern), ``add`` / ``multiply`` / ``maximum`` / ``minimum`` calls match
either argument order, a type pattern infers the expression's type when it has none.

``rewrite(callbacks, expr)`` runs Relay's callbacks (``DFPatternCallback.callback(pre,
post, node_map)``) bottom-up over the expression, each callback in turn, until the
expression no longer changes (once with ``rewrite_once``); the callbacks may change
types, as Relay's may, so this is not relayir's type-keeping ``rewrite`` driver.

``partition`` is Relay's grouping (``relay/_partition.py``). Not offered
(``NotInRelayirError``): dominator patterns (``dominates``).
"""

from __future__ import annotations

import itertools

from ...errors import Error
from ...ir.expr import Call, Constant, Expr, Function, If, Let, Op, Tuple, TupleGetItem, Var
from ...ir.op import get_op
from ...ir.structural import structural_equal
from ...transform import rewrite as _rw
from ...typing.infer import infer_expr
from ..error import NotInRelayirError
from . import _partition
from ._node_rewriter import NodeRewriter

COMMUTATIVE = frozenset({"add", "multiply", "maximum", "minimum"})
_NAMES = itertools.count()
_WHY = "relayir's patterns have no dominator analysis"


def _refuse(api: str):
    raise NotInRelayirError(f"tvm.relay.dataflow_pattern.{api} is not part of relayir: {_WHY}")


class DFPattern:
    """Base of Relay's patterns: builds (once) the relayir pattern it stands for."""

    _compiled: _rw.Pattern | None = None
    is_leaf = False  # a pattern with no sub-patterns: what it matches is a partition input

    def pattern_inputs(self) -> list:
        """The sub-patterns, in Relay's order."""
        out = []
        for v in vars(self).values():
            out.extend(x for x in (v if isinstance(v, list) else [v])
                       if isinstance(x, DFPattern))
        return out

    def embeds(self, expr) -> bool:
        """Whether a partition keeps ``expr`` (this leaf's match) inside the function."""
        return False

    def fuzzy_inputs(self, expr):
        """The partition inputs a fuzzy pattern (a call or tuple of any arguments) takes
        from its match ``expr``; None for other patterns."""
        return None

    def _build(self, name: str) -> _rw.Pattern:
        raise NotImplementedError

    def compiled(self) -> _rw.Pattern:
        if self._compiled is None:
            self._compiled = self._build(f"dfp{next(_NAMES)}")
        return self._compiled

    def __call__(self, *args):
        return CallPattern(self, None if args == (None,) else list(args))

    def __or__(self, other):
        return AltPattern(self, other)

    def __add__(self, other):
        return is_op("add")(self, other)

    def __sub__(self, other):
        return is_op("subtract")(self, other)

    def __mul__(self, other):
        return is_op("multiply")(self, other)

    def __truediv__(self, other):
        return is_op("divide")(self, other)

    def has_attr(self, attrs: dict):
        return AttrPattern(self, dict(attrs))

    def has_type(self, ttype):
        return TypePattern(self, ttype)

    def has_dtype(self, dtype: str):
        return DataTypePattern(self, dtype)

    def has_shape(self, shape):
        return ShapePattern(self, shape)

    def match(self, expr: Expr) -> bool:
        return match(self, expr)

    def partition(self, expr, attrs=None, check=None):
        return partition(self, expr, attrs, check)

    def dominates(self, parent, path=None):
        return DominatorPattern(parent, path if path is not None else wildcard(), self)

    def optional(self, option_constructor):
        return self | option_constructor(self)


def _named(pattern: _rw.Pattern, name: str) -> _rw.Pattern:
    pattern.name = name
    return pattern


class WildcardPattern(DFPattern):
    is_leaf = True

    def _build(self, name):
        return _rw.wildcard(name)


class ExprPattern(DFPattern):
    is_leaf = True

    def __init__(self, expr):
        self.expr = expr

    def embeds(self, expr) -> bool:
        return isinstance(expr, Constant) and isinstance(self.expr, Constant)

    def _build(self, name):
        e = self.expr
        if isinstance(e, Op):
            return _rw.structure(lambda x: x is e, name=name)
        return _rw.structure(lambda x: x is e or structural_equal(x, e), name=name)


class VarPattern(DFPattern):
    is_leaf = True

    def __init__(self, name_hint: str = ""):
        self.name = name_hint

    def _build(self, name):
        hint = self.name
        return _rw.structure(lambda x: type(x) is Var and (not hint or x.name_hint == hint),
                             name=name)


class ConstantPattern(DFPattern):
    is_leaf = True

    def embeds(self, expr) -> bool:
        return isinstance(expr, Constant)

    def _build(self, name):
        return _rw.is_constant(name=name)


class CallPattern(DFPattern):
    def __init__(self, op, args):
        self.op = op
        self.args = args

    def fuzzy_inputs(self, expr):
        return expr.args if self.args is None else None

    def _build(self, name):
        op = self.op.compiled()
        if self.args is None:
            return _rw.structure(lambda x: type(x) is Call, lambda x: (x.op,), [op], name)
        args = [a.compiled() for a in self.args]
        straight = _rw.structure(lambda x: type(x) is Call, lambda x: (x.op, *x.args),
                                 [op, *args])
        if (len(args) == 2 and isinstance(self.op, ExprPattern)
                and getattr(self.op.expr, "name", None) in COMMUTATIVE):
            swapped = _rw.structure(lambda x: type(x) is Call, lambda x: (x.op, *x.args[::-1]),
                                    [op, *args])
            return _named(straight | swapped, name)
        return _named(straight, name)


class FunctionPattern(DFPattern):
    def __init__(self, params, body):
        self.params = params
        self.body = body

    def _build(self, name):
        body = self.body.compiled()
        if self.params is None:
            return _rw.structure(lambda x: type(x) is Function, lambda x: (x.body,), [body],
                                 name)
        return _rw.structure(lambda x: type(x) is Function, lambda x: (*x.params, x.body),
                             [*(p.compiled() for p in self.params), body], name)


class TuplePattern(DFPattern):
    def __init__(self, fields):
        self.fields = fields

    def fuzzy_inputs(self, expr):
        return expr.fields if self.fields is None else None

    def _build(self, name):
        fields = None if self.fields is None else [f.compiled() for f in self.fields]
        return _rw.structure(lambda x: type(x) is Tuple, lambda x: x.fields, fields, name)


class TupleGetItemPattern(DFPattern):
    def __init__(self, tuple_value, index=None):
        self.tuple = tuple_value
        self.index = -1 if index is None else index

    def _build(self, name):
        index = self.index
        return _rw.structure(
            lambda x: type(x) is TupleGetItem and (index == -1 or x.index == index),
            lambda x: (x.tuple_value,), [self.tuple.compiled()], name)


class IfPattern(DFPattern):
    def __init__(self, cond, true_branch, false_branch):
        self.cond, self.true_branch, self.false_branch = cond, true_branch, false_branch

    def _build(self, name):
        return _rw.structure(lambda x: type(x) is If,
                             lambda x: (x.cond, x.true_branch, x.false_branch),
                             [self.cond.compiled(), self.true_branch.compiled(),
                              self.false_branch.compiled()], name)


class LetPattern(DFPattern):
    def __init__(self, var, value, body):
        self.var, self.value, self.body = var, value, body

    def _build(self, name):
        return _rw.structure(lambda x: type(x) is Let, lambda x: (x.var, x.value, x.body),
                             [self.var.compiled(), self.value.compiled(),
                              self.body.compiled()], name)


class AltPattern(DFPattern):
    def __init__(self, left, right):
        self.left, self.right = left, right

    def _build(self, name):
        return _named(self.left.compiled() | self.right.compiled(), name)


def _typed(x) -> object | None:
    """``x``'s type, inferred when it has none (Relay's matcher infers lazily); None when
    it cannot be inferred (an unannotated free variable, ...)."""
    if not isinstance(x, Expr) or isinstance(x, Op):
        return None
    if not x.has_type:
        try:
            infer_expr(x, incremental=True)
        except Error:
            return None
    return x.checked_type


class _Constraint(DFPattern):
    """``pattern`` and a test of the matched expression."""

    def holds(self, x) -> bool:
        raise NotImplementedError

    def _build(self, name):
        return _rw.structure(self.holds, lambda x: (x,), [self.pattern.compiled()], name)


class TypePattern(_Constraint):
    def __init__(self, pattern, ttype):
        self.pattern, self.type = pattern, ttype

    def holds(self, x):
        t = _typed(x)
        return t is not None and structural_equal(t, self.type)


class DataTypePattern(_Constraint):
    def __init__(self, pattern, dtype):
        self.pattern, self.dtype = pattern, dtype

    def holds(self, x):
        return getattr(_typed(x), "dtype", None) == self.dtype


class ShapePattern(_Constraint):
    def __init__(self, pattern, shape):
        self.pattern, self.shape = pattern, list(shape)

    def holds(self, x):
        shape = getattr(_typed(x), "shape", None)
        return shape is not None and list(shape) == [int(s) for s in self.shape]


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    return a == b or str(a) == str(b)


class AttrPattern(_Constraint):
    def __init__(self, pattern, attrs):
        self.pattern, self.attrs = pattern, attrs

    def _value(self, x, key):
        if isinstance(x, Op):
            return int(x.pattern) if key == "TOpPattern" else getattr(x, key, _MISSING)
        if isinstance(x, Function):
            return (x.attrs or {}).get(key, _MISSING)
        if isinstance(x, Call):
            return getattr(x.attrs, key, _MISSING) if x.attrs is not None else _MISSING
        return _MISSING

    def holds(self, x):
        return all(_same(self._value(x, k), v) for k, v in self.attrs.items())


_MISSING = object()


class DominatorPattern(DFPattern):
    def __init__(self, parent, path, child):
        self.parent, self.path, self.child = parent, path, child

    def _build(self, name):
        _refuse("DominatorPattern")


def wildcard() -> DFPattern:
    return WildcardPattern()


def is_var(name: str = "") -> DFPattern:
    return VarPattern(name)


def is_constant() -> DFPattern:
    return ConstantPattern()


def is_expr(expr) -> DFPattern:
    return ExprPattern(expr)


def is_op(op_name: str) -> DFPattern:
    return ExprPattern(get_op(op_name))


def is_tuple(fields) -> DFPattern:
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value, index=None) -> DFPattern:
    return TupleGetItemPattern(tuple_value, index)


def is_if(cond, true_branch, false_branch) -> DFPattern:
    return IfPattern(cond, true_branch, false_branch)


def is_let(var, value, body) -> DFPattern:
    return LetPattern(var, value, body)


def has_type(ttype, pattern=None) -> DFPattern:
    return TypePattern(pattern if pattern is not None else wildcard(), ttype)


def has_dtype(dtype, pattern=None) -> DFPattern:
    return DataTypePattern(pattern if pattern is not None else wildcard(), dtype)


def has_shape(shape, pattern=None) -> DFPattern:
    return ShapePattern(pattern if pattern is not None else wildcard(), shape)


def has_attr(attrs, pattern=None) -> DFPattern:
    return AttrPattern(pattern if pattern is not None else wildcard(), dict(attrs))


def dominates(parent, path, child) -> DFPattern:
    return DominatorPattern(parent, path, child)


def _match(pattern: DFPattern, expr) -> _rw.MatchResult | None:
    m = _rw.MatchResult(expr)
    return m if pattern.compiled().match(expr, m) else None


def match(pattern: DFPattern, expr) -> bool:
    return _match(pattern, expr) is not None


def partition(pattern, expr, attrs=None, check=None):
    """Relay's ``partition`` (``relay/_partition.py`` says how groups form)."""
    if isinstance(pattern, FunctionPattern):
        return expr  # Relay: partitioning a function that is not called makes no sense
    return _partition.partition(pattern, expr, _match, attrs, check)


class DFPatternCallback:
    """Relay's callback: set ``self.pattern``, override ``callback(pre, post, node_map)``
    (``node_map[p]``: the expressions pattern ``p`` matched, as a list)."""

    def __init__(self, require_type: bool = False, rewrite_once: bool = False):
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def callback(self, pre, post, node_map):
        raise Error(f"{type(self).__name__}.callback is not defined")

    def rewrite(self, expr):
        return rewrite(self, expr)

    __call__ = rewrite


def _node_map(m: _rw.MatchResult, pattern: DFPattern) -> dict:
    """Relay's ``node_map``: each TVM pattern the match bound → ``[expression]``."""
    by_name = {}
    stack, seen = [pattern], set()
    while stack:
        p = stack.pop()
        if id(p) in seen or not isinstance(p, DFPattern):
            continue
        seen.add(id(p))
        by_name[p.compiled().name] = p
        for v in vars(p).values():
            stack.extend(v if isinstance(v, list) else [v])
    return {by_name[k]: [e] for k, e in m.bindings.items() if k in by_name}


class _CallbackRewriter(NodeRewriter):
    def __init__(self, cb: DFPatternCallback):
        super().__init__()
        self.cb = cb

    def _at(self, pre, post):
        m = _match(self.cb.pattern, pre)
        if m is None:
            return post
        out = self.cb.callback(pre, post, _node_map(m, self.cb.pattern))
        return post if out is None else out


MAX_ROUNDS = 100


def rewrite(callbacks, expr, mod=None):
    """Relay's ``rewrite``: every callback in turn, bottom-up, until nothing changes."""
    callbacks = callbacks if isinstance(callbacks, (list, tuple)) else [callbacks]
    for _ in range(MAX_ROUNDS):
        last = expr
        for cb in callbacks:
            if cb.require_type:
                expr = infer_expr(expr, mod)
            expr = _CallbackRewriter(cb).visit(expr)
        if all(cb.rewrite_once for cb in callbacks) or structural_equal(last, expr):
            break
    return expr


__all__ = ["AltPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DFPattern",
           "DFPatternCallback", "DataTypePattern", "DominatorPattern", "ExprPattern",
           "FunctionPattern", "IfPattern", "LetPattern", "ShapePattern", "TupleGetItemPattern",
           "TuplePattern", "TypePattern", "VarPattern", "WildcardPattern", "dominates",
           "has_attr", "has_dtype", "has_shape", "has_type", "is_constant", "is_expr", "is_if",
           "is_let", "is_op", "is_tuple", "is_tuple_get_item", "is_var", "match", "partition",
           "rewrite", "wildcard"]
