"""The optimisation pipeline that ``build`` and ``vm.compile`` run, by opt level.

One ``Sequential``; each pass runs when the ``PassContext``'s opt level reaches the
level the pass declares (or it is required, and it is not disabled):

=====  ========================  ==========================================================
level  pass                      why
=====  ========================  ==========================================================
0      SimplifyInference         batch_norm / layer_norm / dropout become plain arithmetic
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
2      FoldConstant              fold the expanded biases
3      EliminateCommonSubexpr    compute each distinct expression once
1      DeadCodeElimination       drop unused pure bindings
0      FuseOps                   group ops into primitive functions (kernels); at opt
                                 level 0 every op gets its own function
=====  ========================  ==========================================================

Opt level 2 is the default, as in Relay. ``ConvertLayout`` is not in the pipeline: it
takes the layouts the user wants (``ConvertLayout({"nn.conv2d": ["NHWC", "default"]})``).
"""

from __future__ import annotations

from ..ir.module import IRModule
from .canonicalize_ops import CanonicalizeOps
from .dead_code import DeadCodeElimination
from .dynamic_to_static import DynamicToStatic
from .eliminate_common_subexpr import EliminateCommonSubexpr
from .fold_constant import FoldConstant
from .fold_scale_axis import FoldScaleAxis
from .fuse_ops import FuseOps
from .pass_infra import Sequential
from .simplify_expr import SimplifyExpr
from .simplify_inference import SimplifyInference


def optimize_passes(fuse: bool = True) -> Sequential:
    """The pipeline as a ``Sequential`` (``fuse=False`` stops before ``FuseOps``)."""
    passes = [
        SimplifyInference(),
        SimplifyExpr(),
        DynamicToStatic(),
        FoldConstant(),
        FoldScaleAxis(),
        FoldConstant(),
        CanonicalizeOps(),
        FoldConstant(),
        EliminateCommonSubexpr(),
        DeadCodeElimination(),
    ]
    if fuse:
        passes.append(FuseOps())
    return Sequential(passes, name="optimize")


def optimize(mod: IRModule, fuse: bool = True) -> IRModule:
    """Run the pipeline under the current ``PassContext``."""
    return optimize_passes(fuse)(mod)
