"""One interface to every compiled artifact, whatever the executor.

``load(path)`` opens a file written by ``export_library`` (graph executor: a zip archive;
AOT: a shared library) or by ``Executable.save`` (VM: a zip archive), and ``wrap(built)``
takes what ``relayir.build`` / ``relayir.vm.compile`` returned in this process. Both give
a ``CompiledModel``: ``input_info`` / ``output_info`` (``TensorSpec``: names, shapes with
symbolic dims as names, dtypes), ``run(inputs) -> [np.ndarray]`` (arrays the caller owns),
``benchmark()``, ``profile()``, ``kernels`` (which are generated C, which numpy
references), ``executor``, ``target`` and ``save(path)``. Tools that serve, compare or
fuzz models then need no branch per executor.

Each layer that owns an artifact type registers it in ``ARTIFACT_KINDS`` (the archive
format named in ``meta.json``, the artifact's class, how to open a file, the model class):
the graph executor and AOT here, the VM in ``vm/model.py``. A ``CompiledModel`` holds one
executor state (its input and output buffers), so one thread runs it at a time;
``instance()`` gives another over the same loaded kernels for another thread.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import Error
from .graph_executor import BenchmarkResult, ProfileReport
from .module import _opens_like_an_archive
from .tensors import check_input


class ArtifactError(Error):
    """A file that is no compiled artifact, or a request the artifact cannot serve."""


class ArtifactInputError(ArtifactError):
    """Inputs that do not fit the model (a name, dtype, shape or count); the message names
    the input. Raised before any kernel runs."""


@dataclass(frozen=True)
class TensorSpec:
    """An input or output: ``shape`` holds ints, and names for symbolic dims (``"?"``
    for ``Any``)."""

    name: str
    shape: tuple
    dtype: str

    @property
    def static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    def fits(self, shape: Sequence[int]) -> bool:
        """Whether an array of ``shape`` fits (a symbolic dim takes any extent)."""
        return len(shape) == len(self.shape) and all(
            not isinstance(d, int) or d == s for d, s in zip(self.shape, shape))

    def shape_text(self) -> str:
        return "[" + ",".join(str(d) for d in self.shape) + "]"


def spec_dims(shape) -> tuple:
    """IR or runtime dims as ``TensorSpec`` dims: ints stay, others become their name."""
    return tuple(int(d) if isinstance(d, (int, np.integer)) else str(getattr(d, "name", "?"))
                 for d in shape)


class CompiledModel:
    """A compiled model ready to run (see the module docstring). Subclasses implement
    ``_run`` on inputs already checked and ordered, plus the descriptive properties."""

    executor = ""

    def __init__(self, artifact, path: str | None = None):
        self.artifact = artifact
        self.path = path  # the file it was loaded from, if any

    # -- what it is
    @property
    def target(self) -> str:
        return str(self.artifact.target)

    @property
    def input_info(self) -> list[TensorSpec]:
        raise NotImplementedError

    @property
    def output_info(self) -> list[TensorSpec]:
        raise NotImplementedError

    @property
    def references(self) -> dict[str, str]:
        """The kernels that run as numpy references, each with why (none: all C)."""
        return {name: "" for name, kind in self.kernels.items() if kind == "reference"}

    def kernel_summary(self) -> str:
        """One line for users, never silent about references: ``all 31 kernels are C``
        or ``2 of 31 kernels run as numpy references: f (why); ...``."""
        kinds = self.kernels
        if not kinds:
            return "one native entry point (the AOT library keeps no kernel table)"
        refs = self.references
        if not refs:
            return f"all {len(kinds)} kernels are C"
        reasons = "; ".join(f"{n} ({why})" if why else n for n, why in sorted(refs.items()))
        return f"{len(refs)} of {len(kinds)} kernels run as numpy references: {reasons}"

    @property
    def kernels(self) -> dict[str, str]:
        """Kernel name → ``"c"`` (generated C) or ``"reference"`` (a numpy reference)."""
        raise NotImplementedError

    @property
    def c_source(self) -> str | None:
        """The generated C of the kernels (an AOT model's holds its entry point too), when
        the artifact carries it."""
        return None

    def instance(self) -> CompiledModel:
        """Another executor state over the same loaded artifact (one per thread)."""
        return type(self)(self.artifact, self.path)

    def save(self, path: str | os.PathLike) -> None:
        raise NotImplementedError

    # -- running
    def check_inputs(self, inputs: Mapping[str, object] | Sequence) -> list[np.ndarray]:
        """``inputs`` (by name, or in ``input_info`` order) as arrays in input order,
        checked for count and names, and by ``tensors.check_input`` (dtype, safe
        widening, shape; torch tensors without a copy): an ``ArtifactInputError`` naming
        the input otherwise."""
        specs = self.input_info
        names = [s.name for s in specs]
        if isinstance(inputs, Mapping):
            unknown = [k for k in inputs if k not in names]
            if unknown:
                raise ArtifactInputError(
                    f"the model has no input named {', '.join(map(repr, unknown))}; its "
                    f"inputs are {', '.join(names) or 'none'}")
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ArtifactInputError(f"missing input {', '.join(missing)}")
            values = [inputs[n] for n in names]
        else:
            values = list(inputs)
            if len(values) != len(names):
                raise ArtifactInputError(f"the model takes {len(names)} inputs "
                                         f"({', '.join(names)}), found {len(values)}")
        return [check_input(repr(s.name), v, s.dtype, s.shape, ArtifactInputError)
                for s, v in zip(specs, values)]

    def run(self, inputs: Mapping[str, object] | Sequence,
            out: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
        """Run once; the outputs in order, as arrays the caller owns (written into
        ``out`` when given)."""
        results = self._run(self.check_inputs(inputs))
        if out is None:
            return results
        if len(out) != len(results):
            raise ArtifactError(f"out holds {len(out)} arrays; the model has {len(results)} "
                                f"outputs")
        for dst, src in zip(out, results):
            np.copyto(dst, src)
        return list(out)

    def _run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError

    def benchmark(self, inputs=None, number: int = 10, repeat: int = 3,
                  min_repeat_ms: float = 0.0) -> BenchmarkResult:
        """Milliseconds per run (``BenchmarkResult``), on ``inputs`` or on zeros of the
        input shapes (a static model only)."""
        raise NotImplementedError

    def profile(self, inputs=None, number: int = 1) -> ProfileReport:
        """Time per kernel over ``number`` runs (an AOT model is one native call: one row)."""
        raise NotImplementedError

    def sample_inputs(self, batch: int = 1) -> list[np.ndarray]:
        """Zeros of every input's shape, symbolic dims taken as ``batch`` (a warm-up)."""
        return [np.zeros(tuple(d if isinstance(d, int) else batch for d in s.shape), s.dtype)
                for s in self.input_info]

    def _given(self, inputs) -> list[np.ndarray]:
        return self.check_inputs(self.sample_inputs() if inputs is None else inputs)

    def __repr__(self) -> str:
        ins = ", ".join(f"{s.name}: {s.shape_text()} {s.dtype}" for s in self.input_info)
        return f"<{type(self).__name__} {self.executor}, target {self.target}, inputs {ins}>"


# ---------------------------------------------------------------- the kinds


@dataclass(frozen=True)
class ArtifactKind:
    """How one artifact type is opened and wrapped."""

    executor: str
    format: str                          # meta.json "format", or "elf" for a shared library
    artifact_type: type
    open: Callable[[str], object]        # path -> the artifact
    model: type[CompiledModel]


ARTIFACT_KINDS: list[ArtifactKind] = []


def register_artifact_kind(kind: ArtifactKind) -> None:
    if any(k.format == kind.format or k.artifact_type is kind.artifact_type
           for k in ARTIFACT_KINDS):
        raise ArtifactError(f"an artifact kind for {kind.format} is already registered")
    ARTIFACT_KINDS.append(kind)


ELF_MAGIC = b"\x7fELF"


def artifact_format(path: str) -> str | None:
    """``"elf"`` for a shared library, else the format a zip archive's ``meta.json``
    names; None when the file is neither."""
    try:
        with open(path, "rb") as f:
            if f.read(4) == ELF_MAGIC:
                return "elf"
        with zipfile.ZipFile(path) as z:
            return json.loads(z.read("meta.json")).get("format")
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, AttributeError):
        return None


