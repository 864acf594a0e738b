"""How far a compiled program may honestly be from the reference: rounding error bounds
derived from the computation, for the fuzzer's comparison (``fuzz_compare``).

A compiled kernel reorders sums, contracts multiply-adds, vectorises ``exp`` or runs
another algorithm (Winograd), so its floats may differ from the numpy reference by
rounding. How much is a property of the terms behind each element, not of the element's
size nor of any other value in the program: for a dot product the classic bound is
``|fl(x·y) - x·y| <= n·eps·sum|x_i·y_i|``, however much the terms cancel.

``error_bounds(mod, inputs)`` evaluates ``@main`` (a dataflow program) node by node with
the ops' references and carries beside each value a bound, element by element, on the
difference rounding can make there:

- the op's own rounding: ``k·eps`` times the magnitude of the terms behind the element —
  for sums and (multi)linear ops (``LINEAR``, ``BILINEAR``) the op applied to absolute
  values (``dense(|x|, |w|)``, ``subtract`` as ``add``), for the others ``|f(x)|`` of a
  result computed from inputs moved by ``k·eps`` of themselves (what backward-stable
  kernels such as softmax or a norm amount to);
- the rounding the inputs carry, propagated: linear ops apply themselves to the input
  bounds (``dense(e_x, |w|) + dense(|x|, e_w) + dense(e_x, e_w)``); every other op is
  evaluated with its inputs moved by their bounds — each argument up or down, and two
  random sign patterns — and its largest move counts.

An element whose exact value the program's precision does not determine — a comparison,
``floor`` or integer cast whose input lies within its bound of the decision, a pole or
domain edge (0 for ``divide``, ``log``, ``sqrt``) within the bound, an overflow — gets
an infinite bound: *undetermined*, and so does every element computed from it.
``if`` and ``match`` are followed as the oracle ran them: the taken branch's (or first
matching clause's) value and bound, ADT values as ``ConstructorValue``s of values and of
bounds; a condition (or a scrutinee's constructor) that rounding could flip makes the
result undetermined. Programs with closures, calls of functions or references get no
bounds (``None``): they are compared with the plain tolerance only.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..ir.adt import Constructor, Match, pattern_vars
from ..ir.expr import Call, Constant, Function, If, Let, Op, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..ir.node_table import children
from ..ir.op import get_op
from ..op.nn.winograd import winograd_matrices
from ..runtime.interpreter import _match
from ..runtime.values import ConstructorValue

# k of k·eps, the op's own rounding. Elementwise kernels are within a few ulps (the C
# exp/tanh/erf are vectorised approximations); sums and products of n terms within about
# n·eps of their magnitude, blocked and reassociated (the bound takes n from the shapes);
# Winograd's transforms multiply the error of a 3×3 convolution by up to ~100× at F(6×6)
# (measured on the fuzzer's programs: see ``WINOGRAD``).
ELEMENTWISE_K = 16.0
REDUCTION_K = 4.0  # times the number of terms per element
WINOGRAD = 256.0  # extra factor for 2-D convolutions (any of them may run as Winograd)

# ops linear in each argument: their rounding and propagated error are the op applied
# to absolute values / to the bounds (``subtract`` magnitudes add)
LINEAR = {"add": "add", "subtract": "add", "sum": "sum", "mean": "mean",
          "cumsum": "cumsum", "nn.bias_add": "nn.bias_add", "nn.avg_pool1d": "nn.avg_pool1d",
          "nn.avg_pool2d": "nn.avg_pool2d", "nn.avg_pool3d": "nn.avg_pool3d",
          "nn.global_avg_pool2d": "nn.global_avg_pool2d",
          "nn.adaptive_avg_pool1d": "nn.adaptive_avg_pool1d",
          "nn.adaptive_avg_pool2d": "nn.adaptive_avg_pool2d",
          "nn.adaptive_avg_pool3d": "nn.adaptive_avg_pool3d"}
# selections whose result among equal +0.0 and -0.0 depends on the order the operands
# are compared in (numpy's np.max([0., -0.]) is -0.0, np.max([-0., 0.]) is 0.0): where
# the window holds both zeros, the zero's sign is a tie (``ZERO_TIE``), not semantics
MAX_LIKE = ("max", "maximum", "dyn.max", "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d",
            "nn.global_max_pool2d")
MIN_LIKE = ("min", "minimum", "dyn.min")
# clamps against a +0.0 bound: their -0.0 input meets the bound's +0.0 (numpy itself
# gives -0.0 for a float16 scalar and +0.0 for a float32 array); when the bound is 0
CLAMPS = {"nn.relu": lambda attrs: True,
          "clip": lambda attrs: attrs.a_min == 0 or attrs.a_max == 0}
# affine maps that SimplifyInference folds into x * scale + shift (TVM and ONNX Runtime
# fold them too), or lowers to ``(x - mean) / sd * gamma + beta`` that C contracts into
# an FMA: equal in exact arithmetic, but the sign of a zero result follows the order of
# the terms (-0.0 + 0.0 is +0.0; a tiny product fused into the add rounds to -0.0 where
# the unfused one gave a subnormal that cancels to +0.0), so it is a tie as well
FOLDED_AFFINE = ("nn.batch_norm", "nn.instance_norm", "nn.layer_norm", "nn.group_norm")
# interpolations: weighted sums of taps, separable in the reference and tap by tap in C,
# so an exactly zero result's sign follows the order of its (zero) terms
INTERPOLATIONS = ("image.resize1d", "image.resize2d", "image.resize3d", "nn.upsampling",
                  "nn.upsampling3d", "image.grid_sample")
ZERO_TIE = float(np.nextafter(0.0, 1.0))  # the bound that marks such a zero

# ops linear in each of two arguments together
BILINEAR = ("multiply", "nn.dense", "nn.matmul", "nn.batch_matmul", "nn.conv1d", "nn.conv2d",
            "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")


def error_bounds(mod: IRModule, inputs: list):
    """The bound of each output of ``@main`` (the structure of its result: float64 arrays,
    ``inf`` where undetermined), or ``None`` for a program this analysis does not cover;
    a field of a result tuple that depends on a closure or a call of a function has
    ``None`` (no excuse for it) while the other fields have their bounds."""
    fn = mod["main"]
    if not isinstance(fn, Function) or len(fn.params) != len(inputs):
        return None
    nodes = post_order(fn.body)
    let_value = {n.var: n.value for n in nodes if type(n) is Let}
    bound_by = {v: m for m in nodes if type(m) is Match for c in m.clauses
                for v in pattern_vars(c.lhs)}
    opaque = _opaque(nodes, let_value, set(fn.params), bound_by)
    env: dict = {p: (np.asarray(x), _zeros(np.asarray(x))) for p, x in zip(fn.params, inputs)}
    rng = np.random.default_rng(0)

    def get(e):
        while e not in env:
            if e in bound_by:  # a clause's variable: bound once its match's data is known
                _bind(bound_by[e], get(bound_by[e].data), env)
            else:
                e = e.body if type(e) is Let else let_value[e]
        return env[e]

    with np.errstate(all="ignore"):
        for n in nodes:
            if n in opaque or type(n) in (Var, Let, Constructor):
                continue
            try:
                env[n] = _step(n, get, rng)
            except Exception:  # noqa: BLE001  (a branch not taken may refuse its values)
                env[n] = _DEAD
        result = fn.body
        while type(result) is Let:
            result = result.body
        if result not in opaque:
            return _output(get(result))
        if type(result) is Tuple:
            return tuple(None if f in opaque else _output(get(f)) for f in result.fields)
        return None


# the value of a node in a branch the oracle did not take (or that failed there)
_DEAD = object()


def _step(n, get, rng):
    """``(value, bound)`` of node ``n`` from its children's, or ``_DEAD``."""
    t = type(n)
    if t is Constant:
        return np.asarray(n.data), _zeros(np.asarray(n.data))
    if t is If:
        cond = get(n.cond)
        if cond is _DEAD:
            return _DEAD
        taken = get(n.true_branch if bool(cond[0]) else n.false_branch)
        if taken is _DEAD or not np.isinf(cond[1]).any():
            return taken
        return taken[0], _undetermined(taken[0])  # rounding could take the other branch
    if t is Match:
        data = get(n.data)
        if data is _DEAD:
            return _DEAD
        for clause in n.clauses:
            if _match(clause.lhs, data[0], {}):
                taken = get(clause.rhs)
                if taken is _DEAD or data[1] is not _UNDECIDED:
                    return taken
                return taken[0], _undetermined(taken[0])
        return _DEAD  # an incomplete match that fails: the oracle failed too
    pairs = [get(a) for a in children(n)]  # a Tuple's fields, the tuple, a call's args
    if any(x is _DEAD for x in pairs):
        return _DEAD
    values, bounds = [v for v, _ in pairs], [b for _, b in pairs]
    if t is Tuple:
        return tuple(values), tuple(bounds)
    if t is TupleGetItem:
        return values[0][n.index], bounds[0][n.index]
    if type(n.op) is Constructor:
        return (ConstructorValue(n.op.tag, tuple(values), n.op),
                ConstructorValue(n.op.tag, tuple(bounds), n.op))
    return _call(n, values, bounds, rng)


