"""``relay.vision`` (``relay.op.vision``): relayir's ``vision`` ops; a Relay op relayir lacks
is an AttributeError saying so."""

from ....op import vision as _vision
from ....op.vision import *  # noqa: F403
from ...error import missing_attribute

__all__ = [n for n in dir(_vision) if not n.startswith("_") and callable(getattr(_vision, n))]


def __getattr__(name: str):
    raise missing_attribute(__name__, name)
