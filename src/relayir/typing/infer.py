"""Type inference for Relay: constraint generation over the IR, solved by ``TypeSolver``.

Every node gets a type (possibly a hole); op calls add relations that run as soon as
their input types are known, so dataflow graphs are typed in one forward sweep.
Global functions are inferred together, so mutual recursion works; polymorphic
functions and constructors are instantiated with fresh holes at every use.
When solving ends, each node's resolved type is stored in its checked-type slot.
"""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..ir.adt import (
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from ..ir.expr import Call, Expr, Function, GlobalVar, Let, Op, Var, short_text
from ..ir.functor import ExprFunctor
from ..ir.module import IRModule
from ..ir.node_table import NODES
from ..ir.types import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    numpy_dtype,
    unit_type,
)
from .input_rules import INPUT_RULES
from .solver import Relation, TypeSolver, instantiate

_BOOL_SCALAR = TensorType((), "bool")
# a tensor's bytes must fit int64: kernels, numpy and the memory plans count bytes in it
MAX_TENSOR_BYTES = 2**63 - 1
_ITEMSIZE: dict[str, int] = {}  # dtype -> bytes per element (looked up once)


def check_tensor_sizes(ty, where: str) -> None:
    """Raise unless every tensor in ``ty`` (a tensor or nested tuples of them) holds at
    most ``MAX_TENSOR_BYTES`` (static dims counted; a dim of 2**64 never fits)."""
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
            continue
        if not isinstance(t, TensorType):
            continue
        nbytes = _ITEMSIZE.get(t.dtype) or _ITEMSIZE.setdefault(
            t.dtype, numpy_dtype(t.dtype).itemsize)
        for d in t.shape:
            if isinstance(d, int):
                nbytes *= d
        if nbytes > MAX_TENSOR_BYTES:
            raise TypeInferenceError(
                f"{where} has type {t}, which holds {nbytes} bytes: more than a tensor can "
                f"hold (2**63 - 1 bytes; byte offsets are int64)")


