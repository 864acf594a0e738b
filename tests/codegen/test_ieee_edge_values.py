"""IEEE edge values through every op with a cpu kernel: the generated C equals the numpy
reference (the numpy target) on NaN positions, infinities, signs of zero and integer
results bit for bit; finite floats within the record's rounding tolerance.

The op records are ``test_lower_ops.CASES`` (one per op, attrs and shapes; a test there
checks that every op with a compute has one). Each record runs again with its data
inputs salted with NaN, +-Inf, -0.0, denormals, huge and tiny magnitudes and integer
extremes; index inputs (``take``'s indices, ...) keep their values. The kernels are the
ones ``test_lower_ops`` compiles (same source, so the compile cache serves them).

Documented choices the cpu target and the numpy reference share (see ``c_printer``):
``maximum``/``minimum``/``relu``/``clip``/max-pools/``max``/``min`` propagate NaN, and
``np.maximum(a, b)`` gives ``b`` on a tie (``max(-0.0, 0.0)`` is ``0.0``); ``argmax``
and ``argmin`` give the first NaN's index; integer ``x / 0``, ``x % 0`` (every flavour)
give 0 and ``INT_MIN / -1`` wraps to ``INT_MIN``; float to integer casts truncate, give
0 for NaN and saturate out-of-range values.
"""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
from test_lower_ops import CASES, Case, _flat_inputs, _reference, compiled  # noqa: F401

import relayir as relay
from relayir.ir.op import OpPattern, get_op
from relayir.op import list_ops
from relayir.te.computes import COMPUTE
from relayir.te.computes.dynamic import VALUE_SHAPED
from relayir.testing.fuzz_values import int_edges

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="needs a C compiler")

# inputs that are positions, not data: salting them would only test the bounds checks
_INDEX_INPUTS = {"take": {1}, "gather": {1}, "gather_nd": {1}, "scatter_elements": {1},
                 "scatter_nd": {1}, "one_hot": {0}, "segment_sum": {1},
                 "sparse_to_dense": {0}, "unravel_index": {0, 1}}
# Products and (weighted) sums accumulate in float32 in C and in float64 in the
# reference: huge magnitudes there overflow in one and not the other, or cancel, which is
# rounding, not semantics. Those ops get NaN, Inf, zeros and tiny values but no huge finite ones.
_ACCUMULATING = (OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.OPAQUE)
_SUMS = {"sum", "mean", "prod", "variance", "std", "logsumexp", "image.resize1d",
         "image.resize2d", "image.resize3d", "nn.upsampling", "image.grid_sample"}
_COMPARE_ONLY = {"nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.global_max_pool2d"}


def _bounded(op: str) -> bool:
    """Whether ``op``'s edge values leave out huge magnitudes (see above)."""
    return op not in _COMPARE_ONLY and (get_op(op).pattern in _ACCUMULATING or op in _SUMS)


# Records whose edge-value variants meet a bug in a file this test's owner does not edit
# (see relayir.testing.fuzz_known): (op, note, attrs that must match, variant) -> "route";
# the xfail is strict, so a fix shows up here.
_KNOWN: dict = {
    # (op, case note, attrs, "special" | "random") -> why the cpu kernel still differs;
    # empty since the grid_sample border clamp and the RNN's relu keep numpy's rules.
}


def _known(case: Case, kind: str) -> str | None:
    for (op, note, attrs, k), reason in _KNOWN.items():
        if (op, note, k) == (case.op, case.note, kind) and all(
                case.attrs.get(a) == v for a, v in attrs):
            return reason
    return None


def _float_edges(dtype: str, bounded: bool) -> np.ndarray:
    """The fuzzer's edge values (``fuzz_values``) but with each dtype's largest
    magnitudes: one op at a time, overflow semantics can be compared too."""
    info = np.finfo(dtype)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    small = [float(info.smallest_subnormal), -float(info.smallest_subnormal),
             float(info.tiny), -float(info.tiny) * 3]
    big = [] if bounded else [float(info.max) / 4, -float(info.max) / 2,
                              min(1e30, float(info.max))]
    return np.array(specials + small + big, dtype)


