"""The compute table: a tensor-expression definition per operator, keyed by op name.

``COMPUTE.get("add")(attrs, inputs, out)`` builds the op's output tensor(s); importing
this package fills the table (one module per op family).
"""

from ... import op as _op  # noqa: F401  (the ops must be registered first)
from . import (  # noqa: F401
    algorithm,
    conv,
    conv_nchwc,
    dynamic,
    elementwise,
    image,
    nn,
    pool,
    qnn,
    recurrent,
    reduce,
    scatter,
    sparse,
    transform,
    vision,
    winograd,
)
from .common import COMPUTE, REFERENCE_ONLY, OutType, declare_reference_only

__all__ = ["COMPUTE", "REFERENCE_ONLY", "OutType", "declare_reference_only"]
