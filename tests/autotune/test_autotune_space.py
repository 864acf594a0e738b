"""Tasks and search spaces: extraction with weights, stable keys, valid points only."""

from __future__ import annotations

import random

from relayir import autotune
from relayir.autotune.space import RULES
from relayir.autotune.task import workload_digest
from relayir.tir import default_schedule


def test_extract_dedupes_with_weights(tiny_model, needs_cc):
    mod, params = tiny_model(twice=True)
    tasks = autotune.extract_tasks(mod, params, "cpu")
    assert len(tasks) == 1
    assert tasks[0].weight == 2
    assert tasks[0].kind == "dense"
    assert tasks[0].flops == 2 * 8 * 32 * 32 + 8 * 32  # the products, then the relu


def test_digest_is_structural_and_stable(tiny_model, needs_cc):
    (a,) = autotune.extract_tasks(*tiny_model(), "cpu")
    (b,) = autotune.extract_tasks(*tiny_model(), "cpu")
    (c,) = autotune.extract_tasks(*tiny_model(rows=4), "cpu")
    assert a.func is not b.func and a.key == b.key  # fresh IR, same key
    assert workload_digest(a.func) == a.workload
    assert c.workload != a.workload
    assert a.key[1] == autotune.task.target_name("cpu") and a.key[2] == autotune.host_cpu()


def test_space_sizes_and_validity(dense_task):
    space = autotune.ConfigSpace(dense_task)
    print(f"\n{dense_task.name}: {space.describe()}")  # the size, per knob
    points = list(space)
    assert len(points) == len(space) == len(set(points)) > 10
    assert space.default_point in set(points)
    m = space.machine
    for p in points:  # no invalid point is ever generated
        config = space.config(p)
        assert all(r.holds(config, m) for r in RULES)
        assert space.point(config) == p
    rng = random.Random(0)
    for p in points[:50]:
        q = space.neighbour(p, rng)
        assert q in set(points)


def test_default_config_is_the_default_schedule(dense_task):
    space = autotune.ConfigSpace(dense_task)
    (kind, schedule), = space.schedule(space.default_config).items()
    assert kind == "dense"
    assert schedule == default_schedule("dense", dense_task.target.machine())