def _salt(x: np.ndarray, edges: np.ndarray, rng, share: float) -> np.ndarray:
    x = np.array(x, copy=True)
    if x.size == 0:
        return x
    n = max(1, int(round(x.size * share)))
    where = rng.choice(x.size, n, replace=False)
    x.reshape(-1)[where] = rng.choice(edges, n)
    return x


def _variant(case: Case, n: int, kind: str) -> list:
    """``case``'s inputs with edge values in its data inputs."""
    rng = np.random.default_rng(1000 + n)
    keep = _INDEX_INPUTS.get(case.op, set())
    bounded = _bounded(case.op)

    def salt(k, x):
        x = np.asarray(x)
        if k in keep or x.dtype == np.bool_:
            return x
        if x.dtype.kind == "f":
            if kind == "int":
                return x
            edges = _float_edges(x.dtype.name, bounded)
            if kind == "magnitude":  # no NaN: infinities and zeros arise from the values
                edges = edges[np.isfinite(edges)]
            return _salt(x, edges, rng, 0.3)
        return _salt(x, int_edges(x.dtype.name), rng, 0.4) if kind != "magnitude" else x

    out = []
    for k, x in enumerate(case.inputs):
        out.append(tuple(salt(k, v) for v in x) if isinstance(x, tuple) else salt(k, x))
    return out


def _strict_zero_sign(op: str) -> bool:
    """Elementwise ops must give numpy's sign of zero; reductions and windows sum or
    compare in an order numpy does not fix, so only their zero *values* are compared."""
    return get_op(op).pattern in (OpPattern.ELEMWISE, OpPattern.BROADCAST)


def assert_same_ieee(got, want, rtol: float, atol: float, zero_sign: bool, where: str):
    """NaN positions, infinities (with sign) and integers bit for bit; finite floats within
    the tolerance; signs of zero when ``zero_sign``."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{where}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    if got.dtype.kind in "iub":
        bad = got != want
        assert not bad.any(), f"{where}: at {np.argwhere(bad)[:5].tolist()} got " \
                              f"{got[bad][:5]} want {want[bad][:5]}"
        return
    g, w = got.astype("float64"), want.astype("float64")
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    bad = nan_g != nan_w
    assert not bad.any(), f"{where}: NaN at {np.argwhere(bad)[:5].tolist()}: got " \
                          f"{g[bad][:5]} want {w[bad][:5]}"
    inf = np.isinf(g) | np.isinf(w)
    bad = inf & (g != w)
    assert not bad.any(), f"{where}: infinities differ at {np.argwhere(bad)[:5].tolist()}: " \
                          f"got {g[bad][:5]} want {w[bad][:5]}"
    fin = ~(nan_g | inf)
    np.testing.assert_allclose(g[fin], w[fin], rtol=rtol, atol=atol, err_msg=where)
    if zero_sign:
        zero = fin & (g == 0) & (w == 0)
        bad = zero & (np.signbit(g) != np.signbit(w))
        assert not bad.any(), f"{where}: sign of zero differs at {np.argwhere(bad)[:5]}"


KINDS = ("special", "magnitude", "int")


def _has(case: Case, kind: str) -> bool:
    """Whether ``kind`` salts any input of ``case`` (else the variant repeats the plain
    test of test_lower_ops)."""
    dtypes = [np.asarray(v).dtype for x in case.inputs
              for v in (x if isinstance(x, tuple) else (x,))]
    if kind == "int":
        return any(d.kind in "iu" for d in dtypes)
    return any(d.kind == "f" for d in dtypes)


PARAMS = [(n, kind) for n, case in enumerate(CASES) for kind in KINDS if _has(case, kind)]


@pytest.mark.parametrize("n,kind", PARAMS, ids=[f"{CASES[n].id}-{k}" for n, k in PARAMS])
def test_cpu_kernel_equals_numpy_on_edge_values(compiled, request, n, kind):  # noqa: F811
    fns, errors = compiled
    if n in errors:
        raise errors[n]
    if _known(CASES[n], kind) == "route":
        request.applymarker(pytest.mark.xfail(strict=True, reason="known bug (see _KNOWN)"))
    case = dataclasses.replace(CASES[n], inputs=_variant(CASES[n], n, kind))
    outs = fns[n](*_flat_inputs(case))
    expected = _reference(case)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert_same_ieee(got, want, case.rtol, case.atol, _strict_zero_sign(case.op),
                         f"{case.id}-{kind}")


def test_every_op_with_a_cpu_kernel_meets_nan_and_inf():
    salted = {CASES[n].op for n, kind in PARAMS if kind == "special"}
    float_ops = {c.op for c in CASES if _has(c, "special")}
    assert salted == float_ops
    with_compute = set(COMPUTE.covered()) & set(list_ops())
    # the value-shaped dyn ops run on the VM: tests/vm/test_vm_value_shaped.py salts them
    untested = sorted(with_compute - {c.op for c in CASES} - set(VALUE_SHAPED))
    assert untested == [], f"ops with a cpu kernel but no edge-value record: {untested}"


def test_salting_puts_the_edge_values_in():
    case = next(c for c in CASES if c.op == "nn.relu" and c.inputs[0].dtype == np.float32)
    (x,) = _variant(case, 0, "special")
    assert np.isnan(x).any() and np.isinf(x).any()
    (xi,) = _variant(next(c for c in CASES if c.op == "nn.relu" and c.inputs[0].dtype.kind
                          == "i"), 0, "int")
    assert xi.min() == np.iinfo(xi.dtype).min or xi.max() == np.iinfo(xi.dtype).max


# ---------------------------------------------------------------- documented results


def _run_both(mod, *inputs) -> list:
    """The program's result on the numpy target and on the cpu target (graph executor)."""
    outs = []
    for target in ("numpy", "cpu"):
        lib = relay.build(mod, target=target)
        m = relay.graph_executor.GraphModule(lib)
        for k, x in enumerate(inputs):
            m.set_input(k, x)
        m.run()
        outs.append(m.get_output(0))
    return outs


