"""Relay to Python source: a program as a readable Python module, run by ``exec``.

``to_python(expr, mod)`` writes one Python ``def`` per global function the expression
reaches and a ``_run()`` that evaluates the expression; ``run_as_python`` executes it.
Every node becomes one statement (``_t3 = ...``) in evaluation order, so effects
(references) happen as the interpreter does them:

- an op call runs the op's numpy reference (``_op[k](x, y)``), a constructor call makes
  a ``ConstructorValue``, any other call calls a Python function;
- a ``fn`` is a nested ``def`` (a let-bound one can call itself: the name is bound
  before the call runs), a global function a top-level ``def``;
- ``if`` is ``if``/``else``; ``match`` a chain of ``if _match(pattern, value, binds)``
  with the pattern variables assigned from ``binds``; references are ``RefValue``s.

Values are the interpreter's (numpy arrays, tuples, ``ConstructorValue``, ``RefValue``).
A recursive Relay function is a recursive Python function: its depth is bounded by
Python's stack (an error says so), where the interpreter and the VM have no such bound.
The dataflow of a scope is walked from an explicit post-order worklist; only scope
nesting (a function body, a branch, a clause) uses the Python stack.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import Error
from ..ir.adt import Constructor, Match, PatternVar
from ..ir.expr import (
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
)
from ..ir.module import IRModule
from ..ir.node_table import children
from .interpreter import Interpreter, _match
from .values import ConstructorValue, RefValue

# nodes that open a scope or sequence their parts: their parts are not dataflow inputs
_SCOPED = (Function, If, Match, Let)


class PythonSourceError(Error):
    """A program the Python converter cannot write or run."""


class _Writer:
    def __init__(self, mod: IRModule | None):
        self.mod = mod
        self.lines: list[str] = []
        self.indent = 0
        self.counter = 0
        self.names: list[dict[int, str]] = [{}]  # scoped: node id -> Python name
        self.env: dict[str, object] = {"_match": _match, "_RefValue": RefValue,
                                       "_Ctor": ConstructorValue, "_np": np,
                                       "_apply_op": Interpreter._apply_op}
        self.globals_needed: list[GlobalVar] = []
        self.globals_seen: set[str] = set()

    # ------------------------------------------------------------ helpers

    def fresh(self, hint: str = "t") -> str:
        self.counter += 1
        hint = re.sub(r"\W", "_", hint) or "t"
        return f"_{hint}_{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def constant(self, value, hint: str) -> str:
        name = self.fresh(hint)
        self.env[name] = value
        return name

    def lookup(self, node) -> str | None:
        key = id(node)
        for scope in reversed(self.names):
            if key in scope:
                return scope[key]
        return None

    def bind(self, node, name: str) -> str:
        self.names[-1][id(node)] = name
        return name

    def global_name(self, gv: GlobalVar) -> str:
        name = "_g_" + re.sub(r"\W", "_", gv.name_hint)
        if gv.name_hint not in self.globals_seen:
            if self.mod is None or gv.name_hint not in {g.name_hint for g in
                                                        self.mod.get_global_vars()}:
                raise PythonSourceError(f"to_python: @{gv.name_hint} is not in the module")
            self.globals_seen.add(gv.name_hint)
            self.globals_needed.append(gv)
        return name

    # ------------------------------------------------------------ scopes

    def block(self, expr) -> str:
        """Emit ``expr``'s statements into the current block; return its value's name."""
        while isinstance(expr, Let):  # a let chain, in order
            var = self.fresh(expr.var.name_hint)
            if isinstance(expr.value, Function):  # bound first: the function may recur
                self.bind(expr.var, var)
                self.function(expr.value, var)
            else:
                value = self.value(expr.value)
                self.emit(f"{self.bind(expr.var, var)} = {value}")
            expr = expr.body
        return self.value(expr)

    def branch(self, out: str, expr, scope: dict | None = None) -> None:
        """``out = expr`` one level in, in a new naming scope (names bound in a branch
        are not visible after it); ``scope`` holds names bound on entry."""
        self.names.append(scope or {})
        self.indent += 1
        try:
            self.emit(f"{out} = {self.block(expr)}")
        finally:
            self.indent -= 1
            self.names.pop()

    def value(self, root) -> str:
        """The dataflow of one scope, children first (explicit worklist)."""
        order, seen = [], set()
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen or self.lookup(node) is not None:
                continue
            seen.add(id(node))
            stack.append((node, True))
            if isinstance(node, _SCOPED):
                parts = {If: lambda n: [n.cond], Match: lambda n: [n.data]}.get(type(node))
                kids = parts(node) if parts else []
            else:
                kids = children(node)
            stack.extend((k, False) for k in reversed(kids))
        for node in order:
            if self.lookup(node) is None:
                self.bind(node, self.node(node))
        return self.lookup(root)

    # ------------------------------------------------------------ nodes

    def node(self, n) -> str:  # noqa: C901  (one case per node kind)
        t = type(n)
        if t is Var:
            raise PythonSourceError(f"to_python: free variable %{n.name_hint}")
        if t is Constant:
            return self.constant(n.data, "c")
        if t is GlobalVar:
            return self.global_name(n)
        if t is Constructor:
            if n.inputs:
                raise PythonSourceError(f"to_python: constructor {n.name_hint} used as a "
                                        f"value; wrap it in a function")
            return self.constant(ConstructorValue(n.tag, (), n), n.name_hint)
        if t is Op:
            raise PythonSourceError(f"to_python: operator {n.name} used as a value")
        if t is Let:
            return self.block(n)
        if t is Function:
            return self.function(n, self.fresh("fn"))
        out = self.fresh()
        if t is Tuple:
            fields = "".join(f"{self.lookup(f)}, " for f in n.fields)
            self.emit(f"{out} = ({fields})")
        elif t is TupleGetItem:
            self.emit(f"{out} = {self.lookup(n.tuple_value)}[{n.index}]")
        elif t is Call:
            self.call(n, out)
        elif t is If:
            self.emit(f"if bool(_np.asarray({self.lookup(n.cond)})):")
            self.branch(out, n.true_branch)
            self.emit("else:")
            self.branch(out, n.false_branch)
        elif t is Match:
            self.match(n, out)
        elif t is RefCreate:
            self.emit(f"{out} = _RefValue({self.lookup(n.value)})")
        elif t is RefRead:
            self.emit(f"{out} = {self.lookup(n.ref)}.value")
        elif t is RefWrite:
            self.emit(f"{self.lookup(n.ref)}.value = {self.lookup(n.value)}")
            self.emit(f"{out} = ()")
        else:
            raise PythonSourceError(f"to_python: cannot write a {t.__name__}")
        return out

    def call(self, n: Call, out: str) -> None:
        args = ", ".join(self.lookup(a) for a in n.args)
        if isinstance(n.op, Op):
            call = self.constant(n, "call")
            self.emit(f"{out} = _apply_op({call}, [{args}])")
        elif isinstance(n.op, Constructor):
            ctor = self.constant(n.op, n.op.name_hint)
            self.emit(f"{out} = _Ctor({ctor}.tag, ({args}{',' if n.args else ''}), {ctor})")
        else:
            self.emit(f"{out} = {self.lookup(n.op)}({args})")

    def function(self, fn: Function, name: str) -> str:
        params = [self.fresh(p.name_hint) for p in fn.params]
        self.emit(f"def {name}({', '.join(params)}):")
        self.names.append({id(p): q for p, q in zip(fn.params, params)})
        self.indent += 1
        try:
            self.emit(f"return {self.block(fn.body)}")
        finally:
            self.indent -= 1
            self.names.pop()
        return name

    def match(self, n: Match, out: str) -> None:
        data = self.lookup(n.data)
        for i, clause in enumerate(n.clauses):
            pattern = self.constant(clause.lhs, "pattern")
            binds = self.fresh("binds")
            self.emit(f"{'if' if i == 0 else 'elif'} _match({pattern}, {data}, "
                      f"({binds} := {{}})):")
            scope = {}
            for var in _pattern_vars(clause.lhs):
                key = self.constant(var, "pvar")
                scope[id(var)] = self.fresh(var.name_hint)
                self.emit(f"    {scope[id(var)]} = {binds}[{key}]")
            self.branch(out, clause.rhs, scope)
        self.emit("else:")
        err = self.constant(PythonSourceError, "error")
        self.emit(f"    raise {err}('to_python: no clause matches ' + repr({data}))")


def _pattern_vars(pattern) -> list:
    out, stack = [], [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            out.append(p.var)
        stack.extend(reversed(getattr(p, "patterns", ())))
    return out


def to_python(expr, mod: IRModule | None = None) -> tuple[str, dict]:
    """The Python source of ``expr`` (a ``_run()`` function, plus a ``def`` per global
    function it reaches) and the names its constants, ops and patterns are bound to."""
    w = _Writer(mod)
    w.emit("def _run():")
    w.indent = 1
    w.emit(f"return {w.block(expr)}")
    main = w.lines
    done = 0
    defs: list[str] = []
    while done < len(w.globals_needed):  # the globals reached, each once
        gv = w.globals_needed[done]
        done += 1
        fn = mod[gv]
        w.lines, w.indent, w.names = [], 0, [{}]
        w.function(fn, w.global_name(gv))
        defs.extend(w.lines)
    return "\n".join(defs + main) + "\n", w.env


def run_as_python(expr, mod: IRModule | None = None):
    """Evaluate ``expr`` by writing it as Python (``to_python``) and running that."""
    source, env = to_python(expr, mod)
    namespace = dict(env)
    exec(compile(source, "<relayir.to_python>", "exec"), namespace)  # noqa: S102
    try:
        return namespace["_run"]()
    except RecursionError:
        raise PythonSourceError(
            "run_as_python: the program recurses deeper than Python's stack allows (its "
            "functions are Python functions); run it with the interpreter or the VM, "
            "which do not use the Python stack") from None


__all__ = ["PythonSourceError", "run_as_python", "to_python"]
