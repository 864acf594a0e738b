"""Higher-order reverse-mode differentiation (Relay's ``gradient.cc`` ``ReverseAD``).

Every differentiable value (a float tensor) is carried as a pair ``(value, ref(adjoint))``.
A back-propagator ``%bp : Ref[fn () -> ()]`` holds the backward pass built so far: each
op call computes its primal result, pairs it with a zero adjoint cell, and replaces
``%bp`` by a closure that reads the result's adjoint, applies the op's rule from
``GRADIENT`` (the rules first_order uses), adds the input gradients into the inputs'
cells and then calls the previous back-propagator. Running ``%bp`` after the forward
pass therefore replays the backward steps in reverse, whatever control flow, closure
calls or recursion produced them.

The transform is type-directed (``reverse_type``): a float tensor ``T`` becomes
``(T, Ref[T])``; tuples, references, function types and ADT type arguments are
transformed field-wise, so ``List[T]`` carries pairs; other tensors (indices, booleans)
stay as they are. Closures capture ``%bp`` lexically; each reachable global ``@f`` gets
a transformed copy ``@f_grad(%bp, ...)`` added to the module, so recursion works.

The input is put in A-normal form first: every compound node is let-bound once and its
inputs are atoms, so the transform is a loop over each let chain; only scope nesting
(function bodies, ``if`` branches, ``match`` clauses) uses the Python stack.
"""

from __future__ import annotations

from ...errors import Error
from ...ir.adt import Clause, Constructor, Match, PatternConstructor, PatternTuple, PatternVar
from ...ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
    short_text,
)
from ...ir.functor import ExprFunctor
from ...ir.module import IRModule
from ...ir.types import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    is_float,
    unit_type,
)
from ...op.tensor import add
from ...op.transform import ones_like, zeros_like
from ...typing.infer import infer_expr
from ..to_a_normal_form import to_a_normal_form_expr
from .gradient import _as_adj, _zero_of
from .grads import GRADIENT, NON_DIFFERENTIABLE, no_rule_message

BP_TYPE = RefType(FuncType((), unit_type()))


def _is_diff_tensor(ty) -> bool:
    return isinstance(ty, TensorType) and is_float(ty.dtype)


def reverse_type(ty):
    """The type of a value's transformed form (types are small: recursion is fine)."""
    if isinstance(ty, TensorType):
        return TupleType((ty, RefType(ty))) if is_float(ty.dtype) else ty
    if isinstance(ty, TupleType):
        return TupleType([reverse_type(f) for f in ty.fields])
    if isinstance(ty, FuncType):
        return FuncType([reverse_type(a) for a in ty.arg_types], reverse_type(ty.ret_type),
                        ty.type_params, ty.type_constraints)
    if isinstance(ty, RefType):
        return RefType(reverse_type(ty.value))
    if isinstance(ty, TypeCall):
        return TypeCall(ty.func, [reverse_type(a) for a in ty.args])
    return ty  # type variables, ADT headers


def _has_hole(ty) -> bool:
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, IncompleteType):
            return True
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, FuncType):
            stack.extend((*t.arg_types, t.ret_type))
        elif isinstance(t, RefType):
            stack.append(t.value)
        elif isinstance(t, TypeCall):
            stack.extend(t.args)
    return False


def _annotation(v: Var):
    ty = v.type_annotation
    if ty is None and v.has_type:
        ty = v.checked_type
    return None if ty is None or _has_hole(ty) else reverse_type(ty)


def _typed(e, ty):
    e.set_checked_type(ty)
    return e


class _Globals:
    """The transformed copy of each reachable global, made on first use (a worklist)."""

    def __init__(self, mod: IRModule | None):
        self.mod = mod
        self.names: dict[GlobalVar, GlobalVar] = {}
        self.pending: list[tuple[GlobalVar, GlobalVar]] = []

    def grad_of(self, gv: GlobalVar) -> GlobalVar:
        new = self.names.get(gv)
        if new is None:
            if self.mod is None or gv not in self.mod:
                raise Error(f"higher_order gradient: @{gv.name_hint} is called but no module "
                            "defining it was given (pass mod=...)")
            name, i = f"{gv.name_hint}_grad", 1
            while name in self.mod or any(n.name_hint == name for n in self.names.values()):
                i += 1
                name = f"{gv.name_hint}_grad{i}"
            new = self.names[gv] = GlobalVar(name)
            self.pending.append((gv, new))
        return new

    def transform_pending(self) -> None:
        """Transform every global reached so far (and those they reach); the copies join
        the module at the end, so each original is type-checked in the original module."""
        done = {}
        while self.pending:
            gv, new = self.pending.pop()
            fn = to_a_normal_form_expr(self.mod[gv])
            infer_expr(fn, self.mod)
            bp = Var("bp", BP_TYPE)
            ad = _ReverseAD(self, bp)
            params = [bp] + [ad.bind_param(p) for p in fn.params]
            body = ad.scope(fn.body)
            ret = fn.ret_type if fn.ret_type is not None else fn.checked_type.ret_type
            done[new] = Function(params, body, None if _has_hole(ret) else reverse_type(ret),
                                 fn.type_params, fn.attrs)
        for gv, fn in done.items():
            self.mod[gv] = fn


