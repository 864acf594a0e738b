"""``tvm.relay.quantize._calibrate``: not part of relayir (see ``relay.quantize``)."""

from ...error import refusing_module
from . import WHY

__getattr__ = refusing_module(__name__, WHY)
