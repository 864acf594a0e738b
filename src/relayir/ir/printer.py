"""The Relay text printer (TVM's text format, version 0.0.5).

Programs are dataflow graphs, so the text is in graph form: a shared node is printed
once as ``%N = node;`` and referred to as ``%N`` afterwards, which is what lets the
parser rebuild the same DAG. Two passes make that work without Python recursion over
the graph:

1. ``_Layout`` walks the graph with explicit stacks (once to count uses, once with
   users first) and picks, for every node, the innermost block (function body, ``if``
   branch, clause) that encloses all of its uses. Binding a node there, rather than
   where the printer first meets it, keeps a node shared by two branches or by a
   closure and its caller shared in the text too; printing it twice would not even be
   the same program when the node binds variables (a shared function literal).
2. ``_Printer`` prints each block: ``let`` chains in a loop, and the inputs of each
   statement from a post-order worklist, appending ``%N = ...;`` lines to the block
   the layout chose. A block that needs a node bound in an enclosing block appends it
   there, before the statement it is still writing.

A node used once as a block's value or a ``let``'s value is printed in place; a
variable bound nowhere in the printed code is declared by a ``free_var %x: T;`` line,
so its type survives the round trip. Only scope nesting (a function inside a
function) recurses.
"""

from __future__ import annotations

import base64
import json
import re

import numpy as np

from ._util import gc_paused
from .adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .dim_expr import dim_text
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
    Tuple,
    TupleGetItem,
    Var,
)
from .lexer import LITERAL_SUFFIX
from .module import IRModule
from .node_table import INPUT, LEAVES, NODES, inputs
from .types import (
    DTYPES,
    NATIVE_DTYPES,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)

VERSION = "0.0.5"
_INDENT = "  "
_ATOMS = LEAVES
_RESERVED_TYPE_NAMES = frozenset({*DTYPES, "Tensor", "Ref", "fn", "_"})

# how a node uses a child: as an input, as a let's value or body, or (k >= 0) as the
# tail of the k-th block the node opens
# (the node table's ``INPUT`` and block indices, and two kinds of its own for a let)
_IN, _LET_VALUE, _LET_BODY = INPUT, -3, -4


def metadata_text(arrays) -> str:
    """The ``#[metadata]`` section in which ``meta[relay.Constant][i]`` is ``arrays[i]``
    (little-endian bytes in base64), to append to a program's text."""
    entries = []
    for d in arrays:
        raw = d.astype(d.dtype.newbyteorder("<"), copy=False).tobytes()
        entries.append(json.dumps({"dtype": d.dtype.name, "shape": list(d.shape),
                                   "data": base64.b64encode(raw).decode("ascii")}))
    return '\n\n#[metadata]\n{"relay.Constant": [\n  ' + ",\n  ".join(entries) + "\n]}"


def astext(node, show_meta_data: bool = True, show_types: bool = True) -> str:
    """Relay text for a module, expression, type, pattern, type definition or clause."""
    with gc_paused():
        return _astext(node, show_meta_data, show_types)


def _astext(node, show_meta_data: bool, show_types: bool) -> str:
    p = _Printer(show_types)
    if isinstance(node, IRModule):
        text = p.module(node)
    elif type(node) in _ATOMS:  # a lone variable reads best as ``%x`` in messages
        text = p.atom(node)
    elif isinstance(node, Expr):
        text = p.expr(node)
    elif isinstance(node, Type):
        text = p.type_text(node)
    elif isinstance(node, TypeData):
        text = p.type_def(node)
    elif isinstance(node, Pattern):
        text = p.pattern_text(node)
    elif isinstance(node, Clause):
        text = p.clause(node)
    else:
        return repr(node)
    return text + p.metadata(show_meta_data)


# ---------------------------------------------------------------- graph structure


_LET_KINDS = (_LET_VALUE, _LET_BODY)


def _children(n) -> tuple[tuple, tuple | None]:
    """A node's children and how it uses them: the node table's roles (None: all are
    inputs), except that a let's value and body share the let's block."""
    t = type(n)
    if t is Let:
        return (n.value, n.body), _LET_KINDS
    kind = NODES[t]
    return kind.children(n), None if kind.dataflow else kind.roles(n)


def _inputs(n) -> tuple:
    """What must be bound before ``n``'s own line (atoms included)."""
    t = type(n)
    if t is Call:  # arguments first: a fused function prints right before its call
        return (*n.args, n.op)
    if t is Let:
        return ()  # everything it reads is inside its own block
    kind = NODES[t]
    return kind.children(n) if kind.dataflow else inputs(n)