class _ReverseAD(ExprFunctor):
    """Transforms one function's body (in ANF) given its back-propagator ``bp``.

    ``visit`` is not memoised: in ANF no compound node is shared, and an atom such as a
    constant must get a fresh adjoint cell in each scope it is used in.
    """

    def __init__(self, globals_: _Globals, bp: Var):
        super().__init__()
        self.globals = globals_
        self.bp = bp
        self.env: dict[Var, object] = {}
        self.bindings: list[tuple[Var, object]] = []
        self.primal_of: dict[Var, Var] = {}  # pair variable -> its primal, where known
        self.hint = "v"

    def visit(self, expr):
        return self._table()[type(expr)](self, expr)

    # ------------------------------------------------------------ scopes and bindings

    def emit(self, value, hint=None, ty=None):
        if isinstance(value, (Var, Constant, GlobalVar, Constructor)):
            return value
        v = Var(hint or self.hint)
        if ty is not None:
            v.set_checked_type(ty)
        self.bindings.append((v, value))
        return v

    def scope(self, expr):
        """``expr``'s transform with the bindings it needs wrapped around it."""
        saved, self.bindings = self.bindings, []
        body = self.visit(expr)
        for v, value in reversed(self.bindings):
            body = Let(v, value, body)
        self.bindings = saved
        return body

    def bind_param(self, p: Var) -> Var:
        new = Var(p.name_hint, _annotation(p))
        self.env[p] = new
        return new

    # ------------------------------------------------------------ atoms

    def visit_var(self, v):
        try:
            return self.env[v]
        except KeyError:
            raise Error(f"higher_order gradient: %{v.name_hint} is free in the function; "
                        "bind it or make it a parameter") from None

    def visit_constant(self, c):
        return self.pair(c, c.tensor_type)

    def visit_global_var(self, gv):
        """A global used as a value: a closure that passes this scope's ``bp`` on."""
        grad = self.globals.grad_of(gv)  # raises when no module defines it
        fn = self.globals.mod[gv]
        params = [Var(p.name_hint, None if fn.type_params else _annotation(p))
                  for p in fn.params]
        return Function(params, Call(grad, (self.bp, *params)))

    def visit_constructor(self, c):
        if c.inputs:
            raise Error(f"higher_order gradient: constructor {c.name_hint} used as a value")
        return c

    def visit_op(self, op):
        raise Error(f"higher_order gradient: operator {op.name} used as a value")

    # ------------------------------------------------------------ compound nodes

    def visit_let(self, let):
        e = let
        while isinstance(e, Let):
            v, value = e.var, e.value
            if isinstance(value, Function):  # may call itself: bind the name first
                new = Var(v.name_hint, _annotation(v))
                self.env[v] = new
                self.bindings.append((new, self.visit(value)))
            else:
                name = self.hint = _name_for(v, value)
                self.env[v] = self.emit(self.visit(value), name)
            e = e.body
        return self.visit(e)

    def visit_tuple(self, t):
        return Tuple([self.visit(f) for f in t.fields])

    def visit_tuple_getitem(self, t):
        return TupleGetItem(self.visit(t.tuple_value), t.index)

    def visit_if(self, e):
        cond = self.primal(self.visit(e.cond), e.cond.checked_type)
        return If(cond, self.scope(e.true_branch), self.scope(e.false_branch))

    def visit_match(self, m):
        data = self.visit(m.data)
        clauses = [Clause(self.pattern(c.lhs), self.scope(c.rhs)) for c in m.clauses]
        return Match(data, clauses, m.complete)

    def pattern(self, p):
        if isinstance(p, PatternVar):
            return PatternVar(self.bind_param(p.var))
        if isinstance(p, PatternConstructor):
            return PatternConstructor(p.constructor, [self.pattern(q) for q in p.patterns])
        if isinstance(p, PatternTuple):
            return PatternTuple([self.pattern(q) for q in p.patterns])
        return p

    def visit_function(self, fn):
        if fn.is_primitive:
            raise Error("higher_order gradient cannot differentiate a primitive (fused) "
                        "function; run it before FuseOps")
        params = [self.bind_param(p) for p in fn.params]
        ret = None if fn.ret_type is None or _has_hole(fn.ret_type) else reverse_type(fn.ret_type)
        return Function(params, self.scope(fn.body), ret, fn.type_params, fn.attrs)

    def visit_ref_create(self, r):
        return RefCreate(self.visit(r.value))

    def visit_ref_read(self, r):
        return RefRead(self.visit(r.ref))

    def visit_ref_write(self, r):
        return RefWrite(self.visit(r.ref), self.visit(r.value))

    def visit_call(self, call):
        callee = call.op
        if isinstance(callee, Op):
            return self.op_call(call)
        args = [self.visit(a) for a in call.args]
        if isinstance(callee, Constructor):
            _check_constructor(callee)
            return Call(callee, args)
        if isinstance(callee, GlobalVar):
            return Call(self.globals.grad_of(callee), (self.bp, *args))
        return Call(self.visit(callee), args)

    # ------------------------------------------------------------ op calls

    def op_call(self, call):
        op, hint = call.op, self.hint
        primals = [a if isinstance(a, Constant) else self.primal_atom(a) for a in call.args]
        out_ty = call.checked_type
        fwd = _typed(Call(op, primals, call.attrs, call.type_args), out_ty)
        if not _differentiable(out_ty):
            return fwd
        out = self.emit(fwd, hint, out_ty)
        result = self.emit(self.pair(out, out_ty), f"{hint}_ad")
        self.primal_of[result] = out
        wrt = [i for i, a in enumerate(call.args)
               if not isinstance(a, Constant) and _differentiable(a.checked_type)]
        if wrt and op.name not in NON_DIFFERENTIABLE:
            if op.name not in GRADIENT:
                raise Error(f"{no_rule_message(op.name)} (in {short_text(call)})")
            self.push_backward(call, fwd, out, result, wrt)
        return result

    def primal_atom(self, a):
        """An op argument's primal value as a typed atom (the rules read its type)."""
        p = self.emit(self.primal(self.visit(a), a.checked_type), "val")
        if not p.has_type:
            p.set_checked_type(a.checked_type)
        return p

    def push_backward(self, call, fwd, out, result, wrt):
        """``bp := fn () { <inputs' adjoints += rule(adjoint of result)>; old_bp() }``."""
        old = self.emit(RefRead(self.bp), "bp_prev")
        saved, self.bindings = self.bindings, []
        grad = self.adjoint(result, out.checked_type, top=True)
        grads = GRADIENT.get(call.op.name)(fwd, out, grad)
        if len(grads) != len(call.args):
            raise Error(f"gradient of {call.op.name}: the rule gave {len(grads)} gradients "
                        f"for {len(call.args)} inputs")
        for i in wrt:
            arg = self.env[call.args[i]] if isinstance(call.args[i], Var) else None
            if grads[i] is not None and arg is not None:
                self.accumulate(arg, call.args[i].checked_type, grads[i])
        body = Call(old, ())
        for v, value in reversed(self.bindings):
            body = Let(v, value, body)
        self.bindings = saved
        self.emit(RefWrite(self.bp, Function([], body, unit_type())), "bp_set")

    # ------------------------------------------------------------ pairs (type-directed)

    def pair(self, e, ty):
        """A primal value → its transformed form, with zero adjoints."""
        if _is_diff_tensor(ty):
            return Tuple([e, RefCreate(zeros_like(e))])
        if isinstance(ty, TupleType):
            return Tuple([self.pair(self.emit(_typed(TupleGetItem(e, i), f), "f", f), f)
                          for i, f in enumerate(ty.fields)])
        if isinstance(ty, TensorType):
            return e
        raise Error(f"higher_order gradient: cannot pair a value of type {ty}")

    def primal(self, e, ty):
        """A transformed value → its primal value."""
        if _is_diff_tensor(ty):
            return self.primal_of.get(e) or TupleGetItem(e, 0)
        if isinstance(ty, TupleType):
            return Tuple([self.primal(self.emit(TupleGetItem(e, i), "f"), f)
                          for i, f in enumerate(ty.fields)])
        return e

    def adjoint(self, e, ty, top=False):
        """Read the adjoint of a transformed value (``top``: a tuple's as a list, the
        form the rules take for tuple outputs)."""
        if _is_diff_tensor(ty):
            return self.emit(RefRead(TupleGetItem(e, 1)), f"{self.hint}_grad", ty)
        if isinstance(ty, TupleType):
            parts = [self.adjoint(self.emit(TupleGetItem(e, i), "f"), f)
                     for i, f in enumerate(ty.fields)]
            return parts if top else Tuple(parts)
        return _zero_of(ty)

    def accumulate(self, e, ty, grad):
        """``adjoint(e) += grad`` for each float tensor in ``e``."""
        if grad is None:
            return
        if _is_diff_tensor(ty):
            cell = self.emit(TupleGetItem(e, 1), "cell")
            self.emit(RefWrite(cell, add(RefRead(cell), grad)), "acc")
        elif isinstance(ty, TupleType):
            for i, (f, g) in enumerate(zip(ty.fields, _as_adj(grad, ty))):
                if g is not None and _differentiable(f):
                    self.accumulate(self.emit(TupleGetItem(e, i), "f"), f, g)


