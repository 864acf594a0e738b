"""Run-time values and executors."""

from .interpreter import Interpreter
from .values import Closure, ConstructorValue, RefValue, to_list, values_equal

__all__ = ["Interpreter", "Closure", "ConstructorValue", "RefValue", "to_list", "values_equal"]