class _Layout:
    """Use counts, ``let`` chains and the block (scope id) that binds each node."""

    def __init__(self, root: Expr):
        self.parent = [-1]
        self.depth = [0]
        self.uses: dict = {}
        self.place: dict = {}
        self.inner: dict = {}  # node -> scope ids of the blocks it opens
        self.chained: set = set()  # lets that continue their user's block
        if type(root) not in _ATOMS:
            self._count(root)
            self._place(root)

    def _count(self, root) -> None:
        uses, atoms, nodes = self.uses, _ATOMS, NODES
        uses[root] = 1
        stack = [root]
        while stack:
            n = stack.pop()
            for c in nodes[type(n)].children(n):
                if type(c) in atoms:
                    continue
                if c in uses:
                    uses[c] += 1
                else:
                    uses[c] = 1
                    stack.append(c)

    def _place(self, root) -> None:
        """Visit users before what they use (Kahn's order) and take the LCA of use scopes."""
        place, inner, chained, uses, atoms = self.place, self.inner, self.chained, self.uses, _ATOMS
        left = uses.copy()
        place[root] = 0
        if type(root) is Let:
            chained.add(root)
        stack = [root]
        while stack:
            n = stack.pop()
            p = place[n]
            kids, kinds = _children(n)
            if kinds is None:
                scopes = None
            else:  # the blocks ``n`` opens; a let continues its user's, or opens one
                if type(n) is Let:
                    scopes = [p] if n in chained else [self._new(p)]
                else:
                    scopes = [self._new(p) for _ in range(max(kinds) + 1)]
                inner[n] = scopes
            for j, c in enumerate(kids):
                if type(c) in atoms:
                    continue
                kind = _IN if kinds is None else kinds[j]
                s = p if kind == _IN else scopes[kind] if kind >= 0 else scopes[0]
                old = place.get(c)
                place[c] = s if old is None or old == s else self._lca(old, s)
                k = left[c] - 1
                left[c] = k
                if k == 0:
                    # a let used once, as a block's tail, continues that block's chain
                    if type(c) is Let and uses[c] == 1 and kind != _IN and kind != _LET_VALUE:
                        chained.add(c)
                    stack.append(c)

    def _new(self, parent: int) -> int:
        self.parent.append(parent)
        self.depth.append(self.depth[parent] + 1)
        return len(self.parent) - 1

    def _lca(self, a: int, b: int) -> int:
        depth, parent = self.depth, self.parent
        while depth[a] > depth[b]:
            a = parent[a]
        while depth[b] > depth[a]:
            b = parent[b]
        while a != b:
            a, b = parent[a], parent[b]
        return a


class _Block:
    __slots__ = ("scope", "parent", "depth", "lines")

    def __init__(self, scope: int, parent: _Block | None, depth: int):
        self.scope, self.parent, self.depth, self.lines = scope, parent, depth, []

    def sees(self, other: _Block) -> bool:
        """Whether a name bound in ``other`` is in scope here."""
        b = self
        while b is not None and b.depth >= other.depth:
            if b is other:
                return True
            b = b.parent
        return False


# ---------------------------------------------------------------- leaves


def _sanitize(name: str, numeric_prefix: str) -> str:
    """A name the lexer reads back as one token; a numeric one would look like ``%N``."""
    if not _PLAIN.fullmatch(name):
        name = re.sub(r"[^A-Za-z0-9_]", "_", name) or numeric_prefix
        if name[0].isdigit():
            name = numeric_prefix + name
    return name



_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_LITERAL_NUMPY_DTYPES = frozenset(np.dtype(d) for d in NATIVE_DTYPES)


def _scalar_text(data: np.ndarray) -> str | None:
    """Inline text of a rank-0 constant, or None when it must go to the metadata."""
    if data.ndim != 0 or data.dtype not in _LITERAL_NUMPY_DTYPES:  # bfloat16, int4, ...
        return None
    key = (data.dtype.char, data.tobytes())
    text = _SCALAR_CACHE.get(key)
    if text is None:
        text = _SCALAR_CACHE[key] = _scalar_text_uncached(data)
        if len(_SCALAR_CACHE) > 4096:
            _SCALAR_CACHE.clear()
    return text or None


