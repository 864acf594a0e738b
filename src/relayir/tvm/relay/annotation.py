"""``relay.annotation`` (``relay.op.annotation``): not part of relayir. relayir has one
device (no ``on_device``), no external-codegen regions (``compiler_begin`` /
``compiler_end``), and its fusion and gradient passes take no hints (``stop_fusion``,
``checkpoint``); each name raises ``NotInRelayirError`` when used."""

from ..error import refusing_module

__getattr__ = refusing_module(__name__, "relayir has no annotation ops (one device, no "
                              "external codegens, no fusion or checkpoint hints)")
