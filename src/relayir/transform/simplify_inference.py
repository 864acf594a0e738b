"""``SimplifyInference``: normalisation and dropout into primitive arithmetic (opt level 0).

At inference ``nn.batch_norm`` is a per-channel affine map of its input. It becomes,
as in TVM's ``BatchNormToInferUnpack``::

    scale = rsqrt(moving_var + eps) * gamma       (gamma only if scale=True)
    shift = -moving_mean * scale + beta           (beta only if center=True)
    out   = x * expand(scale) + expand(shift)     (expand: unit axes after ``axis``)

Once the weights are constants, ``FoldConstant`` folds ``scale`` and ``shift`` into two
constants, and ``FoldScaleAxis`` can push the multiply into the preceding convolution.
The fold is exact arithmetic, not IEEE's: where constant statistics make ``scale`` or
``shift`` infinite or NaN (a zero variance with ``eps`` 0, an infinite gamma), ``x *
scale + shift`` would give ``inf - inf = NaN`` where the reference's ``(x - mean) /
sqrt(var + eps) * gamma + beta`` gives ``-inf``, so such a call keeps the reference's
order (found by the fuzzer). Statistics that are not constants (given at run time)
keep that order too: nothing before run time says whether they fold finitely, and the
fold saves nothing there (the four elementwise ops fuse into one kernel either way).
``nn.batch_norm`` returns ``(out, moving_mean, moving_var)`` in inference mode, so the
whole call becomes that tuple: ``%bn.1`` and ``%bn.2`` stay correct, a ``let``-bound
or returned tuple too, and no ``nn.batch_norm`` is left. Projections of these tuples
are taken at once. ``nn.dropout`` is ``(x, ones_like(x))`` the same way, so ``%d.0`` is
``x``.

``nn.instance_norm`` and ``nn.group_norm`` become ``mean``/centred square/``sqrt``
arithmetic over their statistics axes (for group norm, after a reshape that splits the
channel axis into groups), then ``gamma``/``beta`` broadcast along ``axis``, honouring
``scale``/``center``. ``nn.layer_norm`` stays: its kernel is one pass over each row
(``te/computes/nn.py``), where the arithmetic would be four kernels with the statistics
in memory; nothing about it folds. Every rewrite keeps the node's type or is not made.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, Expr, Tuple
from ..ir.module import IRModule
from ..ir.op import call
from .canonicalize_ops import expand_bias_to_axis, same_type_or_none
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .rewrite import MatchResult, Rule, is_op, is_tuple_getitem, rewrite_module


def _scalar(value: float, dtype: str) -> Constant:
    return Constant(np.asarray(value, dtype=dtype))


def _folds_finite(gamma, beta, mean, var, attrs) -> bool:
    """Whether constant statistics give a finite ``scale`` and ``shift`` (False when
    they are not all constants: nothing says so before run time)."""
    if not all(type(e) is Constant for e in (gamma, beta, mean, var)):
        return False
    g, b, m, v = (np.asarray(e.data, "float64") for e in (gamma, beta, mean, var))
    with np.errstate(all="ignore"):
        scale = (g if attrs.scale else 1.0) / np.sqrt(v + attrs.epsilon)
        shift = -m * scale + (b if attrs.center else 0.0)
    return bool(np.isfinite(scale).all() and np.isfinite(shift).all())


def _batch_norm(m: MatchResult) -> Expr | None:
    data, gamma, beta, mean, var = m.node.args
    attrs = m.node.attrs
    ty = data.checked_type
    if not _folds_finite(gamma, beta, mean, var, attrs):  # the reference's order
        def along(e):
            return expand_bias_to_axis(e, ty.ndim, attrs.axis)

        std = call("sqrt", [call("add", [var, _scalar(attrs.epsilon, ty.dtype)])])
        y = call("divide", [call("subtract", [data, along(mean)]), along(std)])
        return same_type_or_none(Tuple((_affine(y, gamma, beta, attrs, ty.ndim), mean, var)),
                                 m.node)
    scale = call("rsqrt", [call("add", [var, _scalar(attrs.epsilon, ty.dtype)])])
    if attrs.scale:
        scale = call("multiply", [scale, gamma])
    shift = call("multiply", [call("negative", [mean]), scale])
    if attrs.center:
        shift = call("add", [shift, beta])
    out = call("add", [call("multiply", [data, expand_bias_to_axis(scale, ty.ndim, attrs.axis)]),
                       expand_bias_to_axis(shift, ty.ndim, attrs.axis)])
    return same_type_or_none(Tuple((out, mean, var)), m.node)


def _normalise(data: Expr, axes: tuple[int, ...], epsilon: float, dtype: str) -> Expr:
    """``(x - mean) / sqrt(var + eps)`` with the statistics over ``axes``, as the
    reference computes it."""
    mean = call("mean", [data], axis=axes, keepdims=True)
    centred = call("subtract", [data, mean])
    var = call("mean", [call("multiply", [centred, centred])], axis=axes, keepdims=True)
    return call("divide", [centred, call("sqrt", [call("add", [var, _scalar(epsilon, dtype)])])])


def _affine(y: Expr, gamma: Expr, beta: Expr, attrs, ndim: int) -> Expr:
    if attrs.scale:
        y = call("multiply", [y, expand_bias_to_axis(gamma, ndim, attrs.axis)])
    if attrs.center:
        y = call("add", [y, expand_bias_to_axis(beta, ndim, attrs.axis)])
    return y


def _instance_norm(m: MatchResult) -> Expr | None:
    data, gamma, beta = m.node.args
    attrs, ty = m.node.attrs, m.node.args[0].checked_type
    axis = attrs.axis % ty.ndim
    axes = tuple(i for i in range(ty.ndim) if i not in (0, axis))
    y = _normalise(data, axes, attrs.epsilon, ty.dtype) if axes else None
    if y is None:
        return None  # no statistics axes: leave the op to say what it means
    return same_type_or_none(_affine(y, gamma, beta, attrs, ty.ndim), m.node)


def _group_norm(m: MatchResult) -> Expr | None:
    data, gamma, beta = m.node.args
    attrs, ty = m.node.attrs, m.node.args[0].checked_type
    axis, groups, shape = attrs.axis % ty.ndim, attrs.num_groups, ty.shape
    if ty.is_static:
        split = (*shape[:axis], groups, shape[axis] // groups, *shape[axis + 1:])
        merge = shape
    else:  # Relay's special reshape codes: copy (0), split (-4), merge (-3), rest (-2)
        split = (0,) * axis + (-4, groups, -1, -2)
        merge = (0,) * axis + (-3, -2)
    grouped = call("reshape", [data], newshape=split)
    axes = tuple(i for i in range(ty.ndim + 1) if i not in (0, axis))
    y = call("reshape", [_normalise(grouped, axes, attrs.epsilon, ty.dtype)], newshape=merge)
    return same_type_or_none(_affine(y, gamma, beta, attrs, ty.ndim), m.node)


def _dropout(m: MatchResult) -> Expr | None:
    data = m.node.args[0]
    return same_type_or_none(Tuple((data, call("ones_like", [data]))), m.node)


def _rules() -> list[Rule]:
    """The rules of one run: projections fold only the tuples this run made, whose
    dropped fields are computation-free or still needed elsewhere."""
    made: dict[int, Tuple] = {}  # id -> tuple (kept alive so ids are not reused)

    def remember(fn):
        def wrapped(m: MatchResult):
            new = fn(m)
            if type(new) is Tuple:
                made[id(new)] = new
            return new

        return wrapped

    def project(m: MatchResult) -> Expr | None:
        t = m.node.tuple_value
        return t.fields[m.node.index] if type(t) is Tuple and made.get(id(t)) is t else None

    return [
        Rule("batch_norm", is_op("nn.batch_norm").any_args(), remember(_batch_norm)),
        Rule("instance_norm", is_op("nn.instance_norm").any_args(), _instance_norm),
        Rule("group_norm", is_op("nn.group_norm").any_args(), _group_norm),
        Rule("dropout", is_op("nn.dropout").any_args(), remember(_dropout)),
        Rule("project-unpacked", is_tuple_getitem(), project),
    ]


@module_pass(opt_level=0, name="SimplifyInference")
def _simplify_inference(mod: IRModule, ctx: PassContext) -> IRModule:
    debug = bool(ctx.config.get("relay.SimplifyInference.debug"))
    return rewrite_module(mod, _rules(), "SimplifyInference", debug)


def SimplifyInference() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``SimplifyInference`` (opt level 0): batch/instance/group norm and dropout
    into primitive arithmetic for inference (layer norm keeps its one-pass kernel)."""
    return _simplify_inference


register_pass("SimplifyInference", SimplifyInference)
