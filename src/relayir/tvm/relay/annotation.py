"""``relay.annotation`` (``relay.op.annotation``). relayir has one device (no
``on_device``), no external-codegen regions (``compiler_begin`` / ``compiler_end``) and
its fusion takes no hints (``stop_fusion``): those names raise ``NotInRelayirError``
when used.

``checkpoint(data)`` is Relay's hint to the gradient pass to recompute ``data`` in the
backward pass instead of keeping it: a memory trade that leaves every value unchanged.
relayir's gradient keeps what it computed, so here the hint returns ``data`` itself
(the values, and the gradients, are those Relay computes; the text shows no call)."""

from ..error import refusing_module


def checkpoint(data):
    return data


__getattr__ = refusing_module(__name__, "relayir has no annotation ops (one device, no "
                              "external codegens, no fusion hints)")
