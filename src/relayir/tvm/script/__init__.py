"""``tvm.script``: TVMScript is not part of relayir (its loop IR has its own Python API,
``relayir.tir``). ``tvm.script.tir``'s dtype constructors (``T.int32(1)``) give Python
numbers, as ``tvm.tir.IntImm`` does here; every other name raises ``NotInRelayirError``."""

from ..error import refusing_module
from . import ir, tir

__getattr__ = refusing_module(__name__, "relayir has no TVMScript parser or printer")

__all__ = ["ir", "tir"]