def _bind(m: Match, data, env: dict) -> None:
    """Bind the variables of ``m``'s clauses: the first matching clause's to the parts of
    ``data`` (value and bound alike), every other clause's to ``_DEAD``."""
    taken = False
    for clause in m.clauses:
        values: dict = {}
        if not taken and data is not _DEAD and _match(clause.lhs, data[0], values):
            taken = True
            bounds: dict = {}
            if data[1] is _UNDECIDED:
                bounds = {v: _undetermined(x) for v, x in values.items()}
            else:
                _match(clause.lhs, data[1], bounds)
            for v in values:
                env[v] = (values[v], bounds[v])
        else:
            for v in pattern_vars(clause.lhs):
                env[v] = _DEAD


# the bound of an ADT value whose constructor rounding could change
_UNDECIDED = object()


def _undetermined(value):
    """The bound of ``value`` where every element is undetermined."""
    if isinstance(value, tuple):
        return tuple(_undetermined(x) for x in value)
    if isinstance(value, ConstructorValue):
        return _UNDECIDED
    return np.full(np.shape(value), np.inf)


def _output(pair):
    """The bound of a result the judge compares (arrays and tuples of them), else None."""
    if pair is _DEAD:
        return None
    stack = [pair[1]]
    while stack:
        b = stack.pop()
        if isinstance(b, tuple):
            stack.extend(b)
        elif not isinstance(b, np.ndarray):
            return None
    return pair[1]


