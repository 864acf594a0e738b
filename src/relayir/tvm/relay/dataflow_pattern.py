"""``tvm.relay.dataflow_pattern``: not part of relayir. relayir's rewrites are named
``(pattern, function)`` rules in ``relayir.transform.rewrite``, with their own pattern
language; TVM's ``is_op``, ``wildcard``, ``rewrite``, ``DFPatternCallback``, ... raise
``NotInRelayirError`` when used (importing them works)."""

from ..error import refusing_module

__getattr__ = refusing_module(__name__, "relayir's rewrites use relayir.transform.rewrite's "
                              "own patterns")
