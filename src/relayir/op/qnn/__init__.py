"""The QNN dialect (``qnn.*``, Relay's ``relay.qnn.op``): operators on int8 / uint8
tensors that carry a scale and a zero point (``real = scale * (q - zero_point)``).

Scales are float32 and zero points int32, each a scalar (per tensor) or, for a kernel or
along a quantize axis, a vector (per channel). The numpy references are the semantics,
and they are ONNX Runtime's integer arithmetic (MLAS) exactly:

- products (``conv2d``, ``dense``, ``batch_matmul``) accumulate ``(q - zp)`` exactly in
  int32 and leave the scales to a following ``requantize``;
- ``quantize`` divides by the scale in float32; ``requantize`` multiplies the float32
  accumulator by the float32 ratio ``in_scale / out_scale``; both clamp, round half to
  even and add the zero point (saturation), the order MLAS uses;
- ``add`` / ``mul`` / ``concatenate`` / ``avg_pool2d`` compute in float32 from the
  centred integers and round once.

``contrib_dense_packed`` is the integer product the lowering targets: uint8 x int8
weights packed at build time for ``vpdpbusd`` (``packed.py``); the convolutions' forms
that requantize as they store are ``packed_requant.py``.

The float scale (not Relay's fixed-point multiplier and shift) is what makes the results
ONNX Runtime's bit for bit, and costs one convert and one multiply per output on CPUs.
``CanonicalizeQNN`` lowers every op here to plain integer and float ops before build.
"""

# registration (op: Relay's module of the names)
from . import convert, elemwise, linear, op, packed, packed_requant  # noqa: F401
from .convert import dequantize, quantize, requantize
from .elemwise import add, avg_pool2d, concatenate, mul
from .linear import batch_matmul, conv2d, dense

__all__ = ["add", "avg_pool2d", "batch_matmul", "concatenate", "conv2d", "dense",
           "dequantize", "mul", "quantize", "requantize"]
