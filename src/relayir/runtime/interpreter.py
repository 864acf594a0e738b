"""The reference interpreter: evaluates any well-typed Relay program with numpy.

It is a small abstract machine with an explicit task stack and value stack, so neither
long dataflow chains nor deep program recursion (``foldl`` over a long list, a
recursive factorial) touch Python's recursion limit.

Each function activation has a frame: its variable environment (linked to the
closure's captured environment) and a memo of the dataflow nodes it has evaluated,
so a node shared in a graph is computed once per activation, as graph form means.
Op calls run the ops' numpy references, the semantic oracle of every backend.
"""

from __future__ import annotations

import numpy as np

from ..errors import Error, InterpreterError
from ..ir.adt import (
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from ..ir.expr import (
    Call,
    Constant,
    Expr,
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
from ..ir.module import IRModule
from ..ir.types import TensorType, TupleType
from .values import Closure, ConstructorValue, RefValue


class Env:
    """Variable bindings of one scope, linked to the enclosing (captured) scope."""

    __slots__ = ("vars", "parent")

    def __init__(self, vars: dict, parent: Env | None = None):
        self.vars = vars
        self.parent = parent

    def lookup(self, v: Var):
        env = self
        while env is not None:
            value = env.vars.get(v, _MISSING)
            if value is not _MISSING:
                return value
            env = env.parent
        raise InterpreterError(f"variable %{v.name_hint} has no value (unbound)")


class _Frame:
    __slots__ = ("env", "memo")

    def __init__(self, env: Env):
        self.env = env
        self.memo: dict = {}


_MISSING = object()
_UNIT = ()

# task codes
_EVAL, _CALL, _TUPLE, _GETITEM, _LET, _IF, _MATCH, _MEMO, _REF_CREATE, _REF_READ, _REF_WRITE = (
    range(11)
)


class Interpreter:
    def __init__(self, mod: IRModule | None = None):
        self.mod = mod if mod is not None else IRModule()
        self._globals: dict[GlobalVar, Closure] = {}

    def global_closure(self, gv: GlobalVar) -> Closure:
        c = self._globals.get(gv)
        if c is None:
            c = Closure(self.mod[gv], Env({}))
            self._globals[gv] = c
        return c

    def eval(self, expr: Expr, bindings: dict | None = None):
        """Evaluate ``expr`` with free variables taken from ``bindings``."""
        return self._run(expr, _Frame(Env(dict(bindings or {}))))

    def call_closure(self, closure: Closure, args: list):
        frame = _Frame(Env(dict(zip(closure.func.params, args)), closure.env))
        return self._run(closure.func.body, frame)

    # ------------------------------------------------------------ the machine

    def _run(self, root: Expr, root_frame: _Frame):
        tasks: list = [(_EVAL, root, root_frame)]
        values: list = []
        push_task = tasks.append
        push = values.append
        pop = values.pop
        while tasks:
            code, e, fr = tasks.pop()
            if code == _EVAL:
                v = fr.memo.get(e, _MISSING)
                if v is not _MISSING:
                    push(v)
                    continue
                t = type(e)
                if t is Var:
                    push(fr.env.lookup(e))
                elif t is Constant:
                    push(e.data)
                elif t is Call:
                    push_task((_CALL, e, fr))
                    for a in reversed(e.args):
                        push_task((_EVAL, a, fr))
                    if not isinstance(e.op, (Op, Constructor)):
                        push_task((_EVAL, e.op, fr))
                elif t is Let:
                    # a let-bound closure captures fr.env, where the let then binds it:
                    # the function can call itself
                    push_task((_LET, e, fr))
                    push_task((_EVAL, e.value, fr))
                elif t is Tuple:
                    push_task((_TUPLE, e, fr))
                    for f in reversed(e.fields):
                        push_task((_EVAL, f, fr))
                elif t is TupleGetItem:
                    push_task((_GETITEM, e, fr))
                    push_task((_EVAL, e.tuple_value, fr))
                elif t is Function:
                    v = Closure(e, fr.env)
                    fr.memo[e] = v
                    push(v)
                elif t is GlobalVar:
                    push(self.global_closure(e))
                elif t is If:
                    push_task((_IF, e, fr))
                    push_task((_EVAL, e.cond, fr))
                elif t is Match:
                    push_task((_MATCH, e, fr))
                    push_task((_EVAL, e.data, fr))
                elif t is RefCreate:
                    push_task((_REF_CREATE, e, fr))
                    push_task((_EVAL, e.value, fr))
                elif t is RefRead:
                    push_task((_REF_READ, e, fr))
                    push_task((_EVAL, e.ref, fr))
                elif t is RefWrite:
                    push_task((_REF_WRITE, e, fr))
                    push_task((_EVAL, e.value, fr))
                    push_task((_EVAL, e.ref, fr))
                elif t is Constructor:
                    if e.inputs:
                        raise InterpreterError(
                            f"constructor {e.name_hint} used as a function value; "
                            f"wrap it in fn (...) {{ {e.name_hint}(...) }}"
                        )
                    push(ConstructorValue(e.tag, (), e))
                elif t is Op:
                    raise InterpreterError(f"operator {e.name} used as a value")
                else:
                    raise InterpreterError(f"cannot evaluate a {t.__name__}")
            elif code == _CALL:
                n = len(e.args)
                args = values[len(values) - n:] if n else []
                del values[len(values) - n:]
                callee = e.op
                if type(callee) is Op:
                    v = self._apply_op(e, args)
                    fr.memo[e] = v
                    push(v)
                elif type(callee) is Constructor:
                    v = ConstructorValue(callee.tag, tuple(args), callee)
                    fr.memo[e] = v
                    push(v)
                else:
                    closure = pop()
                    if not isinstance(closure, Closure):
                        raise InterpreterError(f"{short_text(e)}: callee is not a function")
                    params = closure.func.params
                    if len(params) != n:
                        raise InterpreterError(
                            f"{short_text(e)}: function takes {len(params)} arguments, found {n}"
                        )
                    new = _Frame(Env(dict(zip(params, args)), closure.env))
                    push_task((_MEMO, e, fr))
                    push_task((_EVAL, closure.func.body, new))
            elif code == _MEMO:
                fr.memo[e] = values[-1]
            elif code == _LET:
                fr.env.vars[e.var] = pop()
                push_task((_EVAL, e.body, fr))
            elif code == _TUPLE:
                n = len(e.fields)
                v = tuple(values[len(values) - n:]) if n else _UNIT
                del values[len(values) - n:]
                fr.memo[e] = v
                push(v)
            elif code == _GETITEM:
                tup = pop()
                v = tup[e.index]
                fr.memo[e] = v
                push(v)
            elif code == _IF:
                cond = pop()
                branch = e.true_branch if bool(np.asarray(cond)) else e.false_branch
                push_task((_EVAL, branch, fr))
            elif code == _MATCH:
                data = pop()
                for clause in e.clauses:
                    bindings: dict = {}
                    if _match(clause.lhs, data, bindings):
                        fr.env.vars.update(bindings)
                        push_task((_EVAL, clause.rhs, fr))
                        break
                else:
                    raise InterpreterError(f"no clause of {short_text(e)} matches {data!r}")
            elif code == _REF_CREATE:
                v = RefValue(pop())
                fr.memo[e] = v
                push(v)
            elif code == _REF_READ:
                v = pop().value
                fr.memo[e] = v
                push(v)
            elif code == _REF_WRITE:
                value = pop()
                ref = pop()
                ref.value = value
                fr.memo[e] = _UNIT
                push(_UNIT)
        return values.pop()

    @staticmethod
    def _apply_op(call: Call, args):
        op = call.op
        if call.has_type and not _static(call.checked_type):
            _check_concrete(call, args)
        try:
            out = op.reference(*args, call.attrs)
        except Error as exc:
            if str(exc).startswith(op.name):
                raise
            raise type(exc)(f"{op.name}: {exc} in {short_text(call)}") from exc
        except Exception as exc:
            raise InterpreterError(f"{op.name} failed in {short_text(call)}: {exc}") from exc
        if isinstance(out, (tuple, list)):
            return tuple(np.asarray(o) for o in out)
        return np.asarray(out)


def _static(ty) -> bool:
    if isinstance(ty, TensorType):
        return ty.is_static
    return not isinstance(ty, TupleType) or all(_static(f) for f in ty.fields)


def _value_type(v):
    if isinstance(v, tuple):
        return TupleType([_value_type(f) for f in v])
    a = np.asarray(v)
    return TensorType(a.shape, a.dtype.name)


def _check_concrete(call: Call, args) -> None:
    """A call typed with dynamic dims takes, at run time, only the shapes its type
    relation admits: the relation runs again on the arguments' own types, as the VM's
    shape functions run it, so a shape the compiled code refuses (a kernel larger than
    the padded input) is refused here too, not given a value by the reference."""
    try:
        types = [_value_type(a) for a in args]
    except (Error, TypeError, ValueError):  # not a tensor (a closure): nothing to check
        return
    try:
        call.op.type_rel(types, call.attrs)
    except Error as exc:
        raise InterpreterError(f"{call.op.name} cannot take input types "
                               f"{', '.join(map(str, types))}: {exc} in {short_text(call)}"
                               ) from None


def _match(pattern, value, bindings: dict) -> bool:
    stack = [(pattern, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(p, PatternWildcard):
            continue
        if isinstance(p, PatternVar):
            bindings[p.var] = v
        elif isinstance(p, PatternConstructor):
            if not isinstance(v, ConstructorValue) or v.tag != p.constructor.tag:
                return False
            stack.extend(zip(p.patterns, v.fields))
        elif isinstance(p, PatternTuple):
            stack.extend(zip(p.patterns, v))
    return True
