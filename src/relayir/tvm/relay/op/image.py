"""``relay.image`` (``relay.op.image``): relayir's ``image`` ops; a Relay op relayir lacks
is an AttributeError saying so."""

import functools
import inspect

from ....errors import Error
from ....ir.expr import Constant, Expr
from ....op import image as _image
from ....op.image import *  # noqa: F403
from ...error import missing_attribute
from ._dilation2d import dilation2d  # noqa: F401  (relay.image.dilation2d)
from ._dyn_resize import dynamic_resize

__all__ = [n for n in dir(_image) if not n.startswith("_") and callable(getattr(_image, n))]
__all__.append("dilation2d")


def _relay_rounding(resize, n: int):
    """``resize`` with Relay's (TOPI's) default rounding for a nearest-neighbour resize
    given no ``rounding_method``: half up with ``align_corners``, down otherwise.
    relayir's own op rounds to nearest by default (docs/tvm-compat.md, "Deliberate
    differences"); code written for Relay gets Relay's answer. A ``size`` expression
    (not a constant) makes it the dynamic resize, as in Relay."""
    signature = inspect.signature(resize)

    @functools.wraps(resize)
    def wrapped(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        if a["method"] in ("nearest_neighbor", "nearest") and not a["rounding_method"]:
            a["rounding_method"] = ("round_prefer_ceil"
                                    if a["coordinate_transformation_mode"] == "align_corners"
                                    else "floor")
        if isinstance(a["size"], Expr) and not isinstance(a["size"], Constant):
            if a["scales"] is not None:
                raise Error("relay.image.resize: scales with a size expression")
            a.pop("scales")
            return dynamic_resize(n, **a)
        return resize(*bound.args, **bound.kwargs)

    return wrapped


resize1d = _relay_rounding(_image.resize1d, 1)
resize2d = _relay_rounding(_image.resize2d, 2)
resize3d = _relay_rounding(_image.resize3d, 3)


def __getattr__(name: str):
    raise missing_attribute(__name__, name)