def _opaque(nodes: list, let_value: dict, params: set, bound_by: dict) -> set:
    """The nodes whose values this analysis cannot follow: functions, calls of anything
    but an op or a constructor, references, and every node computed from one (``nodes``
    in post-order, so children come first)."""
    plain = (Call, Var, Constant, Tuple, TupleGetItem, Let, If, Match, Constructor)
    out: set = set()
    while True:  # a let's variable comes before its value in post-order: to a fixed point
        size = len(out)
        for n in nodes:
            t = type(n)
            if t not in plain or (t is Call and type(n.op) not in (Op, Constructor)):
                out.add(n)
            elif t is Var:
                if n in bound_by:
                    if bound_by[n].data in out:
                        out.add(n)
                elif n not in params and (n not in let_value or let_value[n] in out):
                    out.add(n)
            elif t is Let:
                if n.body in out:
                    out.add(n)
            elif any(c in out for c in children(n)):
                out.add(n)
        if len(out) == size:
            return out


# ---------------------------------------------------------------- one op


def _zeros(v):
    if isinstance(v, tuple):
        return tuple(_zeros(x) for x in v)
    return np.zeros(np.shape(v), "float64")


def _flat(v) -> list:
    return [x for f in v for x in _flat(f)] if isinstance(v, tuple) else [v]


def _rebuild(like, flat: list):
    it = iter(flat)

    def go(v):
        return tuple(go(x) for x in v) if isinstance(v, tuple) else next(it)

    return go(like)


def _is_float(a) -> bool:
    if isinstance(a, tuple):
        return bool(a) and all(_is_float(x) for x in a)
    return np.asarray(a).dtype.kind == "f"


def _eps(dtype) -> float:
    return float(np.finfo(dtype).eps) if np.dtype(dtype).kind == "f" else 0.0


def _apply(call: Call, args, name: str | None = None):
    op = call.op if name is None else get_op(name)
    out = op.reference(*args, call.attrs)
    if isinstance(out, (tuple, list)):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


