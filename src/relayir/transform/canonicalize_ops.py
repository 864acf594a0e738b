"""``CanonicalizeOps``: rewrite ops into simpler, more fusable ones (TVM opt level 3).

``nn.bias_add(x, b, axis)`` becomes a broadcasting ``add(x, expand_dims(b, ...))``: the
bias gets trailing unit axes so that it lines up with ``axis`` of ``x``. An ``add`` is
an ordinary broadcast op that fusion and the scale-folding passes already understand,
and with a constant bias ``FoldConstant`` folds the ``expand_dims`` away.
"""

from __future__ import annotations

from ..errors import Error
from ..ir.expr import Expr
from ..ir.module import IRModule
from ..ir.op import call
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .rewrite import MatchResult, Rule, infer_new, is_op, rewrite_module, wildcard


def expand_bias_to_axis(bias: Expr, ndim: int, axis: int) -> Expr:
    """TVM's ``ExpandBiasToMatchAxis``: a 1-D per-channel tensor for channel ``axis`` of a
    rank-``ndim`` tensor, with the unit axes after it that make it broadcast there."""
    axis = axis % ndim if ndim else 0
    trailing = ndim - axis - 1
    return call("expand_dims", [bias], axis=1, num_newaxis=trailing) if trailing > 0 else bias


def same_type_or_none(new: Expr, node: Expr) -> Expr | None:
    """``new`` (typed here, only its new nodes) if it has exactly ``node``'s type; None
    if its type differs or it is not well typed (a rule then declines)."""
    try:
        infer_new(new)
    except Error:
        return None
    return new if new.checked_type == node.checked_type else None


def _bias_add(m: MatchResult) -> Expr | None:
    x, b = m["x"], m["b"]
    ndim = x.checked_type.ndim
    new = call("add", [x, expand_bias_to_axis(b, ndim, m.node.attrs.axis)])
    return same_type_or_none(new, m.node)


RULES = [Rule("bias_add-to-add", is_op("nn.bias_add")(wildcard("x"), wildcard("b")), _bias_add)]


@module_pass(opt_level=3, name="CanonicalizeOps")
def _canonicalize_ops(mod: IRModule, ctx: PassContext) -> IRModule:
    debug = bool(ctx.config.get("relay.CanonicalizeOps.debug"))
    return rewrite_module(mod, RULES, "CanonicalizeOps", debug)


def CanonicalizeOps() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``CanonicalizeOps`` (opt level 3): ``nn.bias_add`` → broadcasting ``add``."""
    return _canonicalize_ops


register_pass("CanonicalizeOps", CanonicalizeOps)
