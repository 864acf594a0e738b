"""``tvm.script.ir`` (``I``): not part of relayir; every name raises
``NotInRelayirError``."""

from ..error import refusing_module

__getattr__ = refusing_module(__name__, "relayir has no TVMScript (write modules in the "
                              "Relay text format: relay.parse)")