def _name_for(v: Var, value) -> str:
    """A let variable's name, or the op's where A-normal form invented it (``%x``)."""
    if v.name_hint == "x" and isinstance(value, Call) and isinstance(value.op, Op):
        return value.op.name.rsplit(".", 1)[-1]
    return v.name_hint


def _differentiable(ty) -> bool:
    if isinstance(ty, TupleType):
        return any(_differentiable(f) for f in ty.fields)
    return _is_diff_tensor(ty)


def _check_constructor(ctor: Constructor) -> None:
    """ADT fields must be type parameters (``List[A]``) for tensors to carry pairs."""
    stack = list(ctor.inputs)
    while stack:
        t = stack.pop()
        if _is_diff_tensor(t):
            raise Error(f"higher_order gradient: constructor {ctor.name_hint} has a float "
                        f"tensor field ({t}); make it a type parameter of "
                        f"{ctor.belong_to.name_hint}")
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, TypeCall):
            stack.extend(t.args)
        elif isinstance(t, FuncType):
            stack.extend((*t.arg_types, t.ret_type))
        elif isinstance(t, RefType):
            stack.append(t.value)


def _check_io(ty, what: str) -> None:
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif not isinstance(t, TensorType):
            raise Error(f"higher_order gradient: the {what} must be tensors or tuples of "
                        f"tensors, found {t}")


