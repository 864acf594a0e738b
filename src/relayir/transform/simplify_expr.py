"""``SimplifyExpr``: algebraic identities and no-op removal as named rewrite rules.

Each rule is a ``Rule(name, pattern, fn)`` of ``transform.rewrite``; ``rewrite`` drives
the set bottom-up to a fixed point. ``PassContext(config={"relay.SimplifyExpr.debug":
True})`` prints how often each rule fired.

Every rule fires only when its result has exactly the type (shape and dtype) of the
node it replaces; otherwise it declines. So ``multiply(%x: (2, 3), ones((3,)))`` is
``%x``, but ``multiply(%x: (1, 3), ones((2, 3)))`` stays: there the multiply
broadcasts. "Constant ``c``" below means a ``Constant`` whose elements all equal
``c``, or ``zeros``/``ones``/``zeros_like``/``ones_like``/``full``/``full_like``
with that value.

IEEE semantics are kept: ``x * 1`` and ``x / 1`` are exact; for floats ``x + z`` and
``z + x`` are ``x`` only when the zero ``z`` is -0.0 everywhere and ``x - z`` only when it
is +0.0 (``-0.0 + 0.0`` is +0.0, so ``x + 0.0`` is not ``x``: fuzz seed 36017). ``x - x``
and ``x * 0`` are *not* ``0`` for a float ``x`` that is ``inf`` or ``nan``; they
become zeros only for integer and bool tensors, or for floats when the context sets
``"relay.SimplifyExpr.fast_math": True``.

Rules (name: before → after):

- ``mul-one``/``one-mul``: ``x * 1``, ``1 * x`` → ``x``
- ``add-zero``/``zero-add``: ``x + 0``, ``0 + x`` → ``x`` (a float zero: -0.0)
- ``sub-zero``: ``x - 0`` → ``x`` (a float zero: +0.0);  ``div-one``: ``x / 1`` → ``x``
- ``sub-self``: ``x - x`` → zeros;  ``mul-zero``/``zero-mul``: ``x * 0``, ``0 * x`` → zeros
- ``neg-neg``: ``-(-x)`` → ``x``
- ``reshape-reshape``: ``reshape(r(x))`` with ``r`` a reshape, ``expand_dims``,
  ``squeeze`` or ``nn.batch_flatten`` → one ``reshape(x)``
- ``noop-reshape``: ``reshape``/``expand_dims``/``squeeze``/``broadcast_to``/``tile``/
  ``repeat``/``nn.batch_flatten`` that leaves the shape as it is → ``x``
- ``transpose-transpose``: ``transpose(transpose(x, p), q)`` → one ``transpose`` or ``x``
- ``noop-transpose``: ``transpose`` by the identity permutation → ``x``
- ``noop-cast``: ``cast(x, x.dtype)`` → ``x``
- ``cast-cast``: ``cast(cast(x, t1), t2)`` → ``cast(x, t2)`` when ``t1`` holds every
  value of ``x``'s dtype exactly (then the value ``t2`` gets is the same)
- ``where-const``: ``where(c, x, y)`` with a constant all-true (all-false) ``c`` → ``x``
  (``y``), broadcast with ``broadcast_to`` if the ``where`` broadcast it
- ``concat-single``: ``concatenate((x,))`` → ``x``
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, Expr, Op, Tuple
from ..ir.module import IRModule
from ..ir.op import call
from ..ir.types import Any, TensorType, dtype_range, is_float
from .canonicalize_ops import same_type_or_none
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .rewrite import MatchResult, Pattern, Rule, is_op, is_tuple, rewrite_module, wildcard

# ---------------------------------------------------------------- constants of one value

_ZERO_ARG = {"zeros": 0, "ones": 1}
_LIKE = {"zeros_like": 0, "ones_like": 1}


def splat_value(e: Expr):
    """The one value every element of ``e`` has, if ``e`` is such a constant, else None."""
    if type(e) is Constant:
        d = e.data
        if d.size <= 1:
            return d.reshape(-1)[0].item() if d.size else None
        flat = d.reshape(-1)
        first = flat[0]
        if flat[-1] != first or not bool(np.all(flat == first)):  # cheap check first
            return None
        return first.item()
    if type(e) is not Call or type(e.op) is not Op:
        return None
    name = e.op.name
    if name in _ZERO_ARG:
        return _ZERO_ARG[name]
    if name in _LIKE:
        return _LIKE[name]
    if name in ("full", "full_like"):
        fill = e.args[-1]
        if type(fill) is Constant and fill.data.ndim == 0:
            return fill.data.item()
    return None


class _Splat(Pattern):
    """Matches a constant all of whose elements equal ``value`` (see ``splat_value``)."""

    def __init__(self, value, name: str | None = None):
        self.value = value
        self.name = name

    def _match(self, expr, m):
        v = splat_value(expr)
        return v is not None and v == self.value


def is_splat(value, name: str | None = None) -> Pattern:
    return _Splat(value, name)


# ---------------------------------------------------------------- helpers


def _ttype(e: Expr) -> TensorType | None:
    ty = e.checked_type
    return ty if isinstance(ty, TensorType) else None


def _keep_if_same_type(m: MatchResult, key: str = "x") -> Expr | None:
    x = m[key]
    return x if x.checked_type == m.node.checked_type else None


def _zeros_signed(e: Expr, negative: bool) -> bool:
    """Whether the zero constant ``e`` is, if a float, ``-0.0`` (``negative``) or
    ``+0.0`` in every element."""
    ty = _ttype(e)
    if ty is None or not ty.dtype.startswith(("float", "bfloat")):
        return ty is not None
    if type(e) is Constant:
        return bool(np.all(np.signbit(e.data) == negative))
    if type(e) is Call and e.op.name in ("full", "full_like"):
        fill = e.args[-1]
        return type(fill) is Constant and bool(np.signbit(fill.data)) == negative
    return not negative  # zeros, zeros_like: +0.0


def _plus_zero(m: MatchResult) -> Expr | None:
    """``x + z`` → ``x``: exact for a float only when ``z`` is -0.0 (``-0.0 + 0.0`` is
    +0.0)."""
    return _keep_if_same_type(m) if _zeros_signed(m["z"], negative=True) else None


def _minus_zero(m: MatchResult) -> Expr | None:
    """``x - z`` → ``x``: exact for a float only when ``z`` is +0.0."""
    return _keep_if_same_type(m) if _zeros_signed(m["z"], negative=False) else None


def _zeros_of(node: Expr, like: Expr) -> Expr | None:
    """Zeros of ``node``'s type: ``zeros(shape)`` when static, else ``zeros_like``."""
    ty = _ttype(node)
    if ty is None:
        return None
    if ty.is_static:
        return same_type_or_none(call("zeros", [], shape=ty.shape, dtype=ty.dtype), node)
    return same_type_or_none(call("zeros_like", [like]), node)