def _program(text: str):
    return relay.parse(text)


def _both_equal(text: str, *inputs, expect=None, zero_sign: bool = True):
    want, got = _run_both(_program(text), *inputs)
    assert_same_ieee(got, want, 1e-6, 1e-6, zero_sign, text)
    if expect is not None:
        assert_same_ieee(want, np.asarray(expect, want.dtype), 0, 0, zero_sign, "numpy")
    return got


NAN_ROWS = np.array([[1, np.nan, 3, -2], [np.nan, np.nan, -1, .5], [-0.0, 0.0, -1, -np.inf]],
                    "float32")


def test_the_issue_examples_keep_nan():
    f32 = "Tensor[(3, 4), float32]"
    _both_equal(f"def @main(%x: {f32}) {{ nn.relu(%x) }}", NAN_ROWS,
                expect=[[1, np.nan, 3, 0], [np.nan, np.nan, 0, .5], [0, 0, 0, 0]])
    _both_equal(f"def @main(%x: {f32}) {{ clip(%x, a_min=0.0, a_max=1.0) }}", NAN_ROWS,
                expect=[[1, np.nan, 1, 0], [np.nan, np.nan, 0, .5], [0, 0, 0, 0]])
    _both_equal(f"def @main(%x: {f32}) {{ max(%x, axis=[1]) }}", NAN_ROWS,
                expect=[np.nan, np.nan, 0], zero_sign=False)
    _both_equal(f"def @main(%x: {f32}) {{ min(%x, axis=[1]) }}", NAN_ROWS,
                expect=[np.nan, np.nan, -np.inf])
    _both_equal(f"def @main(%x: {f32}) {{ argmax(%x, axis=[1]) }}", NAN_ROWS,
                expect=[1, 0, 0])
    _both_equal(f"def @main(%x: {f32}) {{ argmin(%x, axis=[1]) }}", NAN_ROWS,
                expect=[1, 0, 3])
    _both_equal(f"def @main(%x: {f32}, %y: {f32}) {{ maximum(%x, %y) }}", NAN_ROWS,
                NAN_ROWS[::-1].copy())
    _both_equal(f"def @main(%x: {f32}, %y: {f32}) {{ minimum(%x, %y) }}", NAN_ROWS,
                NAN_ROWS[::-1].copy())


