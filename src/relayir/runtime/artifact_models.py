"""The graph executor's and the AOT module's ``CompiledModel``s (``artifact.py``).

Both run through an executor object with the same methods (``GraphModule``,
``AotModule``: ``set_input``, ``run``, ``get_output``, ``benchmark``), so one class does
the work and the two differ only in what they read from their artifact.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time

from .artifact import ArtifactKind, CompiledModel, TensorSpec, register_artifact_kind, spec_dims
from .c_kernels import CKernel
from .executor import AotExecutorFactoryModule, AotModule, load_aot_module
from .graph_executor import BenchmarkResult, GraphModule, ProfileReport
from .module import FORMAT as GRAPH_FORMAT
from .module import GraphExecutorFactoryModule, load_module


class _ExecutorModel(CompiledModel):
    """A model run by a ``GraphModule``-like executor made by ``_executor_type``."""

    _executor_type: type = GraphModule

    def __init__(self, artifact, path: str | None = None):
        super().__init__(artifact, path)
        self.module = self._executor_type(artifact)
        shapes, dtypes = self.module.get_input_info()
        self._inputs = [TensorSpec(n, spec_dims(s), dtypes[n]) for n, s in shapes.items()]
        self._names = [s.name for s in self._inputs]

    @property
    def input_info(self) -> list[TensorSpec]:
        return list(self._inputs)

    def _set(self, arrays) -> None:
        self.module.set_input(**dict(zip(self._names, arrays)))

    def _run(self, arrays):
        return self.module.run_checked(arrays)  # check_inputs has checked them

    def benchmark(self, inputs=None, number: int = 10, repeat: int = 3,
                  min_repeat_ms: float = 0.0) -> BenchmarkResult:
        self._set(self._given(inputs))
        return self.module.benchmark(number=number, repeat=repeat, min_repeat_ms=min_repeat_ms)


class GraphModel(_ExecutorModel):
    executor = "graph"

    @property
    def output_info(self) -> list[TensorSpec]:
        graph = self.module.graph
        attrs, row_ptr = graph["attrs"], graph["node_row_ptr"]
        names = list(graph.get("output_names") or ())
        specs = []
        for i, (nid, index, _) in enumerate(graph["heads"]):
            eid = row_ptr[nid] + index
            name = names[i] if i < len(names) else f"output{i}"
            specs.append(TensorSpec(name, spec_dims(attrs["shape"][1][eid]),
                                    attrs["dltype"][1][eid]))
        return specs

    @property
    def kernels(self) -> dict[str, str]:
        lib = self.artifact.get_lib()
        return {name: "c" if isinstance(lib[name], CKernel) else "reference" for name in lib}

    @property
    def references(self) -> dict[str, str]:
        lib = self.artifact.get_lib()
        if lib.kind == "numpy":
            return dict.fromkeys(lib, "target numpy")
        return lib.references()

    @property
    def c_source(self) -> str | None:
        get = getattr(self.artifact.get_lib(), "get_source", None)
        return get() if get is not None else None

    def profile(self, inputs=None, number: int = 1) -> ProfileReport:
        self._set(self._given(inputs))
        return self.module.profile(number=number)

    def save(self, path: str | os.PathLike) -> None:
        self.artifact.export_library(path)


class AotModel(_ExecutorModel):
    """The AOT module: every kernel is C, called by one native entry point."""

    executor = "aot"
    _executor_type = AotModule

    @property
    def output_info(self) -> list[TensorSpec]:
        return [TensorSpec(t.name, spec_dims(t.shape), t.dtype)
                for t in self.artifact.get_lib().outputs]

    @property
    def kernels(self) -> dict[str, str]:
        graph = self.artifact.graph_json
        if not graph:  # loaded from a library, which keeps no kernel table
            return {}
        return {n["attrs"]["func_name"]: "c" for n in json.loads(graph)["nodes"]
                if n["op"] != "null"}

    @property
    def c_source(self) -> str | None:
        sources = self.artifact.sources
        return sources.source if sources is not None else None

    @property
    def _entry(self) -> str:
        return self.artifact.get_lib().prefix + "run"

    def profile(self, inputs=None, number: int = 1) -> ProfileReport:
        """One row: the entry point runs every kernel in one native call."""
        self._set(self._given(inputs))
        self.module.run()
        clock = time.perf_counter
        t0 = clock()
        for _ in range(number):
            self.module.run()
        wall = clock() - t0
        return ProfileReport.make({self._entry: wall}, {self._entry: number}, wall * 1e3, number)

    def save(self, path: str | os.PathLike) -> None:
        """``*.so`` of a model built here: ``export_library`` (with the header); any other
        name, or a loaded model: a copy of the library file, written atomically."""
        path = os.fspath(path)
        if path.endswith(".so") and self.artifact.sources is not None:
            self.artifact.export_library(path)
            return
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".relayir-", suffix=".tmp", dir=directory)
        os.close(fd)
        try:
            shutil.copyfile(self.artifact.get_lib().path, tmp)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


register_artifact_kind(ArtifactKind("graph", GRAPH_FORMAT, GraphExecutorFactoryModule,
                                    load_module, GraphModel))
register_artifact_kind(ArtifactKind("aot", "elf", AotExecutorFactoryModule, load_aot_module,
                                    AotModel))

__all__ = ["AotModel", "GraphModel"]
