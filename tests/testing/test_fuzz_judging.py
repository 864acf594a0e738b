"""The fuzzer's judgement: rounding is excused only within bounds derived from the
computation, every excuse is counted by rule, and a deliberately wrong kernel — a 1e-3
relative error in one element, -0.0 turned +0.0, NaN turned 0, an integer off by one —
is a mismatch, not rounding, at opt level 0 and 3."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import relayir as relay
from relayir.backend import lowering
from relayir.runtime.kernels import Kernel
from relayir.testing.fuzz_bounds import error_bounds
from relayir.testing.fuzz_compare import judge
from relayir.testing.fuzz_exec import CheckReport, check

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")


def _module(text: str) -> relay.IRModule:
    return relay.parse('#[version = "0.0.5"]\n' + text)


# ---------------------------------------------------------------- the bounds


def test_a_cancelling_sum_is_bounded_by_its_terms_not_by_its_result():
    mod = _module("def @main(%x: Tensor[(3), float32]) { sum(%x) }")
    x = np.array([1.8e15, 0.04, -1.8e15], "float32")
    bound = error_bounds(mod, [x])
    assert 1e8 < float(bound) < 1e12  # k·eps·3.6e15, whatever the (tiny) result
    want = np.asarray(np.sum(x))
    _, excused = judge(want, want + np.float32(3e7), bound)
    assert excused["error bound"] == 1


def test_an_element_far_from_the_large_value_gets_a_small_bound():
    """The old rule took 64 ulps of the program's largest value for every element."""
    mod = _module("def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) "
                  "{ add(%x, %y) }")
    x, y = np.array([1.8e15, 1.0], "float32"), np.array([1.0, 2.0], "float32")
    bound = error_bounds(mod, [x, y])
    assert bound[1] < 1e-5 and bound[0] > 1e8
    want = x + y
    got = want.copy()
    got[1] += 0.01
    diff, excused = judge(want, got, bound)
    assert diff and sum(excused.values()) == 0


def test_a_comparison_within_rounding_is_undetermined_and_so_is_what_it_selects():
    mod = _module("""def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {
      %0 = add(%a, %b);
      %1 = greater(%0, %b);
      (%1, where(%1, %a, %b))
    }""")
    a = np.array([1e-9, 5.0], "float32")  # a + b rounds to b at element 0
    b = np.array([1.0, 1.0], "float32")
    cond, picked = error_bounds(mod, [a, b])
    assert np.isinf(cond[0]) and cond[1] == 0
    assert 0.99 < picked[0] < 1.01 and picked[1] < 1e-4  # either a or b: |a - b| apart


def test_a_division_by_a_value_within_rounding_of_zero_is_undetermined():
    mod = _module("""def @main(%x: Tensor[(2), float32]) {
      %0 = subtract(%x, %x);
      %1 = add(%0, meta[relay.Constant][0]);
      divide(1f, %1)
    }""".replace("meta[relay.Constant][0]", "1e-30f"))
    x = np.array([1e10, 2.0], "float32")
    bound = error_bounds(mod, [x])
    assert np.isinf(bound).all()  # x - x carries ulps of 1e10 and of 2: 0 is in reach


def test_integers_and_signed_zeros_have_no_rounding():
    mod = _module("def @main(%i: Tensor[(2), int32], %x: Tensor[(2), float32]) "
                  "{ (add(%i, %i), negative(%x)) }")
    i, x = np.array([1, 2], "int32"), np.array([0.0, 1.0], "float32")
    ib, xb = error_bounds(mod, [i, x])
    assert (ib == 0).all() and xb[0] == 0


def test_an_if_has_the_bound_of_the_branch_the_oracle_took():
    mod = _module("""def @main(%x: Tensor[(2), float32]) {
      if (greater(sum(%x), 0f)) { exp(%x) } else { negative(%x) }
    }""")
    x = np.ones(2, "float32")
    bound = error_bounds(mod, [x])
    plain = error_bounds(_module("def @main(%x: Tensor[(2), float32]) { exp(%x) }"), [x])
    np.testing.assert_array_equal(bound, plain)
    want = np.exp(x)
    diff, excused = judge(want, want * np.float32(1.001), bound)
    assert diff and sum(excused.values()) == 0  # a wrong value in a branch is no rounding


def test_an_if_whose_condition_rounding_could_flip_is_undetermined():
    mod = _module("""def @main(%x: Tensor[(3), float32]) {
      if (greater(sum(%x), 0f)) { %x } else { negative(%x) }
    }""")
    bound = error_bounds(mod, [np.array([1.0, -1.0, 1e-12], "float32")])
    assert np.isinf(bound).all()
    far = error_bounds(mod, [np.array([1.0, -1.0, 0.5], "float32")])
    assert (far == 0).all()