def _f64(a):
    """Float arrays in float64 (other dtypes as they are), over tuples."""
    if isinstance(a, tuple):
        return tuple(_f64(x) for x in a)
    a = np.asarray(a)
    return a.astype("float64") if a.dtype.kind == "f" else a


def _abs_int(a):
    """|a| of an integer array, in its dtype (numpy's abs of the minimum wraps: it is
    taken in int64 and clipped back), anything else as it is."""
    if isinstance(a, np.ndarray) and a.dtype.kind == "i":
        info = np.iinfo(a.dtype)
        return np.clip(np.abs(a.astype("int64")), 0, info.max).astype(a.dtype)
    return a


def _abs(a):
    if isinstance(a, tuple):
        return tuple(_abs(x) for x in a)
    a = np.asarray(a)
    return np.abs(a.astype("float64")) if a.dtype.kind == "f" else a


def _call(call: Call, xs: list, es: list, rng) -> tuple:
    """``(value, bound)`` of one op call."""
    v = _apply(call, xs)
    if isinstance(v, tuple):  # ops with several results: the generic rule per field
        bounds = _generic(call, xs, es, v, rng)
        if call.op.name in FOLDED_AFFINE and v[0].dtype.kind == "f":
            first = np.where((bounds[0] == 0) & (v[0] == 0), ZERO_TIE, bounds[0])
            bounds = (first, *bounds[1:])
        return v, bounds
    name = call.op.name
    if (name in MAX_LIKE or name in MIN_LIKE) and v.dtype.kind == "f":
        bound = _generic(call, xs, es, v, rng)
        return v, np.where((bound == 0) & _zero_tie(call, xs, v), ZERO_TIE, bound)
    if (name in INTERPOLATIONS or name in FOLDED_AFFINE) and v.dtype.kind == "f":
        bound = _generic(call, xs, es, v, rng)
        return v, np.where((bound == 0) & (v == 0), ZERO_TIE, bound)
    if name in CLAMPS and v.dtype.kind == "f":  # max(x, 0) / clip at 0: -0.0 meets +0.0
        bound, x = _generic(call, xs, es, v, rng), np.asarray(xs[0])
        at_zero = CLAMPS[name](call.attrs)
        tie = at_zero & (x == 0) & np.signbit(x) & (v == 0)
        return v, np.where((bound == 0) & tie, ZERO_TIE, bound)
    if name == "nn.contrib_conv2d_winograd_weight_transform" and v.dtype.kind == "f":
        return v, _clean(_weight_transform_bound(call, xs, es, v))
    if v.dtype.kind == "f":
        eps = _eps(v.dtype)
        try:
            if name in LINEAR:
                return v, _clean(_linear(call, xs, es, v, eps))
            if name in BILINEAR:
                return v, _clean(_bilinear(call, xs, es, v, eps))
        except Exception:  # noqa: BLE001  (a reference that refuses float64: generic)
            pass
    return v, _generic(call, xs, es, v, rng)


def _clean(b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(b), np.inf, b)


def _terms(xs: list, v: np.ndarray) -> float:
    """Terms per output element: the float inputs' elements per output element."""
    n = max((np.size(x) for x in _flat(tuple(xs)) if _is_float(x)), default=1)
    return max(1.0, n / max(v.size, 1))


def _linear(call, xs, es, v, eps) -> np.ndarray:
    absname = LINEAR[call.op.name]
    floats = [_is_float(x) for x in xs]
    # an integer input summed in a float dtype (cumsum(x_int32, dtype="float32")) rounds
    # too: its terms count with their magnitudes, like a float input's
    magnitude = _apply(call, [_abs(x) if f else _abs_int(x) for x, f in zip(xs, floats)],
                       absname)
    carried = _apply(call, [e if f else x for x, e, f in zip(xs, es, floats)], absname)
    k = REDUCTION_K * _terms(xs, v) + ELEMENTWISE_K
    return np.abs(carried) + _rounding(k, eps, magnitude, v.dtype)


