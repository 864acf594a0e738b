"""TVM modules relayir has no counterpart for, made importable so that a file importing
one loads: every public name of such a module raises ``NotInRelayirError`` naming it
when used (``relayir.tvm.error.refusing_module``). ``install()`` puts them in
``sys.modules`` under ``relayir.tvm.*``, where the ``tvm`` alias finds them.

The list holds the TVM modules Relay's own tests import; a TVM module not listed and not
in the layer stays a ``ModuleNotFoundError`` naming it.
"""

from __future__ import annotations

import sys
import types

from .error import refusing_module

ABSENT = {
    "utils": "relayir has no roofline analysis (tvm.utils)",
    "topi.nn": "relayir's kernels are its tensor-expression table, not TOPI",
    "topi.nn.qnn": "relayir's kernels are its tensor-expression table, not TOPI",
    "topi.cuda": "relayir has no GPU schedules (TOPI's CUDA)",
    "topi.x86": "relayir's schedules are its own (relayir.tir), not TOPI's x86 ones",
    "topi.arm_cpu": "relayir's schedules are its own (relayir.tir), not TOPI's Arm ones",
    "topi.generic": "relayir's schedules are its own (relayir.tir), not TOPI's",
    "topi.cuda.conv3d_winograd": "relayir has no GPU schedules (TOPI's CUDA)",
    "topi.sparse": "relayir has no sparse kernels",
    "topi.sparse.utils": "relayir has no sparse kernels",
    "relay.backend.utils": "relayir's lowering is relayir.backend's",
    "relay.data_dep_optimization": "relayir has no data-dependent (sparse) rewrites",
    "relay.transform.fake_quantization_to_integer": "relayir's FakeQuantizationToInteger "
    "rules are its own (relayir.transform.fake_quantization_to_integer), not registered "
    "from Python",
    "relay.transform.mixed_precision": "relayir has no mixed-precision pass",
    "relay.transform.infer_layout_utils": "relayir's layout rules are its own "
    "(relayir.transform.convert_layout), not registered from Python",
    "relay.frontend.common": "relayir's frontends share relayir.frontend's helpers",
    "relay.op.contrib": "relayir has no external codegens (BYOC)",
    "relay.op.contrib.register": "relayir has no external codegens (BYOC)",
    "contrib.pipeline_executor": "relayir has no pipeline executor",
    "contrib.cudnn": "relayir has no GPU libraries (cuDNN)",
    "contrib.cublas": "relayir has no GPU libraries (cuBLAS)",
    "contrib.dnnl": "relayir has no external kernel libraries (DNNL)",
    "contrib.pipeline_executor_build": "relayir has no pipeline executor",
    "meta_schedule": "relayir tunes with relayir.autotune, not MetaSchedule",
}


def install(package: str) -> None:
    """Make ``package.<path>`` modules for every path of ``ABSENT`` that the layer does
    not have (a parent made here is a package, so its children import too)."""
    for path, why in ABSENT.items():
        name = f"{package}.{path}"
        if name in sys.modules:
            continue
        module = types.ModuleType(name, f"tvm.{path}: not part of relayir ({why}).")
        module.__path__ = []  # a package: tvm.topi.nn.qnn imports below tvm.topi.nn
        module.__getattr__ = refusing_module(name, why)
        sys.modules[name] = module
        parent, _, leaf = name.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], leaf, module)