def test_signed_zero_follows_numpy():
    z = np.array([-0.0, 0.0, -0.0, 0.0], "float32")
    o = np.array([0.0, -0.0, -0.0, 0.0], "float32")
    t = "Tensor[(4), float32]"
    got = _both_equal(f"def @main(%x: {t}, %y: {t}) {{ maximum(%x, %y) }}", z, o, expect=o)
    assert np.signbit(got).tolist() == [False, True, True, False]  # b on a tie, as numpy
    _both_equal(f"def @main(%x: {t}, %y: {t}) {{ minimum(%x, %y) }}", z, o, expect=o)
    got = _both_equal(f"def @main(%x: {t}) {{ nn.relu(%x) }}", z, expect=[0, 0, 0, 0])
    assert not np.signbit(got).any()  # relu(-0.0) is +0.0, as np.maximum(x, 0)


@pytest.mark.parametrize("n", [7, 64, 1000, 100_003])
def test_whole_tensor_max_and_argmax_keep_nan_in_every_lane(n):
    """Long reductions run as OpenMP simd (and parallel) reductions: a NaN in any lane
    survives the merge of the lanes."""
    rng = np.random.default_rng(n)
    for pos in sorted({0, 1, n // 3, n - 2, n - 1}):
        x = rng.uniform(-1, 1, n).astype("float32")
        x[pos] = np.nan
        t = f"Tensor[({n}), float32]"
        for op, want in (("max", np.nan), ("min", np.nan), ("argmax", pos), ("argmin", pos)):
            _both_equal(f"def @main(%x: {t}) {{ {op}(%x) }}", x, expect=want)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_integer_division_by_zero_and_overflow_are_defined(dtype):
    """Never a SIGFPE: x / 0 and x % 0 give 0 in every flavour (numpy's result), and
    INT_MIN / -1 wraps to INT_MIN (INT_MIN % -1 is 0)."""
    info = np.iinfo(dtype)
    a = np.array([7, info.min, info.max, 0, info.min, info.max, 5], dtype)
    b = np.array([0, 0, 0, 0, -1 if info.min else 1, -1 if info.min else 3, 2], dtype)
    t = f"Tensor[(7), {dtype}]"
    for op in ("divide", "floor_divide", "mod", "floor_mod"):
        got = _both_equal(f"def @main(%x: {t}, %y: {t}) {{ {op}(%x, %y) }}", a, b)
        assert (got[:4] == 0).all(), (op, got)
        if info.min:
            assert got[4] == (info.min if "div" in op else 0), (op, got)


def test_signed_integer_overflow_wraps_like_numpy():
    """C leaves signed overflow undefined and gcc uses that (abs(x) >= 0): the kernels
    compute 32/64-bit integer arithmetic on unsigned images, so it wraps like numpy."""
    for dtype in ("int32", "int64"):
        info = np.iinfo(dtype)
        x = np.array([info.min, info.max, -1, 0, 7], dtype)
        t = f"Tensor[(5), {dtype}]"
        _both_equal(f"def @main(%x: {t}) {{ nn.relu(abs(%x)) }}", x,
                    expect=np.array([0, info.max, 1, 0, 7], dtype))
        _both_equal(f"def @main(%x: {t}) {{ sign(negative(%x)) }}", x,
                    expect=np.array([-1, -1, 1, 0, -1], dtype))
        _both_equal(f"def @main(%x: {t}) {{ greater(add(%x, %x), %x) }}", x)
        _both_equal(f"def @main(%x: {t}) {{ multiply(%x, %x) }}", x)


def test_float_to_int_casts_are_defined_for_nan_and_out_of_range():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.9, -2.9, -0.5, 300.0, -1.0], "float32")
    t = "Tensor[(10), float32]"
    expect = {
        "int32": [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2, -2, 0, 300, -1],
        "int8": [0, 127, -128, 127, -128, 2, -2, 0, 127, -1],
        "uint8": [0, 255, 0, 255, 0, 2, 0, 0, 255, 0],
        "int64": [0, 2**63 - 1, -2**63, 3_000_000_000, -3_000_000_000, 2, -2, 0, 300, -1],
        "uint64": [0, 2**64 - 1, 0, 3_000_000_000, 0, 2, 0, 0, 300, 0],
    }
    for dtype, want in expect.items():
        _both_equal(f"def @main(%x: {t}) {{ cast(%x, dtype=\"{dtype}\") }}", x,
                    expect=np.array(want, dtype))
    x64 = x.astype("float64")
    _both_equal("def @main(%x: Tensor[(10), float64]) { cast(%x, dtype=\"int32\") }", x64,
                expect=np.array(expect["int32"], "int32"))


