"""``FuseOps``: Relay's operator fusion; ``DefuseOps`` undoes it.

Each function body is partitioned into groups (``fusion/``: the indexed dataflow graph,
its post-dominator tree and the three pattern-driven sweeps). Every group that holds an
op call becomes a primitive function, ``fn (%p0, %p1, ..., Primitive=1) { ... }``, whose
parameters are the group's inputs, called where the group's output was::

    %1 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: ..., %p2: ..., Primitive=1) -> ... {
      %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);
      %1 = add(%0, %p2);
      nn.relu(%1)
    };
    %2 = %1(%x, %w, %b);

A later backend compiles one kernel per primitive function, which is why fusion pays:
intermediate tensors inside a group never reach memory. Scopes (``if`` branches,
``match`` clauses, closures) are fusion boundaries and so are ``let`` bindings; a tuple
or projection alone, a variable or a constant is never wrapped; existing primitive
functions are left alone. At opt level 0 every op call gets its own primitive function.

The pass needs types (it runs ``InferType`` first when they are missing) and leaves its
output typed: the new nodes take the types of the nodes they replace, so nothing is
re-inferred.
"""

from __future__ import annotations

from ..ir.expr import Call, Expr, Function, Op, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..ir.types import FuncType
from ..typing.infer import infer_module
from .analysis import TypedMutator, keep_type
from .fusion import IndexedGraph, Untyped, partition
from .pass_infra import Pass, PassContext, module_pass, register_pass

MAX_DEPTH_KEY = "relay.FuseOps.max_depth"
# One shared attribute map: Function() validates a plain dict slowly (an ABC check).
_PRIMITIVE_ATTRS = Function((), Tuple(()), attrs={"Primitive": 1}).attrs


class _Group:
    """Inputs of one group: a parameter per distinct outside expression, in first-use order."""

    __slots__ = ("params", "args", "_param_of")

    def __init__(self):
        self.params: list[Var] = []
        self.args: list[Expr] = []
        self._param_of: dict[Expr, Var] = {}  # expressions hash by identity

    def param_for(self, arg: Expr, ty) -> Var:
        p = self._param_of.get(arg)
        if p is None:
            p = self._param_of[arg] = Var(f"p{len(self.params)}", ty)
            p.set_checked_type(ty)
            self.params.append(p)
            self.args.append(arg)
        return p


class _FuseMutator(TypedMutator):
    """Rebuilds a body with each group replaced by a call of its primitive function."""

    def __init__(self, graph: IndexedGraph, group_of: list[int]):
        super().__init__()
        nodes = graph.nodes
        has_op_call = set()
        for i, e in enumerate(nodes):
            if type(e) is Call and isinstance(e.op, Op):
                has_op_call.add(group_of[i])
        # Groups without an op call (a lone tuple, a projection) stay plain expressions.
        self.group: dict[Expr, int] = {
            e: g for e, g in zip(nodes, group_of) if g in has_op_call}
        self.output: dict[int, Expr] = {g: nodes[g] for g in has_op_call}
        self.inputs: dict[int, _Group] = {}

    def visit_function(self, fn):
        return fn if fn.is_primitive else super().visit_function(fn)

    def _args(self, args, g: int) -> tuple:
        group, visit = self.group, self.visit
        out = []
        for a in args:
            new = visit(a)
            if group.get(a) == g:
                out.append(new)
            else:
                info = self.inputs.get(g)
                if info is None:
                    info = self.inputs[g] = _Group()
                out.append(info.param_for(new, a.checked_type))
        return tuple(out)

    def _finish(self, g: int, old: Expr, new: Expr) -> Expr:
        new.set_checked_type(old.checked_type)
        if self.output[g] is not old:
            return new  # inside the group: its only readers are in the group too
        info = self.inputs.pop(g, None) or _Group()
        ret = old.checked_type
        fn = Function(info.params, new, ret, attrs=_PRIMITIVE_ATTRS)
        fn.set_checked_type(FuncType([p.checked_type for p in info.params], ret))
        out = Call(fn, tuple(info.args)).with_span(old.span)
        out.set_checked_type(ret)
        return out

    def visit_call(self, call):
        g = self.group.get(call)
        if g is None:
            return super().visit_call(call)
        new = Call(call.op, self._args(call.args, g), call.attrs, call.type_args)
        return self._finish(g, call, new.with_span(call.span))

    def visit_tuple(self, t):
        g = self.group.get(t)
        if g is None:
            return super().visit_tuple(t)
        return self._finish(g, t, Tuple(self._args(t.fields, g)).with_span(t.span))

    def visit_tuple_getitem(self, t):
        g = self.group.get(t)
        if g is None:
            return super().visit_tuple_getitem(t)
        (value,) = self._args((t.tuple_value,), g)
        return self._finish(g, t, TupleGetItem(value, t.index).with_span(t.span))