def load(path: str | os.PathLike) -> CompiledModel:
    """The compiled model saved at ``path`` (any executor)."""
    path = os.path.abspath(os.fspath(path))  # ctypes searches a bare name
    if not os.path.isfile(path):
        raise ArtifactError(f"{path}: not found")
    fmt = artifact_format(path)
    for kind in ARTIFACT_KINDS:
        if kind.format == fmt:
            return kind.model(kind.open(path), path)
    if fmt is None and _opens_like_an_archive(path):
        raise ArtifactError(f"{path} is a truncated or damaged relayir archive (its zip "
                            f"directory or meta.json is unreadable); write it again")
    known = ", ".join(k.format for k in ARTIFACT_KINDS)
    found = f"format {fmt!r}" if fmt else "neither a relayir zip archive nor a shared library"
    raise ArtifactError(f"{path}: not a relayir compiled artifact ({found}; known formats: "
                        f"{known})")


def wrap(artifact) -> CompiledModel:
    """A ``CompiledModel`` over an artifact built in this process (or a model: itself)."""
    if isinstance(artifact, CompiledModel):
        return artifact
    for kind in ARTIFACT_KINDS:
        if isinstance(artifact, kind.artifact_type):
            return kind.model(artifact)
    raise ArtifactError(f"wrap: {type(artifact).__name__} is not a compiled artifact; "
                        f"expected one of "
                        f"{', '.join(k.artifact_type.__name__ for k in ARTIFACT_KINDS)}")


__all__ = ["ARTIFACT_KINDS", "ArtifactError", "ArtifactInputError", "ArtifactKind",
           "CompiledModel", "TensorSpec", "artifact_format", "load", "register_artifact_kind",
           "spec_dims", "wrap"]
