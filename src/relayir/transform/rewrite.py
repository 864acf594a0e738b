"""Named local rewrite rules: ``Rule(name, pattern, rewrite)`` driven to a fixed point.

Patterns are small trees that match dataflow expressions::

    x = wildcard("x")
    Rule("mul-one", is_op("multiply")(x, is_constant(all_equal(1))),
         lambda m: m["x"] if same_type(m["x"], m.node) else None)

A rule's function gets a ``MatchResult`` (``m["x"]`` is what ``x`` matched, ``m.node`` the
matched root) and returns the replacement, or ``None`` to decline. Rules read checked
types, so the input must be type-checked; replacements are typed incrementally (only
the new nodes). ``rewrite`` applies the rules bottom-up over the whole graph and
repeats until no rule fires; ``debug=True`` prints how often each rule fired.

A rule must keep the type of the node it replaces (a parent's type was computed from
it): ``rewrite`` checks this and raises naming the rule. Because of that contract, a
parent rebuilt around replaced children keeps its old type without re-inference, so
rules can read ``m.node.checked_type`` anywhere. Rules are looked up by the called op's
name, so a rule set costs a node only the rules that can match it. ``infer_new`` types
a replacement made of op calls, tuples and constants over typed nodes by running the
ops' type relations directly, without a solver: the usual case costs microseconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import Error, TypeInferenceError
from ..ir.expr import Call, Constant, Expr, Op, Tuple, TupleGetItem, Var, short_text
from ..ir.types import TensorType, TupleType
from ..typing.infer import infer_expr
from .analysis import TypedMutator, typed_module


def infer_new(expr: Expr) -> Expr:
    """Type the untyped nodes of ``expr``, whose other nodes are typed; returns ``expr``.

    Op calls, tuples, projections and constants over typed nodes get their types from
    the ops' relations directly; anything else (or a relation that fails, so that the
    error reads as usual) goes to ``infer_expr(expr, incremental=True)``.
    """
    if expr.has_type:
        return expr
    order: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen or node.has_type:
            continue
        seen.add(id(node))
        t = type(node)
        if t is Constant:
            node.set_checked_type(TensorType(node.data.shape, node.data.dtype.name))
            continue
        if t is Call and type(node.op) is Op:
            children = node.args
        elif t is Tuple:
            children = node.fields
        elif t is TupleGetItem:
            children = (node.tuple_value,)
        else:
            return infer_expr(expr, incremental=True)
        stack.append((node, True))
        stack.extend((c, False) for c in children)
    try:
        for node in order:
            t = type(node)
            if t is Call:
                op = node.op
                if op.num_inputs >= 0 and len(node.args) != op.num_inputs:
                    raise TypeInferenceError(op.name)
                ty = op.type_rel([a.checked_type for a in node.args], node.attrs)
            elif t is Tuple:
                ty = TupleType(tuple(f.checked_type for f in node.fields))
            else:
                tup = node.tuple_value.checked_type
                if not isinstance(tup, TupleType) or not 0 <= node.index < len(tup.fields):
                    raise TypeInferenceError("projection")
                ty = tup.fields[node.index]
            node.set_checked_type(ty)
    except TypeInferenceError:
        return infer_expr(expr, incremental=True)  # it reports the error properly
    return expr


class MatchResult:
    __slots__ = ("node", "bindings")

    def __init__(self, node: Expr):
        self.node = node
        self.bindings: dict[str, Expr] = {}

    def __getitem__(self, name: str) -> Expr:
        return self.bindings[name]

    def get(self, name: str, default=None):
        return self.bindings.get(name, default)


class Pattern:
    name: str | None = None

    def match(self, expr: Expr, m: MatchResult) -> bool:
        if not self._match(expr, m):
            return False
        if self.name is not None:
            bound = m.bindings.get(self.name)
            if bound is not None and bound is not expr:
                return False
            m.bindings[self.name] = expr
        return True

    def _match(self, expr: Expr, m: MatchResult) -> bool:
        raise NotImplementedError

    def __or__(self, other: Pattern) -> Pattern:
        return _Alt(self, other)


class _Wildcard(Pattern):
    def __init__(self, name=None):
        self.name = name

    def _match(self, expr, m):
        return True


class _Alt(Pattern):
    def __init__(self, left, right):
        self.left, self.right = left, right

    def _match(self, expr, m):
        saved = dict(m.bindings)
        if self.left.match(expr, m):
            return True
        m.bindings = saved
        return self.right.match(expr, m)


class _OpCall(Pattern):
    def __init__(self, names, args, attrs, name):
        self.names = names
        self.args = args
        self.attrs = attrs
        self.name = name

    def _match(self, expr, m):
        if type(expr) is not Call or type(expr.op) is not Op or expr.op.name not in self.names:
            return False
        if self.attrs is not None and not self.attrs(expr.attrs):
            return False
        if self.args is None:
            return True
        if len(self.args) != len(expr.args):
            return False
        return all(p.match(a, m) for p, a in zip(self.args, expr.args))


class _Const(Pattern):
    def __init__(self, predicate, name):
        self.predicate = predicate
        self.name = name

    def _match(self, expr, m):
        return type(expr) is Constant and (self.predicate is None or self.predicate(expr.data))


class _Kind(Pattern):
    def __init__(self, cls, name):
        self.cls = cls
        self.name = name

    def _match(self, expr, m):
        return type(expr) is self.cls


class _IsOpBuilder:
    def __init__(self, names):
        self.names = frozenset(names)

    def __call__(self, *args: Pattern, attrs: Callable | None = None, name: str | None = None):
        return _OpCall(self.names, args, attrs, name)

    def any_args(self, attrs: Callable | None = None, name: str | None = None):
        return _OpCall(self.names, None, attrs, name)


def wildcard(name: str | None = None) -> Pattern:
    return _Wildcard(name)


def is_op(*names: str) -> _IsOpBuilder:
    """``is_op("add", "subtract")(x, y)`` matches a call of either op."""
    return _IsOpBuilder(names)


def is_constant(predicate: Callable[[np.ndarray], bool] | None = None,
                name: str | None = None) -> Pattern:
    return _Const(predicate, name)


def is_var(name: str | None = None) -> Pattern:
    return _Kind(Var, name)


def is_tuple(name: str | None = None) -> Pattern:
    return _Kind(Tuple, name)


def is_tuple_getitem(name: str | None = None) -> Pattern:
    return _Kind(TupleGetItem, name)


def all_equal(value) -> Callable[[np.ndarray], bool]:
    return lambda data: data.size > 0 and bool(np.all(data == value))


class Rule:
    def __init__(self, name: str, pattern: Pattern, fn: Callable[[MatchResult], Expr | None]):
        self.name = name
        self.pattern = pattern
        self.fn = fn

    def apply(self, expr: Expr) -> Expr | None:
        m = MatchResult(expr)
        if not self.pattern.match(expr, m):
            return None
        return self.fn(m)

    def __repr__(self) -> str:
        return f"Rule({self.name})"


def _root_ops(p: Pattern) -> frozenset | None:
    """The op names a pattern's root can match, or None when it is not op-specific."""
    if isinstance(p, _OpCall):
        return p.names
    if isinstance(p, _Alt):
        left, right = _root_ops(p.left), _root_ops(p.right)
        return None if left is None or right is None else left | right
    return None