def _exact_zero_ok(fast_math: bool):
    """``x - x`` / ``x * 0`` is zero only where no inf/nan exists, or under fast-math."""

    def ok(node: Expr) -> bool:
        ty = _ttype(node)
        return ty is not None and (fast_math or not is_float(ty.dtype))

    return ok


def _no_any(ty: TensorType) -> bool:
    return not any(isinstance(d, Any) for d in ty.shape)


# ---------------------------------------------------------------- shape rules

_RESHAPES = ("reshape", "expand_dims", "squeeze", "nn.batch_flatten")


def _reshape_reshape(m: MatchResult) -> Expr | None:
    ty, x = _ttype(m.node), m["x"]
    if ty is None:
        return None
    if ty.is_static:
        newshape = ty.shape
    elif all(d > 0 for d in m.node.attrs.newshape):
        newshape = m.node.attrs.newshape  # literal: means the same applied to x
    else:
        return None  # codes (0, -1, ...) refer to the inner shape
    # a literal 0 in newshape copies a dimension unless allowzero says it is a 0
    allowzero = any(d == 0 for d in newshape)
    return same_type_or_none(call("reshape", [x], newshape=newshape, allowzero=allowzero),
                             m.node)


def _noop_reshape(m: MatchResult) -> Expr | None:
    x, node = m["x"], m.node
    tx, tn = _ttype(x), _ttype(node)
    if tx is None or tn is None or tx != tn:
        return None
    name = node.op.name
    if name in ("expand_dims", "squeeze"):
        return x  # same rank: no axis was added or removed
    # a row-major reshape/broadcast/tile to the same shape is the identity, if the
    # shape is known: two unknown dims that print alike need not be equal
    return x if _no_any(tx) else None


def _perm(attrs, ndim: int) -> list[int]:
    return list(range(ndim))[::-1] if attrs.axes is None else [a % ndim for a in attrs.axes]


def _transpose_transpose(m: MatchResult) -> Expr | None:
    x, inner = m["x"], m["inner"]
    ndim = x.checked_type.ndim
    p, q = _perm(inner.attrs, ndim), _perm(m.node.attrs, ndim)
    combined = [p[i] for i in q]
    if combined == list(range(ndim)):
        return _keep_if_same_type(m)
    return same_type_or_none(call("transpose", [x], axes=combined), m.node)


def _noop_transpose(m: MatchResult) -> Expr | None:
    ndim = m["x"].checked_type.ndim
    return _keep_if_same_type(m) if _perm(m.node.attrs, ndim) == list(range(ndim)) else None


# ---------------------------------------------------------------- casts

