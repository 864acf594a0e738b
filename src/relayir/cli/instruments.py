"""Pass instruments the commands hand to ``PassContext``: progress per pass, and the
Relay text after every pass written to a folder (``--dump-ir``)."""

from __future__ import annotations

import time
from pathlib import Path

from ..ir.expr import Function
from ..ir.functor import post_order
from .console import Console, Task


def primitive_functions(mod) -> list[Function]:
    """The fused (``Primitive=1``) functions of every global, in program order."""
    found = []
    for _, fn in mod.functions.items():
        found += [n for n in post_order(fn) if type(n) is Function and n.is_primitive]
    return found


class LeafPasses:
    """An instrument that acts after each pass that ran no other pass inside it: a
    ``Sequential`` (the pipeline) is a container, not a step of its own."""

    def __init__(self) -> None:
        self._stack: list[list] = []  # [start time, ran a nested pass]

    def run_before_pass(self, mod, info) -> None:
        if self._stack:
            self._stack[-1][1] = True
        self._stack.append([time.perf_counter(), False])

    def run_after_pass(self, mod, info) -> None:
        start, nested = self._stack.pop()
        if not nested:
            self.after_leaf(mod, info, time.perf_counter() - start)

    def after_leaf(self, mod, info, seconds: float) -> None:
        raise NotImplementedError


class PassProgress(LeafPasses):
    """The running pass in the task line; with ``--verbose`` one line per pass and its
    time. After ``FuseOps`` the line says how many fused functions go to lowering."""

    def __init__(self, console: Console, task: Task):
        super().__init__()
        self.console = console
        self.task = task

    def run_before_pass(self, mod, info) -> None:
        super().run_before_pass(mod, info)
        self.task.update(f"pass {info.name}")

    def after_leaf(self, mod, info, seconds: float) -> None:
        self.console.step(f"  pass {info.name:<28s} {seconds * 1e3:9.2f} ms")
        if info.name == "FuseOps":
            n = len(primitive_functions(mod))
            self.task.update(f"lowering {n} fused functions")


class KernelProgress:
    """A ``backend.lowering.LoweringProgress`` listener: which of N kernels is being
    lowered, whether the lowered-C cache served them, when the C compiler runs."""

    def __init__(self, console: Console, task: Task):
        self.console = console
        self.task = task

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "lower":
            self.task.update(f"lowering kernel {done + 1} of {total}")
        elif stage == "cached":
            self.task.update(f"{total} kernels from the lowered-C cache")
            self.console.step(f"  {total} kernels: lowered C from the cache")
        elif done == 0:
            self.task.update(f"compiling {total} kernels (C compiler, or its cache)")
        else:
            self.console.step(f"  {total} kernels compiled")


class DumpIR(LeafPasses):
    """``--dump-ir DIR``: ``DIR/NN_<pass>.relay`` after every pass (constants elided,
    so big models stay small)."""

    def __init__(self, directory: str | Path):
        super().__init__()
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def write(self, name: str, mod) -> Path:
        path = self.directory / f"{self.count:02d}_{name}.relay"
        path.write_text(mod.astext(show_meta_data=False) + "\n", encoding="utf-8")
        self.count += 1
        return path

    def after_leaf(self, mod, info, seconds: float) -> None:
        self.write(info.name, mod)


__all__ = ["DumpIR", "KernelProgress", "LeafPasses", "PassProgress", "primitive_functions"]
