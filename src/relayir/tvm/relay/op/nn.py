"""``relay.nn`` (``relay.op.nn``): relayir's ``nn`` ops; ``batch_norm`` and
``dropout_raw`` return a ``TupleWrapper`` as in Relay."""

from ....op.nn import *  # noqa: F403
from ....op.nn import __all__ as _nn_all
from ....op.nn import depth_to_space as _depth_to_space
from ...error import missing_attribute
from ._composed_nn import dilate, mirror_pad, nll_loss  # noqa: F401
from ._dyn_dispatch import pad  # noqa: F401
from ._dyn_resize import upsampling, upsampling3d  # noqa: F401
from ._like_ops import cross_entropy, cross_entropy_with_logits, l2_normalize  # noqa: F401
from ._tuple_ops import batch_norm, dropout_raw  # noqa: F401

# Relay calls the column-row-depth channel order "CDR"; relayir (and ONNX) "CRD"
RELAY_DEPTH_TO_SPACE_MODES = {"CDR": "CRD"}


def depth_to_space(data, block_size, layout: str = "NCHW", mode: str = "DCR"):
    """relayir's ``nn.depth_to_space``; Relay's ``mode="CDR"`` is its ``"CRD"``."""
    return _depth_to_space(data, block_size, layout,
                           RELAY_DEPTH_TO_SPACE_MODES.get(mode, mode))


__all__ = [*_nn_all, "cross_entropy", "cross_entropy_with_logits", "dilate", "l2_normalize",
           "mirror_pad", "nll_loss", "upsampling3d"]


def __getattr__(name: str):
    raise missing_attribute(__name__, name)
