"""The compiler back end: targets, the one lowering path, and ``build`` (optimise, graph
codegen with its memory plan, lowering). What it builds runs in ``relayir.runtime``."""

from .build_module import bind_param_arrays, build, optimize
from .graph_codegen import GraphCodegenError, graph_codegen
from .lowering import LOWERINGS, lower
from .target import BuildError, Target

__all__ = ["LOWERINGS", "BuildError", "GraphCodegenError", "Target", "bind_param_arrays", "build",
           "graph_codegen", "lower", "optimize"]
