"""Relay text that uses the prelude (``List``, ``Option``, ``Tree``, ``foldl``, ...)."""

from __future__ import annotations

from ..ir.module import IRModule
from ..ir.parser import parse
from ..prelude import Prelude


def parse_with_prelude(text: str) -> IRModule:
    """Parse ``text`` into a module that already holds the prelude's types and functions."""
    mod = IRModule()
    Prelude(mod)
    return parse(text, init_module=mod)