def _scalar_text_uncached(data: np.ndarray) -> str:
    dtype = data.dtype.name
    v = data[()]
    if dtype == "bool":
        return "True" if v else "False"
    if data.dtype.kind == "f":
        if not np.isfinite(v):
            return ""
        s = str(v)  # numpy's shortest text that reads back to the same bits
        return (s[:-2] if s.endswith(".0") else s) + LITERAL_SUFFIX[dtype]
    return f"{int(v)}{LITERAL_SUFFIX[dtype]}"


_SCALAR_CACHE: dict = {}


def attr_value_text(v) -> str:
    if v is None:
        return "None"
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(attr_value_text(x) for x in v) + "]"
    return repr(v)


class _Printer:
    def __init__(self, show_types: bool):
        self.show_types = show_types
        self.meta: list[Constant] = []
        self.meta_index: dict[Constant, int] = {}
        self.type_names: frozenset = _RESERVED_TYPE_NAMES
        self.reset()

    def reset(self) -> None:
        """Names are unique per top-level definition and ``%N`` restarts at 0."""
        self.var_names: dict[Var, str] = {}
        self.tv_names: dict[TypeVar, str] = {}
        self.used: set[str] = set()
        self.tv_used: set[str] = set(self.type_names)
        self.suffix: dict[str, int] = {}
        self.tv_suffix: dict[str, int] = {}
        self.next_id = 0
        self.bound: dict = {}  # node -> (name, block)
        self.pending: dict = {}  # let var -> block, while its value is being printed
        self.declared: set[Var] = set()  # vars printed at a binding site
        self.free: dict[Var, None] = {}  # vars used but bound nowhere: ``free_var`` lines
        self.layout: _Layout | None = None

    # ------------------------------------------------------------ names

    @staticmethod
    def _unique(base: str, used: set, suffix: dict) -> str:
        name = base
        if name in used:
            k = suffix.get(base, 1)
            while f"{base}{k}" in used:
                k += 1
            suffix[base] = k + 1
            name = f"{base}{k}"
        used.add(name)
        return name

    def var_name(self, v: Var) -> str:
        name = self.var_names.get(v)
        if name is None:
            raw = self._unique(v.name_hint or "v", self.used, self.suffix)
            name = raw if _PLAIN.fullmatch(raw) else json.dumps(raw)  # %"conv1.weight"
            self.var_names[v] = name
        return name

    def tv_name(self, tv: TypeVar) -> str:
        name = self.tv_names.get(tv)
        if name is None:
            base = _sanitize(tv.name_hint, "T")
            name = self._unique(base, self.tv_used, self.tv_suffix)
            self.tv_names[tv] = name
        return name

    # ------------------------------------------------------------ types

    def type_text(self, t) -> str:
        cls = type(t)
        if cls is TensorType:
            if not t.shape:
                return t.dtype
            return f"Tensor[({', '.join(map(dim_text, t.shape))}), {t.dtype}]"
        if cls is TupleType:
            fields = ", ".join(self.type_text(f) for f in t.fields)
            return f"({fields},)" if len(t.fields) == 1 else f"({fields})"
        if cls is TypeVar:
            return self.tv_name(t)
        if cls is GlobalTypeVar:
            return t.name_hint
        if cls is TypeCall:
            head = self.type_text(t.func)
            return f"{head}[{', '.join(self.type_text(a) for a in t.args)}]" if t.args else head
        if cls is FuncType:
            tps = f"[{', '.join(map(self.tv_name, t.type_params))}]" if t.type_params else " "
            args = ", ".join(self.type_text(a) for a in t.arg_types)
            return f"fn{tps}({args}) -> {self.type_text(t.ret_type)}"
        if cls is RefType:
            return f"Ref[{self.type_text(t.value)}]"
        if cls is IncompleteType:
            return "_"
        return f"<{cls.__name__}>"

    def type_def(self, td: TypeData) -> str:
        self.reset()
        tvs = ", ".join(map(self.tv_name, td.type_vars))
        lines = [f"type {td.header.name_hint}{f'[{tvs}]' if tvs else ''} {{"]
        for c in td.constructors:
            fields = ", ".join(self.type_text(t) for t in c.inputs)
            lines.append(f"{_INDENT}{c.name_hint}{f'({fields})' if c.inputs else ''},")
        lines.append("}")
        return "\n".join(lines)

    # ------------------------------------------------------------ top level

    def module(self, mod: IRModule) -> str:
        self.type_names = _RESERVED_TYPE_NAMES | {gv.name_hint for gv in mod.type_definitions}
        parts = [self.type_def(td) for td in mod.type_definitions.values()]
        for gv, fn in mod.functions.items():
            self.reset()
            head = f"def @{gv.name_hint}{self.signature(fn)} {{"
            parts.append("\n".join([head, *self.top(fn.body, 1), "}"]))
        return f'#[version = "{VERSION}"]\n' + "\n\n".join(parts)

    def expr(self, e: Expr) -> str:
        return "\n".join(self.top(e, 0))

    def clause(self, c: Clause) -> str:
        pat = self.pattern_text(c.lhs)
        return "\n".join([f"{pat} => {{", *self.top(c.rhs, 1), "}"])

    def top(self, e: Expr, depth: int) -> list[str]:
        """A top-level block, led by a declaration of each free variable (with its type)."""
        self.layout = _Layout(e)
        lines = self.block(0, e, None, depth)
        ind = _INDENT * depth
        return [f"{ind}free_var {self.var_decl(v)};" for v in list(self.free)] + lines

    def metadata(self, show: bool) -> str:
        if not self.meta:
            return ""
        if not show:
            return "\n\n// metadata omitted; astext(show_meta_data=True) prints it"
        return metadata_text([c.data for c in self.meta])

    # ------------------------------------------------------------ blocks

    def block(self, scope: int, e: Expr, parent: _Block | None, depth: int,
              force_let: bool = False) -> list[str]:
        """The lines of a block whose value is ``e``; a ``let`` chain is a loop."""
        blk = _Block(scope, parent, depth)
        ind = _INDENT * depth
        chained = self.layout.chained
        while type(e) is Let and (force_let or e in chained):
            force_let = False
            v = e.var
            name = self.var_name(v)
            ann = "" if v.type_annotation is None else f": {self.type_text(v.type_annotation)}"
            self.declared.add(v)
            self.pending[v] = blk  # a recursive function may use it in its own body
            text = self.value_text(e.value, blk)
            del self.pending[v]
            blk.lines.append(f"{ind}let %{name}{ann} = {text};")
            e = e.body
        blk.lines.append(ind + self.value_text(e, blk))
        return blk.lines

    def value_text(self, x: Expr, blk: _Block) -> str:
        """A let's value or a block's tail: inline when used only here, else by name."""
        if type(x) in _ATOMS:
            return self.atom(x)
        if self.layout.uses.get(x, 1) > 1:
            return self.ref(x, blk)
        self.emit(_inputs(x), blk)
        return self.inline(x, blk) + self.ty(x)

    def ref(self, x: Expr, blk: _Block) -> str:
        if type(x) in _ATOMS:
            return self.atom(x)
        entry = self.bound.get(x)
        if entry is None or not blk.sees(entry[1]):
            self.emit((x,), blk)
            entry = self.bound[x]
        return entry[0]

    def emit(self, nodes, here: _Block) -> None:
        """Bind ``nodes`` and their unbound inputs, inputs first (a worklist, no recursion)."""
        bound = self.bound
        stack = [(n, False) for n in reversed(nodes) if type(n) not in _ATOMS]
        while stack:
            n, done = stack.pop()
            entry = bound.get(n)
            if entry is not None and here.sees(entry[1]):
                continue
            if not done:
                stack.append((n, True))
                stack.extend((c, False) for c in reversed(_inputs(n)) if type(c) not in _ATOMS)
                continue
            target = self.target(n, here)
            text = self.inline(n, target)
            name = f"%{self.next_id}"
            self.next_id += 1
            target.lines.append(f"{_INDENT * target.depth}{name} = {text}{self.ty(n)};")
            bound[n] = (name, target)

    def target(self, n: Expr, here: _Block) -> _Block:
        """The block that binds ``n``: its layout scope, unless its inputs sit deeper."""
        scope = self.layout.place.get(n, here.scope)
        t = here
        while t.scope != scope and t.parent is not None:
            t = t.parent
        if t.scope != scope:
            t = here
        for c in _inputs(n):
            if type(c) in _ATOMS:
                if type(c) is Var and self.pending.get(c) is t and t is not here:
                    # uses a let variable whose value (a recursive function) is being
                    # printed: bind it inside that value, where the variable is in scope
                    b = here
                    while b.parent is not t:
                        b = b.parent
                    t = b
                continue
            b = self.bound[c][1]
            if b.depth > t.depth:
                t = b
        return t

    def ty(self, x: Expr) -> str:
        if self.show_types and x.has_type:
            return f" /* ty={self.type_text(x.checked_type)} */"
        return ""

    # ------------------------------------------------------------ one node

    def atom(self, e: Expr) -> str:
        t = type(e)
        if t is Var:
            if e not in self.declared:
                self.free[e] = None
            return "%" + self.var_name(e)
        if t is GlobalVar:
            return "@" + e.name_hint
        if t is Op:
            return e.name
        if t is Constructor:
            return e.name_hint
        text = _scalar_text(e.data)
        if text is not None:
            return text
        i = self.meta_index.get(e)
        if i is None:
            i = self.meta_index[e] = len(self.meta)
            self.meta.append(e)
        return f"meta[relay.Constant][{i}]"

    def inline(self, n: Expr, blk: _Block) -> str:  # noqa: C901  (one case per node kind)
        """``n``'s own text, its inputs already bound."""
        t = type(n)
        ind = _INDENT * blk.depth
        if t is Call:
            op = n.op
            if type(op) is Constructor and not op.inputs and not n.args:
                return op.name_hint
            args = [self.ref(a, blk) for a in n.args]
            attrs = n.attrs
            if attrs is not None:
                items = (attrs.non_default_items() if hasattr(attrs, "non_default_items")
                         else attrs.items())
                args += [f"{k}={attr_value_text(v)}" for k, v in items]
            return f"{self.ref(op, blk)}({', '.join(args)})"
        if t is Tuple:
            fields = ", ".join(self.ref(f, blk) for f in n.fields)
            return f"({fields},)" if len(n.fields) == 1 else f"({fields})"
        if t is TupleGetItem:
            return f"{self.ref(n.tuple_value, blk)}.{n.index}"
        if t is RefCreate:
            return f"ref({self.ref(n.value, blk)})"
        if t is RefRead:
            return f"ref_read({self.ref(n.ref, blk)})"
        if t is RefWrite:
            return f"ref_write({self.ref(n.ref, blk)}, {self.ref(n.value, blk)})"
        inner = self.layout.inner.get(n)
        if t is Function:
            sig = self.signature(n)
            body = self.block(inner[0], n.body, blk, blk.depth + 1)
            return "\n".join([f"fn{sig if sig[0] == '[' else ' ' + sig} {{", *body, ind + "}"])
        if t is If:
            cond = self.ref(n.cond, blk)
            yes = self.block(inner[0], n.true_branch, blk, blk.depth + 1)
            no = self.block(inner[1], n.false_branch, blk, blk.depth + 1)
            return "\n".join([f"if ({cond}) {{", *yes, ind + "} else {", *no, ind + "}"])
        if t is Match:
            lines = [f"match{'' if n.complete else '?'} ({self.ref(n.data, blk)}) {{"]
            for c, scope in zip(n.clauses, inner):
                head = f"{ind}{_INDENT}{self.pattern_text(c.lhs)} =>"
                body = self.block(scope, c.rhs, blk, blk.depth + 2)
                if len(body) == 1 and "\n" not in body[0]:  # a lone value needs no braces
                    lines.append(f"{head} {body[0].lstrip()},")
                else:
                    lines += [head + " {", *body, f"{ind}{_INDENT}}},"]
            lines.append(ind + "}")
            return "\n".join(lines)
        if t is Let:  # a let that is not a block's tail: a block of its own
            return "\n".join(["{", *self.block(inner[0], n, blk, blk.depth + 1, True), ind + "}"])
        return f"<{t.__name__}>"

    def signature(self, fn: Function) -> str:
        """``[A](%x: A, Primitive=1) -> A``: type params, params, attrs, return type."""
        tps = f"[{', '.join(map(self.tv_name, fn.type_params))}]" if fn.type_params else ""
        params = [self.var_decl(p) for p in fn.params]
        params += [f"{k}={attr_value_text(v)}" for k, v in fn.attrs.items()]
        ret = "" if fn.ret_type is None else f" -> {self.type_text(fn.ret_type)}"
        return f"{tps}({', '.join(params)}){ret}"

    def var_decl(self, v: Var) -> str:
        self.declared.add(v)
        ann = v.type_annotation
        return f"%{self.var_name(v)}" + ("" if ann is None else f": {self.type_text(ann)}")

    def pattern_text(self, p: Pattern) -> str:
        t = type(p)
        if t is PatternWildcard:
            return "_"
        if t is PatternVar:
            return self.var_decl(p.var)
        subs = ", ".join(self.pattern_text(q) for q in p.patterns)
        if t is PatternConstructor:
            return f"{p.constructor.name_hint}({subs})" if p.patterns else p.constructor.name_hint
        return f"({subs},)" if len(p.patterns) == 1 else f"({subs})"
