"""``tvm.target.target``: the module TVM defines ``Target`` in (the same names as
``tvm.target``)."""

from . import DEVICE_KINDS, Target, VirtualDevice, create

__all__ = ["DEVICE_KINDS", "Target", "VirtualDevice", "create"]
