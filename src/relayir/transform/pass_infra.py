"""Pass infrastructure (minimal until the passes issue extends it): a pass maps an
``IRModule`` to a new ``IRModule``."""

from __future__ import annotations

from collections.abc import Callable

from ..ir.module import IRModule


class Pass:
    def __init__(self, fn: Callable[[IRModule], IRModule], name: str, opt_level: int = 0):
        self.fn = fn
        self.name = name
        self.opt_level = opt_level

    def __call__(self, mod: IRModule) -> IRModule:
        return self.fn(mod)

    def __repr__(self) -> str:
        return f"Pass({self.name}, opt_level={self.opt_level})"
