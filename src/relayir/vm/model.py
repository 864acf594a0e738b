"""The VM's ``CompiledModel`` (``runtime/artifact.py``): an ``Executable`` behind the
interface every executor shares, registered here so that ``relayir.runtime.load`` opens
VM files without the runtime importing the VM.

The executable keeps ``@main``'s parameter types (symbolic dims included) but not its
result type, so ``output_info`` is learnt from runs: empty before the first, and a dim
that differed between runs is reported as ``"?"``.
"""

from __future__ import annotations

import os

import numpy as np

from ..runtime.artifact import (
    ArtifactKind,
    CompiledModel,
    TensorSpec,
    register_artifact_kind,
    spec_dims,
)
from ..runtime.c_kernels import CKernel
from ..runtime.graph_executor import BenchmarkResult, ProfileReport
from .executable import Executable
from .interpreter import VirtualMachine
from .serialize import FORMAT


class VMModel(CompiledModel):
    executor = "vm"

    def __init__(self, artifact: Executable, path: str | None = None,
                 seen: dict | None = None):
        super().__init__(artifact, path)
        self.vm = VirtualMachine(artifact)
        main = artifact.functions[artifact.func_index["main"]]
        self._inputs = [TensorSpec(n, spec_dims(getattr(t, "shape", ())),
                                   getattr(t, "dtype", "tuple"))
                        for n, t in zip(main.param_names, main.param_types)]
        # output specs learnt from runs, shared by every instance of this artifact
        self._seen = {} if seen is None else seen

    def instance(self) -> VMModel:
        return VMModel(self.artifact, self.path, self._seen)

    @property
    def input_info(self) -> list[TensorSpec]:
        return list(self._inputs)

    @property
    def output_info(self) -> list[TensorSpec]:
        return list(self._seen.get("outputs", ()))

    def _is_c(self, kernel) -> bool:
        """C, or (a data-dependent function on a C target, no reason given) compiled to C
        per call signature at run time (``vm/specialize.py``)."""
        return isinstance(kernel, CKernel) or (
            self.artifact.kernel_library is not None
            and self.artifact.kernel_library.kind != "numpy"
            and not getattr(kernel, "reason", ""))

    @property
    def kernels(self) -> dict[str, str]:
        return {k.name: "c" if self._is_c(k) else "reference"
                for k in self.artifact.kernels if k is not None}

    @property
    def references(self) -> dict[str, str]:
        return {k.name: getattr(k, "reason", "") or f"target {self.target}"
                for k in self.artifact.kernels if k is not None and not self._is_c(k)}

    @property
    def c_source(self) -> str | None:
        get = getattr(self.artifact.kernel_library, "get_source", None)
        return get() if get is not None else None

    def _run(self, arrays):
        # copies: a result may live in storage the next run reuses
        outputs = [np.array(a) for a in flatten(self.vm.invoke("main", *arrays))]
        self._learn(outputs)
        return outputs

    def _learn(self, outputs: list[np.ndarray]) -> None:
        old = self._seen.get("outputs")
        specs = [TensorSpec(f"output{i}", tuple(a.shape), a.dtype.name)
                 for i, a in enumerate(outputs)]
        if old is not None and len(old) == len(specs):
            specs = [TensorSpec(s.name, _merge(o.shape, s.shape), s.dtype)
                     for o, s in zip(old, specs)]
        if specs != old:
            self._seen["outputs"] = specs

    def benchmark(self, inputs=None, number: int = 10, repeat: int = 3,
                  min_repeat_ms: float = 0.0) -> BenchmarkResult:
        return self.vm.benchmark("main", *self._given(inputs), number=number, repeat=repeat,
                                 min_repeat_ms=min_repeat_ms)

    def profile(self, inputs=None, number: int = 1) -> ProfileReport:
        """Kernel time (the VM's full report, opcodes too: ``self.vm.profile``)."""
        return self.vm.profile(*self._given(inputs), number=number).kernels

    def save(self, path: str | os.PathLike) -> None:
        self.artifact.save(path)


def _merge(old: tuple, new: tuple) -> tuple:
    if len(old) != len(new):
        return new
    return tuple(o if o == n else "?" for o, n in zip(old, new))


def flatten(value) -> list[np.ndarray]:
    """A VM result (an array or nested tuples of arrays) as a flat list, in order."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(reversed(v))
        else:
            out.append(np.asarray(v))
    return out


register_artifact_kind(ArtifactKind("vm", FORMAT, Executable, Executable.load, VMModel))

__all__ = ["VMModel", "flatten"]
