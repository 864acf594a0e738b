"""``tvm.ir.module``: the module TVM defines ``IRModule`` in (relayir's ``IRModule``)."""

from ...ir.module import IRModule

__all__ = ["IRModule"]
