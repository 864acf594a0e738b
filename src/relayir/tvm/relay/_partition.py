"""Relay's ``partition(pattern, expr, attrs, check)``: every match of ``pattern`` becomes a
call of a function of its own (attrs ``PartitionedFromPattern`` — the matched node kinds
in post-order, ``nn.conv2d_nn.relu_`` — and the caller's), as Relay's PatternGrouper
and PatternPartitioner do:

- nodes are tried from the output down; a node already in a group, or inside a function
  an earlier partition made, is not tried again;
- the group's inputs are the expressions the pattern's leaves (wildcards, variables,
  constants, expressions) matched, in the pattern's post-order, once each; an op, a
  function, or a constant a constant pattern matched stays inside;
- a match is dropped when it overlaps an earlier group, or when an inner node is read
  outside the group by a node whose value reaches the output without passing the
  group's root (the partition would make a cycle);
- ``check(root)`` false leaves that match as it is.
"""

from __future__ import annotations

from ...ir.adt import Match
from ...ir.expr import Call, Constant, Expr, Function, If, Let, Op, Tuple, TupleGetItem, Var
from ...ir.functor import post_order
from ...ir.node_table import children, rebuild
from ._node_rewriter import NodeRewriter

ATTR = "PartitionedFromPattern"


def _pattern_post_order(pattern) -> list:
    """The pattern's nodes, inputs first (Relay's indexed graph of a pattern)."""
    out, seen, stack = [], set(), [(pattern, False)]
    while stack:
        p, done = stack.pop()
        if done:
            out.append(p)
        elif id(p) not in seen:
            seen.add(id(p))
            stack.append((p, True))
            stack.extend((k, False) for k in reversed(p.pattern_inputs()))
    return out


def _name(e) -> str:
    if isinstance(e, Call):
        return f"{e.op.name}_" if isinstance(e.op, Op) else "Call_"
    if isinstance(e, TupleGetItem):
        return f"TupleGetItem{e.index}_"
    return {Tuple: "Tuple_", Function: "Function", Let: "Let_", If: "If_",
            Match: "Match_"}.get(type(e), "")


class _Group:
    def __init__(self, args, function, name):
        self.args, self.function, self.name = args, function, name


def _extract(root, inputs: dict):
    """``(body, members, name)``: the group's expression with its inputs as parameters."""
    new: dict[int, Expr] = {}
    members: list[Expr] = []
    name = []
    stack = [(root, False)]
    while stack:
        e, done = stack.pop()
        if id(e) in new:
            continue
        if id(e) in inputs:
            new[id(e)] = inputs[id(e)]
            continue
        kids = children(e)
        if not done:
            stack.append((e, True))
            stack.extend((k, False) for k in reversed(kids) if id(k) not in new)
            continue
        new[id(e)] = rebuild(e, [new[id(k)] for k in kids])
        members.append(e)
        name.append(_name(e))
    return new[id(root)], members, "".join(name)


class _Grouper:
    def __init__(self, pattern, expr, match):
        self.pattern, self.expr, self.match = pattern, expr, match
        self.order = post_order(expr)
        self.users: dict[int, list] = {}
        for n in self.order:
            for c in children(n):
                self.users.setdefault(id(c), []).append(n)
        self.assigned: dict[int, _Group] = {}
        self.groups: dict[int, _Group] = {}

    def run(self) -> dict[int, _Group]:
        inside_partitioned: set[int] = set()
        nodes = _pattern_post_order(self.pattern)
        for node in reversed(self.order):
            if id(node) in self.assigned:
                continue
            if isinstance(node, Function) and ATTR in (node.attrs or {}):
                inside_partitioned.update(id(n) for n in post_order(node))
            if id(node) in inside_partitioned:
                continue
            m = self.match(self.pattern, node)
            if m is not None:
                self._group(node, m, nodes)
        return self.groups

    def _group(self, root, m, pattern_nodes) -> None:
        matched = [(p, m.bindings.get(p.compiled().name)) for p in pattern_nodes]
        # a matched function's own nodes (its parameters, its body) are not inputs
        owned = {id(n) for p, e in matched if isinstance(e, Function) and not p.is_leaf
                 for n in post_order(e)}
        inputs: dict[int, Var] = {}
        args = []

        def take(e, p) -> None:
            if (id(e) in owned or isinstance(e, (Op, Function)) or p.embeds(e)
                    or id(e) in inputs):
                return
            inputs[id(e)] = Var(f"FunctionVar_{len(self.groups)}_{len(args)}")
            args.append(e)

        for p, e in matched:
            if e is None:
                continue
            fuzzy = p.fuzzy_inputs(e)
            for x in fuzzy if fuzzy is not None else [e] if p.is_leaf else []:
                take(x, p)
        body, members, name = _extract(root, inputs)
        inner = [e for e in members if not isinstance(e, (Op, Function, Constant))]
        if any(id(e) in self.assigned for e in inner):
            return  # overlaps an earlier group
        member_ids = {id(e) for e in members}
        outside = [u for e in inner if e is not root for u in self.users.get(id(e), ())
                   if id(u) not in member_ids]
        if outside and self._escapes(root, outside):
            return
        params = [inputs[id(a)] for a in args]
        group = _Group(args, Function(params, body), name)
        self.groups[id(root)] = group
        for e in members:
            self.assigned[id(e)] = group

    def _escapes(self, root, outside) -> bool:
        """Whether a reader outside the group reaches the output without the root."""
        reach, stack = set(), [self.expr]
        while stack:
            e = stack.pop()
            if e is root or id(e) in reach:
                continue
            reach.add(id(e))
            stack.extend(children(e))
        return any(id(u) in reach for u in outside)


class _Partitioner(NodeRewriter):
    def __init__(self, groups, attrs, check):
        super().__init__()
        self.groups, self.attrs, self.check = groups, dict(attrs or {}), check

    def _at(self, pre, post):
        group = self.groups.get(id(pre))
        if group is None or (self.check is not None and not self.check(pre)):
            return post
        fn = group.function.with_attr(ATTR, group.name)
        for k, v in self.attrs.items():
            fn = fn.with_attr(k, v)
        return Call(fn, [self.visit(a) for a in group.args])


def partition(pattern, expr, match, attrs=None, check=None):
    """``match(pattern, expr)``: the pattern language's match (bindings by pattern name)."""
    groups = _Grouper(pattern, expr, match).run()
    return _Partitioner(groups, attrs, check).visit(expr) if groups else expr
