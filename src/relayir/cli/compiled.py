"""Compiled models for the commands: build a loaded model for an executor, save and load
the artifact, and hand it to its ``Runner`` (``runners.py``).

An artifact is what ``export_library`` (graph, AOT) or ``Executable.save`` (VM) wrote;
``relayir.runtime.load`` opens any of them and ``relayir.runtime.wrap`` takes a built
one, so nothing here branches on the executor.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from .. import autotune
from ..backend import build
from ..backend.lowering import LoweringProgress
from ..backend.target import Target
from ..codegen import cache
from ..ir.types import TensorType
from ..runtime import CompiledModel, wrap
from ..runtime import load as load_model_file
from ..transform import ConvertLayout, PassContext
from ..vm import compile as vm_compile
from .console import Console
from .instruments import DumpIR, KernelProgress, PassProgress
from .runners import CommandError, InputSpec, Runner, dims

EXECUTORS = ("graph", "vm", "aot")


# ---------------------------------------------------------------- compiled artifacts


@dataclass
class Compiled:
    model: CompiledModel  # any executor's, through relayir.runtime's one interface
    seconds: float        # compile (or load) time
    cache_note: str = ""

    @property
    def kind(self) -> str:
        return self.model.executor

    @property
    def kernels(self) -> int | None:
        """How many kernels; None for a loaded AOT library (it keeps no kernel table)."""
        return len(self.model.kernels) or None

    def describe(self) -> str:
        """``graph executor, 12 kernels``."""
        kernels = f", {self.kernels} kernels" if self.kernels is not None else ""
        return f"{self.kind} executor{kernels}"

    def save(self, path: str | os.PathLike) -> None:
        self.model.save(path)

    def runner(self) -> Runner:
        return Runner(self.model)

    def kernel_source(self) -> str | None:
        """The generated C (the AOT module's holds its entry point too), if any."""
        return self.model.c_source


def load_artifact(path: str | os.PathLike) -> Compiled:
    """Read an artifact written by ``relayir compile`` (any executor)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CommandError(f"{path}: not found")
    start = time.perf_counter()
    model = load_model_file(path)
    return Compiled(model, time.perf_counter() - start)


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
    compiled = Compiled(wrap(artifact), time.perf_counter() - start)
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
    artifact = compiled.model.artifact
    lib = getattr(artifact, "kernel_library", None) or artifact.get_lib()  # VM, or factory
    path = getattr(getattr(lib, "library", None), "path", None) or getattr(lib, "path", None)
    if path is None:
        return ""
    return "C library from the cache" if Path(path).name in before else "C compiled"


__all__ = ["EXECUTORS", "BuildOptions", "Compiled", "choose_executor", "compile_model",
           "load_artifact", "model_inputs"]
