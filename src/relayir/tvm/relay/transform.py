"""``relay.transform``: relayir's passes under Relay's names and signatures.

Differences from ``relayir.transform``, each to match Relay:

- ``InferType`` and every pass that is a *function* pass in Relay leave the module typed
  *and annotated*, as Relay's type checker does (``update_missing_type_annotation``):
  a function without a return type gets one, a variable without an annotation gets its
  type (``_annotate.py``). relayir's passes only attach checked types, so each of
  these is relayir's pass followed by that step; Relay's module passes
  (``DeadCodeElimination``, ``ToANormalForm``, ``LambdaLift``, ``Inline``,
  ``RemoveUnusedFunctions``) are relayir's unchanged;
- ``gradient`` defaults to ``mode="higher_order"`` (relayir: ``"first_order"``);
- ``FoldConstant(fold_qnn)``, ``DeadCodeElimination(inline_once, ignore_impurity)``
  take Relay's arguments (relayir folds QNN calls as any op and always keeps effects);
- ``Legalize`` runs the hooks registered from Python (``register_legalize``,
  ``TempOpAttr``; relayir has no target legalisations of its own);
  ``AnnotateSpans`` is an identity pass (relayir keeps no spans from Python-built code).

``PassContext``, ``Sequential`` and ``module_pass`` are relayir's (``tvm.transform``);
``function_pass`` is relayir's followed by the type annotation, as Relay's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ... import transform as _t
from ...errors import Error
from ...ir.expr import Function, GlobalVar
from ...ir.module import IRModule
from ...transform.pass_infra import (
    FunctionPass,
    ModulePass,
    Pass,
    PassInfo,
    Sequential,
    module_pass,
)
from ...transform.pass_infra import function_pass as _function_pass
from ...typing.infer import infer_expr
from ..error import NotInRelayirError, missing_attribute, not_in_relayir
from ..transform import PassContext, PrintIR
from ._annotate import fill_missing_annotations
from ._change_batch import change_batch
from ._div_to_mul import div_to_mul
from ._eta_expand import eta_expand
from ._legalize import hook_table, legalize_pass

GRADIENT_MODES = ("higher_order", "first_order")
__path__: list[str] = []  # a package in TVM: its submodules (tvm/_absent.py) import below it


def _annotated(mod: IRModule) -> IRModule:
    """``mod`` typed, with the inferred types written in (Relay's InferType). The typing
    runs as part of the calling pass: instruments see that pass only."""
    infer, ctx = _t.InferType(), PassContext.current()
    typed = infer.transform(mod, ctx)
    filled, changed = fill_missing_annotations(typed)
    return infer.transform(filled, ctx) if changed else typed


def relay_pass(inner: Pass) -> Pass:
    """relayir's pass ``inner`` followed by Relay's type annotation, under the same
    name and opt level (so ``disabled_pass`` and opt levels apply unchanged)."""
    return ModulePass(lambda mod, ctx: _annotated(inner.transform(mod, ctx)), inner.info)


def _relay(factory: Callable[..., Pass]) -> Callable[..., Pass]:
    def make(*args, **kwargs) -> Pass:
        return relay_pass(factory(*args, **kwargs))

    make.__name__ = factory.__name__
    make.__doc__ = factory.__doc__
    return make


class _TypedFunctionPass(FunctionPass):
    """A ``FunctionPass`` whose result is typed with the types written in (Relay's)."""

    def transform(self, mod, ctx):
        return _annotated(super().transform(mod, ctx))


def function_pass(pass_func=None, opt_level: int | None = None, name: str | None = None,
                  required=None):
    """Relay's ``function_pass`` (a function or a class with ``transform_function``): as
    in Relay, the module is typed (types written in) after the functions are rewritten."""

    def create(fn_or_cls):
        made = _function_pass(fn_or_cls, opt_level=opt_level, name=name, required=required)
        if isinstance(made, Pass):
            return _TypedFunctionPass(made.fn, made.info)

        @functools.wraps(made, updated=())
        def factory(*args, **kwargs):
            inner = made(*args, **kwargs)
            return _TypedFunctionPass(inner.fn, inner.info)

        return factory

    return create(pass_func) if pass_func is not None else create


def InferType() -> Pass:  # noqa: N802 (Relay's names)
    """Relay's ``InferType``: every node typed, the inferred types written in."""
    return ModulePass(lambda mod, ctx: _annotated(mod), PassInfo("InferType", 0))


BackwardFoldScaleAxis = _relay(_t.BackwardFoldScaleAxis)
CanonicalizeOps = _relay(_t.CanonicalizeOps)
ConvertLayout = _relay(_t.ConvertLayout)
DefuseOps = _relay(_t.DefuseOps)
DynamicToStatic = _relay(_t.DynamicToStatic)
EliminateCommonSubexpr = _relay(_t.EliminateCommonSubexpr)
FoldScaleAxis = _relay(_t.FoldScaleAxis)
ForwardFoldScaleAxis = _relay(_t.ForwardFoldScaleAxis)
FuseOps = _relay(_t.FuseOps)
SimplifyExpr = _relay(_t.SimplifyExpr)
SimplifyInference = _relay(_t.SimplifyInference)
ToGraphNormalForm = _relay(_t.ToGraphNormalForm)
ToMixedPrecision = _relay(_t.ToMixedPrecision)


def FoldConstant(fold_qnn: bool = False) -> Pass:  # noqa: N802 (Relay's names)
    """relayir folds QNN calls as it folds any op, whatever ``fold_qnn`` says."""
    return relay_pass(_t.FoldConstant())


def FakeQuantizationToInteger(hard_fail: bool = False, use_qat: bool = False,  # noqa: N802
                              optional_qnn_ops=None) -> Pass:
    """relayir's pass: a region it cannot convert stays in float. Relay's ``hard_fail``
    (raise on such a region), ``use_qat`` (convert the ops between regions too) and
    ``optional_qnn_ops`` are not offered."""
    for given, what in ((hard_fail, "hard_fail=True"), (use_qat, "use_qat=True"),
                        (optional_qnn_ops, "optional_qnn_ops")):
        if given:
            raise NotInRelayirError(
                f"tvm.relay.transform.FakeQuantizationToInteger({what}) is not part of "
                f"relayir: its pass converts the regions it has rules for and leaves the "
                f"rest in float")
    return relay_pass(_t.FakeQuantizationToInteger())


def DeadCodeElimination(inline_once: bool = False, ignore_impurity: bool = False) -> Pass:  # noqa: N802
    """``ignore_impurity`` is not offered: relayir keeps bindings with effects."""
    return _t.DeadCodeElimination(inline_once=inline_once)


# Relay's module passes: no type annotation afterwards
Inline = _t.Inline
LambdaLift = _t.LambdaLift
RemoveUnusedFunctions = _t.RemoveUnusedFunctions
ToANormalForm = _t.ToANormalForm
ToBasicBlockNormalForm = _t.ToBasicBlockNormalForm


def build_config(opt_level: int = 2, required_pass=None, disabled_pass=None, trace=None):
    """Relay's older spelling of ``tvm.transform.PassContext``; ``trace`` is not offered."""
    if trace is not None:
        raise NotInRelayirError("tvm.relay.build_config(trace=...) is not part of relayir: "
                                "use PassContext(instruments=...)")
    return PassContext(opt_level=opt_level, required_pass=required_pass,
                       disabled_pass=disabled_pass)


def gradient(expr, mod=None, mode: str = "higher_order"):
    """Relay's ``gradient``: ``fn(x..) -> y`` → ``fn(x..) -> (y, (dx..))``; the default
    mode is ``higher_order`` as in Relay; ``expr`` may be a global of ``mod``."""
    if isinstance(expr, GlobalVar):
        if mod is None:
            raise Error(f"gradient(@{expr.name_hint}) needs the module that defines it")
        expr = mod[expr]
    return _t.gradient(expr, mod=mod, mode=mode)


def ToANormalFormExpr(e):  # noqa: N802
    """A-normal form of one expression (the pass applied to a module holding it)."""
    mod = _t.ToANormalForm()(IRModule.from_expr(e))
    return mod["main"] if isinstance(e, Function) else mod["main"].body


def _identity(name: str):
    def make(*args, **kwargs) -> Pass:
        return ModulePass(lambda mod, ctx: mod, PassInfo(name, 0))

    make.__name__ = name
    make.__doc__ = f"``{name}``: an identity pass in relayir (see docs/tvm-compat.md)."
    return make


def Legalize(legalize_map_attr_name: str = "FTVMLegalize") -> Pass:  # noqa: N802
    """Relay's ``Legalize``: the registered hooks (``relay/_legalize.py``); relayir has
    none of its own, so without hooks it changes nothing."""
    hook_table(legalize_map_attr_name, "tvm.relay.transform.Legalize")
    return relay_pass(legalize_pass(legalize_map_attr_name))


AnnotateSpans = _identity("AnnotateSpans")


def EtaExpand(expand_constructor: bool = False, expand_global_var: bool = False) -> Pass:  # noqa: N802
    """Relay's ``EtaExpand``: uncalled globals / constructors become functions."""
    return relay_pass(module_pass(
        lambda mod, ctx: eta_expand(mod, expand_constructor, expand_global_var),
        opt_level=1, name="EtaExpand"))


def ChangeBatch(data, batch_size: int = 16) -> Pass:  # noqa: N802
    """Relay's ``ChangeBatch``: each variable of ``data`` gets ``batch_size`` on the axis
    given for it, and the module is typed again (``_change_batch.py``)."""
    return relay_pass(module_pass(lambda mod, ctx: change_batch(mod, data, batch_size),
                                  opt_level=1, name="ChangeBatch"))


def DivToMul() -> Pass:  # noqa: N802
    """Relay's ``DivToMul``: division by a float constant becomes multiplication by its
    reciprocal (may change results by an ulp; see ``_div_to_mul.py``)."""
    return relay_pass(module_pass(lambda mod, ctx: div_to_mul(mod), opt_level=0,
                                  name="DivToMul"))


def InferTypeLocal(expr):  # noqa: N802
    """The type of ``expr`` (inferred without a module pass)."""
    return infer_expr(expr).checked_type


__all__ = ["AnnotateSpans", "BackwardFoldScaleAxis", "CanonicalizeOps", "ChangeBatch",
           "ConvertLayout",
           "DeadCodeElimination", "DefuseOps", "DivToMul", "DynamicToStatic",
           "EliminateCommonSubexpr", "EtaExpand",
           "FakeQuantizationToInteger",
           "FoldConstant", "FoldScaleAxis", "ForwardFoldScaleAxis", "FunctionPass", "FuseOps",
           "GRADIENT_MODES", "InferType", "InferTypeLocal", "Inline", "LambdaLift", "Legalize",
           "ModulePass", "Pass", "PassContext", "PassInfo", "PrintIR", "RemoveUnusedFunctions",
           "Sequential", "SimplifyExpr", "SimplifyInference", "ToANormalForm",
           "ToANormalFormExpr", "ToBasicBlockNormalForm", "ToGraphNormalForm", "ToMixedPrecision",
           "function_pass",
           "gradient", "module_pass", "relay_pass", "build_config"]


# Relay passes relayir does not have: the names import, a call says so
_NOT_OFFERED = ("recast", "FastMath", "PartialEvaluate", "LazyGradientInit", "ToCPS",
                "UnCPS", "Defunctionalization", "PlanDevices",
                "ManifestLifetimes", "CombineParallelConv2D",
                "CombineParallelDense", "CombineParallelBatchMatmul", "SplitArgs",
                "FlattenAtrousConv", "FoldExplicitPadding", "SimplifyFCTranspose",
                "Conv2dToSparse", "DenseToSparse", "FlexibleShapeDispatch",
                "CapturePostDfsIndexInSpans",
                "CanonicalizeCast", "BatchingOps", "AnnotateTarget", "MergeComposite",
                "MergeCompilerRegions", "PartitionGraph", "InferTypeLocal", "to_cps", "un_cps")
for _name in _NOT_OFFERED:
    if _name not in globals():
        globals()[_name] = not_in_relayir(f"tvm.relay.transform.{_name}",
                                          "relayir has no such pass")


def __getattr__(name: str):
    raise missing_attribute(__name__, name)
