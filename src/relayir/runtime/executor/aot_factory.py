"""What ``relayir.build(..., executor="aot")`` returns, and ``load_module`` of an AOT
``.so``: an ``AotExecutorFactoryModule`` holding the loaded library and, when it was
built in this process, its C sources (``AotSources``) for ``export_library``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ..memory_plan import MemoryPlan
from .aot_export import export_aot
from .aot_library import AotError, AotLibrary
from .aot_module import AotModule


@dataclass(frozen=True)
class AotSources:
    """Everything needed to compile the library elsewhere: ``source`` (the kernels and
    the entry point, one C file), ``header`` (the C interface), ``weights`` (the bytes
    the source links in with ``.incbin``), ``cflags`` and ``ldflags`` (what this
    machine's library was compiled and linked with, for the exported Makefile)."""

    prefix: str
    source: str
    header: str
    weights: bytes
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...] = ("-shared",)


class AotExecutorFactoryModule:
    """An AOT-compiled model: ``AotModule(lib)`` runs it, ``export_library`` deploys it."""

    def __init__(self, library: AotLibrary, target: str, mod_name: str = "default",
                 sources: AotSources | None = None, graph_json: str | None = None,
                 ir_mod=None):
        self.library = library
        self.target = target
        self.mod_name = mod_name
        self.sources = sources
        self.graph_json = graph_json  # the schedule and plan the entry point was made from
        self.ir_mod = ir_mod  # the optimised, fused module

    def get_lib(self) -> AotLibrary:
        return self.library

    def get_source(self) -> str:
        """The C file: the kernels' translation unit, the weights and the entry point."""
        return self._sources().source

    def get_header(self) -> str:
        return self._sources().header

    @property
    def memory_plan(self) -> MemoryPlan:
        """The plan the arena offsets come from (the graph executor's, same model)."""
        if self.graph_json is None:
            raise AotError("a module loaded from a shared library carries no graph; its "
                           f"workspace is {self.library.workspace_size} bytes")
        return MemoryPlan.from_graph(json.loads(self.graph_json))

    def __getitem__(self, key: str):
        """``lib["default"](dev)`` as in TVM: a function of the device giving an AotModule."""
        if key != self.mod_name:
            raise AotError(f"this module is named {self.mod_name!r}, not {key!r}")
        return lambda device=None: AotModule(self)

    def export_library(self, path: str | os.PathLike) -> None:
        """``"model.so"``: the library plus ``model.h`` beside it; ``"model.tar"`` or a
        directory (an existing one, or a path ending in ``/``): the C sources, the header,
        the weights and a Makefile, to compile elsewhere (see ``aot_export``)."""
        if self.sources is None:
            raise AotError(f"this module was loaded from {self.library.path}; copy that file "
                           f"and its header instead, or rebuild the model to export it")
        export_aot(self.sources, self.library.path, path)

    def _sources(self) -> AotSources:
        if self.sources is None:
            raise AotError(f"this module was loaded from {self.library.path}, which holds no "
                           f"C sources; rebuild the model to see them")
        return self.sources

    def __repr__(self) -> str:
        lib = self.library
        return (f"<AotExecutorFactoryModule {self.mod_name}: target {self.target}, prefix "
                f"{lib.prefix}, {len(lib.inputs)} inputs, {len(lib.outputs)} outputs>")


def load_aot_module(path: str | os.PathLike) -> AotExecutorFactoryModule:
    """An exported AOT library (``export_library("model.so")``), checked and loaded."""
    library = AotLibrary(path)
    meta = library.meta
    return AotExecutorFactoryModule(library, meta.get("target", "cpu"),
                                    meta.get("mod_name", "default"))


__all__ = ["AotExecutorFactoryModule", "AotSources", "load_aot_module"]
