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

A rule may instead make a type more precise: ``Rule(..., refines_type=True)`` may
replace a node by one whose type is a refinement of its own (``refines``: a ``?``
extent becomes a number, as when ``DynamicToStatic`` makes a ``dyn.reshape`` static).
Then the types above it change too, so a rule set with such a rule re-types as it goes:
a node rebuilt around children whose types changed gets its type from them (an op's
relation, a tuple's fields, a function's body, a let's body), and a ``let``-bound
variable without annotation whose value's type changed is replaced by a fresh one of
the new type. Nodes that cannot be re-typed from their children alone (a call of a
global function or a constructor, a ``match``, a reference) are left untyped, and so
is everything above them: ``rewrite_module`` then re-infers the module once, as it does
when a global function's own type changed, and goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import Error, TypeInferenceError
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    Tuple,
    TupleGetItem,
    Var,
    short_text,
)
from ..ir.functor import ExprMutator
from ..ir.types import Any, TensorType, TupleType, Type
from ..typing.infer import infer_expr, infer_module
from .analysis import TypedMutator, children, keep_type, typed_module, unique_nodes


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


class _Structure(Pattern):
    def __init__(self, test, parts_of, parts, name):
        self.test = test
        self.parts_of = parts_of
        self.parts = parts
        self.name = name

    def _match(self, expr, m):
        if not self.test(expr):
            return False
        if self.parts is None:
            return True
        got = self.parts_of(expr)
        return len(got) == len(self.parts) and all(p.match(e, m) for p, e in zip(self.parts, got))


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


def structure(test: Callable[[Expr], bool], parts_of: Callable[[Expr], Sequence] | None = None,
              parts: Sequence[Pattern] | None = None, name: str | None = None) -> Pattern:
    """A node that ``test`` accepts, whose parts (``parts_of(node)``: a tuple's fields, a
    call's callee and arguments, ...) match ``parts`` in order (``None``: any parts). The
    general form of the patterns above, for pattern languages built on this one
    (``relayir.tvm``'s dataflow patterns)."""
    return _Structure(test, parts_of, None if parts is None else tuple(parts), name)


def all_equal(value) -> Callable[[np.ndarray], bool]:
    return lambda data: data.size > 0 and bool(np.all(data == value))


class Rule:
    """``refines_type``: the replacement's type may refine the node's (see the module
    docstring); by default it must equal it."""

    def __init__(self, name: str, pattern: Pattern, fn: Callable[[MatchResult], Expr | None],
                 refines_type: bool = False):
        self.name = name
        self.pattern = pattern
        self.fn = fn
        self.refines_type = refines_type

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


def refines(new: Type, old: Type) -> bool:
    """``new`` says all ``old`` says, and maybe more: equal, except that a ``?`` extent of
    ``old`` may be any extent in ``new`` (in tensors, and tensors in tuples)."""
    if new == old:
        return True
    if isinstance(new, TensorType) and isinstance(old, TensorType):
        return new.dtype == old.dtype and new.ndim == old.ndim and all(
            a == b or isinstance(b, Any) for a, b in zip(new.shape, old.shape))
    if isinstance(new, TupleType) and isinstance(old, TupleType):
        return len(new.fields) == len(old.fields) and all(
            refines(a, b) for a, b in zip(new.fields, old.fields))
    return False


