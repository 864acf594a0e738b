"""``qnn.*`` gradients: refused. Their outputs are rounded integers; training through
quantization differentiates a float model with fake-quantize (straight-through) ops."""

from __future__ import annotations

from ....op import qnn as _qnn

REFUSED = {f"qnn.{name}": "quantized integer ops are not differentiable; train the float "
                          "model (with fake quantization) and quantize afterwards"
           for name in (*_qnn.op.__all__, "contrib_dense_packed",
                                             "contrib_conv2d_packed", "contrib_depthwise_conv2d",
                                             "contrib_conv2d_packed_requant",
                                             "contrib_depthwise_conv2d_requant")}
