"""``DynamicToStatic``: a ``dyn.*`` call whose shape inputs are constants becomes the
static op (TVM's pass of the same name).

``dyn.reshape(%x, [2, -1])`` is ``reshape(%x, newshape=[2, -1])``: the static op has
a compute (the ``dyn`` op runs through its numpy reference only), fuses, and its
result type has static extents, which the types of everything downstream inherit.

One named rewrite rule (``transform.rewrite``) per op, named after it:

- ``shape_of``: ``shape_of`` of a tensor whose type is static → that shape, a constant;
- one rule per ``dyn`` op of ``op.dynamic.DYNAMIC`` (``dyn.reshape``,
  ``dyn.broadcast_to``, ``dyn.tile``, ``dyn.strided_slice``, ``dyn.zeros``/``ones``/
  ``full``, ``dyn.nn.pad``, ``dyn.arange``): when every shape input is a constant, or
  is computed from constants only (``shape_of`` → ``take`` → ``concatenate`` once the
  ``shape_of`` is a constant), the static op, with attributes made by the op's own
  ``DYNAMIC`` entry, the same one its reference uses, so the rewrite keeps meaning.

The dyn rules refine types (``Rule(refines_type=True)``): ``rewrite`` re-types the nodes
above a rewritten call from their children as it goes (op relations, not a module-wide
inference), so one bottom-up sweep turns a whole chain of computed shapes static: a
``shape_of`` above a rewritten call already sees the static type.

When rules fired, the module is then constant folded (``fold_constant``, which keeps
types), as TVM's pass does: that folds what the new constants made constant, including
``let``-bound shape computations the rules cannot see through, and if it changed
anything the rules sweep again. ``PassContext(config={"relay.DynamicToStatic.debug":
True})`` prints which rules fired.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial

import numpy as np

from ..ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem
from ..ir.module import IRModule
from ..ir.op import get_op
from ..ir.types import TensorType, TupleType
from ..op.dynamic import DYNAMIC, DataShapeUnknown, DynamicOp
from ..typing.infer import infer_module
from .fold_constant import fold_constant
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .rewrite import MatchResult, Rule, fired_text, is_op, rewrite_module, wildcard

DEBUG_KEY = "relay.DynamicToStatic.debug"
_MAX_ROUNDS = 16  # of rules then folding


def _foldable_inputs(e: Expr) -> tuple | None:
    """The inputs ``FoldConstant`` would need constant to fold ``e``; None if it never
    folds ``e`` (a variable, a call of a function, an op call without arguments)."""
    t = type(e)
    if t is Constant:
        return ()
    if t is Call and type(e.op) is Op and e.args:
        return e.args
    if t is Tuple:
        return e.fields
    if t is TupleGetItem:
        return (e.tuple_value,)
    return None


class _ShapeInputFolder:
    """Folds a shape input computed from constants only to the constant it always is.

    Whether a node is computed from constants only is memoised for the whole pass (the
    shape inputs of a graph share their inputs); the walk is an explicit stack that
    stops at the first input that is not."""

    def __init__(self) -> None:
        self.constant_only: dict[Expr, bool] = {}

    def __call__(self, e: Expr) -> Constant | None:
        if type(e) is Constant:
            return e
        if not self._constant_only(e):
            return None
        folded = fold_constant(e)
        return folded if type(folded) is Constant else None

    def _constant_only(self, root: Expr) -> bool:
        memo = self.constant_only
        if root in memo:
            return memo[root]
        inputs = _foldable_inputs(root)
        if inputs is None:
            memo[root] = False
            return False
        stack = [(root, iter(inputs))]
        while stack:
            node, pending = stack[-1]
            child = next(pending, None)
            while child is not None and memo.get(child) is True:
                child = next(pending, None)
            if child is None:
                memo[node] = True
                stack.pop()
                continue
            inputs = None if memo.get(child) is False else _foldable_inputs(child)
            if inputs is None:  # so is every node on the path down to it
                memo[child] = False
                for n, _ in stack:
                    memo[n] = False
                return False
            stack.append((child, iter(inputs)))
        return True


def _shape_of_static(m: MatchResult) -> Expr | None:
    x = m["x"]
    ty = x.checked_type if x.has_type else None
    if not isinstance(ty, TensorType) or not ty.is_static:
        return None
    return Constant(np.asarray(ty.shape, dtype=m.node.attrs.dtype))


def _to_static(spec: DynamicOp, fold: _ShapeInputFolder, m: MatchResult) -> Expr | None:
    call = m.node
    args = list(call.args)
    for i in spec.shape_args:
        args[i] = fold(args[i])
        if args[i] is None:
            return None
    try:
        data, attrs = spec.static_call_parts(
            [a.data if i in spec.shape_args else a for i, a in enumerate(args)], call.attrs)
    except DataShapeUnknown:  # the static attrs need a data shape known only at run time
        return None
    return Call(get_op(spec.static), tuple(data), attrs).with_span(call.span)


def dynamic_to_static_rules() -> list[Rule]:
    """The rules, named after the op each rewrites: ``shape_of`` and every ``dyn`` op."""
    fold = _ShapeInputFolder()  # one memo for the whole pass
    rules = [Rule("shape_of", is_op("shape_of")(wildcard("x")), _shape_of_static)]
    for name, spec in DYNAMIC.items():
        fn: Callable[[MatchResult], Expr | None] = partial(_to_static, spec, fold)
        rules.append(Rule(name, is_op(name).any_args(), fn, refines_type=True))
    return rules


def dynamic_to_static(mod: IRModule, debug: bool = False) -> IRModule:
    rules = dynamic_to_static_rules()
    fired: Counter = Counter()
    for _ in range(_MAX_ROUNDS):
        before = sum(fired.values())
        mod = rewrite_module(mod, rules, stats=fired)
        if sum(fired.values()) == before:
            break
        folded = {gv: fold_constant(fn) for gv, fn in mod.functions.items()}
        unchanged = all(folded[gv] is fn for gv, fn in mod.functions.items())
        mod = mod.with_functions(folded)
        if unchanged:
            break
    if debug:
        print(f"DynamicToStatic: rules fired: {fired_text(fired)}")
    return _static_return_types(mod) if fired else mod


def _has_any(ty) -> bool:
    if isinstance(ty, TensorType):
        return not ty.is_static
    return isinstance(ty, TupleType) and any(_has_any(f) for f in ty.fields)


def _static_return_types(mod: IRModule) -> IRModule:
    """A function's return type annotated with ``?`` dims (as inference wrote it before
    the pass) is dropped and inferred again, so a body the pass made static gives the
    function a static type."""
    stale = {gv: fn for gv, fn in mod.functions.items()
             if isinstance(fn, Function) and _has_any(fn.ret_type)}
    if not stale:
        return mod
    fresh = {gv: Function(fn.params, fn.body, None, fn.type_params, fn.attrs)
             for gv, fn in stale.items()}
    return infer_module(mod.with_functions({**mod.functions, **fresh}))


@module_pass(opt_level=0, name="DynamicToStatic")
def _dynamic_to_static(mod: IRModule, ctx: PassContext) -> IRModule:
    return dynamic_to_static(mod, debug=bool(ctx.config.get(DEBUG_KEY)))


def DynamicToStatic() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``DynamicToStatic``: ``dyn.*`` ops with constant shape inputs → static ops."""
    return _dynamic_to_static


register_pass("DynamicToStatic", DynamicToStatic)
