"""``tvm.ir.instrument``: TVM's pass instruments are not part of relayir.tvm. relayir's
``PassContext`` carries its own instruments (timing, print-IR-after:
``relayir.transform.pass_infra``); TVM's ``pass_instrument`` decorator and
``PassInstrument`` / ``PassTimingInstrument`` classes raise ``NotInRelayirError``."""

from ..error import refusing_module

__getattr__ = refusing_module(__name__, "relayir's PassContext has its own instruments "
                              "(relayir.transform.pass_infra), not TVM's")
