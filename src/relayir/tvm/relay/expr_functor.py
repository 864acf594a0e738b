"""``tvm.relay.expr_functor``: TVM's Python visitor classes are not part of relayir.tvm.
relayir's own visitors (``relayir.ir.functor``: ``ExprVisitor``, ``ExprMutator``,
dispatch tables, worklists) have another API; TVM's names raise ``NotInRelayirError``."""

from ..error import refusing_module

__getattr__ = refusing_module(__name__, "relayir's visitors are relayir.ir.functor's, with "
                              "another API")
