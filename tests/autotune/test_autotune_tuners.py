"""Grid, random and xgb tuners on a tiny task; tune() over a model with records."""

from __future__ import annotations

import importlib.util
import math

import pytest

from relayir import autotune


@pytest.mark.parametrize("tuner", ["grid", "random", "xgb"])
def test_tuner_finds_no_worse_than_default(tuner, dense_task, quick_runner):
    if tuner == "xgb" and importlib.util.find_spec("xgboost") is None:
        pytest.skip('the xgb tuner needs xgboost (pip install "relayir[tune]")')
    session = autotune.TuningSession(quick_runner, None, tuner, batch=4, seed=0)
    result = session.run_task(dense_task, trials=8, confirm=2)
    assert result.trials == 8 and result.errors == 0
    configs = [str(sorted(r.schedule.items())) for r in session.records[:8]]
    assert len(set(configs)) == 8  # never the same candidate twice
    assert session.records[0].schedule == autotune.ConfigSpace(dense_task).default_config
    assert len(session.records) > 8  # the finalists measured again with the default
    assert math.isfinite(result.best_cost) and math.isfinite(result.default_cost)
    assert result.best_config in [r.schedule for r in session.records]
    assert result.curve == sorted(result.curve, reverse=True)  # best so far: never worse
    if tuner == "xgb":
        assert session.model.trained and len(session.data) >= 8


def test_tune_spends_trials_and_records(tiny_model, tmp_path, quick_runner):
    mod, params = tiny_model(twice=True)
    path = tmp_path / "r.json"
    results = autotune.tune(mod, params, "cpu", trials=6, records=path, runner=quick_runner,
                            tuner="random", batch=3, confirm=0, progress=False)
    assert [r.trials for r in results] == [6]
    assert len(autotune.load_records(path)) == 6
    again = autotune.tune(mod, params, "cpu", trials=3, records=path, runner=quick_runner,
                          tuner="random", batch=3, confirm=0, progress=False)
    assert again[0].trials == 3  # earlier records are reused, not measured again
    configs = {str(sorted(r.schedule.items())) for r in autotune.load_records(path)}
    assert len(configs) == 9


def test_unknown_tuner_is_an_error():
    with pytest.raises(autotune.TuningError, match="unknown tuner 'annealing'"):
        autotune.TuningSession(tuner="annealing")
