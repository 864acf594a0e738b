"""``relay.qnn.op``: the QNN constructors (``qnn.py``, Relay's module name), and Relay's
registry hooks for QNN lowering, which relayir does not offer (``relay.op.op``)."""

from ...op.op import register_qnn_canonicalize, register_qnn_legalize
from . import canonicalizations, legalizations, qnn
from .qnn import *  # noqa: F403
from .qnn import __all__ as _qnn_all

__all__ = [*_qnn_all, "register_qnn_canonicalize", "register_qnn_legalize"]
