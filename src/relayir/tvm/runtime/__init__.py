"""``tvm.runtime``: ``NDArray``, devices, ``load_module``, containers and the VM."""

from __future__ import annotations

import numpy as np

from ...runtime.module import GraphExecutorFactoryModule as Module
from ...runtime.module import load_module
from . import container, ndarray, vm
from .container import ADT, ShapeTuple, String
from .ndarray import Device, NDArray, cpu, cuda, device, empty


def convert(value):
    """``tvm.runtime.convert``: Python values stay Python values; arrays become
    ``NDArray``s."""
    if isinstance(value, np.ndarray):
        return ndarray.as_ndarray(value)
    return value


class Object:
    """Base name for TVM objects; relayir's IR nodes and values are plain classes."""


__all__ = ["ADT", "Device", "Module", "NDArray", "Object", "ShapeTuple", "String", "container",
           "convert", "cpu", "cuda", "device", "empty", "load_module", "ndarray", "vm"]
