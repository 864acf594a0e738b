"""Records: JSON-lines round trip, the best record per task, and apply_history_best
through the one lowering path (graph, VM and AOT builds; the PassContext config)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import relayir as relay
from relayir import autotune
from relayir.autotune.records import FIELDS
from relayir.transform import PassContext

TUNED = {"tile_n": 16, "tile_m": 2, "parallel": False}


def _record(task, schedule, costs, cpu=None, target=None, error=None, reference=()):
    target = target or autotune.task.target_name(task.target)  # "cpu", or its -mcpu's
    return autotune.Record(task.workload, task.name, task.kind, target, cpu or task.cpu,
                           schedule, costs, list(reference), error=error, flops=task.flops)


def test_round_trip(tmp_path, dense_task):
    path = tmp_path / "r.json"
    records = [_record(dense_task, TUNED, [2e-6, 1e-6, 3e-6]),
               _record(dense_task, {}, [], error="timeout: no result within 1 s")]
    autotune.append_records(path, records[:1])
    autotune.append_records(path, records[1:])  # appended, not rewritten
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    assert list(json.loads(lines[0])) == list(FIELDS)  # stable field order
    back = autotune.load_records(path)
    assert [r.to_json() for r in back] == [r.to_json() for r in records]
    assert back[0].cost == 1e-6 and back[1].cost == float("inf")


def test_malformed_line_names_its_place(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"task": "x"}\n')
    with pytest.raises(autotune.RecordError, match=r"bad.json:1: not a tuning record"):
        autotune.load_records(path)


def test_best_config_is_judged_on_its_confirmations(dense_task):
    """A config measured once may owe its place to a quiet moment: where configs were
    measured again (the finalists and the default), only they compete, each on the
    median of its records."""
    lucky, steady, default = {"tile_n": 48}, {"tile_n": 16}, {"tile_n": 32}
    best = autotune.best_configs([
        _record(dense_task, lucky, [1e-6]),                        # once, very fast
        *(_record(dense_task, steady, [c]) for c in (3e-6, 9e-6, 3.5e-6)),
        *(_record(dense_task, default, [c]) for c in (4e-6, 4e-6, 2e-6)),
        _record(dense_task, {"tile_n": 64}, [], error="crashed: signal 11 (SIGSEGV)"),
    ])
    assert best[dense_task.key] == (steady, 3.5e-6)


def test_measure_result_costs():
    r = autotune.MeasureResult((3e-6, 2e-6), None, "cpu", (4e-6, 8e-6))
    assert r.cost == 2e-6 and r.relative == 0.5  # fastest over fastest, same window
    assert autotune.MeasureResult((), "crashed: signal 11").cost == float("inf")


def test_nothing_faster_than_the_default_keeps_the_default(dense_task):
    records = [_record(dense_task, {"tile_n": 16}, [c], reference=[1e-6]) for c in
               (0.99e-6, 1.0e-6, 1.01e-6)]  # within MIN_GAIN of the reference
    assert autotune.best_configs(records) == {}


def test_best_config_by_ratio_to_the_reference(dense_task):
    """With the default measured in alternation, the ratio decides: a candidate timed
    at a quiet moment does not beat one that was faster than the default beside it."""
    quiet, busy = {"tile_n": 16}, {"tile_n": 32}
    records = [
        _record(dense_task, quiet, [4e-6, 5e-6], reference=[4e-6, 4e-6]),  # ratio 1
        _record(dense_task, busy, [8e-6, 9e-6], reference=[16e-6, 18e-6]),  # ratio 0.5
    ]
    assert records[1].relative == 0.5 and records[0].relative == 1.0
    config, seconds = autotune.best_configs(records)[dense_task.key]
    assert config == busy and seconds == 0.5 * 4e-6  # ratio x the default's quietest time


def _run(lib, inputs):
    gm = relay.graph_executor.GraphModule(lib)
    gm.set_input(**inputs)
    gm.run()
    return gm.get_output(0)


def test_apply_history_best_reaches_every_executor(tiny_model, tmp_path, needs_cc):
    mod, _ = tiny_model()
    (task,) = autotune.extract_tasks(mod, None, "cpu")
    path = tmp_path / "r.json"
    autotune.append_records(path, [_record(task, TUNED, [1e-6]),
                                   _record(task, {"tile_n": 32}, [2e-6])])
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal((8, 32), "float32"),
              "w": rng.standard_normal((32, 32), "float32")}
    expected = np.maximum(inputs["x"] @ inputs["w"].T, 0)
    default = relay.build(mod, target="cpu").get_lib().get_source()
    with autotune.apply_history_best(path) as best:
        lib = relay.build(mod, target="cpu")
        relay.vm.compile(mod, target="cpu")
        aot = relay.build(mod, target="cpu", executor="aot")
    assert best.applied == {task.workload: TUNED}
    tuned = lib.get_lib().get_source()
    assert tuned != default  # the tuned schedule's kernel: one 2 x 16 tile, no thread team
    assert "rl_gemm_f32_2x16" in tuned and "rl_gemm_f32_2x16" not in default
    assert "rl_gemm_f32_2x16" in aot.get_source()
    np.testing.assert_allclose(_run(lib, inputs), expected, rtol=1e-5, atol=1e-5)
    with PassContext(config={"relay.autotune.records": str(path)}):
        assert "rl_gemm_f32_2x16" in relay.build(mod, target="cpu").get_lib().get_source()
    assert relay.build(mod, target="cpu").get_lib().get_source() == default  # scope ended


def test_records_for_another_cpu_are_ignored_with_a_warning(tiny_model, tmp_path, needs_cc):
    mod, _ = tiny_model()
    (task,) = autotune.extract_tasks(mod, None, "cpu")
    path = tmp_path / "r.json"
    autotune.append_records(path, [_record(task, TUNED, [1e-6], cpu="Other CPU [0000]")])
    default = relay.build(mod, target="cpu").get_lib().get_source()
    with pytest.warns(autotune.TuningWarning, match="Other CPU"), \
            autotune.apply_history_best(path) as best:
        source = relay.build(mod, target="cpu").get_lib().get_source()
    assert source == default and best.applied == {}
    with warnings.catch_warnings():  # a task without records: no warning
        warnings.simplefilter("error")
        with autotune.apply_history_best([]):
            relay.build(mod, target="cpu")


def test_missing_records_file_is_a_relayir_error(tiny_model, tmp_path, needs_cc):
    mod, _ = tiny_model()
    with PassContext(config={"relay.autotune.records": str(tmp_path / "none.json")}), \
            pytest.raises(relay.Error, match="none.json"):
        relay.build(mod, target="cpu")
