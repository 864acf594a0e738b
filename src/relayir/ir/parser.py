"""The Relay text parser (format version 0.0.5): the inverse of ``printer.astext``.

A hand-written recursive-descent parser over the lexer's token lists. It recurses
only where the text nests (a function inside a function, a call written inside a
call); the printer never nests dataflow, so printed programs of any length parse with
a flat stack: a block's ``%N = ...;`` bindings and ``let`` statements are a loop.

``%N`` names the node its binding built, so every use gets the same object back and a
DAG stays a DAG. Local variables shadow: each binding site (``let``, parameter,
pattern, ``free_var``) makes a new ``Var`` and uses see the innermost; a ``let`` whose
value is a function literal is in scope in that function, so it can recurse, while
``let %x = f(%x);`` reads the outer ``%x``. Global functions and types
may be used before they are defined (``GlobalVar`` and ``GlobalTypeVar`` are equal by
name) and are checked to exist once the whole text is read; constructors must be
defined first, because a bare ``Nil`` must already be known to be a constructor.
"""

from __future__ import annotations

import base64
import difflib
import json
import re
from bisect import bisect_right

import numpy as np

from ..errors import Error, OpError, ParseError
from ._util import gc_paused
from .adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .dim_expr import DIM_OPS, dim_add, dim_mul, dim_sub
from .dim_expr import OPS as DIM_FUNCS
from .expr import (
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
    Span,
    Tuple,
    TupleGetItem,
    Var,
)
from .lexer import EOF, LITERAL_DTYPES, Tokens, local_name, split_metadata
from .module import IRModule
from .op import get_op, make_attrs
from .printer import VERSION
from .types import (
    DTYPES,
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    SymbolicDim,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
    numpy_dtype,
)

_MISSING = object()
_NUMBER = re.compile(r"(-?(?:inf|nan|[\d.]+(?:[eE][+-]?\d+)?))([A-Za-z_]\w*)?")
_REF_ARITY = {"ref": 1, "ref_read": 1, "ref_write": 2}
_ARG_END = frozenset({",", ")"})
_DTYPE_ALIASES = {"int": "int32", "uint": "uint32", "float": "float32"}
# Relay's infix operators: (precedence, op); all associate to the left
_INFIX = {"*": (3, "multiply"), "/": (3, "divide"), "+": (2, "add"), "-": (2, "subtract"),
          "<": (1, "less"), ">": (1, "greater"), "<=": (1, "less_equal"),
          ">=": (1, "greater_equal"), "==": (0, "equal"), "!=": (0, "not_equal")}
_KEYWORDS = frozenset({"fn", "if", "match", "let", "True", "False", "meta", *_REF_ARITY,
                       "def", "type"})


def parse(text: str, source_name: str = "", init_module: IRModule | None = None) -> IRModule:
    """Parse a module; ``init_module``'s types and functions are visible and included."""
    with gc_paused():
        p = _Parser(text, source_name, init_module, free_vars=False)
        return p.guarded(p.module)


def parse_expr(text: str, source_name: str = "", free_vars: bool = True) -> Expr:
    """Parse one expression (a block); an unbound ``%x`` is a free variable (an error
    with ``free_vars=False``: then only ``free_var`` declarations make them)."""
    with gc_paused():
        p = _Parser(text, source_name, None, free_vars=free_vars)
        p.expression_only = True
        return p.guarded(p.expression)


def parse_dim(text: str):
    """One dim as the printer writes it (``n - 1``, ``floordiv(n, 4)``, ``?``, ``3``):
    the inverse of ``dim_expr.dim_text``, for formats that save a dim as text."""
    p = _Parser(text, "", None, free_vars=True)

    def one():
        d = p.dim()
        if p.kinds[p.i] != EOF:
            raise p.error(f"unexpected {p.found()} after the dimension {text!r}")
        return d

    return p.guarded(one)


def _undo(table: dict, log: list, mark: int) -> None:
    while len(log) > mark:
        name, old = log.pop()
        if old is _MISSING:
            del table[name]
        else:
            table[name] = old


_MAX_SUGGEST = 200  # longer names get no "did you mean": difflib is slow on megabytes


def _close_names(name: str, known) -> list[str]:
    """Up to three known names close to ``name`` (none for a very long one)."""
    return difflib.get_close_matches(name, known, n=3) if len(name) <= _MAX_SUGGEST else []


