"""``relay.analysis.CallGraph``: which globals of a module call which, as TVM's analysis
reports it (``ref_count``, ``global_call_count``, ``is_recursive``, a printout).

The edges are relayir's own (``transform.remove_unused_functions.global_refs``, the table
dead-function removal and ``Inline`` read): a function's edges are the distinct globals
its body mentions, so two calls of ``@f`` in one body are one edge, as in Relay."""

from __future__ import annotations

from ...ir.expr import GlobalVar
from ...transform.remove_unused_functions import global_refs


class CallGraph:
    """The call graph of ``module``; a global is given as a ``GlobalVar`` or its name."""

    def __init__(self, module):
        self.module = module
        self._callees = global_refs(module)
        self._callers: dict[GlobalVar, list[GlobalVar]] = {gv: [] for gv in self._callees}
        for caller, callees in self._callees.items():
            for callee in callees:
                self._callers[callee].append(caller)

    def _global(self, var) -> GlobalVar:
        name = var if isinstance(var, str) else var.name_hint
        return self.module.get_global_var(name)

    def global_call_count(self, var) -> int:
        """How many globals ``var``'s function calls."""
        return len(self._callees[self._global(var)])

    def ref_count(self, var) -> int:
        """How many functions of the module call ``var`` (itself included)."""
        return len(self._callers[self._global(var)])

    def is_recursive(self, var) -> bool:
        """Whether ``var``'s function calls itself."""
        gv = self._global(var)
        return gv in self._callees[gv]

    def print_var(self, var) -> str:
        gv = self._global(var)
        lines = [f"Call graph node: @{gv.name_hint}, #refs = {self.ref_count(gv)}"]
        lines += [f"  calls @{callee.name_hint}" for callee in self._callees[gv]]
        return "\n".join(lines)

    def __str__(self) -> str:
        return "\n".join(self.print_var(gv) for gv in self._callees)


__all__ = ["CallGraph"]