_MANTISSA = {"float16": 11, "float32": 24, "float64": 53}  # integers exact up to 2**m


def lossless(src: str, dst: str) -> bool:
    """Every value of ``src`` is exactly a value of ``dst`` (numpy's "safe" casting is
    not this: it calls int64 → float64 safe)."""
    if src == dst or src == "bool":
        return True
    if dst == "bool":
        return False
    if is_float(src):
        if src not in _MANTISSA:  # bfloat16, float8, float4: exact in float32
            return dst in ("float32", "float64")
        return dst in _MANTISSA and _MANTISSA[dst] >= _MANTISSA[src]
    lo, hi = dtype_range(src)
    if is_float(dst):
        return dst in _MANTISSA and max(hi, -lo) <= 2 ** _MANTISSA[dst]
    dlo, dhi = dtype_range(dst)
    return dlo <= lo and hi <= dhi


def _cast_cast(m: MatchResult) -> Expr | None:
    x, inner = m["x"], m["inner"]
    tx = _ttype(x)
    if tx is None or not lossless(tx.dtype, inner.attrs.dtype):
        return None
    return same_type_or_none(call("cast", [x], dtype=m.node.attrs.dtype), m.node)


# ---------------------------------------------------------------- where, concatenate


def _where_const(m: MatchResult) -> Expr | None:
    v = splat_value(m["c"])
    if v is None:
        return None
    chosen = m["x"] if v else m["y"]
    if chosen.checked_type == m.node.checked_type:
        return chosen
    ty = _ttype(m.node)
    if ty is None or not ty.is_static:
        return None
    return same_type_or_none(call("broadcast_to", [chosen], shape=ty.shape), m.node)


def _concat_single(m: MatchResult) -> Expr | None:
    t = m["t"]
    if type(t) is not Tuple or len(t.fields) != 1:
        return None
    return t.fields[0] if t.fields[0].checked_type == m.node.checked_type else None


# ---------------------------------------------------------------- the rule set


def simplify_rules(fast_math: bool = False) -> list[Rule]:
    x, y, c = wildcard("x"), wildcard("y"), wildcard("c")
    zero_ok = _exact_zero_ok(fast_math)

    def zeros_if_ok(m: MatchResult) -> Expr | None:
        return _zeros_of(m.node, m["x"]) if zero_ok(m.node) else None

    return [
        Rule("mul-one", is_op("multiply")(x, is_splat(1)), _keep_if_same_type),
        Rule("one-mul", is_op("multiply")(is_splat(1), x), _keep_if_same_type),
        Rule("add-zero", is_op("add")(x, is_splat(0, "z")), _plus_zero),
        Rule("zero-add", is_op("add")(is_splat(0, "z"), x), _plus_zero),
        Rule("sub-zero", is_op("subtract")(x, is_splat(0, "z")), _minus_zero),
        Rule("div-one", is_op("divide")(x, is_splat(1)), _keep_if_same_type),
        Rule("sub-self", is_op("subtract")(x, x), zeros_if_ok),
        Rule("mul-zero", is_op("multiply")(x, is_splat(0)), zeros_if_ok),
        Rule("zero-mul", is_op("multiply")(is_splat(0), x), zeros_if_ok),
        Rule("neg-neg", is_op("negative")(is_op("negative")(x)), _keep_if_same_type),
        Rule("reshape-reshape", is_op("reshape")(is_op(*_RESHAPES)(x)), _reshape_reshape),
        Rule("noop-reshape", is_op(*_RESHAPES, "broadcast_to", "tile", "repeat")(x),
             _noop_reshape),
        Rule("transpose-transpose",
             is_op("transpose")(is_op("transpose")(x, name="inner")), _transpose_transpose),
        Rule("noop-transpose", is_op("transpose")(x), _noop_transpose),
        Rule("noop-cast", is_op("cast")(x), _keep_if_same_type),
        Rule("cast-cast", is_op("cast")(is_op("cast")(x, name="inner")), _cast_cast),
        Rule("where-const", is_op("where")(c, x, y), _where_const),
        Rule("concat-single", is_op("concatenate")(is_tuple("t")), _concat_single),
    ]



@module_pass(opt_level=0, name="SimplifyExpr")
def _simplify_expr(mod: IRModule, ctx: PassContext) -> IRModule:
    rules = simplify_rules(fast_math=bool(ctx.config.get("relay.SimplifyExpr.fast_math")))
    debug = bool(ctx.config.get("relay.SimplifyExpr.debug"))
    return rewrite_module(mod, rules, "SimplifyExpr", debug)


def SimplifyExpr() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``SimplifyExpr`` (opt level 0): algebraic identities, no-op and paired
    reshapes/transposes/casts, constant-condition ``where``; see the module docstring."""
    return _simplify_expr


register_pass("SimplifyExpr", SimplifyExpr)