class TypeInferencer(ExprFunctor):
    def __init__(self, mod: IRModule | None = None):
        super().__init__()
        self.mod = mod if mod is not None else IRModule()
        self.solver = TypeSolver()
        self.var_types: dict[Var, Type] = {}
        self.global_types: dict[GlobalVar, Type] = {}

    # ------------------------------------------------------------ entry points

    def infer_module(self) -> None:
        for gv, fn in self.mod.functions.items():
            self.global_types[gv] = _declared_type(fn) or IncompleteType()
        for gv, fn in self.mod.functions.items():
            ty = self.visit(fn)
            self.solver.unify(self.global_types[gv], ty,
                              lambda gv=gv: f"in the type of @{gv.name_hint}")
        self.finish()

    def finish(self) -> None:
        self.solver.solve()
        resolve = self.solver.resolve
        for node, ty in self.memo.items():
            if type(node) is GlobalVar:
                ty = self.global_types.get(node, ty)
            node.set_checked_type(resolve(ty))

    # ------------------------------------------------------------ helpers

    def _unify(self, a, b, where):
        return self.solver.unify(a, b, where)

    def _var_type(self, v: Var) -> Type:
        ty = self.var_types.get(v)
        if ty is None:
            ty = v.type_annotation if v.type_annotation is not None else IncompleteType()
            check_tensor_sizes(ty, f"%{v.name_hint}")
            self.var_types[v] = ty
        return ty

    def visit(self, expr: Expr):
        if type(expr) is GlobalVar or type(expr) is Constructor:
            ty = self._value_type(expr)  # a fresh instance at every use
            self.memo.setdefault(expr, ty)
            return ty
        return super().visit(expr)

    def _value_type(self, expr: Expr) -> Type:
        if type(expr) is GlobalVar:
            if expr not in self.global_types:
                raise TypeInferenceError(f"unknown global function @{expr.name_hint}")
            return instantiate(self.global_types[expr])
        td = self.mod.type_definitions.get(expr.belong_to)
        if td is None:
            raise TypeInferenceError(
                f"constructor {expr.name_hint}: type {expr.belong_to.name_hint} is not defined "
                f"in the module"
            )
        return instantiate(td.constructor_type(expr))

    # ------------------------------------------------------------ expressions

    def visit_var(self, v):
        return self._var_type(v)

    def visit_global_var(self, gv):
        return self._value_type(gv)

    visit_constructor = visit_global_var

    def visit_constant(self, c):
        return TensorType(c.data.shape, c.data.dtype.name)

    def visit_op(self, op):
        raise TypeInferenceError(f"operator {op.name} is used as a value; call it instead")

    def visit_call(self, call: Call):
        arg_types = [self.visit(a) for a in call.args]
        if isinstance(call.op, Op):
            return self._op_call(call, arg_types)
        callee = self.solver.resolve(self.visit(call.op))
        if isinstance(callee, FuncType):
            callee = instantiate(callee)
            if len(callee.arg_types) != len(arg_types):
                raise TypeInferenceError(
                    f"{short_text(call.op)} takes {len(callee.arg_types)} arguments, found "
                    f"{len(arg_types)} in {short_text(call)}"
                )
            for i, (p, a) in enumerate(zip(callee.arg_types, arg_types)):
                self._unify(p, a, lambda i=i: f"for argument {i} of {short_text(call)}")
            return callee.ret_type
        ret = IncompleteType()
        self._unify(callee, FuncType(arg_types, ret), lambda: f"in call {short_text(call)}")
        return ret

    def _op_call(self, call: Call, arg_types):
        op = call.op
        if op.num_inputs >= 0 and len(arg_types) != op.num_inputs:
            raise TypeInferenceError(
                f"{op.name} takes {op.num_inputs} inputs, found {len(arg_types)} in "
                f"{short_text(call)}"
            )
        out = IncompleteType()
        attrs = call.attrs

        def run(types, op=op, attrs=attrs):
            try:
                out = op.type_rel(types, attrs)
                check_tensor_sizes(out, "the result")
                return out
            except TypeInferenceError as exc:
                raise TypeInferenceError(f"{op.name}: {exc}") from None

        complete = None
        if op.name in INPUT_RULES:
            rule = INPUT_RULES.get(op.name)
            complete = lambda known, attrs=attrs: rule(known, attrs)  # noqa: E731
        self.solver.add_relation(Relation(run, arg_types, out, lambda: f"in {short_text(call)}",
                                          complete))
        return out

    def visit_tuple(self, t):
        return TupleType(tuple(self.visit(f) for f in t.fields))

    def visit_tuple_getitem(self, t):
        out = IncompleteType()
        index = t.index

        def project(types):
            tup = types[0]
            if not isinstance(tup, TupleType):
                raise TypeInferenceError(f"cannot take field {index} of a {tup}")
            if not 0 <= index < len(tup.fields):
                raise TypeInferenceError(
                    f"field {index} is out of range for a tuple of {len(tup.fields)} fields"
                )
            return tup.fields[index]

        value_type = self.visit(t.tuple_value)
        resolved = self.solver.find(value_type)
        if isinstance(resolved, TupleType):  # the common case, no relation needed
            return project([resolved])
        where = lambda: f"in {short_text(t)}"  # noqa: E731
        self.solver.add_relation(Relation(project, [value_type], out, where))
        return out

    def visit_let(self, let):
        chain = []
        e = let
        while isinstance(e, Let) and e not in self.memo:
            var_type = self._var_type(e.var)
            self.memo[e.var] = var_type
            value_type = self.visit(e.value)
            self._unify(var_type, value_type, lambda e=e: f"for let %{e.var.name_hint}")
            chain.append(e)
            e = e.body
        body_type = self.visit(e)
        for node in chain:
            self.memo[node] = body_type
        return body_type

    def visit_if(self, e):
        cond = self.visit(e.cond)
        self._unify(_BOOL_SCALAR, cond, lambda: "for the if condition (a bool scalar)")
        t = self.visit(e.true_branch)
        f = self.visit(e.false_branch)
        return self._unify(t, f, lambda: "between the if branches")

    def visit_function(self, fn: Function):
        param_types = [self._var_type(p) for p in fn.params]
        for p in fn.params:
            self.memo[p] = self.var_types[p]
        body = self.visit(fn.body)
        ret = body
        if fn.ret_type is not None:
            self._unify(fn.ret_type, body, lambda: "for the function's return type")
            ret = fn.ret_type
        return FuncType(param_types, ret, fn.type_params)

    def visit_match(self, m: Match):
        data = self.visit(m.data)
        result = IncompleteType()
        for c in m.clauses:
            self._bind_pattern(c.lhs, data)
            rhs = self.visit(c.rhs)
            result = self._unify(result, rhs, lambda: "between the match clauses")
        return result

    def _bind_pattern(self, p: Pattern, expected: Type) -> None:
        if isinstance(p, PatternWildcard):
            return
        if isinstance(p, PatternVar):
            self._unify(self._var_type(p.var), expected, lambda: f"for pattern %{p.var.name_hint}")
            self.memo[p.var] = self.var_types[p.var]
            return
        if isinstance(p, PatternConstructor):
            ctor_type = self._value_type(p.constructor)
            self._unify(ctor_type.ret_type, expected,
                        lambda: f"for pattern {p.constructor.name_hint}(...)")
            if len(p.patterns) != len(ctor_type.arg_types):
                raise TypeInferenceError(
                    f"pattern {p.constructor.name_hint} has {len(p.patterns)} fields, "
                    f"the constructor has {len(ctor_type.arg_types)}"
                )
            for sub, ty in zip(p.patterns, ctor_type.arg_types):
                self._bind_pattern(sub, ty)
            return
        if isinstance(p, PatternTuple):
            fields = [IncompleteType() for _ in p.patterns]
            self._unify(TupleType(fields), expected, lambda: "for a tuple pattern")
            for sub, ty in zip(p.patterns, fields):
                self._bind_pattern(sub, ty)

    def visit_ref_create(self, r):
        return RefType(self.visit(r.value))

    def visit_ref_read(self, r):
        value = IncompleteType()
        self._unify(RefType(value), self.visit(r.ref), lambda: "for ref_read (a reference)")
        return value

    def visit_ref_write(self, r):
        self._unify(RefType(self.visit(r.value)), self.visit(r.ref),
                    lambda: "for ref_write (a reference to the value's type)")
        return unit_type()


