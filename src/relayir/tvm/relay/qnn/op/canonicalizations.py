"""``tvm.relay.qnn.op.canonicalizations``: not part of relayir. Relay's QNN
canonicalizations are Python rewrites registered per op; relayir lowers its QNN ops in one pass
(``relayir.transform.canonicalize_qnn``). Every name raises ``NotInRelayirError``."""

from ....error import refusing_module

__getattr__ = refusing_module(__name__, "relayir lowers QNN ops in relayir.transform."
                              "canonicalize_qnn, not through Relay's per-op canonicalizations")