class _RuleIndex:
    """Rules by the op name of the node they could match, in the order they were given."""

    def __init__(self, rules: Sequence[Rule]):
        self.rules = list(rules)
        self.roots = [_root_ops(r.pattern) for r in self.rules]
        self.generic = [r for r, ops in zip(self.rules, self.roots) if ops is None]
        self.by_op: dict[str, list[Rule]] = {}

    def candidates(self, node: Expr) -> list[Rule]:
        if type(node) is not Call or type(node.op) is not Op:
            return self.generic
        name = node.op.name
        found = self.by_op.get(name)
        if found is None:
            found = self.by_op[name] = [
                r for r, ops in zip(self.rules, self.roots) if ops is None or name in ops]
        return found


class _Rewriter(TypedMutator):
    def __init__(self, rules: Sequence[Rule] | _RuleIndex, fired: Counter, max_local: int = 64):
        super().__init__()
        self.index = rules if isinstance(rules, _RuleIndex) else _RuleIndex(rules)
        self.rules = self.index.rules
        self.fired = fired
        self.max_local = max_local

    def _rewrite(self, node: Expr) -> Expr:
        for _ in range(self.max_local):
            for rule in self.index.candidates(node):
                new = rule.apply(node)
                if new is not None and new is not node:
                    if not new.has_type:
                        infer_new(new)
                    if node.has_type and new.checked_type != node.checked_type:
                        raise Error(
                            f"rewrite rule {rule.name} changed the type of {short_text(node)} "
                            f"from {node.checked_type} to {new.checked_type}"
                        )
                    self.fired[rule.name] += 1
                    node = new
                    break
            else:
                return node
        return node

    # rules keep types, so a node rebuilt around rewritten children keeps its type
    # (``TypedMutator``), and the rules see typed nodes

    def visit_call(self, call):
        return self._rewrite(super().visit_call(call))

    def visit_tuple(self, t):
        return self._rewrite(super().visit_tuple(t))

    def visit_tuple_getitem(self, t):
        return self._rewrite(super().visit_tuple_getitem(t))


def rewrite(expr: Expr, rules: Sequence[Rule], debug: bool = False,
            max_rounds: int = 10, stats: Counter | None = None) -> Expr:
    """Apply ``rules`` bottom-up until none fires (at most ``max_rounds`` sweeps)."""
    fired = stats if stats is not None else Counter()
    if not expr.has_type:
        infer_expr(expr, incremental=True)
    index = _RuleIndex(rules)
    for _ in range(max_rounds):
        before = sum(fired.values())
        new = _Rewriter(index, fired).visit(expr)
        if new is not expr and not new.has_type:
            infer_expr(new, incremental=True)
        expr = new
        if sum(fired.values()) == before:
            break
    if debug and fired:
        print("rules fired: " + ", ".join(f"{k} x{v}" for k, v in sorted(fired.items())))
    return expr


def same_type(a: Expr, b: Expr) -> bool:
    return a.checked_type == b.checked_type


def rewrite_module(mod, rules: Sequence[Rule], name: str = "rewrite", debug: bool = False):
    """``rewrite`` every non-primitive global function of (a typed) ``mod``: a new module.

    With ``debug`` one line says how often each rule fired in the whole module."""
    mod = typed_module(mod)
    fired: Counter = Counter()
    functions = {gv: fn if fn.is_primitive else rewrite(fn, rules, stats=fired)
                 for gv, fn in mod.functions.items()}
    if debug:
        shown = ", ".join(f"{k} x{v}" for k, v in sorted(fired.items())) or "none"
        print(f"{name}: rules fired: {shown}")
    return mod.with_functions(functions)
