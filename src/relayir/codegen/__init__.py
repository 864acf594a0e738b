"""C code generation: render loop IR to C, compile it, load it.

Three pure steps, one module each: the C printer (loop IR → C string, no I/O),
:mod:`.compiler` (C string → cached shared object, one subprocess) and
:mod:`.loader` (shared object → callable kernels, ctypes). Nothing here runs a
compiler at import time; the compiler is found on first use.
"""

from .cache import cache_dir, cache_enabled, clear_cache
from .compiler import (
    CompileError,
    Compiler,
    CompilerNotFoundError,
    CompilerWarning,
    compile_source,
    default_flags,
    find_compiler,
    has_compiler,
)
from .loader import BoundCall, KernelFunction, LoadError, SharedLibrary
from .native import NativeKernel, compile_kernels
from .openmp_env import prepare_openmp

# at import: an OpenMP runtime loaded later (by torch, say) reads the settings too
prepare_openmp()

__all__ = [
    "BoundCall",
    "CompileError",
    "Compiler",
    "CompilerNotFoundError",
    "CompilerWarning",
    "KernelFunction",
    "LoadError",
    "NativeKernel",
    "SharedLibrary",
    "cache_dir",
    "cache_enabled",
    "clear_cache",
    "compile_source",
    "default_flags",
    "compile_kernels",
    "find_compiler",
    "has_compiler",
]
