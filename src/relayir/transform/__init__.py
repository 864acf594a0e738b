"""Passes over ``IRModule``s (Relay's ``relay.transform``).

Infrastructure: ``Pass``, ``Sequential``, ``PassContext``, ``module_pass``,
``function_pass``, instruments. The optimisation pipeline that ``build`` runs, with
the opt level of each pass and why it is there, is in ``transform.pipeline``.
"""

from ..typing.infer import infer_expr as infer_type
from .autodiff import gradient
from .bind import bind, bind_params
from .canonicalize_ops import CanonicalizeOps
from .canonicalize_qnn import CanonicalizeQNN
from .convert_layout import ConvertLayout
from .dead_code import DeadCodeElimination
from .dynamic_to_static import DynamicToStatic
from .eliminate_common_subexpr import EliminateCommonSubexpr
from .fake_quantization_to_integer import FakeQuantizationToInteger
from .fold_constant import FoldConstant
from .fold_scale_axis import BackwardFoldScaleAxis, FoldScaleAxis, ForwardFoldScaleAxis
from .fuse_ops import DefuseOps, FuseOps
from .inline import Inline
from .instrument import PassTimingInstrument, PrintIRAfter, VerifyAfterEachPass
from .lambda_lift import LambdaLift
from .pass_infra import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    Sequential,
    function_pass,
    get_pass,
    module_pass,
    register_pass,
)
from .pipeline import optimize, optimize_passes
from .remove_unused_functions import RemoveUnusedFunctions
from .simplify_expr import SimplifyExpr
from .simplify_inference import SimplifyInference
from .to_a_normal_form import ToANormalForm
from .to_basic_block_normal_form import ToBasicBlockNormalForm
from .to_graph_normal_form import ToGraphNormalForm
from .to_mixed_precision import ToMixedPrecision
from .type_check import InferType

__all__ = [
    "BackwardFoldScaleAxis", "CanonicalizeOps", "CanonicalizeQNN", "ConvertLayout",
    "DeadCodeElimination",
    "DefuseOps", "DynamicToStatic", "EliminateCommonSubexpr", "FakeQuantizationToInteger",
    "FoldConstant", "FoldScaleAxis",
    "ForwardFoldScaleAxis", "FunctionPass", "FuseOps", "InferType", "Inline", "LambdaLift",
    "ModulePass", "Pass", "PassContext", "PassInfo", "PassTimingInstrument", "PrintIRAfter",
    "RemoveUnusedFunctions", "Sequential", "SimplifyExpr", "SimplifyInference", "ToANormalForm",
    "ToBasicBlockNormalForm", "ToGraphNormalForm", "ToMixedPrecision", "VerifyAfterEachPass",
    "bind", "bind_params",
    "function_pass", "get_pass", "gradient", "infer_type", "module_pass", "optimize",
    "optimize_passes",
    "register_pass",
]
