"""``tvm.topi``: only ``topi.testing`` (numpy references that tests compare with)."""

from . import testing, utils

__all__ = ["testing", "utils"]