class _RuleIndex:
    """Rules by the op name of the node they could match, in the order they were given."""

    def __init__(self, rules: Sequence[Rule]):
        self.rules = list(rules)
        self.refining = any(r.refines_type for r in self.rules)
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
                    if node.has_type and new.checked_type != node.checked_type and not (
                            rule.refines_type and refines(new.checked_type, node.checked_type)):
                        what = "refined" if rule.refines_type else "kept"
                        raise Error(
                            f"rewrite rule {rule.name} changed the type of {short_text(node)} "
                            f"from {node.checked_type} to {new.checked_type}, which it must "
                            f"have {what}"
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


def _same_child_types(old: Expr, new: Expr) -> bool:
    a, b = children(old), children(new)
    return len(a) == len(b) and all(
        x is y or (x.has_type and y.has_type and x.checked_type == y.checked_type)
        for x, y in zip(a, b))


class _RefiningRewriter(_Rewriter):
    """``_Rewriter`` for rule sets that refine types: a rebuilt node whose children kept
    their types keeps its own; otherwise it is typed from its children, or left untyped
    (``untyped`` is then set, and everything above it stays untyped as well)."""

    def __init__(self, rules, fired: Counter, max_local: int = 64):
        super().__init__(rules, fired, max_local)
        self.untyped = False

    def _retype(self, old: Expr, new: Expr) -> Expr:
        if new is old or new.has_type:
            return new
        if old.has_type and _same_child_types(old, new):
            return keep_type(old, new)
        if not all(c.has_type for c in children(new)):
            self.untyped = True
            return new
        t = type(new)
        if (t is Call and type(new.op) is Op) or t is Tuple or t is TupleGetItem:
            infer_new(new)  # the op's relation, the fields
        elif t is Let:
            new.set_checked_type(new.body.checked_type)
        elif t is Function or t is If or (t is Call and type(new.op) in (Var, Function)):
            infer_expr(new, incremental=True)  # its children are known: only it is inferred
        else:
            self.untyped = True  # a global's or constructor's call, a match, a reference
        return new

    def _rewrite(self, node: Expr) -> Expr:
        return super()._rewrite(node) if node.has_type else node

    def visit_call(self, call):
        return self._rewrite(self._retype(call, ExprMutator.visit_call(self, call)))

    def visit_tuple(self, t):
        return self._rewrite(self._retype(t, ExprMutator.visit_tuple(self, t)))

    def visit_tuple_getitem(self, t):
        return self._rewrite(self._retype(t, ExprMutator.visit_tuple_getitem(self, t)))

    def visit_if(self, e):
        return self._retype(e, ExprMutator.visit_if(self, e))

    def visit_function(self, fn):
        return self._retype(fn, ExprMutator.visit_function(self, fn))

    def visit_match(self, m):
        return self._retype(m, ExprMutator.visit_match(self, m))

    def visit_ref_create(self, r):
        return self._retype(r, ExprMutator.visit_ref_create(self, r))

    def visit_ref_read(self, r):
        return self._retype(r, ExprMutator.visit_ref_read(self, r))

    def visit_ref_write(self, r):
        return self._retype(r, ExprMutator.visit_ref_write(self, r))

    def new_let(self, old, var, value, body):
        return self._retype(old, ExprMutator.new_let(self, old, var, value, body))

    def visit_let(self, let):
        chain = []
        e = let
        while type(e) is Let and e not in self.memo:
            value = self.visit(e.value)
            chain.append((e, self._bind(e.var, value), value))
            e = e.body
        return self.rebuild_lets(chain, self.visit(e))

    def _bind(self, var: Var, value: Expr) -> Var:
        """``var``, or a fresh variable of ``value``'s new type if that changed (an
        annotated variable has its annotation's type, whatever its value's)."""
        if var.type_annotation is not None or (
                value.has_type and var.has_type and value.checked_type == var.checked_type):
            return self.visit(var)
        fresh = Var(var.name_hint).with_span(var.span)
        if value.has_type:
            fresh.set_checked_type(value.checked_type)
        else:
            self.untyped = True
        self.memo[var] = fresh  # its uses below now read the fresh variable
        return fresh


def _sweeps(expr: Expr, index: _RuleIndex, fired: Counter, max_rounds: int) -> tuple[Expr, bool]:
    """Sweep until no rule fires; returns the result and whether every node is typed (only
    a refining rule set can leave nodes untyped, and then it stops at once)."""
    for _ in range(max_rounds):
        before = sum(fired.values())
        sweep = (_RefiningRewriter if index.refining else _Rewriter)(index, fired)
        new = sweep.visit(expr)
        if index.refining and sweep.untyped:
            return new, False
        if new is not expr and not new.has_type:
            infer_expr(new, incremental=True)
        expr = new
        if sum(fired.values()) == before:
            break
    return expr, True


def fired_text(fired: Counter) -> str:
    """``"rule-a x2, rule-b x1"``: what ``debug`` prints."""
    return ", ".join(f"{k} x{v}" for k, v in sorted(fired.items())) or "none"


def rewrite(expr: Expr, rules: Sequence[Rule], debug: bool = False,
            max_rounds: int = 10, stats: Counter | None = None) -> Expr:
    """Apply ``rules`` bottom-up until none fires (at most ``max_rounds`` sweeps)."""
    fired = stats if stats is not None else Counter()
    if not expr.has_type:
        infer_expr(expr, incremental=True)
    index = _RuleIndex(rules)
    for _ in range(max_rounds):
        expr, typed = _sweeps(expr, index, fired, max_rounds)
        if typed:
            break
        infer_expr(expr)  # a refining rule left nodes untyped
    if debug and fired:
        print("rules fired: " + fired_text(fired))
    return expr


def same_type(a: Expr, b: Expr) -> bool:
    return a.checked_type == b.checked_type


def _called(mod, gvs: set) -> bool:
    """Does some function of ``mod`` name one of the globals ``gvs`` (whose type changed,
    so that the nodes naming them carry stale types)?"""
    nodes = unique_nodes(list(mod.functions.values()))
    return any(type(n) is GlobalVar and n in gvs for n in nodes)


def rewrite_module(mod, rules: Sequence[Rule], name: str = "rewrite", debug: bool = False,
                   max_rounds: int = 10, stats: Counter | None = None):
    """``rewrite`` every non-primitive global function of (a typed) ``mod``: a new module.

    With ``debug`` one line says how often each rule fired in the whole module (``stats``
    counts them too). A rule set that refines types re-infers the module, and sweeps
    again, when a sweep left nodes untyped or changed the type of a global function that
    is called (the calls' types follow it)."""
    mod = typed_module(mod)
    fired = stats if stats is not None else Counter()
    index = _RuleIndex(rules)
    for _ in range(max_rounds):
        before = sum(fired.values())
        functions, typed, retyped = {}, True, set()
        for gv, fn in mod.functions.items():
            if fn.is_primitive:
                functions[gv] = fn
                continue
            functions[gv], ok = _sweeps(fn, index, fired, max_rounds)
            typed &= ok
            if ok and functions[gv].checked_type != fn.checked_type:
                retyped.add(gv)
        mod = mod.with_functions(functions)
        if typed and not (retyped and _called(mod, retyped)):
            break
        mod = infer_module(mod)  # the whole module, only when types crossed a boundary
        if sum(fired.values()) == before:
            break
    if debug:
        print(f"{name}: rules fired: {fired_text(fired)}")
    return mod