def fuse_function(func: Function, opt_level: int = 2, max_depth: int = 256) -> Function:
    """Fuse the body of one (typed) function; see the module docstring."""
    if func.is_primitive:
        return func
    graph = IndexedGraph(func.body)
    groups = partition(graph, opt_level, max_depth)
    body = _FuseMutator(graph, groups).visit(func.body)
    if body is func.body:
        return func
    new = Function(func.params, body, func.ret_type, func.type_params, func.attrs)
    return keep_type(func, new.with_span(func.span))


def _fuse_module(mod: IRModule, opt_level: int, max_depth: int) -> IRModule:
    return mod.with_functions({
        gv: fuse_function(fn, opt_level, max_depth) for gv, fn in mod.functions.items()})


def FuseOps(fuse_opt_level: int = -1) -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``FuseOps``. ``fuse_opt_level=-1`` takes the opt level of the current
    ``PassContext``; at 0 every op is its own primitive function. The largest group size
    is ``PassContext(config={"relay.FuseOps.max_depth": n})`` (default 256)."""

    @module_pass(opt_level=0, name="FuseOps", required=["InferType"])
    def fuse_ops(mod: IRModule, ctx: PassContext) -> IRModule:
        opt_level = ctx.opt_level if fuse_opt_level == -1 else fuse_opt_level
        max_depth = int(ctx.config.get(MAX_DEPTH_KEY, 256))
        if max_depth < 1:
            raise ValueError(f"{MAX_DEPTH_KEY} must be at least 1, found {max_depth}")
        try:
            return _fuse_module(mod, opt_level, max_depth)
        except Untyped:
            typed = mod.copy()
            infer_module(typed)
            return _fuse_module(typed, opt_level, max_depth)

    return fuse_ops


class _Inline(TypedMutator):
    """Replaces each call of a primitive function by its body, parameters substituted."""

    def __init__(self, mapping: dict | None = None):
        super().__init__()
        self.mapping = mapping or {}

    def visit_var(self, v):
        return self.mapping.get(v, v)

    def visit_function(self, fn):
        return fn if fn.is_primitive else super().visit_function(fn)

    def visit_call(self, call):
        fn = call.op
        if type(fn) is not Function or not fn.is_primitive:
            return super().visit_call(call)
        args = [self.visit(a) for a in call.args]
        return _Inline(dict(zip(fn.params, args))).visit(fn.body)


def DefuseOps() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``DefuseOps``: inline every call of a primitive function (FuseOps undone)."""

    @module_pass(opt_level=0, name="DefuseOps")
    def defuse_ops(mod: IRModule, ctx: PassContext) -> IRModule:
        functions = {}
        for gv, fn in mod.functions.items():
            functions[gv] = fn if fn.is_primitive else _Inline().visit(fn)
        return mod.with_functions(functions)

    return defuse_ops


def count_primitive_functions(mod: IRModule) -> int:
    """How many distinct primitive functions the module holds (global ones included)."""
    seen = set()
    for fn in mod.functions.values():
        for node in post_order(fn):
            if type(node) is Function and node.is_primitive:
                seen.add(id(node))
    return len(seen)


register_pass("FuseOps", FuseOps)
register_pass("DefuseOps", DefuseOps)

__all__ = ["FuseOps", "DefuseOps", "count_primitive_functions", "fuse_function"]
