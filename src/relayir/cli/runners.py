"""Running a compiled model through one interface whatever the executor: the inputs it
takes (``InputSpec``), ``set_inputs``, ``run``, ``time_run``, ``profile``."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import Error
from ..ir.types import TensorType
from ..vm import Executable, VirtualMachine


class CommandError(Error):
    """A command-line request that cannot be met (a missing input, a wrong option)."""


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple  # ints, and names (or "?") for dynamic dims
    dtype: str

    @property
    def static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    def shape_text(self) -> str:
        return "[" + ",".join(str(d) for d in self.shape) + "]"


def dims(shape) -> tuple:
    return tuple(int(d) if isinstance(d, (int, np.integer)) else str(getattr(d, "name", "?"))
                 for d in shape)


# ---------------------------------------------------------------- running


class Runner:
    """One compiled model ready to run: ``set_inputs``, ``run``, ``time_run``, ``profile``."""

    kind = ""
    inputs: list[InputSpec]

    def set_inputs(self, arrays: dict[str, np.ndarray]) -> None:
        raise NotImplementedError

    def run(self) -> list[np.ndarray]:
        """Run on the inputs set; the outputs, flattened."""
        raise NotImplementedError

    def time_run(self) -> float:
        """Seconds of one run on the inputs set (outputs not copied)."""
        raise NotImplementedError

    def profile(self, number: int):
        """A ``ProfileReport`` of kernel time over ``number`` runs."""
        raise NotImplementedError


class ModuleRunner(Runner):
    """The graph executor, or the AOT module (which has the graph executor's methods)."""

    def __init__(self, module, kind: str):
        self.kind = kind
        self.module = module
        shapes, dtypes = module.get_input_info()
        self.inputs = [InputSpec(n, dims(s), dtypes[n]) for n, s in shapes.items()]

    def set_inputs(self, arrays):
        self.module.set_input(**arrays)

    def run(self):
        self.module.run()
        return [self.module.get_output(i) for i in range(self.module.get_num_outputs())]

    def time_run(self):
        t0 = time.perf_counter()
        self.module.run()
        return time.perf_counter() - t0

    def profile(self, number):
        if not hasattr(self.module, "profile"):
            raise CommandError(f"the {self.kind} executor has no per-kernel profile")
        return self.module.profile(number=number)


class VMRunner(Runner):
    kind = "vm"

    def __init__(self, exe: Executable):
        self.vm = VirtualMachine(exe)
        main = exe.functions[exe.func_index["main"]]
        self.inputs = [InputSpec(n, dims(t.shape), t.dtype) if isinstance(t, TensorType)
                       else InputSpec(n, (), "tuple")
                       for n, t in zip(main.param_names, main.param_types)]

    def set_inputs(self, arrays):
        self.vm.set_input("main", **arrays)

    def run(self):
        return flatten(self.vm.invoke("main"))

    def time_run(self):
        t0 = time.perf_counter()
        self.vm.invoke("main")
        return time.perf_counter() - t0

    def profile(self, number):
        return self.vm.profile(func_name="main", number=number).kernels


def flatten(value) -> list[np.ndarray]:
    """A result (an array or nested tuples of arrays) as a flat list, in order."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(reversed(v))
        else:
            out.append(np.asarray(v))
    return out


__all__ = ["CommandError", "InputSpec", "ModuleRunner", "Runner", "VMRunner", "dims",
           "flatten"]
