"""Relay's ``relay.testing`` workloads relayir has no model for.

Each is a module (``from tvm.relay.testing import inception_v3`` and
``import tvm.relay.testing.inception_v3`` both work) whose ``get_workload`` and
``get_net`` raise ``NotInRelayirError`` naming the workload: a test file that imports
one still loads, and only the tests that build the network fail. relayir's own models
are ``mlp``, ``resnet``, ``mobilenet`` (and ``relayir.testing.models``: bert, lstm).
"""

from __future__ import annotations

import sys
import types

from ...error import not_in_relayir

WORKLOADS = ("vgg", "resnet_3d", "yolo_detection", "darknet")
_WHY = ("relayir's built-in models are mlp, resnet and mobilenet (docs/tvm-compat.md); "
        "it has no model for this workload")


def install(package: str) -> dict[str, types.ModuleType]:
    """Make ``package.<workload>`` modules for every name of ``WORKLOADS``."""
    out = {}
    tvm_package = package.replace("relayir.tvm", "tvm", 1)
    for name in WORKLOADS:
        module = types.ModuleType(f"{package}.{name}", f"relay.testing.{name}: not part of "
                                  f"relayir. {_WHY}")
        for fn in ("get_workload", "get_net"):
            setattr(module, fn, not_in_relayir(f"{tvm_package}.{name}.{fn}", _WHY))
        sys.modules[module.__name__] = module
        out[name] = module
    return out
