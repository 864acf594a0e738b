"""``relay.qnn.op``: the QNN constructors under Relay's path (``relay.qnn.op.conv2d``)."""

from .convert import dequantize, quantize, requantize
from .elemwise import add, avg_pool2d, concatenate, mul
from .linear import batch_matmul, conv2d, dense

__all__ = ["add", "avg_pool2d", "batch_matmul", "concatenate", "conv2d", "dense",
           "dequantize", "mul", "quantize", "requantize"]
