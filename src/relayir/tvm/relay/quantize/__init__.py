"""``tvm.relay.quantize``: not part of relayir. Relay's automatic quantization
(``qconfig``, ``quantize(mod, params)`` with a global scale or KL-divergence calibration,
its ``annotate`` / ``partition`` / ``realize`` passes and ``simulated_quantize`` op) has
no counterpart to adapt: relayir's post-training quantization,
``relayir.quantize.quantize(mod, params, dataset, mode="static" | "dynamic")``, calibrates
by min / max or a percentile and writes the QDQ form that ONNX Runtime's
``quantize_static`` writes, so TVM's graphs and numbers are not what it gives. Every name
raises ``NotInRelayirError`` naming it."""

from ...error import refusing_module

WHY = ("relayir's post-training quantization is relayir.quantize.quantize(mod, params, "
       "dataset, mode), with its own calibration and the QDQ form, not Relay's qconfig / "
       "annotate / realize")
__getattr__ = refusing_module(__name__, WHY)
