"""Loop-level IR (TVM's ``tir``): lowering a primitive function to one kernel.

``lower_primitive(func, name)`` turns a Relay primitive function (what ``FuseOps``
makes) into a ``PrimFunc``: its loop nest (``stmt``), chosen per stage by ``loops`` and
``matmul`` under a ``Schedule``, with index arithmetic cleaned by ``simplify``. The C
text is ``relayir.codegen.c_printer.render(prim)``.
"""

from .build_te import LoweringError, build_te
from .lower import lower_primitive, lower_tensors
from .names import c_identifier
from .schedule import Schedule, default_schedule
from .simplify import simplify
from .stmt import Buffer, PrimFunc

__all__ = ["Buffer", "PrimFunc", "LoweringError", "Schedule", "build_te", "c_identifier",
           "default_schedule", "lower_primitive", "lower_tensors", "simplify"]
