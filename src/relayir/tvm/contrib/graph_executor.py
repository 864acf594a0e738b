"""``tvm.contrib.graph_executor``: ``create(graph_json, lib, dev)`` and ``GraphModule``
over relayir's graph executor, with TVM's value types and signatures.

Differences from relayir's ``runtime.graph_executor.GraphModule``: outputs and inputs
read back are ``NDArray``s; a plain numpy input is cast to the input's dtype (TVM's
``copyfrom``; relayir refuses a lossy conversion); ``set_input(**params)`` skips names
the graph does not have (as TVM does: ``relay.build`` may have bound them as
constants); ``benchmark`` takes TVM's ``(device, func_name="run", repeat, number,
min_repeat_ms)``; ``m.module["name"]`` gives the executor's functions by name, and
``set_input_zero_copy`` copies (relayir's executor owns its input buffers).
"""

from __future__ import annotations

import numpy as np

from ...errors import Error
from ...runtime.graph_executor import GraphModule as _GraphModule
from ...runtime.module import GraphExecutorFactoryModule
from ..runtime.ndarray import NDArray, as_ndarray


class _PackedFunctions:
    """TVM's ``GraphModule.module``: the executor's functions by name
    (``m.module["set_input"]``); any other attribute is the factory's."""

    def __init__(self, executor, factory):
        self._executor, self._factory = executor, factory

    def __getitem__(self, name: str):
        return self._executor[name]

    def __getattr__(self, name: str):
        return getattr(self._factory, name)


class GraphModule(_GraphModule):
    """``GraphModule(lib["default"](dev))``."""

    def __init__(self, module, device=None):
        super().__init__(module, device)

    @property
    def module(self):
        return _PackedFunctions(self, self._factory)

    @module.setter
    def module(self, factory) -> None:  # relayir's executor keeps its factory here
        self._factory = factory

    def set_input_zero_copy(self, key, value) -> None:
        """TVM's zero-copy input: relayir copies it (the same values; a later write to
        ``value`` is not seen, where TVM's executor would read it)."""
        self.set_input(key, value)

    def _set(self, key, value) -> None:
        """TVM copies a numpy input into the input's dtype (a cast, as ``NDArray.copyfrom``
        does); relayir's executor refuses a lossy one. An ``NDArray`` of another dtype is
        refused by both."""
        _, eid = self._entry(key)
        dtype = self._views[eid].dtype
        if type(value) is np.ndarray and value.dtype != dtype:
            value = value.astype(dtype)
        super()._set(key, value)

    def set_input(self, key=None, value=None, **params) -> None:
        if key is not None:
            self._set(key, value)
        for k, v in params.items():
            if k in self._args:
                self._set(k, v)

    def get_input(self, key, out=None) -> NDArray:
        value = as_ndarray(super().get_input(key))
        if out is None:
            return value
        out[...] = value
        return out

    def get_output(self, index: int, out=None) -> NDArray:
        if out is None:
            return as_ndarray(super().get_output(index))
        return super().get_output(index, out)

    def share_params(self, other, params_bytes) -> None:
        self.load_params(params_bytes)

    def benchmark(self, device=None, func_name: str = "run", repeat: int = 5,
                  number: int = 5, min_repeat_ms: float | None = None, end_to_end=False,
                  **kwargs):
        if func_name != "run":
            raise Error(f"GraphModule.benchmark times 'run' only, found {func_name!r}")
        return super().benchmark(number=number, repeat=repeat,
                                 min_repeat_ms=min_repeat_ms or 0.0, **kwargs)

    def __getitem__(self, name: str):
        """``m["run"]``, ``m["set_input"]``, ...: TVM's packed functions by name."""
        fn = getattr(self, name, None)
        if fn is None or name.startswith("_"):
            raise Error(f"GraphModule has no function {name!r}")
        return fn


def create(graph_json_str: str, libmod, device=None) -> GraphModule:
    """A graph executor from a graph JSON and a kernel library (``lib.get_lib()``);
    params are set afterwards with ``set_input(**params)`` / ``load_params``."""
    if isinstance(libmod, GraphExecutorFactoryModule):
        libmod = libmod.get_lib()
    target = getattr(libmod, "target", "") or ""
    return GraphModule(GraphExecutorFactoryModule(graph_json_str, libmod, {}, str(target)))


__all__ = ["GraphModule", "create"]