def higher_order_gradient(func: Function, mod: IRModule | None = None) -> Function:
    """``fn(x..) -> y`` → ``fn(x..) -> (y, (dx..))``; reachable globals of ``mod`` get a
    transformed copy ``@name_grad`` added to ``mod`` (as Relay does)."""
    anf = to_a_normal_form_expr(func)
    infer_expr(anf, mod)
    for p in anf.params:
        _check_io(p.checked_type, f"parameters (%{p.name_hint})")
    out_ty = anf.checked_type.ret_type
    _check_io(out_ty, "result")
    globals_ = _Globals(mod)
    bp = Var("bp", BP_TYPE)
    ad = _ReverseAD(globals_, bp)
    ad.bindings.append((bp, RefCreate(Function([], Tuple([]), unit_type()))))
    pairs = []
    for p in anf.params:
        ad.env[p] = pair = ad.emit(ad.pair(p, p.checked_type), f"{p.name_hint}_ad")
        if _is_diff_tensor(p.checked_type):
            ad.primal_of[pair] = p
        pairs.append(pair)
    result = ad.emit(ad.visit(anf.body), "result")
    ad.accumulate(result, out_ty, _ones_of(ad, result, out_ty))
    ad.emit(Call(ad.emit(RefRead(bp), "backward"), ()), "unit")
    grads = Tuple([ad.adjoint(pair, p.checked_type) for pair, p in zip(pairs, anf.params)])
    body = Tuple([ad.primal(result, out_ty), grads])
    for v, value in reversed(ad.bindings):
        body = Let(v, value, body)
    globals_.transform_pending()
    out_fn = Function(anf.params, body, None, anf.type_params, anf.attrs)
    infer_expr(out_fn, mod)
    return out_fn


def _ones_of(ad: _ReverseAD, e, ty):
    """The seed: ones for every float tensor of the result (the gradient of sum(y))."""
    if _is_diff_tensor(ty):
        return ones_like(TupleGetItem(e, 0))
    if isinstance(ty, TupleType):
        return [_ones_of(ad, ad.emit(TupleGetItem(e, i), "f"), f) if _differentiable(f)
                else None for i, f in enumerate(ty.fields)]
    return None
