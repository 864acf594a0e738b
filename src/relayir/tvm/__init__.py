"""``relayir.tvm``: Relay-era TVM scripts run on relayir by changing one import.

``from relayir.tvm import relay`` (or, after ``relayir.tvm.install_alias()``, plain
``import tvm``) gives the layout of TVM up to v0.19: ``relay`` (with ``testing``,
``frontend``, ``transform``, ``analysis``, ``vm``, ``op``, ``nn``, ``prelude``), ``ir``,
``transform``, ``target``, ``runtime`` (with ``vm``), ``nd``, ``contrib.graph_executor``
and ``contrib.utils``, ``testing``, devices (``cpu()``, ``device("cpu")``). Every name is
a thin adapter over relayir's own modules; docs/tvm-compat.md lists every deliberate
difference from TVM. ``import relayir`` never imports this package; this package
imports its subpackages on first use (``tvm.relay``, ``tvm.testing`` need more than
numpy: ``tvm.testing`` needs pytest).
"""

from __future__ import annotations

import importlib

from ..ir.module import IRModule
from ..version import __version__
from . import _absent, _ffi, error, ir, nd, runtime, target, transform
from ._ffi import get_global_func, register_func, register_object
from .alias import AliasError, install_alias, uninstall_alias
from .error import TVMError, missing_attribute
from .runtime.ndarray import (
    Device,
    cpu,
    cuda,
    device,
    ext_dev,
    gpu,
    metal,
    opencl,
    rocm,
    vulkan,
)

_absent.install(__name__)
_LAZY = ("relay", "contrib", "testing", "topi", "te", "tir", "autotvm", "parser", "rpc")


def __getattr__(name: str):
    if name == "instrument":  # TVM's tvm.instrument is tvm.ir.instrument
        return importlib.import_module(f"{__name__}.ir.instrument")
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise missing_attribute(__name__, name)


__all__ = ["AliasError", "Device", "IRModule", "TVMError", "__version__", "cpu", "cuda",
           "device", "error", "ext_dev", "get_global_func", "gpu", "register_func",
           "register_object", "install_alias", "ir", "metal", "nd",
           "opencl", "rocm", "runtime", "target", "transform", "uninstall_alias", "vulkan"]
