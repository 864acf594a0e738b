"""``relay.backend.interpreter``: the value classes of the debug executor."""

from ....runtime.values import Closure, ConstructorValue, RefValue
from ..build_module import Executor as Interpreter

__all__ = ["Closure", "ConstructorValue", "Interpreter", "RefValue"]
