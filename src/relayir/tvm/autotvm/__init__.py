"""``tvm.autotvm``: not part of relayir. relayir tunes with its own ``relayir.autotune``
(tasks, search spaces, tuners, records; ``apply_history_best`` there); TVM's AutoTVM
names import fine and raise ``NotInRelayirError`` when used."""

from ..error import refusing_module

__getattr__ = refusing_module(__name__, "relayir tunes with relayir.autotune, not AutoTVM")
