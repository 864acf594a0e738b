"""A candidate that crashes, hangs or computes a wrong result is recorded as an error
and the tuning run completes (bad kernels injected into the C of a batch)."""

from __future__ import annotations

import math

from relayir import autotune
from relayir.autotune.measure import build_job

# C statements put first in a candidate's kernel body
BAD = {
    1: "*(volatile int*)0 = 1;",                     # crash: SIGSEGV
    2: "for (;;) __asm__ volatile(\"\");",           # hang: killed at the timeout
    3: "return 0;",                                  # wrong: outputs never written
    4: "#error this candidate does not compile",      # the batch falls back to one by one
}


class BadFirstBatch:
    """``build_job``, with candidates 1-4 of the first batch replaced by bad kernels."""

    def __init__(self):
        self.batches = 0

    def __call__(self, task, space, configs, data, prefix="cand", check=True):
        built, job = build_job(task, space, configs, data, prefix=prefix, check=check)
        self.batches += 1
        if self.batches == 1:
            for i, code in BAD.items():
                head = f"int32_t {prefix}_{i}(void* const* args, const int64_t* dims) {{"
                job.source = job.source.replace(head, f"{head}\n{code}\n")
                job.sources = [s.replace(head, f"{head}\n{code}\n") for s in job.sources]
        return built, job


def test_bad_candidates_are_errors_and_the_run_completes(tmp_path, dense_task):
    runner = autotune.LocalRunner(repeat=2, min_repeat_ms=1.0, timeout=2.0)
    session = autotune.TuningSession(runner, tmp_path / "r.json", "grid", batch=8,
                                     builder=BadFirstBatch())
    try:
        result = session.run_task(dense_task, trials=12, confirm=0)
    finally:
        session.close()
    assert result.trials == 12  # the run went on after the bad batch
    records = autotune.load_records(tmp_path / "r.json")
    errors = [r.error for r in records[1:5]]
    assert errors[0].startswith("crashed: signal 11")
    assert errors[1].startswith("timeout: no result within 2 s")
    assert errors[2].startswith("wrong result: output 0 differs from the reference")
    assert errors[3].startswith("compile: C compilation failed")
    assert all(r.error is None and r.costs for r in (records[0], *records[5:]))
    assert result.errors == 4
    assert math.isfinite(result.best_cost) and result.best_config
