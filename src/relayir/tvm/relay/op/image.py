"""``relay.image`` (``relay.op.image``): relayir's ``image`` ops; a Relay op relayir lacks
is an AttributeError saying so."""

from ....op import image as _image
from ....op.image import *  # noqa: F403
from ...error import missing_attribute
from ._dilation2d import dilation2d  # noqa: F401  (relay.image.dilation2d)

__all__ = [n for n in dir(_image) if not n.startswith("_") and callable(getattr(_image, n))]
__all__.append("dilation2d")


def __getattr__(name: str):
    raise missing_attribute(__name__, name)