def _declared_type(fn: Function) -> FuncType | None:
    if fn.ret_type is None or any(p.type_annotation is None for p in fn.params):
        return None
    return FuncType([p.type_annotation for p in fn.params], fn.ret_type, fn.type_params)


def infer_module(mod: IRModule) -> IRModule:
    """Type-check every function of ``mod`` together; fills each node's checked type."""
    TypeInferencer(mod).infer_module()
    return mod


def infer_expr(expr: Expr, mod: IRModule | None = None, incremental: bool = False) -> Expr:
    """Type-check a standalone expression (free variables need annotations).

    With ``incremental=True`` sub-expressions that already carry a checked type are
    taken as known and not re-visited: a pass that builds a few new nodes on top of a
    typed graph pays only for the new nodes.
    """
    inf = TypeInferencer(mod)
    if incremental:
        _seed_known_types(inf, expr)
    if mod is not None:
        for gv, fn in mod.functions.items():
            inf.global_types[gv] = _declared_type(fn) or IncompleteType()
        for gv, fn in mod.functions.items():
            inf.solver.unify(inf.global_types[gv], inf.visit(fn), lambda: "in a global function")
    inf.visit(expr)
    inf.finish()
    return expr


def _seed_known_types(inf: TypeInferencer, root: Expr) -> None:
    nodes = NODES
    stack = list(nodes[type(root)].children(root))
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.has_type and type(node) is not GlobalVar and type(node) is not Constructor:
            inf.memo[node] = node.checked_type
            if type(node) is Var:
                inf.var_types[node] = node.checked_type
        else:
            stack.extend(nodes[type(node)].children(node))


def type_of_adt(mod: IRModule, name: str, *args: Type) -> TypeCall:
    return TypeCall(mod.get_global_type_var(name), args)
