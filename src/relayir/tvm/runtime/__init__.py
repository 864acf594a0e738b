"""``tvm.runtime``: ``NDArray``, devices, ``load_module``, containers and the VM."""

from __future__ import annotations

import abc
import os

import numpy as np

from ...runtime.artifact import artifact_format
from ...runtime.executor import AotExecutorFactoryModule
from ...runtime.module import GraphExecutorFactoryModule
from ...runtime.module import load_module as _load_module
from ...vm.serialize import FORMAT as _VM_FORMAT
from . import container, ndarray, vm
from .container import ADT, ShapeTuple, String
from .ndarray import Device, NDArray, cpu, cuda, device, empty


def convert(value):
    """``tvm.runtime.convert``: Python values stay Python values, but a list becomes a
    tuple (TVM's immutable ``Array``: ``relay.Tuple(convert([])).fields == fields``);
    arrays become ``NDArray``s."""
    if isinstance(value, np.ndarray):
        return ndarray.as_ndarray(value)
    if isinstance(value, list):
        return tuple(convert(v) for v in value)
    return value


class Module(abc.ABC):  # noqa: B024 (a name for isinstance, nothing to implement)
    """``tvm.runtime.Module``: what ``load_module`` returns and ``export_library`` writes
    (relayir's graph and AOT factory modules, a VM executable's ``lib``)."""


Module.register(GraphExecutorFactoryModule)
Module.register(AotExecutorFactoryModule)
Module.register(vm.VMLibrary)


def load_module(path: str | os.PathLike):
    """``tvm.runtime.load_module``: relayir's ``load_module``, and a VM executable (as
    ``exe.save()``'s ``lib`` exports it) as a ``VMLibrary``."""
    if artifact_format(os.fspath(path)) == _VM_FORMAT:
        return vm.VMLibrary(vm.Executable.adapt(vm.Executable.load(path)))
    return _load_module(path)


class Object:
    """Base name for TVM objects; relayir's IR nodes and values are plain classes."""


__all__ = ["ADT", "Device", "Module", "NDArray", "Object", "ShapeTuple", "String", "container",
           "convert", "cpu", "cuda", "device", "empty", "load_module", "ndarray", "vm"]
