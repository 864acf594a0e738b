"""``tvm.relay.qnn.op.legalizations``: not part of relayir. Relay's QNN legalizations are Python
rewrites registered per op; relayir lowers its QNN ops in one pass
(``relayir.transform.canonicalize_qnn``). Every name raises ``NotInRelayirError``."""

from ....error import refusing_module

__getattr__ = refusing_module(__name__, "relayir lowers QNN ops in relayir.transform."
                              "canonicalize_qnn, not through Relay's per-op legalizations")
