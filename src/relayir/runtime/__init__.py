"""Run-time values and executors."""

from . import artifact_models, executor
from .artifact import ArtifactError, ArtifactInputError, CompiledModel, TensorSpec, load, wrap
from .interpreter import Interpreter
from .module import load_module
from .values import Closure, ConstructorValue, RefValue, to_list, values_equal

__all__ = ["ArtifactError", "ArtifactInputError", "Closure", "CompiledModel", "ConstructorValue",
           "Interpreter", "RefValue", "TensorSpec", "artifact_models", "load", "load_module",
           "to_list", "values_equal", "wrap"]
