"""Post-training quantization (Relay's ``relay.quantize``, ONNX Runtime's
``quantize_static`` / ``quantize_dynamic``): ``quantize(mod, params, dataset, mode)``.

``mode="static"`` calibrates on ``dataset`` (a list of ``{input name: array}``; ranges by
min / max or a percentile) and returns the model in QDQ form: uint8 per-tensor
activations, int8 per-channel symmetric weights, int32 biases — the scheme and the form
of ``quantize_static``; ``build`` runs it as int8 (``FakeQuantizationToInteger``).
``mode="dynamic"`` needs no dataset: dense / matmul weights become int8 now and their
inputs are quantized at every call (transformers). Layers that stay float:
convolutions with groups, other layouts, products without a constant weight.
"""

from __future__ import annotations

from ..backend import build
from ..ir.expr import Function, const
from ..ir.module import IRModule
from ..runtime.graph_executor import GraphModule
from ..transform import InferType, PassContext, bind_params, optimize
from .calibrate import QuantizationError, check_dataset, collect_ranges
from .qdq import DynamicRewriter, StaticRewriter, plan_static

__all__ = ["QuantizationError", "quantize"]


def _run_graph(mod: IRModule, inputs: list) -> list:
    with PassContext(opt_level=2):
        lib = build(mod, target="cpu")
    m = GraphModule(lib)
    for i, v in enumerate(inputs):
        m.set_input(i, v)
    m.run()
    return [m.get_output(k) for k in range(m.get_num_outputs())]


def _prepared(mod: IRModule, params) -> IRModule:
    """Weights bound and folded (batch norms into the convolutions), float graph kept."""
    if params:
        mod = bind_params(mod, {k: const(v) if not hasattr(v, "checked_type") else v
                                for k, v in params.items()})
    mod = InferType()(mod)
    with PassContext(opt_level=3):
        return InferType()(optimize(mod, fuse=False))


def quantize(mod: IRModule, params: dict | None = None, dataset=None, mode: str = "static",
             calibration: str = "minmax", percentile: float = 99.99) -> IRModule:
    """The quantized model (QDQ form for ``static``, QNN for ``dynamic``), float in and
    out; ``relay.build`` runs it as int8."""
    if mode not in ("static", "dynamic"):
        raise QuantizationError(f"mode must be 'static' or 'dynamic', found {mode!r}")
    mod = _prepared(mod, params)
    fn = mod["main"]
    if mode == "dynamic":
        rw = DynamicRewriter()
        body = rw.visit(fn.body)
        if not rw.count:
            raise QuantizationError("no quantizable op: dynamic mode quantizes dense / matmul "
                                    "layers with a constant weight, the model has none")
    else:
        chains, adds = plan_static(fn)
        if not chains:
            raise QuantizationError("no quantizable op: static mode quantizes conv2d (NCHW, "
                                    "one group) / dense / matmul layers with a constant "
                                    "weight, the model has none")
        samples = check_dataset(fn, dataset)
        tensors = list(dict.fromkeys(
            [ch.anchor.args[0] for ch in chains] + [ch.end for ch in chains] + adds))
        ranges = collect_ranges(mod, tensors, samples, _run_graph, calibration, percentile)
        body = StaticRewriter(chains, adds, dict(zip(tensors, ranges))).visit(fn.body)
    return InferType()(IRModule.from_expr(Function(fn.params, body)))