def _bilinear(call, xs, es, v, eps) -> np.ndarray:
    a, b = (_f64(x) for x in xs[:2])
    ea, eb = es[:2]
    rest = list(xs[2:])
    magnitude = _apply(call, [_abs(a), _abs(b), *rest])
    carried = (_apply(call, [ea, _abs(b), *rest]) + _apply(call, [_abs(a), eb, *rest])
               + _apply(call, [ea, eb, *rest]))
    terms = 1.0 if call.op.name == "multiply" else np.sqrt(np.size(a) * np.size(b)
                                                            / max(v.size, 1))
    k = REDUCTION_K * terms + ELEMENTWISE_K
    if _winograd_eligible(call, b):
        k *= WINOGRAD
        # the transforms mix every pixel of a tile with every tap: a tap's weight meets
        # every pixel of the tile (the tile reaches past the output into its padding),
        # not only the one its window reads
        magnitude = np.maximum(magnitude, _winograd_magnitude(call, a, b, np.shape(v)))
    bound = np.abs(carried) + _rounding(k, eps, magnitude, v.dtype)
    # products that underflow in float64 too (|x| * 5e-324) leave magnitude 0, but their
    # exact values are not 0: fused into an add (FMA) they round to a zero of their sign
    # (fuzz seed 131832); where any term is nonzero, a zero's sign is rounding
    terms = _apply(call, [(np.asarray(a) != 0).astype("float64"),
                          (np.asarray(b) != 0).astype("float64"), *rest])
    floor = k * float(np.finfo(v.dtype).smallest_subnormal)
    bound = np.where((bound == 0) & (np.asarray(terms) > 0), floor, bound)
    if call.op.name == "multiply":  # a zero of uncertain sign times 0 is a zero of
        # uncertain sign (a tied max of +0.0 and -0.0 times 0: fuzz seed 131325)
        unsure = ((np.asarray(ea) > 0) & (a == 0)) | ((np.asarray(eb) > 0) & (b == 0))
        bound = np.where(unsure & (v == 0) & (bound == 0), ZERO_TIE, bound)
    return bound


def _rounding(k: float, eps: float, magnitude: np.ndarray, dtype) -> np.ndarray:
    """What ``k`` roundings of terms of total ``magnitude`` can move a result: each at
    most ``eps`` of the magnitude, or, where it underflows, half the dtype's smallest
    subnormal (so a nonzero magnitude never has a bound of 0: a tiny product fused into
    an add (FMA) or not rounds to a zero of either sign)."""
    tiny = float(np.finfo(dtype).smallest_subnormal)
    return k * np.maximum(eps * magnitude, np.where(magnitude > 0, tiny, 0.0))


def _weight_transform_bound(call, xs, es, v) -> np.ndarray:
    """``G w Gᵀ`` rounds its intermediate ``G w`` too: terms that cancel exactly in the
    result (a huge tap beside its negation) leave their rounding (fuzz seed 131843), so
    the magnitude is ``|G| |w| |G|ᵀ``, not the output's (non-finite taps are exact)."""
    w, e = np.asarray(xs[0], "float64"), np.asarray(es[0], "float64")
    _, g, _ = winograd_matrices(call.attrs.tile_size, w.shape[2])
    o, i, kh, kw = w.shape
    lift = np.kron(np.abs(g), np.abs(g))

    def apply(a):
        return (lift @ a.reshape(o * i, kh * kw).T).reshape(g.shape[0], g.shape[0], o, i)

    magnitude = apply(np.where(np.isfinite(w), np.abs(w), 0.0))
    carried = apply(np.where(np.isfinite(e), e, 0.0))
    k = REDUCTION_K * kh * kw + ELEMENTWISE_K
    return carried + _rounding(k, _eps(v.dtype), magnitude, v.dtype)


WINOGRAD_REACH = 7  # α - 1 at F(6×6, 3×3), the largest tile


