"""``relay.qnn.transform``: Relay's QNN passes over relayir's.

``CanonicalizeOps`` is relayir's ``CanonicalizeQNN`` (every QNN op lowered to integer
and float ops; relayir's arithmetic, docs/tvm-compat.md) followed by Relay's type
annotation, as Relay's function passes end. ``Legalize`` runs the hooks registered with
``register_qnn_legalize`` / ``TempOpAttr(op, "FTVMQnnLegalize", fn)``: relayir has no
per-target QNN legalisations of its own (Relay's turns uint8 x int8 products into the
dtypes a target's instructions take; relayir's lowering picks those itself).
"""

from ....transform.canonicalize_qnn import CanonicalizeQNN
from .. import transform as _relay_transform
from ..transform import relay_pass


def Legalize():  # noqa: N802 (Relay's name)
    return _relay_transform.Legalize("FTVMQnnLegalize")


def CanonicalizeOps():  # noqa: N802 (Relay's name)
    """relayir's ``CanonicalizeQNN`` under Relay's name."""
    return relay_pass(CanonicalizeQNN())


__all__ = ["CanonicalizeOps", "Legalize"]
