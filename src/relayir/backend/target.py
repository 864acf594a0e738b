"""Targets: what a model is compiled for, parsed once.

``Target.parse`` accepts ``"numpy"`` (the ops' numpy references, no C compiler needed),
``"cpu"`` (generated C) and the TVM-style aliases ``"llvm"``, ``"llvm -mcpu=..."`` and
``"c"``. The parsed ``Target`` travels through lowering, so the choices that depend on
the machine (CPU features, tuning records) are read from it, not from the string again.

CPU features: ``Target.machine()`` is the CPU the C back end generates code for (vector
width, vector registers, cache sizes: ``tir.machine.Machine``), read once from this
host's CPUID flags and cache sizes — the C is compiled with ``-march=native`` for the
same CPU, and lowering's default schedules (``tir.default_schedule``) use the same
``host_machine()``. Register tiles and cache blocks of matmul-like stages are sized from
it; graph passes that choose blocked layouts can read the vector width from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Error
from ..tir.machine import PORTABLE, Machine, host_machine


class BuildError(Error):
    """``build`` cannot compile this module for this target."""


KINDS = {"numpy": "numpy", "cpu": "cpu", "llvm": "cpu", "c": "cpu"}  # spelling -> kind


@dataclass(frozen=True)
class Target:
    """A parsed target: ``kind`` is ``"numpy"`` or ``"cpu"``; ``options`` are the
    ``-key=value`` flags of an ``"llvm ..."`` string; ``text`` is what the user wrote."""

    kind: str
    options: tuple[str, ...] = ()
    text: str = ""

    @staticmethod
    def parse(target) -> Target:
        if isinstance(target, Target):
            return target
        if target is None:
            return Target("numpy", (), "numpy")
        if not isinstance(target, str):
            raise BuildError(f"a target is a string such as 'numpy' or 'cpu', found {target!r}")
        words = target.split()
        kind = KINDS.get(words[0] if words else "")
        if kind is None:
            raise BuildError(
                f"unknown target {target!r}; expected 'numpy', 'cpu' or an 'llvm ...' string")
        return Target(kind, tuple(words[1:]), target)

    def machine(self) -> Machine:
        """The CPU kernels are generated for (``PORTABLE`` for the numpy target)."""
        return host_machine() if self.kind == "cpu" else PORTABLE

    def __str__(self) -> str:
        return self.text or self.kind


__all__ = ["BuildError", "KINDS", "Target"]