def _winograd_magnitude(call, x: np.ndarray, w: np.ndarray, out_shape) -> np.ndarray:
    """Per output: Σ over input channels of the largest finite |x| of that channel within
    ``WINOGRAD_REACH`` pixels of the output's window, times the channel's Σ|w| over the
    taps (what the tile's products can reach; non-finite values are left out: their
    outputs are the direct sum, exact)."""
    a = call.attrs
    dl = getattr(a, "data_layout", "NCHW") or "NCHW"
    kl = getattr(a, "kernel_layout", "OIHW") or "OIHW"
    ol = getattr(a, "out_layout", "") or dl
    if getattr(a, "groups", 1) != 1 or sorted(dl) != sorted("NCHW") or sorted(kl) != sorted(
            "OIHW") or sorted(ol) != sorted("NCHW"):
        return np.zeros(out_shape)
    xa = np.abs(np.transpose(np.asarray(x, "float64"), [dl.index(c) for c in "NCHW"]))
    xa = np.where(np.isfinite(xa), xa, 0.0)
    wa = np.abs(np.transpose(np.asarray(w, "float64"), [kl.index(c) for c in "OIHW"]))
    l1 = np.where(np.isfinite(wa), wa, 0.0).sum(axis=(2, 3))  # (O, C)
    near = xa.copy()
    for axis in (2, 3):  # the largest |x| within the reach, along H then W
        n, out = near.shape[axis], near.copy()
        for d in range(1, min(WINOGRAD_REACH, n - 1) + 1):
            lo, hi = [slice(None)] * 4, [slice(None)] * 4
            lo[axis], hi[axis] = slice(0, n - d), slice(d, n)
            out[tuple(lo)] = np.maximum(out[tuple(lo)], near[tuple(hi)])
            out[tuple(hi)] = np.maximum(out[tuple(hi)], near[tuple(lo)])
        near = out
    nchw = [out_shape[ol.index(c)] for c in "NCHW"]
    pt, pl = a.padding[0], a.padding[1]
    rows = np.clip(np.arange(nchw[2]) - pt + 1, 0, xa.shape[2] - 1)  # a window's middle
    cols = np.clip(np.arange(nchw[3]) - pl + 1, 0, xa.shape[3] - 1)
    mag = np.einsum("nchw,oc->nohw", near[:, :, rows][:, :, :, cols], l1)
    return np.transpose(mag, ["NCHW".index(c) for c in ol])


def _zero_tie(call, xs, v) -> np.ndarray:
    """Where the zero result of a max/min came from a window holding both +0.0 and
    -0.0: the op applied to indicator arrays says whether any operand in the window
    is each zero (max of indicators; min of their negations)."""
    sign = 1.0 if call.op.name in MAX_LIKE else -1.0

    def present(which):
        ind = [sign * ((np.asarray(x) == 0) & (np.signbit(x) == which)).astype(
            np.asarray(x).dtype) if _is_float(x) else x for x in xs]
        return sign * np.asarray(_apply(call, ind), "float64") > 0

    return (v == 0) & present(True) & present(False)


def _winograd_eligible(call, weight) -> bool:
    """A 3×3, stride-1, undilated 2-D convolution: level 3 may run it as Winograd."""
    if call.op.name != "nn.conv2d" or np.ndim(weight) != 4:
        return False
    a = call.attrs
    layout = getattr(a, "kernel_layout", "OIHW") or "OIHW"
    hw = [np.shape(weight)[layout.index(c)] for c in "HW"] if set("HW") <= set(layout) \
        else []
    return (hw == [3, 3] and tuple(a.strides) == (1, 1) and tuple(a.dilation) == (1, 1))


