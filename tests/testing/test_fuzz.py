"""The differential fuzzer (``relayir.testing.fuzz``): its corpus replayed, a bounded
slice of it run, and its parts (samplers, comparison, shrinking, corpus files) checked.

The full run is by hand: ``python -m relayir.testing.fuzz --programs 10000``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import relayir as relay
from relayir.op import list_ops
from relayir.testing.fuzz import fuzz_one
from relayir.testing.fuzz_build import Builder, TypeDisagrees
from relayir.testing.fuzz_compare import differences
from relayir.testing.fuzz_corpus import cases, read_case, write_case
from relayir.testing.fuzz_exec import check, evaluate, parse_pair
from relayir.testing.fuzz_gen import Options, generate
from relayir.testing.fuzz_known import known
from relayir.testing.fuzz_ops import NOT_SAMPLED, SAMPLERS
from relayir.testing.fuzz_program import StepError, main_inputs, to_module
from relayir.testing.fuzz_schedules import replay
from relayir.testing.fuzz_shrink import compact, shrink

CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")


# ---------------------------------------------------------------- the corpus


@needs_cc
@pytest.mark.parametrize("path", cases(CORPUS), ids=lambda p: p.stem)
def test_corpus_case_agrees_with_the_interpreter(path):
    """A fixed case must agree; an open one (its fix routed, see ``fuzz_known``) must
    still disagree, so that its fix landing shows up here."""
    mod, inputs, info = read_case(path)
    found = check(mod, inputs, [parse_pair(info["pair"])], **replay(info))
    if info.get("status") == "open":
        assert found, f"{path.stem} passes now: mark it fixed and drop its fuzz_known entry"
        pytest.xfail(f"open ({info.get('known', '')}): {found[0].detail[:200]}")
    assert found == [], [f.detail for f in found]


def test_the_corpus_folder_has_cases():
    assert cases(CORPUS), f"no corpus cases in {CORPUS}"


# ---------------------------------------------------------------- the CI slice


@needs_cc
def test_a_bounded_slice_of_the_fuzzer_finds_nothing():
    """Opt levels 0 and 3 (what users run), level 3 under random tuner choices: 8
    programs, ~40 C builds (30-60 s on 2 cores with a cold kernel cache)."""
    records = [fuzz_one(seed, ["interp", "graph", "vm", "aot"], ["numpy", "cpu"],
                        Options(size=4), shrink_budget=0, opt_levels=(0, 3),
                        schedules="random") for seed in range(8)]
    findings = [(r["seed"], f) for r in records for f in r["findings"] if "known" not in f]
    assert findings == []
    pairs = {p for r in records for p in r["pairs"]}
    assert {"graph/cpu/O0", "graph/cpu/O3", "vm/cpu/O3", "aot/cpu/O3", "vm/numpy/O3",
            "graph/numpy/O3"} <= pairs
    assert any(r["spatial"] for r in records)


# ---------------------------------------------------------------- the parts


def test_every_registered_op_has_a_sampler_or_a_reason():
    missing = [op for op in list_ops() if op not in SAMPLERS and op not in NOT_SAMPLED]
    assert missing == [], f"ops the fuzzer never draws: {missing}"


@pytest.mark.parametrize("op", sorted(SAMPLERS))
def test_the_sampler_makes_valid_calls(op):
    accepted = 0
    for seed in range(8):
        b = Builder(seed, edges=0.2)
        try:
            args, attrs = SAMPLERS[op](b)
            b.call(op, args, attrs)
        except StepError:
            continue
        except TypeDisagrees as exc:  # a bug of the op, unless already routed
            finding = {"pair": "relation/reference", "kind": "type", "detail": str(exc)}
            assert known(finding), exc
            continue
        accepted += 1
    assert accepted, f"{op}: no sample in 8 passed its type relation and reference"


def test_generation_is_deterministic_and_mixes_program_kinds():
    kinds = set()
    for seed in range(40):
        a, info = generate(seed, SAMPLERS)
        b, _ = generate(seed, SAMPLERS)
        assert to_module(a).astext() == to_module(b).astext()
        kinds.add("control" if info["control"] else "dynamic" if info["dynamic"] else "flow")
    assert kinds == {"control", "dynamic", "flow"}


def test_control_flow_programs_run_on_the_vm():
    seen = set()
    for seed in range(60):
        block, info = generate(seed, SAMPLERS, Options(size=2, control=1.0, dynamic=0.0))
        mod = to_module(block)
        text = mod.astext()
        for word in ("if (", "@foldl", "match", "@loop", "fn ("):
            if word in text:
                seen.add(word)
        if seed < 6:
            assert check(mod, main_inputs(block), [("vm", "numpy")]) == []
    assert len(seen) >= 4, seen


def test_differences_are_bit_exact_on_nan_inf_and_integers():
    nan = np.array([1.0, np.nan, np.inf], "float32")
    assert differences(nan, nan.copy()) == []
    assert differences(nan, np.array([1.0, 0.0, np.inf], "float32"))
    assert differences(nan, np.array([1.0, np.nan, -np.inf], "float32"))
    assert differences(nan, np.array([1.00001, np.nan, np.inf], "float32")) == []
    assert differences(np.array([3], "int32"), np.array([4], "int32"))
    assert differences(np.array([3], "int32"), np.array([3], "int64"))
    assert differences((nan,), (nan, nan))


def test_shrinking_keeps_only_what_the_failure_needs():
    block, _ = generate(3, SAMPLERS, Options(size=8, control=0.0, dynamic=0.0))
    block = compact(block)
    target = next(s.op for s in block.steps if s.kind == "call")

    def still_fails(b):
        return any(s.kind == "call" and s.op == target for s in b.steps)

    small = shrink(block, still_fails)
    calls = [s for s in small.steps if s.kind == "call"]
    assert [s.op for s in calls] == [target]


def test_corpus_files_round_trip(tmp_path):
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    inputs = [np.array([1.0, np.nan, -0.0], "float32")]
    write_case(tmp_path, "c", mod, inputs, {"pair": "vm/numpy", "status": "fixed"})
    mod2, inputs2, info = read_case(tmp_path / "c.relay")
    assert info == {"pair": "vm/numpy", "status": "fixed"}
    np.testing.assert_array_equal(inputs2[0], inputs[0])
    got = evaluate(mod2, inputs2, "vm", "numpy")
    np.testing.assert_array_equal(got, [1.0, np.nan, 0.0])
