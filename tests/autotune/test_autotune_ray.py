"""A small tuning job through RayRunner on a local Ray cluster (ray.init(num_cpus=2)):
it completes, and apply_history_best builds with the records it wrote."""

from __future__ import annotations

import pytest

import relayir as relay
from relayir import autotune

ray = pytest.importorskip(
    "ray", reason='RayRunner needs ray, which is not installed (pip install '
                  '"relayir[distributed]")')


@pytest.fixture(scope="module")
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_runner_tunes_and_records_apply(tiny_model, tmp_path, needs_cc, local_cluster):
    mod, params = tiny_model()
    path = tmp_path / "r.json"
    runner = autotune.RayRunner(repeat=2, min_repeat_ms=1.0, timeout=20.0)
    assert runner.cpus_per_job == 2  # one measurement per node at a time
    results = autotune.tune(mod, params, "cpu", trials=4, records=path, runner=runner,
                            tuner="random", batch=4, confirm=0, progress=False)
    assert results[0].trials == 4 and results[0].errors == 0
    records = autotune.load_records(path)
    assert len(records) == 4 and all(r.costs and r.reference and r.cpu == autotune.host_cpu()
                                      for r in records)  # measured by the Ray workers
    chosen = autotune.best_configs(records)  # empty when nothing beat the default
    with autotune.apply_history_best(path) as best:
        relay.build(mod, target="cpu")
    assert best.best == chosen
    assert best.applied == {key[0]: config for key, (config, _) in chosen.items()}
    assert results[0].best_config == (chosen[results[0].task.key][0] if chosen else
                                      autotune.ConfigSpace(results[0].task).default_config)