def test_infinities_through_the_transcendental_ops():
    x = np.array([[np.inf, -np.inf, 0.0, -0.0, 1.0, np.nan, 100.0, -100.0]], "float32")
    t = "Tensor[(1, 8), float32]"
    for op in ("exp", "log", "tanh", "sigmoid", "erf", "sqrt", "rsqrt", "nn.softmax",
               "nn.log_softmax"):
        _both_equal(f"def @main(%x: {t}) {{ {op}(%x) }}", x)
    # the limits exactly: tanh(inf) - floor(tanh(inf)) must be 0, not 6e-8
    for op, want in (("tanh", [1, -1]), ("sigmoid", [1, 0]), ("erf", [1, -1]),
                     ("exp", [np.inf, 0])):
        got = _both_equal(f"def @main(%x: Tensor[(2), float32]) {{ {op}(%x) }}",
                          np.array([np.inf, -np.inf], "float32"))
        np.testing.assert_array_equal(got, want, err_msg=op)
    rows = np.array([[np.inf, 1, 2, 3], [-np.inf, 1, 2, 3], [-np.inf] * 4, [1e30, 0, 0, 0]],
                    "float32")
    for op in ("nn.softmax", "nn.log_softmax"):
        _both_equal(f"def @main(%x: Tensor[(4, 4), float32]) {{ {op}(%x) }}", rows)


def test_fused_conv_relu_and_pools_keep_nan():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (1, 3, 8, 8)).astype("float32")
    x[0, 1, 2, 3] = np.nan
    x[0, 2, 5, 5] = np.inf
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype("float32")
    t, tw = "Tensor[(1, 3, 8, 8), float32]", "Tensor[(4, 3, 3, 3), float32]"
    got = _both_equal(f"def @main(%x: {t}, %w: {tw}) {{ nn.relu(nn.conv2d(%x, %w, "
                      f"padding=[1, 1, 1, 1])) }}", x, w, zero_sign=False)
    assert np.isnan(got).any()
    for op in ("nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1])",
               "nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2])",
               "nn.global_max_pool2d(%x)", "nn.global_avg_pool2d(%x)"):
        _both_equal(f"def @main(%x: {t}) {{ {op} }}", x, zero_sign=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_minus_a_value_gcc_thinks_is_never_minus_zero_keeps_plus_zero(dtype):
    """gcc 12 folded ``0.0 - X`` to ``-X`` for X an integer-to-float conversion or a
    fabs, so 0 came out -0.0 (fuzz seed 131782: arange(0, -6, -1))."""
    i = relay.var("i", shape=(4,), dtype="int32")
    u = relay.var("u", shape=(4,), dtype="uint64")
    f = relay.var("f", shape=(4,), dtype=dtype)
    zero = relay.const(0.0, dtype)
    body = relay.Tuple([
        relay.subtract(zero, relay.cast(i, dtype)),
        relay.add(zero, relay.negative(relay.cast(u, dtype))),
        relay.subtract(zero, relay.abs(f)),
        relay.arange(zero, relay.const(-4.0, dtype), relay.const(-1.0, dtype), dtype=dtype),
    ])
    mod = relay.IRModule.from_expr(relay.Function([i, u, f], body))
    inputs = [np.array([0, 1, -2, 0], "int32"), np.array([0, 1, 2**63, 0], "uint64"),
              np.array([0.0, -0.0, np.nan, -np.inf], dtype)]
    want = relay.runtime.wrap(relay.build(mod, target="numpy")).run(inputs)
    got = relay.runtime.wrap(relay.build(mod, target="cpu")).run(inputs)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)
        assert np.array_equal(np.signbit(g), np.signbit(w)), (g, w)
