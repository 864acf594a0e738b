"""``tvm.relay.op.op``: Relay's operator registry API.

``get`` and ``OpPattern`` are relayir's. Legalisation hooks (``register_legalize``,
``register_qnn_legalize``) are Relay's (``relay/_legalize.py``). Other registration
from Python (``register``,
``register_compute``, ``register_strategy``, ``register_alter_op_layout``, ...) is not
offered: relayir's operators are defined once each in ``relayir.op`` (attrs, type
relation, pattern, numpy reference) and each layer owns its table keyed by the op's name
(C computes in ``relayir.te``, gradients in ``relayir.transform.autodiff``), with no
schedules or strategies to hook. Each name here exists, so that a module importing it
loads, and raises ``NotInRelayirError`` naming the API when called.
"""

from __future__ import annotations

from ....ir.op import OpPattern
from ....ir.op import get_op as get
from ...error import not_in_relayir
from .. import _legalize

_WHY = ("relayir's operators are defined in relayir.op (attrs, type relation, pattern, "
        "numpy reference) and its layers' tables; they are not registered from Python "
        "through TVM's API")
_SCHEDULE = "relayir lowers every op through its own tensor-expression table; there are no " \
            "TVM schedules or strategies to register"

_REGISTRY_API = (
    "register", "register_stateful", "register_pattern", "register_gradient",
    "register_shape_func", "register_alter_op_layout", "register_convert_op_layout",
    "register_infer_correct_layout", "register_canonicalize",
    "register_external_compiler", "register_fake_quantization_to_integer",
    "register_optional_fake_quantization_to_integer", "register_mixed_precision_conversion",
    "register_op_attr", "register_dynamic_compute", "register_qnn_canonicalize",
    "register_qnn_unary_elementwise_legalize")
_SCHEDULE_API = (
    "register_compute", "register_strategy", "register_schedule",
    "register_injective_schedule", "register_broadcast_schedule", "register_reduce_schedule",
    "register_topi_compute", "register_topi_schedule")

for _name in _REGISTRY_API:
    globals()[_name] = not_in_relayir(f"tvm.relay.op.{_name}", _WHY)
for _name in _SCHEDULE_API:
    globals()[_name] = not_in_relayir(f"tvm.relay.op.{_name}", _SCHEDULE)


def register_legalize(op_name: str, legal_op=None, level: int = 10):
    """A ``relay.transform.Legalize`` hook (``relay/_legalize.py``)."""
    return _legalize.register("FTVMLegalize", "tvm.relay.op.register_legalize", op_name,
                              legal_op, level)


def register_qnn_legalize(op_name: str, legal_op=None, level: int = 10):
    """A ``relay.qnn.transform.Legalize`` hook (``relay/_legalize.py``)."""
    return _legalize.register("FTVMQnnLegalize", "tvm.relay.qnn.op.register_qnn_legalize",
                              op_name, legal_op, level)


OpStrategy = not_in_relayir("tvm.relay.op.OpStrategy", _SCHEDULE)
debug = not_in_relayir("tvm.relay.op.debug", "relayir has no debug op calling back into Python")

__all__ = ["OpPattern", "OpStrategy", "debug", "get", "register_legalize",
           "register_qnn_legalize", *_REGISTRY_API, *_SCHEDULE_API]
