"""``tvm.relay.qnn``: relayir's QNN dialect (``relayir.op.qnn``) under Relay's path, with
Relay's constructor signatures (``relay.qnn.op.conv2d(data, kernel, input_zero_point,
...)``) and passes (``relay.qnn.transform.CanonicalizeOps``)."""

from . import op, transform
from .op.qnn import *  # noqa: F403
from .op.qnn import __all__
