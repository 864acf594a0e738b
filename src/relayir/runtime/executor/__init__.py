"""The AOT executor's run time (Relay's ``runtime.executor``): a model compiled into one
native entry point (``relayir.build(..., executor="aot")``), loaded and run from Python
with ``AotModule``; ``export_library`` writes it for C programs without Python."""

from .aot_factory import AotExecutorFactoryModule, AotSources, load_aot_module
from .aot_library import AotError, AotLibrary, TensorInfo, is_shared_library, read_aot_meta
from .aot_module import AotModule

__all__ = ["AotError", "AotExecutorFactoryModule", "AotLibrary", "AotModule", "AotSources",
           "TensorInfo", "is_shared_library", "load_aot_module", "read_aot_meta"]
