"""Targets: what a model is compiled for, parsed once.

``Target.parse`` accepts ``"numpy"`` (the ops' numpy references, no C compiler needed),
``"cpu"`` (generated C) and the TVM-style aliases ``"llvm"``, ``"llvm -mcpu=..."`` and
``"c"``. The parsed ``Target`` travels through lowering, so the choices that depend on
the machine (CPU features, tuning records) are read from it, not from the string again.

The CPU: ``-mcpu=<name>`` names it with the C compiler's ``-march`` names (``haswell``,
``znver3``, ``skylake-avx512``, ``x86-64-v3``...); ``native`` (the default) is this host.
``$RELAYIR_MCPU`` sets the default for a ``cpu``/``llvm``/``c`` string that names none
(``RELAYIR_MCPU=haswell pytest`` runs every build with AVX2 kernels on an AVX-512 host);
``Target.parse`` writes it into ``options``, so records and caches see the same CPU.

``Target.cpu`` gives the C its ``-march=`` flag (``Target.cflags()``) and
``Target.machine()`` the ``tir.machine.Machine`` (``MACHINES`` entry: vector lanes,
registers, NCHWc block, int8 path, with this host's cache sizes) that every per-ISA
choice of a build reads: ``build``/``vm.compile`` pass it to the layout pass
(``transform.pipeline``), to lowering's default schedules (``lower_primitive(...,
machine=)``) and to tuned schedules; the tuner's search space reads it too. It is passed
explicitly (there is no "current machine"), so a build for ``haswell`` and one for this
host can run side by side. An unknown name is a ``BuildError`` listing valid ones, and so
is building graph or VM kernels for a CPU whose instruction sets this host lacks
(``check_runs_here``): they would die of an illegal instruction. An AOT library may be
built for another CPU: its entry point refuses to run where an instruction set is missing.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass

from ..codegen.compiler import default_flags
from ..codegen.march import march_info
from ..errors import Error
from ..tir.machine import (
    PORTABLE,
    Machine,
    host_machine,
    machine_from_flags,
    missing_features,
    with_host_caches,
)


class BuildError(Error):
    """``build`` cannot compile this module for this target."""


KINDS = {"numpy": "numpy", "cpu": "cpu", "llvm": "cpu", "c": "cpu"}  # spelling -> kind
MCPU_ENV = "RELAYIR_MCPU"  # the CPU of a cpu target that names none (default: native)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
# shown first when an unknown -mcpu lists valid names
_WELL_KNOWN = ("native", "haswell", "skylake", "skylake-avx512", "icelake-server",
               "sapphirerapids", "znver2", "znver3", "znver4", "x86-64-v2", "x86-64-v3",
               "x86-64-v4")


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
        options = tuple(words[1:])
        default = os.environ.get(MCPU_ENV, "").strip()
        if kind == "cpu" and default and not any(o.startswith("-mcpu=") for o in options):
            options += (f"-mcpu={default}",)
        t = Target(kind, options, target)
        if kind == "cpu" and not _NAME.match(t.cpu):
            raise BuildError(f"target {target!r}: -mcpu={t.cpu!r} is not a CPU name "
                             f"(e.g. -mcpu=haswell, -mcpu=znver3, -mcpu=native)")
        return t

    @property
    def cpu(self) -> str:
        """The CPU named by ``-mcpu=`` (the C compiler's ``-march`` name), ``native`` when
        none is; ``""`` for the numpy target."""
        if self.kind != "cpu":
            return ""
        named = [o.split("=", 1)[1] for o in self.options if o.startswith("-mcpu=")]
        return named[-1] if named else "native"

    def machine(self) -> Machine:
        """The CPU kernels are generated for (``PORTABLE`` for the numpy target): this
        host's for ``native``, else the ``MACHINES`` entry of the instruction sets the
        compiler enables for ``-march=<cpu>``, with this host's cache sizes. An unknown
        name is a ``BuildError``."""
        if self.kind != "cpu":
            return PORTABLE
        if self.cpu == "native":
            return host_machine()
        return with_host_caches(machine_from_flags(self._macros(), platform.machine()))

    def cflags(self) -> list[str]:
        """The C compiler flags of this target's kernels (``codegen.default_flags`` with
        ``-march=<cpu>``)."""
        cpu = self.cpu or "native"
        if cpu != "native":
            self._macros()  # an unknown name fails here, not in the compiler
        return default_flags(march=cpu)

    def check_runs_here(self) -> None:
        """A ``BuildError`` when this host lacks an instruction set ``-march=<cpu>``
        lets the compiler use (kernels built for it would die of SIGILL here)."""
        if self.kind != "cpu" or self.cpu == "native":
            return
        lacking = missing_features(self._macros())
        if lacking:
            raise BuildError(
                f"target {self}: -mcpu={self.cpu} code uses {', '.join(lacking)}, which this "
                f"CPU lacks; it would stop with an illegal instruction here. Build for "
                f"-mcpu=native (or a CPU this one can run), or build executor=\"aot\" to "
                f"deploy the library on such a CPU")

    def _macros(self) -> frozenset:
        info = march_info(self.cpu)
        if info.macros is not None:
            return info.macros
        valid = [n for n in _WELL_KNOWN if n in info.valid] or list(info.valid[:10])
        known = (f"; valid names include {', '.join(valid)} ({len(info.valid)} in all: the C "
                 f"compiler's -march names)") if valid else ""
        raise BuildError(f"target {self}: unknown CPU -mcpu={self.cpu!r} (the C compiler "
                         f"says: {info.message}){known}")

    def __str__(self) -> str:
        return self.text or self.kind


__all__ = ["BuildError", "KINDS", "MCPU_ENV", "Target"]
