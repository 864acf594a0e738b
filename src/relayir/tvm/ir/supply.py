"""``tvm.ir.supply``: ``NameSupply`` hands out names not yet taken (``"f"``, then
``"f_1"``, ``"f_2"``, ...), ``GlobalVarSupply`` hands out ``GlobalVar``s the same way and
gives the same ``GlobalVar`` back for a name it already holds.

relayir's passes name the globals they add themselves (``transform.lambda_lift``); these
classes are TVM's API for scripts that ask for names. A name is prefixed with the supply's
prefix (``"prefix_f"``) unless ``add_prefix=False``; the ``GlobalVar`` is relayir's own,
equal to another by name.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...errors import Error
from ...ir.expr import GlobalVar
from ...ir.module import IRModule

# TVM prefixes the names of a module's functions with its "mod_name" attribute, by default
# "tvmgen_default"; relayir's IRModule has no attributes, so the default is the prefix
MODULE_PREFIX = "tvmgen_default"


class NameSupply:
    """The names handed out or reserved so far, each with the last suffix tried for it."""

    def __init__(self, prefix: str = ""):
        self.prefix = prefix
        self._last_suffix: dict[str, int] = {}

    def _prefixed(self, name: str, add_prefix: bool) -> str:
        return f"{self.prefix}_{name}" if add_prefix and self.prefix else name

    def fresh_name(self, name: str, add_prefix: bool = True, add_underscore: bool = True) -> str:
        """A name not taken yet, reserved from now on: ``name`` (prefixed, with ``.`` as
        ``_`` so that it stays a C identifier), else that with the next free suffix
        (``_1``, ``_2``, ...; ``1``, ``2``, ... when ``add_underscore`` is False)."""
        base = self._prefixed(name, add_prefix).replace(".", "_")
        if base not in self._last_suffix:
            self._last_suffix[base] = 0
            return base
        suffix = self._last_suffix[base]
        separator = "_" if add_underscore else ""
        candidate = base
        while candidate in self._last_suffix:
            suffix += 1
            candidate = f"{base}{separator}{suffix}"
        self._last_suffix[base] = suffix
        self._last_suffix[candidate] = 0
        return candidate

    def reserve_name(self, name: str, add_prefix: bool = True) -> str:
        """Take ``name`` (prefixed) as it is, so that ``fresh_name`` never returns it;
        returns the name taken."""
        name = self._prefixed(name, add_prefix)
        self._last_suffix.setdefault(name, 0)
        return name

    def contains_name(self, name: str, add_prefix: bool = True) -> bool:
        return self._prefixed(name, add_prefix) in self._last_suffix


class GlobalVarSupply:
    """``GlobalVar``s by name, named by a ``NameSupply``: a new one (no prefix), the one
    given (shared with its owner), or a new one holding the globals of an ``IRModule`` or
    a list of them (prefix ``MODULE_PREFIX``, as TVM names a module's generated code)."""

    def __init__(self, value: NameSupply | IRModule | Iterable[IRModule] | None = None):
        self._globals: dict[str, GlobalVar] = {}
        if value is None or isinstance(value, NameSupply):
            self.name_supply = value if value is not None else NameSupply()
            return
        modules = [value] if isinstance(value, IRModule) else list(value)
        for mod in modules:
            if not isinstance(mod, IRModule):
                raise Error(f"GlobalVarSupply takes a NameSupply, an IRModule or a list of "
                            f"IRModules, found an item of type {type(mod).__name__}")
        self.name_supply = NameSupply(MODULE_PREFIX if modules else "")
        for mod in modules:
            for global_var in mod.get_global_vars():
                self.reserve_global(global_var, allow_conflict=True)

    def fresh_global(self, name: str, add_prefix: bool = True) -> GlobalVar:
        """A ``GlobalVar`` with a name not taken yet (``NameSupply.fresh_name``)."""
        global_var = GlobalVar(self.name_supply.fresh_name(name, add_prefix))
        self._globals[global_var.name_hint] = global_var
        return global_var

    def unique_global_for(self, name: str, add_prefix: bool = True) -> GlobalVar:
        """The ``GlobalVar`` this supply holds for ``name`` (prefixed), made if none."""
        name = self.name_supply.reserve_name(name, add_prefix)
        return self._globals.setdefault(name, GlobalVar(name))

    def reserve_global(self, global_var: GlobalVar, allow_conflict: bool = False) -> None:
        """Hold ``global_var`` under its own name (never prefixed); a second global of
        that name is an error unless ``allow_conflict`` (then it replaces the first)."""
        name = global_var.name_hint
        if name in self._globals and not allow_conflict:
            raise Error(f"GlobalVar @{name} conflicts by name in this supply")
        self.name_supply.reserve_name(name, add_prefix=False)
        self._globals[name] = global_var


__all__ = ["MODULE_PREFIX", "GlobalVarSupply", "NameSupply"]
