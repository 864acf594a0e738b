"""``tvm.topi``: only ``topi.testing`` (numpy references that tests compare with); the
TOPI modules relayir has no counterpart for (``topi.x86``, ``topi.cuda``, ...) are
``relayir.tvm._absent``'s, whose names raise ``NotInRelayirError`` when used."""

import sys

from ..error import missing_attribute
from . import testing, utils


def __getattr__(name: str):
    absent = sys.modules.get(f"{__name__}.{name}")  # made by relayir.tvm._absent
    if absent is None:
        raise missing_attribute(__name__, name)
    return absent


__all__ = ["testing", "utils"]
