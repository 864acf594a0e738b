"""``IRModule``: global functions and type definitions, looked up by name."""

from __future__ import annotations

from importlib import resources

from ..errors import Error
from .adt import Constructor, TypeData
from .expr import Expr, Function, GlobalVar
from .types import GlobalTypeVar

# Relay's standard library files, all found in relayir's prelude
STD_FILES = frozenset({"prelude.rly", "nat.rly", "core.rly", "prelude.relay"})


class IRModule:
    """A set of global functions (``@main``, ...) and ADT definitions (``List``, ...).

    Passes never change a module in place: they return a new one. Building a module
    (``mod[name] = func``, ``add_type``) is allowed, as in TVM.
    """

    def __init__(self, functions=None, type_definitions=None):
        self.functions: dict[GlobalVar, Function] = {}
        self.type_definitions: dict[GlobalTypeVar, TypeData] = {}
        self._global_vars: dict[str, GlobalVar] = {}
        self._type_vars: dict[str, GlobalTypeVar] = {}
        self._constructors: dict[str, Constructor] = {}
        for td in (type_definitions or {}).values():
            self.add_type(td)
        for gv, fn in (functions or {}).items():
            self[gv] = fn

    # ------------------------------------------------------------ construction

    @staticmethod
    def from_expr(expr: Expr, functions=None, type_defs=None) -> IRModule:
        """Wrap ``expr`` as ``@main``; a non-function gets its free variables as params."""
        from .analysis import free_vars

        mod = IRModule(functions, type_defs)
        if not isinstance(expr, Function):
            expr = Function(free_vars(expr), expr)
        mod["main"] = expr
        return mod

    def add_type(self, type_data: TypeData) -> None:
        self.type_definitions[type_data.header] = type_data
        self._type_vars[type_data.header.name_hint] = type_data.header
        for ctor in type_data.constructors:
            self._constructors[ctor.name_hint] = ctor

    def __setitem__(self, key: str | GlobalVar | GlobalTypeVar, func: Function | TypeData
                    ) -> None:
        if isinstance(func, TypeData):  # mod[List] = TypeData(List, ...), as in Relay
            name = key if isinstance(key, str) else key.name_hint
            if name != func.header.name_hint:
                raise Error(f"type definition {func.header.name_hint} stored as {name}")
            self.add_type(func)
            return
        if not isinstance(func, Function):
            raise Error(f"a module holds functions and type definitions; {key} is a "
                        f"{type(func).__name__}")
        gv = self.get_global_var(key) if isinstance(key, str) and key in self._global_vars else key
        if isinstance(gv, str):
            gv = GlobalVar(gv)
        self._global_vars[gv.name_hint] = gv
        self.functions[gv] = func

    def update(self, other: IRModule) -> None:
        for td in other.type_definitions.values():
            self.add_type(td)
        for gv, fn in other.functions.items():
            self[gv] = fn

    def copy(self) -> IRModule:
        new = IRModule()
        new.update(self)
        return new

    def with_functions(self, functions: dict[GlobalVar, Function]) -> IRModule:
        """A new module with the same types and the given functions."""
        new = IRModule(type_definitions=self.type_definitions)
        for gv, fn in functions.items():
            new[gv] = fn
        return new

    # ------------------------------------------------------------ lookup

    def __getitem__(self, key: str | GlobalVar | GlobalTypeVar) -> Function | TypeData:
        if isinstance(key, GlobalTypeVar):
            try:
                return self.type_definitions[key]
            except KeyError:
                raise Error(f"module has no type {key.name_hint}") from None
        gv = self.get_global_var(key) if isinstance(key, str) else key
        try:
            return self.functions[gv]
        except KeyError:
            raise Error(f"module has no function {gv}") from None

    def __contains__(self, key: str | GlobalVar) -> bool:
        name = key if isinstance(key, str) else key.name_hint
        return name in self._global_vars

    def get_global_var(self, name: str) -> GlobalVar:
        try:
            return self._global_vars[name]
        except KeyError:
            known = ", ".join("@" + n for n in self._global_vars) or "none"
            raise Error(f"module has no function @{name}; it has {known}") from None

    def get_global_vars(self) -> list[GlobalVar]:
        return list(self.functions)

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        try:
            return self._type_vars[name]
        except KeyError:
            raise Error(f"module has no type {name}") from None

    def get_global_type_vars(self) -> list[GlobalTypeVar]:
        return list(self.type_definitions)

    def get_type(self, name: str) -> tuple:
        """Relay's ``get_type``: ``(type var, constructor...)`` of the ADT ``name``."""
        gtv = self.get_global_type_var(name)
        return (gtv, *self.type_definitions[gtv].constructors)

    def update_func(self, var: str | GlobalVar, func: Function) -> None:
        self[var] = func

    def import_from_std(self, file_to_import: str) -> None:
        """Relay's standard library files (``prelude.rly``, ``nat.rly``, ...) are all in
        relayir's one prelude (``relayir/prelude.relay``): add it unless it is here."""
        if file_to_import not in STD_FILES:
            raise Error(f"import_from_std: unknown file {file_to_import!r}; relayir has "
                        f"{', '.join(sorted(STD_FILES))} (all one prelude)")
        if not self.has_type("List"):
            from .parser import parse

            text = resources.files("relayir").joinpath("prelude.relay").read_text()
            self.update(parse(text, "prelude.relay", init_module=self))

    def get_constructor(self, name: str) -> Constructor:
        try:
            return self._constructors[name]
        except KeyError:
            raise Error(f"module has no constructor {name}") from None

    def has_constructor(self, name: str) -> bool:
        return name in self._constructors

    def has_type(self, name: str) -> bool:
        return name in self._type_vars

    # ------------------------------------------------------------ text

    def astext(self, show_meta_data: bool = True, show_types: bool = True) -> str:
        from .printer import astext

        return astext(self, show_meta_data=show_meta_data, show_types=show_types)

    def __str__(self) -> str:
        return self.astext()

    def __repr__(self) -> str:
        return self.astext()
