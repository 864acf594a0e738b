"""The compiler back end: ``build`` (optimise, graph codegen, memory plan, lowering) and
the kernel interface the executors call."""

from .build_module import BuildError, Target, build, optimize, register_lowering
from .graph_codegen import GraphCodegenError, graph_codegen
from .kernels import Kernel, KernelError, KernelLibrary, NumpyKernel, register_library_loader
from .memory_plan import MemoryPlan, plan_memory

__all__ = [
    "BuildError", "GraphCodegenError", "Kernel", "KernelError", "KernelLibrary",
    "MemoryPlan", "NumpyKernel", "Target", "build", "graph_codegen", "optimize", "plan_memory",
    "register_library_loader", "register_lowering",
]