def test_a_field_computed_by_a_closure_gets_no_bound_and_its_neighbour_does():
    mod = _module("""def @main(%x: Tensor[(2), float32]) {
      let %f = fn (%y: Tensor[(2), float32]) { exp(%y) };
      (%f(%x), exp(%x))
    }""")
    bounds = error_bounds(mod, [np.ones(2, "float32")])
    assert bounds[0] is None and bounds[1].shape == (2,) and (bounds[1] > 0).all()
    want = np.ones(2, "float32")
    diff, excused = judge(want, want * 2, None)
    assert diff and not excused


# ---------------------------------------------------------------- wrong kernels


class _Corrupted(Kernel):
    """A kernel that runs ``inner`` and then spoils its first output."""

    def __init__(self, inner, spoil):
        self.inner, self.spoil, self.name = inner, spoil, inner.name
        self.input_types, self.output_types = inner.input_types, inner.output_types
        self.dim_names = getattr(inner, "dim_names", ())

    def bind(self, arrays):
        call = self.inner.bind(arrays)
        out = arrays[len(self.input_types)]

        def run():
            status = call()
            self.spoil(out)
            return status

        return run

    def call_unchecked(self, *arrays):
        self.inner.call_unchecked(*arrays)
        self.spoil(arrays[len(self.input_types)])


@pytest.fixture
def spoiled(monkeypatch):
    """``spoiled(fn)``: every cpu kernel built from now on spoils its first output."""

    def install(spoil):
        real = lowering.LOWERINGS["cpu"]

        def lower_spoiled(*args, **kwargs):
            lib = real(*args, **kwargs)
            lib.kernels = {n: _Corrupted(k, spoil) for n, k in lib.kernels.items()}
            return lib

        monkeypatch.setitem(lowering.LOWERINGS, "cpu", lower_spoiled)

    return install


def _relative(out):
    out.reshape(-1)[0] *= np.float32(1 + 1e-3)


def _unsign_zero(out):
    flat = out.reshape(-1)
    flat[flat == 0] = 0.0


def _nan_to_zero(out):
    flat = out.reshape(-1)
    flat[np.isnan(flat)] = 0


def _off_by_one(out):
    out.reshape(-1)[0] += 1


CASES = {
    "relative 1e-3": (_relative, "def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(3, 8), "
                      "float32]) { nn.relu(nn.dense(%x, %w)) }",
                      [np.full((2, 8), 0.5, "float32"), np.full((3, 8), 0.25, "float32")]),
    "-0.0 to +0.0": (_unsign_zero, "def @main(%x: Tensor[(3), float32]) { negative(%x) }",
                     [np.array([0.0, 1.0, -2.0], "float32")]),
    "NaN to 0": (_nan_to_zero, "def @main(%x: Tensor[(3), float32]) { exp(%x) }",
                 [np.array([np.nan, 1.0, -2.0], "float32")]),
    "int off by one": (_off_by_one, "def @main(%i: Tensor[(3), int32]) { multiply(%i, 3) }",
                       [np.array([4, -5, 6], "int32")]),
}


@needs_cc
@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_wrong_kernel_is_a_mismatch_not_rounding(spoiled, case, level):
    spoil, text, inputs = CASES[case]
    mod = _module(text)
    report = CheckReport()
    assert check(mod, inputs, [("graph", "cpu", level)], report=report) == []  # sound
    spoiled(spoil)
    found = check(mod, inputs, [("graph", "cpu", level), ("vm", "cpu", level)],
                  report=report)
    assert [(f.pair, f.kind) for f in found] == [
        (f"graph/cpu/O{level}", "mismatch"), (f"vm/cpu/O{level}", "mismatch")], found
    assert sum(report.excused.values()) == 0


def test_a_max_over_both_zeros_is_a_signed_zero_tie_and_a_lone_zero_is_not():
    mod = _module("def @main(%x: Tensor[(1, 1, 2, 4), float32]) "
                  "{ nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]) }")
    x = np.array([[[[0.0, -0.0, -0.0, -1.0], [-2.0, -3.0, -0.0, -0.0]]]], "float32")
    want = np.array([[[[0.0, -0.0]]]], "float32")
    bound = error_bounds(mod, [x])
    _, excused = judge(want, np.array([[[[-0.0, -0.0]]]], "float32"), bound)
    assert excused["signed-zero tie"] == 1  # both zeros in the first window
    diff, excused = judge(want, np.array([[[[0.0, 0.0]]]], "float32"), bound)
    assert diff and sum(excused.values()) == 0  # the second window holds -0.0 only


