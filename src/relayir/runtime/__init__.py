"""Run-time values and executors."""

from . import artifact_models, executor
from .artifact import ArtifactError, ArtifactInputError, CompiledModel, TensorSpec, load, wrap
from .interpreter import Interpreter
from .module import load_module
from .threads import get_num_threads, set_num_threads
from .values import Closure, ConstructorValue, RefValue, to_list, values_equal

__all__ = ["ArtifactError", "ArtifactInputError", "Closure", "CompiledModel", "ConstructorValue",
           "Interpreter", "RefValue", "TensorSpec", "artifact_models", "get_num_threads", "load",
           "load_module", "set_num_threads", "to_list", "values_equal", "wrap"]
