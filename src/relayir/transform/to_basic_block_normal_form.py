"""``ToBasicBlockNormalForm``: graph form inside each block, ``let`` only where a
node is shared between blocks; and ``check_basic_block_normal_form``.

A block is a function body, an ``if`` branch, a ``match`` clause or a ``let``'s value
and body (as in Relay's dependency graph). A node is *in* the lowest common ancestor
of the blocks its uses are in. Relay's rule, kept here: a node is lifted when that
ancestor is not the block of its first use (uses taken depth-first, operands left to
right, a ``let``'s or function's variables used first by their binder). A program is
in basic block normal form when nothing is lifted; the pass binds each lifted node
with ``let`` at the top of its block (in evaluation order) and leaves the rest as it
was. Variables, operators, constructors and global variables are never bound.

Iterative throughout: a depth-first walk finds the first uses, Kahn's order (parents
first) gives each node its block, and an explicit stack rebuilds the expression.
"""

from __future__ import annotations

from ..errors import Error
from ..ir.expr import Constant, Expr, Function, Let, Op, Var, short_text
from ..ir.module import IRModule
from ..ir.node_table import BINDER, INPUT, LEAVES, NODES
from .analysis import typed_module
from .blocks import Block, common_block, wrap_bindings
from .pass_infra import Pass, module_pass, register_pass


class BasicBlockNormalFormError(Error):
    """An expression is used from several blocks without a ``let`` that places it."""


def _uses(n: Expr) -> list[tuple[Expr, int]]:
    """``(child, block)`` for each use ``n`` makes: ``INPUT`` for its own block, else
    the index of the block it opens (a let's variable, value and body share block 0;
    a function's parameters are used by its body's block)."""
    t = type(n)
    if t is Let:
        return [(n.var, 0), (n.value, 0), (n.body, 0)]
    if t is Function and n.is_primitive:
        return []  # compiled as one unit: its body is not ours to rearrange
    kind = NODES[t]
    children = kind.children(n)
    roles = kind.roles(n)
    if roles is None:
        return [(c, INPUT) for c in children]
    if t is Function:
        return [(c, 0 if r == BINDER else r) for c, r in zip(children, roles)]
    return [(c, r) for c, r in zip(children, roles) if r != BINDER]


def _place(root: Expr) -> tuple[dict, dict, set]:
    """Each node's block, each opened block by ``(id(node), index)``, and the ids of
    the lifted nodes."""
    first, indeg = _first_uses(root)
    block: dict[int, Block] = {id(root): Block(None)}
    opened: dict[tuple[int, int], Block] = {}
    first_block: dict[int, Block] = {}
    lifted: set[int] = set()
    ready = [root]
    while ready:
        n = ready.pop()
        own = block[id(n)]
        for i, (c, r) in enumerate(_uses(n)):
            b = own if r == INPUT else opened.get((id(n), r))
            if b is None:
                b = opened[id(n), r] = Block(own)
            old = block.get(id(c))
            block[id(c)] = b if old is None else common_block(old, b)
            if first[id(c)] == (id(n), i):
                first_block[id(c)] = b
            indeg[id(c)] -= 1
            if indeg[id(c)] == 0:
                ready.append(c)
                if block[id(c)] is not first_block[id(c)] and type(c) is not Op:
                    lifted.add(id(c))
    return block, opened, lifted


def _first_uses(root: Expr) -> tuple[dict, dict]:
    """The first use ``(id(parent), position)`` of every node in a depth-first walk
    with operands left to right (as Relay's dependency graph records them), and how
    many uses each node has."""
    first: dict[int, tuple[int, int]] = {}
    indeg: dict[int, int] = {id(root): 0}
    visited = {id(root)}
    stack = [(root, iter(enumerate(_uses(root))))]
    while stack:
        n, it = stack[-1]
        step = next(it, None)
        if step is None:
            stack.pop()
            continue
        i, (c, _) = step
        first.setdefault(id(c), (id(n), i))
        indeg[id(c)] = indeg.get(id(c), 0) + 1
        if id(c) not in visited:
            visited.add(id(c))
            stack.append((c, iter(enumerate(_uses(c)))))
    return first, indeg


