"""The optimisation pipeline that ``build`` and ``vm.compile`` run, by opt level.

One ``Sequential``; each pass runs when the ``PassContext``'s opt level reaches the
level the pass declares (or it is required, and it is not disabled):

=====  ========================  ==========================================================
level  pass                      why
=====  ========================  ==========================================================
0      FakeQuantizationToInteger dequantize → float op → quantize chains (QDQ models, as
                                 ONNX Runtime's quantize_static writes them) become
                                 integer QNN ops: the model runs as int8, as in ORT
0      CanonicalizeQNN           qnn.* ops (quantized models) become integer / float ops
                                 that have kernels; first, so that the later passes fold
                                 the weights' zero points and scale ratios
0      SimplifyInference         batch_norm / instance_norm / dropout become plain arithmetic
                                 for inference: kernels exist for arithmetic, and the
                                 arithmetic can fuse and fold
0      SimplifyExpr              algebraic identities, reshape/transpose pairs, no-op casts
0      DynamicToStatic           dyn.* ops whose shape inputs are constants (imported
                                 ONNX shape computations) become static ops: they get
                                 kernels, fuse, and give static types downstream
2      FoldConstant              evaluate constant subgraphs once at compile time
                                 (weights * batch-norm scales, shape computations)
3      FoldScaleAxis             fold per-channel scales into conv/dense weights, so the
                                 multiply disappears after folding
2      FoldConstant              fold the scaled weights FoldScaleAxis left as expressions
3      CanonicalizeOps           bias_add → broadcast add (one elementwise op for fusion)
2      ConvertLayout             cpu targets only: the int8 convolutions (and the integer
                                 ops between them) in NHWC, where a pixel's channels are
                                 what their routines read and write: no transposing copy
                                 per layer (levels 0-1 keep NCHW: the fuzzer compares both)
3      AlterOpLayout             cpu targets only: convolution networks in NCHW[x]c (x =
                                 the vector width) end to end, each conv's algorithm
                                 (direct, 1×1 GEMM, depthwise, Winograd) chosen per layer
2      FoldConstant              fold the expanded biases, and the packed (and
                                 Winograd-transformed) weights AlterOpLayout left as
                                 layout_transforms of constants
2      FuseRequantize            an NHWC int8 convolution and its requantize are one
                                 routine that stores uint8 (no int32 round trip)
3      EliminateCommonSubexpr    compute each distinct expression once
1      DeadCodeElimination       drop unused pure bindings
0      FuseOps                   group ops into primitive functions (kernels); at opt
                                 level 0 every op gets its own function
=====  ========================  ==========================================================

Opt level 2 is the default, as in Relay. ``ConvertLayout`` for float convolutions is not
in the pipeline: it takes the layouts the user wants (``ConvertLayout({"nn.conv2d":
["NHWC", "default"]})``); the pipeline runs it only for the int8 ones, from the default
level on: the int8 layers are only fast in NHWC, and a model quantized with defaults
should not be the slow one.

``AlterOpLayout`` depends on the target, which ``optimize`` takes from its caller
(``build``, ``vm.compile``): a ``Target`` of kind ``"cpu"`` adds the pass, with the
channel block of the CPU it generates code for (``Target.machine().nchwc_block``, the
machine table's: 16 floats on AVX-512, 8 on AVX2; 16 when a target does not say). The
``numpy`` target and callers that pass no target keep the graph as written.
"""

from __future__ import annotations

from ..ir.module import IRModule
from .alter_op_layout import AlterOpLayout
from .canonicalize_ops import CanonicalizeOps
from .canonicalize_qnn import CanonicalizeQNN
from .convert_layout import INT8_LAYOUTS, ConvertLayout
from .dead_code import DeadCodeElimination
from .dynamic_to_static import DynamicToStatic
from .eliminate_common_subexpr import EliminateCommonSubexpr
from .fake_quantization_to_integer import FakeQuantizationToInteger
from .fold_constant import FoldConstant
from .fold_scale_axis import FoldScaleAxis
from .fuse_ops import FuseOps
from .fuse_requantize import FuseRequantize
from .pass_infra import Sequential
from .simplify_expr import SimplifyExpr
from .simplify_inference import SimplifyInference


def _layout_pass(target) -> list:
    """``[ConvertLayout(INT8_LAYOUTS), AlterOpLayout]`` for a cpu target (read by duck
    typing: ``transform`` sits below ``backend``, where ``Target`` lives), else nothing."""
    if getattr(target, "kind", target) != "cpu":
        return []
    machine = getattr(target, "machine", None)  # Target.machine(): the CPU's vector unit
    width = getattr(machine(), "nchwc_block", None) if callable(machine) else None
    return [ConvertLayout(INT8_LAYOUTS, opt_level=2),
            AlterOpLayout(width if isinstance(width, int) and width > 0 else None)]


def optimize_passes(fuse: bool = True, target=None) -> Sequential:
    """The pipeline as a ``Sequential`` (``fuse=False`` stops before ``FuseOps``) for
    ``target`` (a ``Target``, its kind, or None)."""
    passes = [
        FakeQuantizationToInteger(),
        CanonicalizeQNN(),
        SimplifyInference(),
        SimplifyExpr(),
        DynamicToStatic(),
        FoldConstant(),
        FoldScaleAxis(),
        FoldConstant(),
        CanonicalizeOps(),
        *_layout_pass(target),
        FoldConstant(),
        FuseRequantize(),
        EliminateCommonSubexpr(),
        DeadCodeElimination(),
    ]
    if fuse:
        passes.append(FuseOps())
    return Sequential(passes, name="optimize")


def optimize(mod: IRModule, fuse: bool = True, target=None) -> IRModule:
    """Run the pipeline under the current ``PassContext``."""
    return optimize_passes(fuse, target)(mod)
