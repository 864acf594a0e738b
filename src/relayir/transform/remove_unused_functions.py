"""``RemoveUnusedFunctions``: keep only the globals reachable from the entry functions.

A global is reachable when a reachable function mentions it anywhere: as a callee or
as a value (``@map(@double, %xs)``). Entry names missing from the module are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.expr import GlobalVar
from ..ir.module import IRModule
from .analysis import typed_module, unique_nodes
from .pass_infra import Pass, module_pass, register_pass


def global_refs(mod: IRModule, nodes: dict | None = None) -> dict[GlobalVar, list[GlobalVar]]:
    """For each global, the globals its function mentions (its call-graph edges).

    ``nodes`` (optional): each global's ``unique_nodes``, when the caller has them."""
    out = {}
    for gv, fn in mod.functions.items():
        seen = {}
        for n in (nodes[gv] if nodes is not None else unique_nodes([fn])):
            if type(n) is GlobalVar and n in mod.functions:
                seen[mod.get_global_var(n.name_hint)] = None
        out[gv] = list(seen)
    return out


def reachable(mod: IRModule, entries: Sequence[str]) -> set[GlobalVar]:
    refs = global_refs(mod)
    stack = [mod.get_global_var(name) for name in entries if name in mod]
    seen: set[GlobalVar] = set()
    while stack:
        gv = stack.pop()
        if gv in seen:
            continue
        seen.add(gv)
        stack.extend(refs[gv])
    return seen


def RemoveUnusedFunctions(entry_functions: Sequence[str] = ("main",)) -> Pass:  # noqa: N802
    """Relay's ``RemoveUnusedFunctions``: drop globals the entries cannot reach."""
    entries = tuple(entry_functions)

    @module_pass(opt_level=1, name="RemoveUnusedFunctions")
    def remove_unused(mod: IRModule, ctx) -> IRModule:
        mod = typed_module(mod)
        keep = reachable(mod, entries)
        return mod.with_functions({gv: f for gv, f in mod.functions.items() if gv in keep})

    return remove_unused


register_pass("RemoveUnusedFunctions", RemoveUnusedFunctions)

__all__ = ["RemoveUnusedFunctions", "global_refs", "reachable"]