def _typed(new: Expr, like: Expr) -> Expr:
    if like.has_type and new is not like:
        new.set_checked_type(like.checked_type)
    return new


def _rebuild(n: Expr, res: dict, opened: dict) -> Expr:
    t = type(n)
    if t is Function and n.is_primitive:
        return n
    kind = NODES[t]
    roles = kind.roles(n)
    children = kind.children(n)
    if roles is None:
        return kind.rebuild(n, [res[id(c)] for c in children])
    out = []
    for c, r in zip(children, roles):
        if r == BINDER:
            out.append(c)
        elif r == INPUT:
            out.append(res[id(c)])
        else:
            out.append(wrap_bindings(opened[id(n), r], res[id(c)]))
    return kind.rebuild(n, out)


_VISIT, _BIND_LET, _POST = 0, 1, 2


def _fill(root: Expr, block: dict, opened: dict, lifted: set) -> Expr:
    res: dict[int, Expr] = {}
    stack: list = [(_VISIT, root)]
    while stack:
        action, n = stack.pop()
        if action == _BIND_LET:  # after the value, before anything of the body
            n, fresh = n
            opened[id(n), 0].bindings.append((n.var, res[id(n.value)]))
            if fresh:  # as in Relay, later uses of a value first met here read the variable
                res[id(n.value)] = n.var
            continue
        if action == _VISIT:
            if id(n) in res:
                continue
            if type(n) in LEAVES and type(n) is not Constant:
                res[id(n)] = n
                continue
            stack.append((_POST, n))
            if type(n) is Let:
                fresh = id(n.value) not in res
                stack += ((_VISIT, n.body), (_BIND_LET, (n, fresh)), (_VISIT, n.value))
            else:
                stack.extend((_VISIT, c) for c, _ in reversed(_uses(n)))
            continue
        if type(n) is Let:  # its block: what the value needs, the variable, the body's
            new = _typed(wrap_bindings(opened[id(n), 0], res[id(n.body)]), n)
        else:
            new = n if type(n) is Constant else _typed(_rebuild(n, res, opened), n)
        if id(n) in lifted:
            var = _typed(Var("x"), n)
            block[id(n)].bindings.append((var, new))
            new = var
        res[id(n)] = new
    out = res[id(root)]
    return out if type(root) is Function else wrap_bindings(block[id(root)], out)


def to_basic_block_normal_form_expr(expr: Expr) -> Expr:
    """``expr`` with each node shared between blocks bound at the top of its block."""
    block, opened, lifted = _place(expr)
    return _fill(expr, block, opened, lifted)


def check_basic_block_normal_form(expr: Expr) -> bool:
    """True when no node is shared between blocks without a ``let`` placing it; else a
    ``BasicBlockNormalFormError`` naming each such node."""
    _, _, lifted = _place(expr)
    if not lifted:
        return True
    nodes = [n for n in _all_nodes(expr) if id(n) in lifted]
    raise BasicBlockNormalFormError(
        "not in basic block normal form: used from several blocks, these need a let "
        "at their common block: " + "; ".join(short_text(n) for n in nodes))


def _all_nodes(root: Expr) -> list[Expr]:
    out, seen, stack = [], {id(root)}, [root]
    while stack:
        n = stack.pop()
        out.append(n)
        for c, _ in _uses(n):
            if id(c) not in seen:
                seen.add(id(c))
                stack.append(c)
    return out


def _bbnf_module(mod: IRModule, ctx) -> IRModule:
    mod = typed_module(mod)
    functions = {gv: fn if "Compiler" in fn.attrs else to_basic_block_normal_form_expr(fn)
                 for gv, fn in mod.functions.items()}
    return mod.with_functions(functions)


_bbnf_pass = module_pass(_bbnf_module, opt_level=1, name="ToBasicBlockNormalForm")


def ToBasicBlockNormalForm() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``ToBasicBlockNormalForm``: ``let`` only for nodes shared between blocks."""
    return _bbnf_pass


register_pass("ToBasicBlockNormalForm", ToBasicBlockNormalForm)

__all__ = ["BasicBlockNormalFormError", "ToBasicBlockNormalForm",
           "check_basic_block_normal_form", "to_basic_block_normal_form_expr"]
