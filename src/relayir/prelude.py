"""The Relay prelude, written in Relay text (``prelude.relay``).

``Prelude(mod)`` adds the ADTs (``List``, ``Option``, ``Tree``, ``nat``) and the list
functions (``map``, ``foldl``, ``foldr``, ``length``, ``nth``, ``concat``, ``filter``,
``zip``, ``iterate``, ...) to ``mod`` and exposes them by name::

    p = Prelude(mod)
    p.Cons, p.Nil          # constructors
    p.List                 # the type (a GlobalTypeVar)
    p.map, p.foldl         # global functions (GlobalVars)
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from .errors import Error
from .ir.module import IRModule


@lru_cache(maxsize=1)
def prelude_text() -> str:
    return resources.files(__package__).joinpath("prelude.relay").read_text()


class Prelude:
    def __init__(self, mod: IRModule | None = None):
        from .ir.parser import parse

        self.mod = mod if mod is not None else IRModule()
        if not self.mod.has_type("List"):
            self.mod.update(parse(prelude_text(), "prelude.relay", init_module=self.mod))

    def __getattr__(self, name: str):
        mod = self.__dict__.get("mod")
        if mod is None:
            raise AttributeError(name)
        if mod.has_constructor(name):
            return mod.get_constructor(name)
        if mod.has_type(name):
            return mod.get_global_type_var(name)
        if name in mod:
            return mod.get_global_var(name)
        raise AttributeError(f"the prelude has no type, constructor or function {name!r}")

    def get_global_var(self, name: str):
        return self.mod.get_global_var(name)

    def get_ctor(self, name: str):
        return self.mod.get_constructor(name)

    def get_type(self, name: str):
        return self.mod.get_global_type_var(name)

    def __repr__(self) -> str:
        return f"Prelude({', '.join(gv.name_hint for gv in self.mod.get_global_vars())})"


__all__ = ["Prelude", "prelude_text", "Error"]
