"""Run-time values and executors."""

from . import executor
from .interpreter import Interpreter
from .module import load_module
from .values import Closure, ConstructorValue, RefValue, to_list, values_equal

__all__ = ["Interpreter", "load_module", "Closure", "ConstructorValue", "RefValue", "to_list",
           "values_equal"]