UNDERFLOW = "add(multiply(%x, 5e-324f64), %y)"
# the fuzzer's control-flow wrapper (fuzz seed 32968): the bound of the clause taken
IN_A_MATCH = f"""
      %0 = {UNDERFLOW};
      %1 = if (less(sum(%x), 0f64)) {{ Some(%0) }} else {{ None }};
      match (%1) {{
        Some(%v) => multiply(2f64, %v),
        _ => %0,
      }}"""


@pytest.mark.parametrize("body", [UNDERFLOW, IN_A_MATCH], ids=["dataflow", "in_a_match"])
def test_a_product_that_underflows_has_a_bound_and_a_zero_product_has_none(body):
    """A tiny product fused into an add (FMA) or not rounds to a zero of either sign: a
    nonzero magnitude gets at least the subnormal rounding; an exact zero keeps 0."""
    mod = _module("type Option[A] { Some(A), None, }\n"
                  "def @main(%x: Tensor[(2), float64], %y: Tensor[(2), float64]) "
                  f"{{ {body} }}")
    x, y = np.array([-1.03, -0.0]), np.array([5e-324, -0.0])
    bound = error_bounds(mod, [x, y])
    assert bound[0] > 0 and bound[1] == 0
    want = np.array([0.0, -0.0])
    _, excused = judge(want, np.array([-0.0, -0.0]), bound)
    assert excused["error bound"] == 1
    diff, _ = judge(want, np.array([0.0, 0.0]), bound)
    assert diff  # -0.0 * tiny + -0.0 is -0.0 exactly: its sign is no rounding


def test_a_zero_of_a_normalisation_is_a_signed_zero_tie():
    """instance_norm lowers to (x - mean) / sd * gamma + beta, which C contracts: with
    gamma = beta = the smallest subnormal, (x - mean) / sd near -1 gives +0.0 unfused
    and -0.0 fused (fuzz seed 9432)."""
    mod = _module("def @main(%x: Tensor[(1, 1, 1, 2), float64], %g: Tensor[(1), float64]) "
                  "{ nn.instance_norm(%x, %g, %g) }")
    x, g = np.array([[[[-1.0, 1.0]]]]), np.array([5e-324])
    bound = error_bounds(mod, [x, g])
    want = relay.create_executor("debug", mod=mod).evaluate()(x, g)
    assert want[0, 0, 0, 0] == 0 and not np.signbit(want[0, 0, 0, 0])
    got = want.copy()
    got[0, 0, 0, 0] = -0.0
    diff, excused = judge(want, got, bound)
    assert not diff and sum(excused.values()) == 1


def test_integer_terms_summed_in_a_float_dtype_count_with_their_magnitudes():
    """cumsum(x_int32, dtype=float32) rounds at 2^29 (fuzz seed 131781): the bound is
    k·eps·Σ|x|, not k·eps·|Σx| (which cancels to 0 here)."""
    mod = _module('def @main(%x: Tensor[(3), int32]) { cumsum(%x, dtype="float32") }')
    x = np.array([2**29 + 4, -(2**29), 3], "int32")
    bound = error_bounds(mod, [x])
    assert bound[1] > 32  # ulps of 2^29 in float32 are 64 wide
    want = np.cumsum(x.astype("float32"))
    got = want.copy()
    got[1] = 4.0  # float64 sums keep the 4 that float32's per-step rounding dropped
    diff, excused = judge(want, got, bound)
    assert not diff and excused["error bound"] == 1


def test_a_tied_zero_times_zero_is_still_a_tie():
    """max over {+0.0, -0.0} is either zero; times 0 its sign stays uncertain (seed 131325)."""
    mod = _module("def @main(%x: Tensor[(1, 1, 1, 2), float32], %m: Tensor[(1), float32]) "
                  "{ multiply(nn.max_pool2d(%x, pool_size=[1, 2]), %m) }")
    x, m = np.array([[[[0.0, -0.0]]]], "float32"), np.array([0.0], "float32")
    bound = error_bounds(mod, [x, m])
    diff, excused = judge(np.array([[[[0.0]]]], "float32"), np.array([[[[-0.0]]]], "float32"),
                          bound)
    assert not diff and sum(excused.values()) == 1


def test_the_winograd_weight_transform_bound_sees_its_intermediate():
    """Taps of +-1e15 that cancel in G w G^T still round in G w (seed 131843)."""
    mod = _module("def @main(%w: Tensor[(1, 1, 3, 3), float32]) "
                  "{ nn.contrib_conv2d_winograd_weight_transform(%w, tile_size=2) }")
    w = np.zeros((1, 1, 3, 3), "float32")
    w[0, 0, 1] = [1e15, -1e15, 1e15]
    w[0, 0, 0, 0] = 0.5
    bound = error_bounds(mod, [w])
    assert (bound > 1e6).sum() > 4  # every output the huge row reaches
    assert bound[0, 0, 0, 0] < 1e-5  # ... and not the corner that only sees 0.5
