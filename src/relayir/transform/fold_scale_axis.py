"""``FoldScaleAxis``: fold per-channel scales into the weights of conv2d / dense.

After ``SimplifyInference`` a batch norm is ``x * scale + shift`` with ``scale`` a
per-channel constant. Multiplying the *output* of a convolution by a per-channel
constant is the same as multiplying its weight along the output-channel axis, so the
multiply can go (TVM's ``BackwardFoldScaleAxis``)::

    conv2d(x, W) * s            →  conv2d(x, W * s')
    (conv2d(x, W) + b) * s      →  conv2d(x, W * s') + b * s
    relu(conv2d(x, W)) * s      →  relu(conv2d(x, W * s'))          (s >= 0)
    (conv_a + conv_b) * s       →  conv_a' + conv_b'                (both fold)

and a scale on the *input* folds along the input-channel axis (``ForwardFoldScaleAxis``)::

    conv2d(x * s, W)            →  conv2d(x, W * s')
    conv2d(relu(x * s) + b, W)  →  conv2d(relu(x) + b / s, W * s')  (s > 0)

``s'`` is ``s`` laid out along the weight's ``O`` (backward) or ``I`` (forward) axis,
including grouped and depthwise convolutions. The products ``W * s'`` are left as
``multiply`` expressions: ``FoldConstant`` turns them into new weights.

A fold happens only when it is exact and local: the scale is a constant (or a closed
expression over constants, whose value this pass computes) varying along the channel
axis only, it does not broadcast the data to a new shape, the dtype is a float, every
tensor between the multiply and the weight has no other consumer, and the sign
conditions of ``relu`` (scale >= 0) and of biases on the forward path (scale != 0) hold.
Anything else is left alone.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem, const
from ..ir.functor import ExprMutator, post_order
from ..ir.module import IRModule
from ..ir.node_table import NODES
from ..ir.op import call
from ..ir.types import TensorType, is_float
from ..typing.infer import infer_expr
from .analysis import typed_module
from .pass_infra import Pass, module_pass, register_pass

_CONVS = ("nn.conv2d", "nn.conv1d")
_RELUS = ("nn.relu", "nn.leaky_relu")
_ADDS = ("add", "subtract")

# ---------------------------------------------------------------- graph facts


def _op_name(e: Expr) -> str | None:
    return e.op.name if type(e) is Call and type(e.op) is Op else None


def _tensor_type(e: Expr) -> TensorType | None:
    t = e.checked_type if e.has_type else None
    return t if isinstance(t, TensorType) else None


def use_counts(func: Function) -> dict[Expr, int]:
    """How many times each node is read (the function's result counts as a read)."""
    counts: dict[Expr, int] = {func.body: 1}
    for node in post_order(func.body):
        for child in NODES[type(node)].children(node):
            counts[child] = counts.get(child, 0) + 1
    return counts


def const_value(expr: Expr, memo: dict) -> np.ndarray | None:
    """The value of a closed expression over constants (op calls, tuples), else None."""
    if expr in memo:
        return memo[expr]
    nodes = post_order(expr)
    if not all(type(n) in (Constant, Call, Tuple, TupleGetItem, Op) for n in nodes) or any(
            type(n) is Call and type(n.op) is not Op for n in nodes):
        memo[expr] = None
        return None
    values: dict[Expr, object] = {}
    try:
        for n in nodes:
            if type(n) is Constant:
                values[n] = n.data
            elif type(n) is Call:
                values[n] = n.op.reference(*(values[a] for a in n.args), n.attrs)
            elif type(n) is Tuple:
                values[n] = tuple(values[f] for f in n.fields)
            elif type(n) is TupleGetItem:
                values[n] = values[n.tuple_value][n.index]
    except Exception:  # noqa: BLE001  (a constant that fails to evaluate is not folded)
        memo[expr] = None
        return None
    out = values[expr]
    memo[expr] = out if isinstance(out, np.ndarray) else None
    return memo[expr]


def channel_axis_of(shape_t: TensorType, sub_t: TensorType) -> int | None:
    """The one axis of ``shape_t`` along which ``sub_t`` (broadcast from the right) varies;
    None when it varies along several, none, or would enlarge ``shape_t``."""
    n, r = shape_t.ndim, sub_t.ndim
    if r > n:
        return None
    axis = None
    for j, d in enumerate(sub_t.shape):
        full = shape_t.shape[n - r + j]
        if d == 1:
            continue
        if d != full or not isinstance(d, int) or axis is not None:
            return None
        axis = n - r + j
    return axis


def _is_bias(bias: Expr, data_t: TensorType, axis: int) -> bool:
    """``bias`` varies along ``axis`` only (or nowhere) and does not broadcast the data."""
    bt = _tensor_type(bias)
    if bt is None or bt.dtype != data_t.dtype or bt.ndim > data_t.ndim:
        return False
    n, r = data_t.ndim, bt.ndim
    return all(d == 1 or (n - r + j == axis and d == data_t.shape[axis])
               for j, d in enumerate(bt.shape))


def _bias_side(e: Expr, shape_t: TensorType, axis: int) -> int | None:
    """For ``nn.bias_add`` / ``add`` / ``subtract`` of a ``shape_t`` tensor and a bias
    along ``axis``: the bias's argument index; None for anything else."""
    name = _op_name(e)
    if name == "nn.bias_add":
        ok = e.attrs.axis % shape_t.ndim == axis and _tensor_type(e.args[0]) == shape_t
        return 1 if ok else None
    if name in _ADDS:
        for side in (1, 0):
            if _tensor_type(e.args[1 - side]) == shape_t and _is_bias(e.args[side], shape_t,
                                                                        axis):
                return side
    return None


def channel_scale(node: Expr, memo: dict):
    """``(data, axis, vector)`` when ``node`` multiplies ``data`` by a per-channel constant
    along ``axis`` (a divide counts, as multiplying by the inverse), else None."""
    name = _op_name(node)
    if name not in ("multiply", "divide"):
        return None
    out_t = _tensor_type(node)
    if out_t is None or not is_float(out_t.dtype):
        return None
    pairs = [(0, 1)] if name == "divide" else [(0, 1), (1, 0)]
    for d, s in pairs:
        data, scale = node.args[d], node.args[s]
        dt, st = _tensor_type(data), _tensor_type(scale)
        if dt is None or st is None or dt != out_t:
            continue
        axis = channel_axis_of(dt, st)
        if axis is None:
            continue
        value = const_value(scale, memo)
        if value is None:
            continue
        vec = value.reshape(-1).astype("float64")
        if name == "divide":
            if not np.all(vec != 0):
                continue
            vec = 1.0 / vec
        return data, axis, vec
    return None


# ---------------------------------------------------------------- weights


def _conv_axes(c: Call) -> tuple[int, int, int]:
    """(output channel axis of the result, O axis and I axis of the weight)."""
    a = c.attrs
    out = (a.out_layout or a.data_layout).index("C")
    return out, a.kernel_layout.index("O"), a.kernel_layout.index("I")


def _weight_ok(c: Call) -> bool:
    wt, ot = _tensor_type(c.args[1]), _tensor_type(c)
    return (wt is not None and ot is not None and wt.dtype == ot.dtype and is_float(wt.dtype)
            and wt.is_static)


def _in_channel_axis(c: Call) -> int | None:
    """Where the channels of ``c``'s data are, for convs and dense; None otherwise."""
    name = _op_name(c)
    if name in _CONVS:
        return c.attrs.data_layout.index("C")
    if name == "nn.dense":
        return _tensor_type(c.args[0]).ndim - 1
    return None


def _weight_scale(c: Call, vec: np.ndarray, forward: bool) -> np.ndarray:
    """``vec`` laid out to multiply ``c``'s weight (``O`` axis, or ``I`` axis forward)."""
    wt = _tensor_type(c.args[1])
    if _op_name(c) == "nn.dense":  # weight (units, in)
        arr = vec.reshape(1, -1) if forward else vec.reshape(-1, 1)
        return arr.astype(wt.dtype)
    _, o_ax, i_ax = _conv_axes(c)
    o, per_group = wt.shape[o_ax], wt.shape[i_ax]
    groups = c.attrs.groups
    if not forward:
        arr = vec.reshape(o, 1)
    elif groups == 1:
        arr = vec.reshape(1, per_group)
    else:  # W[o, i] reads input channel (o // (O/G)) * (C/G) + i
        arr = np.repeat(vec.reshape(groups, per_group), o // groups, axis=0)
    canonical = arr.reshape(arr.shape + (1,) * (wt.ndim - 2))
    perm = [0 if j == o_ax else 1 if j == i_ax else None for j in range(wt.ndim)]
    rest = iter(range(2, wt.ndim))
    perm = [p if p is not None else next(rest) for p in perm]
    return np.ascontiguousarray(canonical.transpose(perm)).astype(wt.dtype)


def _scaled_weight_call(c: Call, new: Call, vec: np.ndarray, forward: bool) -> Call:
    w = call("multiply", [new.args[1], const(_weight_scale(c, vec, forward))])
    return Call(new.op, (new.args[0], w), new.attrs, new.type_args).with_span(c.span)


def _bias_scale(vec: np.ndarray, axis: int, ndim: int, dtype: str) -> Constant:
    """``vec`` shaped to broadcast along ``axis`` of a rank-``ndim`` tensor (minimal rank)."""
    return const(vec.reshape((-1,) + (1,) * (ndim - 1 - axis)).astype(dtype))


# ---------------------------------------------------------------- planning


class _Plan:
    """What one function's rewrite does: multiplies to drop, scales to apply where."""

    def __init__(self, func: Function):
        self.uses = use_counts(func)
        self.consts: dict = {}
        self.dropped: dict[Expr, Expr] = {}  # multiply -> its data
        self.weight: dict[Expr, np.ndarray] = {}  # conv/dense -> scale (backward: O axis)
        self.fwd_weight: dict[Expr, np.ndarray] = {}  # conv/dense -> scale on the I axis
        # bias_add/add/subtract -> (bias argument index, channel axis, scale, op name)
        self.bias: dict[Expr, tuple[int, int, np.ndarray, str]] = {}

    def single_use(self, e: Expr) -> bool:
        return self.uses.get(e, 0) == 1


def plan_backward(func: Function) -> _Plan:
    plan = _Plan(func)
    for node in post_order(func.body):
        found = channel_scale(node, plan.consts)
        if found is None:
            continue
        data, axis, vec = found
        changes = _backward_path(plan, data, axis, vec)
        if changes is None:
            continue
        plan.dropped[node] = data
        for target, (kind, payload) in changes.items():  # scales met twice multiply
            if kind == "weight":
                old = plan.weight.get(target)
                plan.weight[target] = vec if old is None else old * vec
            else:
                side, op = payload
                old = plan.bias.get(target)
                plan.bias[target] = (side, axis, vec if old is None else old[2] * vec, op)
    return plan


def _backward_path(plan: _Plan, data: Expr, axis: int, vec: np.ndarray):
    """The scale ``vec`` pushed from ``data``'s consumer back into weights; a dict of
    changes, or None when some tensor on the way cannot take it."""
    shape_t = _tensor_type(data)
    changes: dict = {}
    work = [data]
    while work:
        e = work.pop()
        if not plan.single_use(e) or _tensor_type(e) != shape_t or e in changes:
            return None
        name = _op_name(e)
        if e in plan.dropped:  # an already-folded multiply: go on into its data
            work.append(plan.dropped[e])
            changes[e] = ("pass", None)
        elif name in _CONVS or name == "nn.dense":
            out_axis = _conv_axes(e)[0] if name in _CONVS else shape_t.ndim - 1
            if out_axis != axis or not _weight_ok(e):
                return None
            changes[e] = ("weight", None)
        elif name in _RELUS:
            if not np.all(vec >= 0):
                return None
            work.append(e.args[0])
            changes[e] = ("pass", None)
        elif name in _ADDS and all(_tensor_type(a) == shape_t for a in e.args):
            work += e.args  # (a + b) * s = a * s + b * s: both sides must fold
            changes[e] = ("pass", None)
        elif (side := _bias_side(e, shape_t, axis)) is not None:
            work.append(e.args[1 - side])
            changes[e] = ("bias", (side, name))
        else:
            return None
    return {k: v for k, v in changes.items() if v[0] != "pass"}


def plan_forward(func: Function) -> _Plan:
    plan = _Plan(func)
    for node in post_order(func.body):
        axis = _in_channel_axis(node)
        if axis is None or not _weight_ok(node):
            continue
        path = _forward_path(plan, node.args[0], axis)
        if path is None:
            continue
        mult, data, vec, biases, relu = path
        if (relu and not np.all(vec >= 0)) or (biases and not np.all(vec != 0)):
            continue
        plan.dropped[mult] = data
        plan.fwd_weight[node] = vec
        for add, side in biases:
            plan.bias[add] = (side, axis, 1.0 / vec, _op_name(add))
    return plan


def _forward_path(plan: _Plan, e: Expr, axis: int):
    """Walk from a conv/dense input back to a per-channel multiply through single-use
    relus and biases: ``(multiply, its data, scale, [(bias node, bias side)], relu?)``."""
    shape_t = _tensor_type(e)
    biases, relu = [], False
    while True:
        if not plan.single_use(e) or _tensor_type(e) != shape_t or e in plan.dropped:
            return None
        found = channel_scale(e, plan.consts)
        if found is not None:
            data, s_axis, vec = found
            return (e, data, vec, biases, relu) if s_axis == axis else None
        name = _op_name(e)
        if name in _RELUS:
            relu = True
            e = e.args[0]
        elif (side := _bias_side(e, shape_t, axis)) is not None:
            biases.append((e, side))
            e = e.args[1 - side]
        else:
            return None


# ---------------------------------------------------------------- rewriting


class _Apply(ExprMutator):
    def __init__(self, plan: _Plan):
        super().__init__()
        self.plan = plan

    def visit_call(self, c):
        plan = self.plan
        if c in plan.dropped:
            return self.visit(plan.dropped[c])
        new = super().visit_call(c)
        if c in plan.weight:
            return _scaled_weight_call(c, new, plan.weight[c], forward=False)
        if c in plan.fwd_weight:
            return _scaled_weight_call(c, new, plan.fwd_weight[c], forward=True)
        if c in plan.bias:
            side, axis, vec, op = plan.bias[c]
            bias = new.args[side]
            bt = _tensor_type(c.args[side])
            s = (const(vec.astype(bt.dtype)) if op == "nn.bias_add"
                 else _bias_scale(vec, axis, _tensor_type(c).ndim, bt.dtype))
            args = list(new.args)
            args[side] = call("multiply", [bias, s])
            return Call(new.op, tuple(args), new.attrs, new.type_args).with_span(c.span)
        return new


def reinfer(func: Function, mod: IRModule) -> Function:
    """Type the nodes a rewrite built (incrementally; the module only if globals appear)."""
    try:
        infer_expr(func, incremental=True)
    except TypeInferenceError:
        infer_expr(func, mod, incremental=True)
    return func


def _fold(mod: IRModule, planner) -> IRModule:
    mod = typed_module(mod)
    functions = {}
    changed = False
    for gv, func in mod.functions.items():
        if func.is_primitive:
            functions[gv] = func
            continue
        plan = planner(func)
        if plan.dropped:
            func = reinfer(_Apply(plan).visit(func), mod)
            changed = True
        functions[gv] = func
    return mod.with_functions(functions) if changed else mod


@module_pass(opt_level=3, name="BackwardFoldScaleAxis")
def _backward(mod: IRModule, ctx) -> IRModule:
    return _fold(mod, plan_backward)


@module_pass(opt_level=3, name="ForwardFoldScaleAxis")
def _forward(mod: IRModule, ctx) -> IRModule:
    return _fold(mod, plan_forward)


@module_pass(opt_level=3, name="FoldScaleAxis")
def _fold_scale_axis(mod: IRModule, ctx) -> IRModule:
    return _fold(_fold(mod, plan_backward), plan_forward)


def BackwardFoldScaleAxis() -> Pass:  # noqa: N802  (Relay's name)
    """Fold per-channel scales on conv2d / dense outputs into their weights."""
    return _backward


def ForwardFoldScaleAxis() -> Pass:  # noqa: N802
    """Fold per-channel scales on conv2d / dense inputs into their weights."""
    return _forward


def FoldScaleAxis() -> Pass:  # noqa: N802
    """Backward then forward scale folding (TVM's order); opt level 3."""
    return _fold_scale_axis


register_pass("BackwardFoldScaleAxis", BackwardFoldScaleAxis)
register_pass("ForwardFoldScaleAxis", ForwardFoldScaleAxis)
register_pass("FoldScaleAxis", FoldScaleAxis)

__all__ = ["BackwardFoldScaleAxis", "FoldScaleAxis", "ForwardFoldScaleAxis"]
