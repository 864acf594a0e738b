"""Compiled models for the commands: build a loaded model for an executor, save and load
the artifact, and hand it to its ``Runner`` (``runners.py``).

An artifact is what ``export_library`` (graph, AOT) or ``Executable.save`` (VM) wrote;
``load_artifact`` tells them apart by the format named in the archive's ``meta.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import autotune
from ..backend import build
from ..backend.lowering import LoweringProgress
from ..backend.target import Target
from ..codegen import cache
from ..ir.types import TensorType
from ..runtime.executor import AotModule
from ..runtime.graph_executor import GraphModule
from ..runtime.module import GraphExecutorFactoryModule, load_module
from ..transform import ConvertLayout, PassContext
from ..vm import Executable
from ..vm import compile as vm_compile
from ..vm.serialize import FORMAT as VM_FORMAT
from .console import Console
from .instruments import DumpIR, KernelProgress, PassProgress
from .runners import CommandError, InputSpec, ModuleRunner, Runner, VMRunner, dims

EXECUTORS = ("graph", "vm", "aot")


# ---------------------------------------------------------------- compiled artifacts


@dataclass
class Compiled:
    kind: str          # "graph" | "vm" | "aot"
    artifact: object   # GraphExecutorFactoryModule | Executable | the AOT module
    seconds: float     # compile (or load) time
    kernels: int | None
    cache_note: str = ""

    def describe(self) -> str:
        """``graph executor, 12 kernels``."""
        kernels = f", {self.kernels} kernels" if self.kernels is not None else ""
        return f"{self.kind} executor{kernels}"

    def save(self, path: str | os.PathLike) -> None:
        if self.kind == "vm":
            self.artifact.save(path)
        else:
            self.artifact.export_library(path)

    def runner(self) -> Runner:
        if self.kind == "vm":
            return VMRunner(self.artifact)
        if self.kind == "graph":
            return ModuleRunner(GraphModule(self.artifact), "graph")
        return ModuleRunner(AotModule(self.artifact), "aot")

    def kernel_source(self) -> str | None:
        """The generated C (the AOT module's holds its entry point too), if any."""
        if self.kind == "vm":
            owner = self.artifact.kernel_library
        elif hasattr(self.artifact, "get_source"):
            owner = self.artifact
        else:
            owner = self.artifact.get_lib()
        get = getattr(owner, "get_source", None)
        return get() if get is not None else None


def _kernel_count(kind: str, artifact) -> int | None:
    if kind == "vm":
        return len({n for n, k in zip(artifact.kernel_names, artifact.kernels) if k is not None})
    lib = artifact.get_lib()
    if hasattr(lib, "__len__"):
        return len(lib)
    graph = getattr(artifact, "graph_json", None)  # an AOT module: its schedule's kernels
    if not graph:
        return None  # a loaded AOT library keeps no kernel table
    return len({n["attrs"]["func_name"] for n in json.loads(graph)["nodes"]
                if n["op"] != "null"})


def load_artifact(path: str | os.PathLike) -> Compiled:
    """Read an artifact written by ``relayir compile`` (any executor)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CommandError(f"{path}: not found")
    start = time.perf_counter()
    if _archive_format(path) == VM_FORMAT:
        artifact, kind = Executable.load(path), "vm"
    else:
        artifact = load_module(os.path.abspath(path))  # ctypes: a bare name is searched
        kind = "graph" if isinstance(artifact, GraphExecutorFactoryModule) else "aot"
    return Compiled(kind, artifact, time.perf_counter() - start, _kernel_count(kind, artifact))


def _archive_format(path: str) -> str | None:
    try:
        with zipfile.ZipFile(path) as z:
            return json.loads(z.read("meta.json")).get("format")
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, AttributeError):
        return None


# ---------------------------------------------------------------- compiling


@dataclass(frozen=True)
class BuildOptions:
    executor: str | None = None  # None: graph when every input is static, else vm
    target: str = "cpu"
    opt_level: int = 3
    disabled_pass: tuple[str, ...] = ()
    desired_layout: str | None = None
    tuning_records: str | None = None
    dump_ir: str | None = None

    @classmethod
    def from_args(cls, args) -> BuildOptions:
        disabled = tuple(p.strip() for p in (getattr(args, "disabled_pass", "") or "").split(",")
                         if p.strip())
        return cls(getattr(args, "executor", None), args.target, args.opt_level, disabled,
                   getattr(args, "desired_layout", None), getattr(args, "tuning_records", None),
                   getattr(args, "dump_ir", None))


def model_inputs(mod, params) -> list[InputSpec]:
    """``@main``'s inputs that ``params`` does not bind."""
    return [InputSpec(p.name_hint, dims(p.type_annotation.shape), p.type_annotation.dtype)
            if isinstance(p.type_annotation, TensorType) else InputSpec(p.name_hint, (), "?")
            for p in mod["main"].params if p.name_hint not in params]


def choose_executor(mod, params, wanted: str | None) -> str:
    if wanted:
        return wanted
    return "graph" if all(s.static for s in model_inputs(mod, params)) else "vm"


def compile_model(mod, params: dict, options: BuildOptions, console: Console) -> Compiled:
    """Build ``mod`` for the chosen executor under a ``PassContext`` made of ``options``,
    showing progress on ``console``."""
    kind = choose_executor(mod, params, options.executor)
    target = Target.parse(options.target)  # an unknown target fails before any work
    dump = DumpIR(options.dump_ir) if options.dump_ir else None
    if dump:
        dump.write("input", mod)
    before = _cached_objects()
    start = time.perf_counter()
    with console.task(f"compiling ({kind}, {target}, opt level {options.opt_level})") as task:
        instruments = [PassProgress(console, task)] + ([dump] if dump else [])
        with PassContext(opt_level=options.opt_level, disabled_pass=options.disabled_pass,
                         instruments=instruments), _tuning(options.tuning_records), \
                LoweringProgress(KernelProgress(console, task)):
            if options.desired_layout:
                mod = ConvertLayout({"nn.conv2d": [options.desired_layout, "default"]})(mod)
            if kind == "vm":
                artifact = vm_compile(mod, target=target, params=params)
            else:
                artifact = build(mod, target=target, params=params, executor=kind)
    compiled = Compiled(kind, artifact, time.perf_counter() - start,
                        _kernel_count(kind, artifact))
    if target.kind == "cpu":
        compiled.cache_note = _cache_note(compiled, before)
    if dump:
        source = compiled.kernel_source()
        if source:
            (dump.directory / "kernels.c").write_text(source, encoding="utf-8")
    return compiled


def _tuning(records: str | None):
    if not records:
        return contextlib.nullcontext()
    if not Path(records).is_file():
        raise CommandError(f"--tuning-records {records}: not found")
    return autotune.apply_history_best(records)


def _cached_objects() -> set[str]:
    lib = cache.cache_dir() / "lib"
    return {p.name for p in lib.glob("*.so")} if cache.cache_enabled() and lib.is_dir() \
        else set()


def _cache_note(compiled: Compiled, before: set[str]) -> str:
    """Whether the shared object the kernels were loaded from was in the cache before."""
    lib = compiled.artifact.kernel_library if compiled.kind == "vm" \
        else compiled.artifact.get_lib()
    path = getattr(getattr(lib, "library", None), "path", None) or getattr(lib, "path", None)
    if path is None:
        return ""
    return "C library from the cache" if Path(path).name in before else "C compiled"


__all__ = ["EXECUTORS", "BuildOptions", "Compiled", "choose_executor", "compile_model",
           "load_artifact", "model_inputs"]