def _generic(call, xs, es, v, rng):
    """Evaluate the op on inputs moved by their bounds (plus ``k·eps`` of themselves
    for its own rounding); the largest move per element, ``inf`` where a move changes
    what the value is (finite or not, an integer or bool result, a pole within reach)."""
    flat_v = _flat(v)
    floats = [_is_float(x) for x in xs]
    # each float argument's reach: its bound plus the op's own rounding as an input move
    reach = []
    for x, e, f in zip(xs, es, floats):
        if not f:
            reach.append(None)
            continue
        reach.append(_rebuild(x, [np.where(np.isfinite(ee), ee, 0.0) + np.where(
            np.isfinite(xx), ELEMENTWISE_K * _eps(np.asarray(xx).dtype)
            * np.abs(np.asarray(xx, "float64")), 0.0)  # NaN and Inf stay where they are
            for xx, ee in zip(_flat(x), _flat(e))]))
    tainted = [_rebuild(e, [~np.isfinite(ee) for ee in _flat(e)]) for e in es]
    bound = [np.zeros(np.shape(x), "float64") for x in flat_v]
    undetermined = [np.zeros(np.shape(x), bool) for x in flat_v]
    float_args = [k for k, f in enumerate(floats) if f]
    signs = list(itertools.product((1.0, -1.0), repeat=min(len(float_args), 3)))
    patterns = [dict(zip(float_args, s)) for s in signs] + ["random", "random", "zero"]
    for pattern in patterns:
        moved = []
        for k, x in enumerate(xs):
            if reach[k] is None:
                moved.append(_scramble(x, tainted[k], rng))
                continue
            parts = []
            for xx, rr, tt in zip(_flat(x), _flat(reach[k]), _flat(tainted[k])):
                xf = np.asarray(xx, "float64")
                if pattern == "zero":  # the values that may be 0 exactly, at 0
                    m = np.where(np.abs(xf) <= rr, 0.0, xf)
                elif pattern == "random":
                    m = xf + rng.choice((-1.0, 1.0), np.shape(xf)) * rr
                else:
                    m = xf + pattern.get(k, 1.0) * rr
                m = np.where(tt, rng.uniform(-1e3, 1e3, np.shape(xf)), m)
                parts.append(m)
            moved.append(_rebuild(x, parts))
        try:
            out = _flat(_apply(call, moved))
        except Exception:  # noqa: BLE001  (the op refuses a moved input: undecided)
            for u in undetermined:
                u[...] = True
            continue
        for j, (w, m) in enumerate(zip(flat_v, out)):
            if np.shape(m) != np.shape(w):
                undetermined[j][...] = True
                continue
            w = np.asarray(w)
            if w.dtype.kind != "f":
                undetermined[j] |= w != np.asarray(m).astype(w.dtype)
                continue
            # finite or not in the result's dtype (an overflow there is the same
            # overflow); how far in float64 (a move below the dtype's resolution, such
            # as the sign of an underflowed result, still counts)
            w64, m64 = w.astype("float64"), np.asarray(m).astype(w.dtype).astype("float64")
            fin_w, fin_m = np.isfinite(w64), np.isfinite(m64)
            nan_w, nan_m = np.isnan(w64), np.isnan(m64)
            same_special = (nan_w & nan_m) | (~nan_w & ~nan_m & (w64 == m64))
            undetermined[j] |= (fin_w != fin_m) | (~fin_w & ~fin_m & ~same_special)
            fine = np.asarray(m, "float64")
            bound[j] = np.maximum(bound[j], np.where(fin_w & fin_m, np.abs(fine - w64), 0.0))
    _integer_taints(call, xs, tainted, flat_v, undetermined, rng)
    out = []
    for w, b, u in zip(flat_v, bound, undetermined):
        if np.asarray(w).dtype.kind == "f":
            w64 = np.asarray(w, "float64")
            b = b + np.where(np.isfinite(w64), ELEMENTWISE_K * _eps(w.dtype) * np.abs(w64), 0.0)
        out.append(np.where(u, np.inf, b))
    return _rebuild(v, out)


def _integer_taints(call, xs, tainted, flat_v, undetermined, rng) -> None:
    """An undetermined integer argument (an index from a flipped argmax, a cast of a
    value within rounding of a step) could be any value: elements that move when it
    moves are undetermined. (A bool has one other value, which the patterns tried.)"""
    ints = [k for k, x in enumerate(xs) if not _is_float(x) and not isinstance(x, tuple)
            and np.asarray(x).dtype != bool and np.asarray(tainted[k]).any()]
    if not ints:
        return
    moved = [_scramble(x, tainted[k], rng) if k in ints else x for k, x in enumerate(xs)]
    try:
        out = _flat(_apply(call, moved))
    except Exception:  # noqa: BLE001
        out = None
    for j, w in enumerate(flat_v):
        if out is None or np.shape(out[j]) != np.shape(w):
            undetermined[j][...] = True
        else:
            same = (np.asarray(out[j]) == np.asarray(w)) | (np.isnan(np.asarray(
                out[j], "float64")) & np.isnan(np.asarray(w, "float64")))
            undetermined[j] |= ~same


def _scramble(x, tainted, rng):
    """A non-float argument with its undetermined elements replaced by other values."""
    if isinstance(x, tuple):
        return tuple(_scramble(a, t, rng) for a, t in zip(x, tainted))
    x = np.asarray(x)
    if not tainted.any():
        return x
    if x.dtype == bool:
        other = ~x
    else:
        other = x + np.asarray(1, x.dtype)
    return np.where(tainted, other, x)


__all__ = ["MAX_LIKE", "MIN_LIKE", "ZERO_TIE", "error_bounds"]
