"""``IRModule``: global functions and type definitions, looked up by name."""

from __future__ import annotations

from ..errors import Error
from .adt import Constructor, TypeData
from .expr import Expr, Function, GlobalVar
from .types import GlobalTypeVar


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

    def __setitem__(self, key: str | GlobalVar, func: Function) -> None:
        if not isinstance(func, Function):
            raise Error(f"a module holds functions; {key} is a {type(func).__name__}")
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

    def __getitem__(self, key: str | GlobalVar) -> Function:
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