class _Parser:
    def __init__(self, text: str, source_name: str, init: IRModule | None, free_vars: bool):
        if not isinstance(text, str):
            raise TypeError(f"parse expects Relay text (a str), found {type(text).__name__}")
        end, meta_start = split_metadata(text)
        self.toks = Tokens(text, source_name, end)
        self.kinds, self.vals, self.starts = self.toks.kinds, self.toks.vals, self.toks.starts
        self.line_starts = self.toks.line_starts
        self.i = 0
        self.in_binding = False  # parsing the value of a "%N = ...;" line (see block)
        self.source = source_name
        self.meta_text = text[meta_start:] if meta_start < len(text) else None
        self.meta_offset = meta_start
        self.meta: list[Constant] | None = None
        self.init = init
        self.allow_free = free_vars
        self.expression_only = free_vars  # no module to define types in (parse_expr)
        self.free: dict[str, Var] = {}
        self.literals: dict[str, np.ndarray] = {}
        self.ops: dict[str, Op] = {}
        self.vars: dict[str, Var] = {}
        self.var_log: list = []
        self.graph: dict[str, Expr] = {}
        self.graph_log: list = []
        self.tvars: dict[str, TypeVar] = {}
        self.tvar_log: list = []
        self.globals: dict[str, GlobalVar] = {}
        self.types: dict[str, GlobalTypeVar] = {}
        self.ctors: dict[str, Constructor] = {}
        if init is not None:
            self.globals = {gv.name_hint: gv for gv in init.get_global_vars()}
            for gtv, td in init.type_definitions.items():
                self.types[gtv.name_hint] = gtv
                self.ctors.update((c.name_hint, c) for c in td.constructors)
        self.defined_globals = set(self.globals)
        self.defined_types = set(self.types)
        self.global_uses: dict[str, int] = {}
        self.type_uses: dict[str, int] = {}

    # ------------------------------------------------------------ plumbing

    def guarded(self, fn):
        """Every failure becomes a ``ParseError`` at the token being read."""
        try:
            return fn()
        except ParseError:
            raise
        except RecursionError:
            raise self.error("the text nests too deeply; bind inner expressions with "
                             "'%N = ...;' lines instead") from None
        except Error as exc:
            raise self.error(str(exc)) from None

    def error(self, message: str, i: int | None = None) -> ParseError:
        return self.toks.error(message, self.starts[self.i if i is None else i])

    def span(self, i: int) -> Span:
        offset = self.starts[i]
        line = bisect_right(self.line_starts, offset)
        return Span(self.source, line, offset - self.line_starts[line - 1] + 1)

    def found(self, i: int | None = None) -> str:
        i = self.i if i is None else i
        kind, val = self.kinds[i], self.vals[i]
        if kind == EOF:
            return "end of input"
        return f"'{val}'"

    def expect(self, kind: str, what: str | None = None) -> int:
        i = self.i
        if self.kinds[i] != kind:
            raise self.error(f"expected {what or repr(kind)}, found {self.found()}")
        self.i = i + 1
        return i

    def at_word(self, word: str) -> bool:
        return self.kinds[self.i] == "IDENT" and self.vals[self.i] == word

    def comma_or(self, close: str, what: str) -> None:
        """After a list item: a ``,`` (consumed) or the closing token (left for the caller)."""
        k = self.kinds[self.i]
        if k == ",":
            self.i += 1
        elif k != close:
            raise self.error(f"expected ',' or '{close}' in {what}, found {self.found()}")

    def bind(self, name: str, var: Var) -> None:
        self.var_log.append((name, self.vars.get(name, _MISSING)))
        self.vars[name] = var

    def version(self) -> None:
        if self.kinds[self.i] == "VERSION":
            found = re.search(r'"([^"]*)"', self.vals[self.i]).group(1)
            if found != VERSION:
                raise self.error(f'unsupported text format version "{found}"; '
                                 f'expected "{VERSION}"')
            self.i += 1

    # ------------------------------------------------------------ top level

    def module(self) -> IRModule:
        self.version()
        type_defs, functions = [], []
        while self.kinds[self.i] != EOF:
            if self.at_word("type"):
                type_defs.append(self.type_def())
            elif self.at_word("def"):
                functions.append(self.function_def())
            else:
                raise self.error(f"expected 'def' or 'type', found {self.found()}")
        self.check_defined(self.global_uses, self.defined_globals, "global function @")
        self.check_defined(self.type_uses, self.defined_types, "type ")
        mod = IRModule()
        if self.init is not None:
            mod.update(self.init)
        for td in type_defs:
            mod.add_type(td)
        for gv, fn in functions:
            mod[gv] = fn
        return mod

    def check_defined(self, uses: dict, defined: set, what: str) -> None:
        for name, i in uses.items():
            if name not in defined:
                close = _close_names(name, defined)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise self.error(f"unknown {what}{name}: it is never defined{hint}", i)

    def expression(self) -> Expr:
        self.version()
        e = self.block()
        if self.kinds[self.i] != EOF:
            raise self.error(f"expected end of input, found {self.found()}")
        return e

    def function_def(self) -> tuple[GlobalVar, Function]:
        start = self.i
        self.i += 1
        name_i = self.expect("GLOBAL", "a global function name (@name)")
        name = self.vals[name_i][1:]
        if name in self.defined_globals:
            raise self.error(f"@{name} is defined twice", name_i)
        self.defined_globals.add(name)
        gv = self.globals.setdefault(name, GlobalVar(name))
        return gv, self.function_rest(start)

    def type_def(self) -> TypeData:
        self.i += 1
        name_i = self.expect("IDENT", "a type name")
        name = self.vals[name_i]
        if name in self.defined_types:
            raise self.error(f"type {name} is defined twice", name_i)
        self.defined_types.add(name)
        header = self.types.setdefault(name, GlobalTypeVar(name))
        tmark = len(self.tvar_log)
        tvs = self.type_params() if self.kinds[self.i] == "[" else ()
        self.expect("{", "'{' to start the constructors")
        ctors = []
        while self.kinds[self.i] != "}":
            ci = self.expect("IDENT", "a constructor name")
            cname = self.vals[ci]
            if cname in self.ctors or any(c.name_hint == cname for c in ctors):
                raise self.error(f"constructor {cname} is defined twice", ci)
            fields = self.type_list("(", ")") if self.kinds[self.i] == "(" else ()
            ctors.append(Constructor(cname, fields, header).with_span(self.span(ci)))
            self.comma_or("}", f"the constructors of {name}")
        self.i += 1
        _undo(self.tvars, self.tvar_log, tmark)
        self.ctors.update((c.name_hint, c) for c in ctors)
        return TypeData(header, tvs, ctors)

    # ------------------------------------------------------------ functions and blocks

    def function_rest(self, start: int) -> Function:
        """``[A](%x: A, attr=1) -> R { body }`` after ``fn`` or ``def @name``."""
        vmark, tmark = len(self.var_log), len(self.tvar_log)
        tps = self.type_params() if self.kinds[self.i] == "[" else ()
        self.expect("(", "'(' to start the parameters")
        params, attrs = [], {}
        while self.kinds[self.i] != ")":
            k = self.kinds[self.i]
            if k == "LOCAL" and not attrs:
                params.append(self.var_decl())
            elif k == "IDENT" and self.kinds[self.i + 1] == "=":
                key = self.vals[self.i]
                self.i += 2
                attrs[key] = self.attr_value()
            else:
                raise self.error(f"expected a parameter (%name) or an attribute (name=value), "
                                 f"found {self.found()}")
            self.comma_or(")", "the parameters")
        self.i += 1
        ret = None
        if self.kinds[self.i] == "ARROW":
            self.i += 1
            ret = self.type()
        body = self.braced_block()
        _undo(self.vars, self.var_log, vmark)
        _undo(self.tvars, self.tvar_log, tmark)
        return Function(params, body, ret, tps, attrs).with_span(self.span(start))

    def var_decl(self) -> Var:
        i = self.i
        self.i += 1
        ann = None
        if self.kinds[self.i] == ":":
            self.i += 1
            ann = self.type()
        name = self.vals[i]
        if name[1:].isdigit():
            raise self.error(f"{name} is a number; a variable needs a name", i)
        var = Var(local_name(name), ann).with_span(self.span(i))
        self.bind(name, var)
        return var

    def braced_block(self) -> Expr:
        self.expect("{", "'{'")
        outer, self.in_binding = self.in_binding, False
        body = self.block()
        self.in_binding = outer
        self.expect("}", "'}' to close the block")
        return body

    def block(self) -> Expr:
        """``%N = e;``, ``let`` and ``e;`` statements (``e; rest`` is ``let %_ = e;
        rest``, as in Relay), then the value; a loop, not recursion."""
        kinds, vals = self.kinds, self.vals
        vmark, gmark = len(self.var_log), len(self.graph_log)
        lets = []
        while True:
            i = self.i
            k = kinds[i]
            if k == "LOCAL" and kinds[i + 1] == "=":
                name = vals[i]
                if not name[1:].isdigit():
                    raise self.error(f"expected 'let' before {name}: named variables are bound "
                                     "with let, and '%N = ...' lines use numbers")
                self.i = i + 2
                outer, self.in_binding = self.in_binding, True
                value = self.expr()
                self.in_binding = outer
                self.expect(";", f"';' after the value of {name}")
                self.graph_log.append((name, self.graph.get(name, _MISSING)))
                self.graph[name] = value
            elif k == "IDENT" and vals[i] == "let":
                lets.append(self.let_statement())
            elif k == "IDENT" and vals[i] == "free_var":
                self.free_var()
            else:
                body = self.expr()
                # inside the value of a '%N = ...;' line (not in braces) the ';' after
                # a let's body closes that line, as the printer writes nested lets
                if kinds[self.i] != ";" or self.in_binding:
                    break
                self.i += 1
                lets.append((Var("_").with_span(self.span(i)), body, i))
        for var, value, i in reversed(lets):
            body = Let(var, value, body).with_span(self.span(i))
        _undo(self.vars, self.var_log, vmark)
        _undo(self.graph, self.graph_log, gmark)
        return body

    def free_var(self) -> None:
        """``free_var %x: T;`` declares a variable no binding site binds, with its type."""
        self.i += 1
        if self.kinds[self.i] != "LOCAL":
            raise self.error(f"expected a variable (%name) after free_var, found {self.found()}")
        name = self.vals[self.i]
        if name in self.free:
            raise self.error(f"free_var {name} is declared twice")
        mark = len(self.var_log)
        var = self.var_decl()
        _undo(self.vars, self.var_log, mark)
        self.free[name] = var
        self.expect(";", "';' after free_var")

    def let_statement(self) -> tuple[Var, Expr, int]:
        start = self.i
        self.i += 1
        name = self.vals[self.i]
        if self.kinds[self.i] != "LOCAL" or name[1:].isdigit():
            raise self.error(f"expected a variable (%name) after 'let', found {self.found()}")
        name_i = self.i
        self.i += 1
        ann = None
        if self.kinds[self.i] == ":":
            self.i += 1
            ann = self.type()
        self.expect("=", "'=' in let")
        var = Var(local_name(name), ann).with_span(self.span(name_i))
        vars_, i = self.vars, self.i
        # a function may call itself through its let variable; other values cannot
        recursive = self.kinds[i] == "IDENT" and self.vals[i] == "fn"
        if recursive:
            self.var_log.append((name, vars_.get(name, _MISSING)))
            vars_[name] = var
        value = self.expr()
        if not recursive:
            self.var_log.append((name, vars_.get(name, _MISSING)))
            vars_[name] = var
        if self.kinds[self.i] != ";":
            raise self.error(f"expected ';' after the let value, found {self.found()}")
        self.i += 1
        return var, value, start

    # ------------------------------------------------------------ expressions

    def expr(self, min_prec: int = 0) -> Expr:
        """Infix operators by precedence climbing over ``postfix`` operands (Relay's
        ``%x * %y + 1``: ``add(multiply(%x, %y), 1)``)."""
        lhs = self.unary()
        kinds, vals = self.kinds, self.vals
        while kinds[self.i] == "BINOP":
            prec, name = _INFIX[vals[self.i]]
            if prec < min_prec:
                break
            op_i = self.i
            self.i += 1
            rhs = self.expr(prec + 1)
            op = get_op(name)
            lhs = Call(op, (lhs, rhs), make_attrs(op, {})).with_span(self.span(op_i))
        return lhs

    def unary(self) -> Expr:
        """``-e``: a literal negated in place (``--10`` is the constant 10, as in Relay),
        anything else a call of ``negative``."""
        if self.kinds[self.i] == "BINOP" and self.vals[self.i] == "-":
            i = self.i
            self.i += 1
            e = self.unary()
            if isinstance(e, Constant) and e.data.ndim == 0:
                return Constant(np.negative(e.data)).with_span(self.span(i))
            op = get_op("negative")
            return Call(op, (e,), make_attrs(op, {})).with_span(self.span(i))
        return self.postfix()

    def postfix(self) -> Expr:
        """An operand and its calls and tuple projections: ``%f(%x).0``."""
        start = self.i
        e = self.primary()
        kinds = self.kinds
        while True:
            k = kinds[self.i]
            if k == "(":
                self.i += 1
                args, attrs = self.call_args()
                e = self.make_call(e, args, attrs, start)
            elif k == ".":
                self.i += 1
                if kinds[self.i] != "NUMBER" or not self.vals[self.i].isdigit():
                    raise self.error(f"expected a tuple index after '.', found {self.found()}")
                e = TupleGetItem(e, int(self.vals[self.i])).with_span(self.span(start))
                self.i += 1
            else:
                return e

    def call_args(self) -> tuple[list, dict]:
        kinds = self.kinds
        args, attrs = [], {}
        while kinds[self.i] != ")":
            if kinds[self.i] == "IDENT" and kinds[self.i + 1] == "=":
                key = self.vals[self.i]
                if key in attrs:
                    raise self.error(f"attribute {key} is given twice")
                self.i += 2
                attrs[key] = self.attr_value()
            elif attrs:
                raise self.error(f"expected an attribute (name=value) after attributes, "
                                 f"found {self.found()}")
            elif kinds[self.i] == "LOCAL" and kinds[self.i + 1] in _ARG_END:
                args.append(self.local(self.vals[self.i], self.i))  # the common case, quickly
            else:
                args.append(self.expr())
            k = kinds[self.i]
            if k == ",":
                self.i += 1
            elif k != ")":
                raise self.error(f"expected ',' or ')' in the arguments, found {self.found()}")
        self.i += 1
        return args, attrs

    def make_call(self, callee: Expr, args: list, attrs: dict, start: int) -> Call:
        t = type(callee)
        if t is Op:
            n = callee.num_inputs
            if n >= 0 and len(args) != n:
                raise self.error(f"{callee.name} takes {n} inputs ({', '.join(callee.arg_names)})"
                                 f", found {len(args)}", start)
            try:
                op_attrs = make_attrs(callee, attrs)
            except OpError as exc:
                raise self.error(str(exc), start) from None
            return Call(callee, tuple(args), op_attrs).with_span(self.span(start))
        if attrs:
            raise self.error(f"only operators take attributes, found {', '.join(attrs)}=...",
                             start)
        if t is Constructor and len(args) != len(callee.inputs):
            raise self.error(f"constructor {callee.name_hint} takes {len(callee.inputs)} "
                             f"arguments, found {len(args)}", start)
        return Call(callee, tuple(args)).with_span(self.span(start))

    def primary(self) -> Expr:
        i = self.i
        k, v = self.kinds[i], self.vals[i]
        if k == "LOCAL":
            return self.local(v, i)
        if k == "GLOBAL":
            self.i = i + 1
            name = v[1:]
            gv = self.globals.get(name)
            if gv is None:
                gv = self.globals[name] = GlobalVar(name)
            self.global_uses.setdefault(name, i)
            return gv
        if k == "NUMBER":
            self.i = i + 1
            return self.number(v, i)
        if k == "(":
            return self.tuple_expr(i)
        if k == "{":
            return self.braced_block()
        if k == "IDENT":
            return self.word(i, v)
        raise self.error(f"expected an expression, found {self.found()}")

    def local(self, v: str, i: int) -> Expr:
        """``%x`` (innermost binding, else free) or ``%N`` (a numbered binding)."""
        node = self.vars.get(v)
        if node is None:
            node = self.graph.get(v)
            if node is None:
                node = self.free.get(v)
                if node is None:
                    node = self.unbound(v, i)
        self.i = i + 1
        return node

    def unbound(self, name: str, i: int) -> Var:
        if name[1:].isdigit():
            raise self.error(f"{name} is not bound here: a '{name} = ...;' line must come "
                             "before its uses, in this block or an enclosing one", i)
        if not self.allow_free:
            raise self.error(f"unbound variable {name}: no parameter, let or pattern binds it "
                             "here", i)
        var = self.free[name] = Var(local_name(name)).with_span(self.span(i))
        return var

    def word(self, i: int, v: str) -> Expr:
        """A keyword, a constructor or an operator name."""
        if v in _KEYWORDS:
            return self.keyword(i, v)
        ctor = self.ctors.get(v)
        if ctor is not None:
            self.i = i + 1
            if self.kinds[self.i] == "(":
                self.i += 1
                args, attrs = self.call_args()
                return self.make_call(ctor, args, attrs, i)
            # a bare zero-field constructor is a value (``Nil``); others are functions
            return ctor if ctor.inputs else Call(ctor, ()).with_span(self.span(i))
        op = self.ops.get(v)
        if op is None:
            if len(v) > _MAX_SUGGEST:  # no name is this long: skip the slow suggestions
                raise self.error(f"unknown operator '{v}'", i)
            try:
                op = self.ops[v] = get_op(v)  # its error suggests close operator names
            except OpError as exc:
                close = _close_names(v, self.ctors)
                hint = f" (or constructor {', '.join(close)}?)" if close else ""
                raise self.error(f"{exc}{hint}", i) from None
        self.i = i + 1
        return op

    def keyword(self, i: int, v: str) -> Expr:
        if v == "fn":
            self.i = i + 1
            return self.function_rest(i)
        if v == "if":
            return self.if_expr(i)
        if v == "match":
            return self.match_expr(i)
        if v == "let":
            return self.block()
        if v in ("True", "False"):
            self.i = i + 1
            return Constant(np.array(v == "True")).with_span(self.span(i))
        if v == "meta":
            return self.meta_ref(i)
        if v in _REF_ARITY:
            self.i = i + 1
            self.expect("(", f"'(' after {v}")
            args, attrs = self.call_args()
            if attrs or len(args) != _REF_ARITY[v]:
                raise self.error(f"{v} takes {_REF_ARITY[v]} argument(s)", i)
            node = {"ref": RefCreate, "ref_read": RefRead, "ref_write": RefWrite}[v](*args)
            return node.with_span(self.span(i))
        raise self.error(f"expected an expression, found '{v}' (relayir.parse reads modules)", i)

    def tuple_expr(self, start: int) -> Expr:
        self.i = start + 1
        fields = []
        while self.kinds[self.i] != ")":
            fields.append(self.expr())
            if len(fields) == 1 and self.kinds[self.i] == ")":
                self.i += 1
                return fields[0]  # (e) is just e; a one-field tuple is (e,)
            self.comma_or(")", "the tuple")
        self.i += 1
        return Tuple(tuple(fields)).with_span(self.span(start))

    def if_expr(self, start: int) -> If:
        self.i = start + 1
        self.expect("(", "'(' after if")
        cond = self.expr()
        self.expect(")", "')' after the condition")
        yes = self.braced_block()
        if not self.at_word("else"):
            raise self.error(f"expected 'else', found {self.found()}")
        self.i += 1
        no = self.if_expr(self.i) if self.at_word("if") else self.braced_block()
        return If(cond, yes, no).with_span(self.span(start))

    def match_expr(self, start: int) -> Match:
        self.i = start + 1
        complete = self.kinds[self.i] != "?"
        if not complete:
            self.i += 1
        self.expect("(", "'(' after match")
        data = self.expr()
        self.expect(")", "')' after the matched value")
        self.expect("{", "'{' to start the clauses")
        clauses = []
        while self.kinds[self.i] != "}":
            vmark = len(self.var_log)
            lhs = self.pattern()
            self.expect("FATARROW", "'=>' after the pattern")
            rhs = self.expr()
            _undo(self.vars, self.var_log, vmark)
            clauses.append(Clause(lhs, rhs))
            self.comma_or("}", "the match clauses")
        self.i += 1
        return Match(data, clauses, complete).with_span(self.span(start))

    def pattern(self):
        i = self.i
        k, v = self.kinds[i], self.vals[i]
        if k == "IDENT" and v == "_":
            self.i += 1
            return PatternWildcard()
        if k == "IDENT":
            ctor = self.ctors.get(v)
            if ctor is None:
                raise self.error(f"unknown constructor {v} in a pattern")
            self.i += 1
            subs = self.pattern_list() if self.kinds[self.i] == "(" else []
            if len(subs) != len(ctor.inputs):
                raise self.error(f"constructor {v} has {len(ctor.inputs)} fields, "
                                 f"the pattern gives {len(subs)}", i)
            return PatternConstructor(ctor, subs)
        if k == "LOCAL":
            return PatternVar(self.var_decl())
        if k == "(":
            return PatternTuple(self.pattern_list())
        raise self.error(f"expected a pattern (_, %name, a constructor or a tuple), "
                         f"found {self.found()}")

    def pattern_list(self) -> list:
        self.i += 1
        out = []
        while self.kinds[self.i] != ")":
            out.append(self.pattern())
            self.comma_or(")", "the pattern")
        self.i += 1
        return out

    # ------------------------------------------------------------ literals

    def number(self, text: str, i: int) -> Constant:
        data = self.literals.get(text)
        if data is None:  # arrays are immutable: one per distinct literal text
            data = self.literals[text] = self.literal(text, i)
        return Constant(data).with_span(self.span(i))

    def literal(self, text: str, i: int) -> np.ndarray:
        m = _NUMBER.fullmatch(text)
        body, suffix = m.group(1), m.group(2) or ""
        if suffix not in LITERAL_DTYPES:
            raise self.error(f"unknown number suffix '{suffix}' in {text}; expected one of "
                             f"{', '.join(s for s in LITERAL_DTYPES if s)}", i)
        is_real = any(c in body for c in ".eEna")
        dtype = LITERAL_DTYPES[suffix] or ("float32" if is_real else "int32")
        if dtype.startswith("float"):
            with np.errstate(over="ignore"):
                data = np.array(float(body), dtype=dtype)
        elif is_real:
            raise self.error(f"{text} is not an integer, but '{suffix}' means {dtype}", i)
        else:
            info = np.iinfo(dtype)
            if not info.min <= int(body) <= info.max:
                raise self.error(f"{text} does not fit in {dtype}", i)
            data = np.array(int(body), dtype=dtype)
        data.flags.writeable = False
        return data

    def attr_value(self):
        i = self.i
        k, v = self.kinds[i], self.vals[i]
        self.i = i + 1
        if k == "NUMBER":
            body = _NUMBER.fullmatch(v).group(1)
            return float(body) if any(c in body for c in ".eEna") else int(body)
        if k == "STRING":
            try:
                return json.loads(v)
            except ValueError as exc:
                raise self.error(f"bad string {v}: {exc}", i) from None
        if k == "IDENT" and v in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[v]
        if k in ("[", "("):
            close = "]" if k == "[" else ")"
            items = []
            while self.kinds[self.i] != close:
                items.append(self.attr_value())
                self.comma_or(close, "the attribute value")
            self.i += 1
            return tuple(items)
        raise self.error("expected an attribute value (a number, a string, True, False, None "
                         f"or [...]), found {self.found(i)}", i)

    def meta_ref(self, start: int) -> Constant:
        self.i = start + 1
        self.expect("[", "'[' after meta")
        if self.kinds[self.i] != "IDENT" or self.vals[self.i] != "relay.Constant":
            raise self.error(f"expected relay.Constant, found {self.found()}")
        self.i += 1
        self.expect("]", "']'")
        self.expect("[", "'[' before the constant's index")
        k = self.expect("NUMBER", "the constant's index")
        self.expect("]", "']'")
        consts = self.load_meta(start)
        index = int(self.vals[k]) if self.vals[k].isdigit() else -1
        if not 0 <= index < len(consts):
            raise self.error(f"meta[relay.Constant][{self.vals[k]}] does not exist: the "
                             f"metadata has {len(consts)} constants", k)
        return consts[index]

    def load_meta(self, at: int) -> list[Constant]:
        if self.meta is not None:
            return self.meta
        if self.meta_text is None:
            raise self.error("meta[relay.Constant][...] needs the '#[metadata]' section at the "
                             "end of the text (print with show_meta_data=True)", at)
        try:
            entries = json.loads(self.meta_text)["relay.Constant"]
            consts = []
            for e in entries:
                dtype = numpy_dtype(e["dtype"]).newbyteorder("<")
                raw = np.frombuffer(base64.b64decode(e["data"]), dtype=dtype)
                data = raw.astype(dtype.newbyteorder("="), copy=True).reshape(e["shape"])
                consts.append(Constant(data))
        except (ValueError, KeyError, TypeError, Error) as exc:
            raise self.toks.error(f"bad metadata section: {exc}", self.meta_offset) from None
        self.meta = consts
        return consts

    # ------------------------------------------------------------ types

    def type_params(self) -> list[TypeVar]:
        self.i += 1
        out = []
        while self.kinds[self.i] != "]":
            ti = self.expect("IDENT", "a type parameter name")
            tv = TypeVar(self.vals[ti])
            self.tvar_log.append((tv.name_hint, self.tvars.get(tv.name_hint, _MISSING)))
            self.tvars[tv.name_hint] = tv
            out.append(tv)
            self.comma_or("]", "the type parameters")
        self.i += 1
        return out

    def type_list(self, open_: str, close: str) -> list:
        self.expect(open_)
        out = []
        while self.kinds[self.i] != close:
            out.append(self.type())
            self.comma_or(close, "the types")
        self.i += 1
        return out

    def type(self):  # noqa: C901  (one case per type syntax)
        i = self.i
        k, v = self.kinds[i], self.vals[i]
        if k == "(":
            fields = self.type_list("(", ")")
            one = self.vals[self.i - 2] != ","  # (T) is T; (T,) is a tuple
            return fields[0] if len(fields) == 1 and one else TupleType(fields)
        if k != "IDENT":
            raise self.error(f"expected a type, found {self.found()}")
        self.i += 1
        tv = self.tvars.get(v)
        if tv is None:
            if v in DTYPES:
                return TensorType((), v)
            if v in _DTYPE_ALIASES:  # Relay reads TVM's dtype strings: int is int32
                return TensorType((), _DTYPE_ALIASES[v])
            if v == "Tensor":
                return self.tensor_type()
            if v == "fn":
                return self.func_type()
            if v == "Ref":
                ref = self.type_list("[", "]")
                if len(ref) != 1:
                    raise self.error("Ref takes one type", i)
                return RefType(ref[0])
            if v == "_":
                return IncompleteType()
        head = tv if tv is not None else self.global_type(v, i)
        if self.kinds[self.i] == "[":
            return TypeCall(head, self.type_list("[", "]"))
        # a bare ADT name is the ADT applied to no arguments, as constructors produce
        return head if tv is not None else TypeCall(head, ())

    def global_type(self, name: str, i: int) -> GlobalTypeVar:
        gtv = self.types.get(name)
        if gtv is None:
            if self.expression_only:
                raise self.error(f"unknown type {name}", i)
            gtv = self.types[name] = GlobalTypeVar(name)
        self.type_uses.setdefault(name, i)
        return gtv

    def tensor_type(self) -> TensorType:
        self.expect("[", "'[' after Tensor")
        self.expect("(", "'(' before the shape")
        dims = []
        while self.kinds[self.i] != ")":
            at = self.i
            d = self.dim()
            if isinstance(d, int) and d < 0:
                raise self.error(f"a tensor dimension must be >= 0, found {d}", at)
            dims.append(d)
            self.comma_or(")", "the shape")
        self.i += 1
        self.expect(",", "',' after the shape")
        di = self.expect("IDENT", "a dtype")
        dtype = _DTYPE_ALIASES.get(self.vals[di], self.vals[di])
        if dtype not in DTYPES:
            raise self.error(f"expected a dtype ({', '.join(DTYPES)}), found {self.found(di)}",
                             di)
        self.expect("]", "']' to close Tensor[...]")
        return TensorType(tuple(dims), dtype)

    # a dim: ``sum := term (('+' | '-') term)*``, ``term := unary ('*' unary)*``,
    # ``unary := '-' unary | int | ? | name | op '(' dim ',' dim ')' | '(' dim ')'``
    def dim(self):
        d = self.dim_term()
        while True:
            k, v = self.kinds[self.i], self.vals[self.i]
            if k == "BINOP" and v in ("+", "-"):
                self.i += 1
                rhs = self.dim_term()
                d = dim_add(d, rhs) if v == "+" else dim_sub(d, rhs)
            elif k == "NUMBER" and v.startswith("-") and v[1:].isdigit():  # ``n -1``
                self.i += 1
                d = dim_sub(d, self.dim_term(int(v[1:])))
            else:
                return d

    def dim_term(self, first=None):
        d = self.dim_unary() if first is None else first
        while self.kinds[self.i] == "BINOP" and self.vals[self.i] == "*":
            self.i += 1
            d = dim_mul(d, self.dim_unary())
        return d

    def dim_unary(self):
        k, v = self.kinds[self.i], self.vals[self.i]
        self.i += 1
        if k == "BINOP" and v == "-":
            return dim_sub(0, self.dim_unary())
        if k == "NUMBER" and v.lstrip("-").isdigit():
            return int(v)
        if k == "?":
            return Any()
        if k == "(":
            d = self.dim()
            self.expect(")", "')' to close the dimension")
            return d
        if k == "IDENT":
            if v in DIM_OPS and self.kinds[self.i] == "(":
                self.i += 1
                a = self.dim()
                self.expect(",", f"',' between the arguments of {v}")
                b = self.dim()
                self.expect(")", f"')' to close {v}(...)")
                try:
                    return DIM_FUNCS[v](a, b)
                except Error as exc:
                    raise self.error(str(exc), self.i - 1) from None
            return SymbolicDim(v)
        self.i -= 1
        raise self.error(f"expected a dimension (an int, ?, a name or an expression of "
                         f"them), found {self.found()}")

    def func_type(self) -> FuncType:
        tmark = len(self.tvar_log)
        tps = self.type_params() if self.kinds[self.i] == "[" else ()
        args = self.type_list("(", ")")
        self.expect("ARROW", "'->' in a function type")
        ret = self.type()
        _undo(self.tvars, self.tvar_log, tmark)
        return FuncType(args, ret, tps)
