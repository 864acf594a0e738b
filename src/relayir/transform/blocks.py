"""The block tree the normal-form passes place nodes in (``to_a_normal_form.py``,
``to_basic_block_normal_form.py``): a block (a function body, an ``if`` branch, a
``match`` clause) collects the ``let`` bindings that will stand before its result."""

from __future__ import annotations

from ..ir.expr import Expr, Let, Var


class Block:
    __slots__ = ("parent", "depth", "bindings")

    def __init__(self, parent: Block | None):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.bindings: list[tuple[Var, Expr]] = []


def common_block(a: Block, b: Block) -> Block:
    """The innermost block holding both ``a`` and ``b``."""
    while a.depth > b.depth:
        a = a.parent
    while b.depth > a.depth:
        b = b.parent
    while a is not b:
        a, b = a.parent, b.parent
    return a


def wrap_bindings(block: Block, result: Expr) -> Expr:
    """``let``-chain ``block``'s bindings in front of ``result``, typed as the result."""
    ty = result.checked_type if result.has_type else None
    for var, value in reversed(block.bindings):
        result = Let(var, value, result)
        if ty is not None:
            result.set_checked_type(ty)
    return result
