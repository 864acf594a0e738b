"""``AotModule``: runs an AOT-compiled model from Python with ``GraphModule``'s methods.

Set-up allocates one aligned buffer per input and per output and binds the native entry
point ``<prefix>run(inputs, outputs)`` to their addresses once, so ``run()`` is ONE
ctypes call: no per-kernel Python, no per-run argument building. The library's own
per-thread workspace holds the intermediates.

Threads: the library may be called from several threads at once (each thread gets its
own workspace, ctypes releases the GIL during the call). An ``AotModule`` owns its input
and output buffers, so give each thread its own ``AotModule`` of the same library.

Inputs are checked (``tensors.check_input``: name, dtype, shape) and copied in by
``set_input``; ``get_output`` returns a copy.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from ..graph_executor import BenchmarkResult, time_runs
from ..tensors import aligned_array, check_input
from .aot_library import AotError, AotLibrary


class AotModule:
    """Relay's ``runtime.executor.AotModule``: ``set_input``, ``run``, ``get_output``."""

    def __init__(self, module, device=None):
        if isinstance(module, AotModule):
            module = module.module
        library = module.get_lib() if hasattr(module, "get_lib") else module
        if not isinstance(library, AotLibrary):
            raise AotError(f"AotModule runs what relayir.build(..., executor=\"aot\") or "
                           f"load_module(\"model.so\") returns, found {type(module).__name__}")
        self.module = module
        self.library = library
        self._inputs = [aligned_array(t.shape, t.dtype) for t in library.inputs]
        self._outputs = [aligned_array(t.shape, t.dtype) for t in library.outputs]
        self._names = [t.name for t in library.inputs]
        self._output_names = [t.name for t in library.outputs]
        self._unset = set(self._names)
        self._ran = False  # no output exists before the first complete run
        in_ptrs = _pointers(self._inputs)
        out_ptrs = _pointers(self._outputs)
        # the partial keeps the pointer arrays (and through self, the buffers) alive
        self._execute = functools.partial(
            library.run, ctypes.c_void_p(ctypes.addressof(in_ptrs)),
            ctypes.c_void_p(ctypes.addressof(out_ptrs)))
        self._keep = (in_ptrs, out_ptrs)

    # ------------------------------------------------------------ inputs

    def _index(self, key) -> int:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= key < len(self._names):
                raise AotError(f"input index {key} is out of range: the model has "
                               f"{len(self._names)} inputs ({', '.join(self._names)})")
            return int(key)
        try:
            return self._names.index(key)
        except ValueError:
            raise AotError(f"the model has no input named {key!r}; its inputs are "
                           f"{', '.join(self._names) or 'none'}") from None

    def set_input(self, key=None, value=None, **inputs) -> None:
        """``set_input("data", x)``, ``set_input(0, x)`` or ``set_input(data=x, ...)``."""
        if key is not None:
            self._set(key, value)
        for k, v in inputs.items():
            self._set(k, v)

    def _set(self, key, value) -> None:
        i = self._index(key)
        dst = self._inputs[i]
        value = check_input(repr(self._names[i]), value, dst.dtype.name, dst.shape, AotError)
        np.copyto(dst, value)
        self._unset.discard(self._names[i])

    def get_input(self, key) -> np.ndarray:
        return self._inputs[self._index(key)].copy()

    def get_input_index(self, name: str) -> int:
        return self._index(name)

    def get_num_inputs(self) -> int:
        return len(self._inputs)

    def get_input_info(self) -> tuple[dict[str, tuple], dict[str, str]]:
        """``(shape_dict, dtype_dict)`` of the inputs, in order, as ``GraphModule``'s."""
        infos = self.library.inputs
        return {t.name: t.shape for t in infos}, {t.name: t.dtype for t in infos}

    # ------------------------------------------------------------ running

    def run(self, **inputs) -> None:
        for k, v in inputs.items():
            self._set(k, v)
        if self._unset:
            missing = ", ".join(n for n in self._names if n in self._unset)
            raise AotError(f"inputs not set: {missing}; call set_input first")
        self._ran = False
        if self._execute():
            raise AotError(self.library.last_error() or "the AOT entry point failed")
        self._ran = True

    def run_checked(self, arrays) -> list[np.ndarray]:
        """``GraphModule.run_checked``: inputs in order, already checked by the caller."""
        for dst, a in zip(self._inputs, arrays):
            np.copyto(dst, a)
        self._unset.clear()
        self._ran = False
        if self._execute():
            raise AotError(self.library.last_error() or "the AOT entry point failed")
        self._ran = True
        return [o.copy() for o in self._outputs]

    def get_num_outputs(self) -> int:
        return len(self._outputs)

    def get_output(self, index: int | str, out: np.ndarray | None = None) -> np.ndarray:
        """A copy of output ``index`` (into ``out`` when given); an output's name works
        too, as in ``GraphModule``. Before a run has completed there is no output: an
        error, never uninitialised memory."""
        if isinstance(index, str):
            if index not in self._output_names:
                raise AotError(f"the model has no output named {index!r}; its outputs are "
                               f"{', '.join(self._output_names)}")
            index = self._output_names.index(index)
        if not 0 <= index < len(self._outputs):
            raise AotError(f"output index {index} is out of range: the model has "
                           f"{len(self._outputs)} outputs")
        if not self._ran:
            raise AotError(f"get_output({index}): no run has completed, so there is no "
                           "output yet; call run() first")
        if out is None:
            return self._outputs[index].copy()
        np.copyto(out, self._outputs[index])
        return out

    def get_outputs(self) -> list[np.ndarray]:
        return [self.get_output(i) for i in range(len(self._outputs))]

    def benchmark(self, number: int = 10, repeat: int = 3, min_repeat_ms: float = 0.0,
                  warmup: int = 1, **inputs) -> BenchmarkResult:
        """Time ``run()`` as ``GraphModule.benchmark`` does (milliseconds per run)."""
        if number < 1 or repeat < 1:
            raise AotError(f"number and repeat must be >= 1, found {number}, {repeat}")
        self.run(**inputs)  # checks the inputs and the status once
        for _ in range(warmup - 1):
            self._execute()
        return time_runs(self._execute, number, repeat, min_repeat_ms)

    def __repr__(self) -> str:
        return f"<AotModule {self.library!r}>"


def _pointers(arrays: list[np.ndarray]):
    return (ctypes.c_void_p * max(len(arrays), 1))(*(a.ctypes.data for a in arrays))


__all__ = ["AotModule"]
