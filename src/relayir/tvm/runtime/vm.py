"""``tvm.runtime.vm``: Relay's ``VirtualMachine(exe, dev)`` over relayir's VM.

The differences from relayir's ``vm.VirtualMachine``: the device argument, keyword
inputs on ``invoke``/``run``, TVM values out (``NDArray`` / ``ADT``), and TVM's
``benchmark(device, *args, func_name=...)`` signature. ``Executable`` is relayir's with
TVM's names beside its own: ``code, lib = exe.save()`` / ``Executable.load_exec(code,
lib)`` (``code`` is relayir's whole archive, kernels included; ``lib`` is the same
executable as a module that ``export_library`` writes and ``tvm.runtime.load_module``
reads), ``globals``, ``primitive_ops``, ``bytecode`` as text.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ...vm import VirtualMachine as _VirtualMachine
from ...vm import VMError
from ...vm.executable import Executable as _Executable
from .container import from_tvm, to_tvm

# TVM's memory-allocator kinds: accepted and ignored (relayir has one pooled allocator)
NAIVE_ALLOCATOR = 1
POOLED_ALLOCATOR = 2


class Executable(_Executable):
    """relayir's executable with TVM's serialisation and introspection names."""

    @classmethod
    def adapt(cls, exe: _Executable) -> Executable:
        """``exe`` (relayir's) as this class, sharing its state."""
        if isinstance(exe, cls):
            return exe
        out = cls.__new__(cls)
        out.__dict__.update(exe.__dict__)
        return out

    def save(self, path: str | os.PathLike | None = None):
        """relayir's ``save(path)``; with no path TVM's ``(code, lib)``: the archive's
        bytes and this executable as a module (``lib.export_library(path)``)."""
        if path is not None:
            return super().save(path)
        with tempfile.TemporaryDirectory(prefix="relayir-tvm-") as tmp:
            file = os.path.join(tmp, "exe.relayir")
            super().save(file)
            with open(file, "rb") as f:
                code = bytearray(f.read())
        return code, VMLibrary(self)

    @staticmethod
    def load_exec(code, lib=None) -> Executable:
        """TVM's ``Executable.load_exec(code, lib)``: ``code`` from ``save()`` carries the
        kernels, so ``lib`` (a ``VMLibrary`` or ``None``) adds nothing."""
        if isinstance(code, (str, os.PathLike)):  # a file save(path) wrote
            return Executable.adapt(_Executable.load(code))
        with tempfile.TemporaryDirectory(prefix="relayir-tvm-") as tmp:
            file = os.path.join(tmp, "exe.relayir")
            with open(file, "wb") as f:
                f.write(bytes(code))
            return Executable.adapt(_Executable.load(file))

    @property
    def globals(self) -> list[str]:
        """The names of the executable's functions (TVM: ``exe.globals``)."""
        return [f.name for f in self.functions]

    @property
    def primitive_ops(self) -> list[str]:
        """The names of its kernels (TVM: ``exe.primitive_ops``)."""
        return list(self.kernel_names)

    @property
    def bytecode(self) -> str:
        """The bytecode as text (TVM's is a string; relayir's ``Bytecode`` prints it)."""
        return str(super().bytecode)


class VMLibrary:
    """TVM's ``lib`` of ``exe.save()``: ``export_library(path)`` writes the executable,
    which ``tvm.runtime.load_module(path)`` reads back as this."""

    def __init__(self, exe: Executable):
        self.exe = exe

    def export_library(self, path: str | os.PathLike, *args, **kwargs) -> None:
        _Executable.save(self.exe, path)


class VirtualMachine(_VirtualMachine):
    """``VirtualMachine(exe, tvm.cpu())``; ``invoke``/``run`` return TVM values."""

    def __init__(self, exe: Executable, device=None, memory_cfg=None):
        super().__init__(exe, device)
        self._partial_inputs: dict[str, dict[int, object]] = {}
        self._last = None  # invoke_stateful's result, read by get_outputs

    def set_input(self, func_name: str = "main", *args, **kwargs) -> None:
        args = [from_tvm(a) for a in args]
        super().set_input(func_name, *args, **{k: from_tvm(v) for k, v in kwargs.items()})

    def get_input_index(self, input_name: str, func_name: str = "main") -> int:
        """The position of input ``input_name`` of ``func_name``; -1 if it has none."""
        _, fn = self._function(func_name)
        names = list(fn.param_names)
        return names.index(input_name) if input_name in names else -1

    def set_one_input(self, func_name: str, *args, **kwargs) -> None:
        """Set one input by index or name (``set_one_input("main", 0, x)``,
        ``set_one_input("main", "x", x)``, ``set_one_input("main", x=x)``); the inputs
        set so far are taken once every input has a value."""
        if len(args) == 2 and not kwargs:
            key, value = args
        elif not args and len(kwargs) == 1:
            (key, value), = kwargs.items()
        else:
            raise VMError("set_one_input takes one input: (index or name, value) or "
                          "name=value")
        _, fn = self._function(func_name)
        names = list(fn.param_names)
        index = key if isinstance(key, int) else self.get_input_index(key, func_name)
        if not 0 <= index < len(names):
            raise VMError(f"set_one_input: @{func_name} has no input {key!r}; its inputs "
                          f"are {', '.join(names)}")
        partial = self._partial_inputs.setdefault(func_name, {})
        partial[index] = from_tvm(value)
        if len(partial) == len(names):
            super().set_input(func_name, *[partial[i] for i in range(len(names))])

    def invoke(self, func_name: str = "main", *args, **kwargs):
        if kwargs:
            self.set_input(func_name, *args, **kwargs)
            args = ()
        return to_tvm(super().invoke(func_name, *[from_tvm(a) for a in args]), "vm")

    def run(self, *args, **kwargs):
        return self.invoke("main", *args, **kwargs)

    def invoke_stateful(self, func_name: str = "main", *args, **kwargs) -> None:
        self._last = self.invoke(func_name, *args, **kwargs)

    def invoke_with_outputs(self, func_name: str, input_args: dict, output_args: list) -> None:
        """TVM's: run ``func_name`` on ``input_args`` (by name) and write its outputs into
        the arrays of ``output_args`` (each of the output's shape and dtype)."""
        out = self.invoke(func_name, **input_args)
        outs = list(out) if isinstance(out, tuple) else [out]
        if len(outs) != len(output_args):
            raise VMError(f"invoke_with_outputs: {func_name} gives {len(outs)} outputs, "
                          f"{len(output_args)} output arrays were given")
        for i, (dst, value) in enumerate(zip(output_args, outs)):
            value = np.asarray(value)
            if dst.shape != value.shape or dst.dtype != value.dtype:
                raise VMError(f"invoke_with_outputs: output {i} is {value.dtype}"
                              f"{list(value.shape)}, its array is {dst.dtype}{list(dst.shape)}")
            np.copyto(dst, value)

    def get_outputs(self) -> list:
        last = self._last
        return list(last) if isinstance(last, tuple) else [last]

    def benchmark(self, device=None, *args, func_name: str = "main", repeat: int = 5,
                  number: int = 5, min_repeat_ms: float | None = None,
                  end_to_end: bool = False, **kwargs):
        """TVM's signature; ``end_to_end`` (count host-device copies) changes nothing:
        there are none."""
        return super().benchmark(func_name, *[from_tvm(a) for a in args], number=number,
                                 repeat=repeat, min_repeat_ms=min_repeat_ms or 0.0, **kwargs)


__all__ = ["NAIVE_ALLOCATOR", "POOLED_ALLOCATOR", "Executable", "VMLibrary",
           "VirtualMachine"]
