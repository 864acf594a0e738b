"""``relay.function``: ``Function``."""

from ...ir.expr import Function  # noqa: F401

__all__ = ["Function"]
