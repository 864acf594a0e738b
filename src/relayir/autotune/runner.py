"""Runners: where candidates are compiled and measured.

A runner takes ``Job``\\ s (one batch of candidates each, see ``measure.py``) and returns
one ``MeasureResult`` per kernel. ``LocalRunner`` compiles and measures on this machine,
one candidate at a time (measurements share the cores with nothing the tuner runs);
``ray_runner.RayRunner`` ships jobs to a Ray cluster. Both measure with the same
``measure.run_job``, so a result means the same wherever it was taken.
"""

from __future__ import annotations

from .measure import Job, MeasureOptions, MeasureResult, run_job
from .worker import WorkerServer


class Runner:
    """``run(jobs)`` → one list of results per job, in order."""

    def __init__(self, number: int = 1, repeat: int = 10, min_repeat_ms: float = 10.0,
                 timeout: float = 30.0, flush_cache: bool = False):
        self.options = MeasureOptions(number, repeat, min_repeat_ms, timeout, flush_cache)

    def run(self, jobs: list[Job]) -> list[list[MeasureResult]]:
        raise NotImplementedError

    @property
    def parallelism(self) -> int:
        """Candidates worth sending at once (a batch is split into this many jobs)."""
        return 1

    def close(self) -> None:
        """Release what the runner holds (workers, connections)."""


class LocalRunner(Runner):
    """Compile and measure on this machine: each candidate runs in its own process,
    forked by one worker server (``worker.py``), so a crash or a hang costs one result."""

    def __init__(self, number: int = 1, repeat: int = 10, min_repeat_ms: float = 10.0,
                 timeout: float = 30.0, flush_cache: bool = False):
        super().__init__(number, repeat, min_repeat_ms, timeout, flush_cache)
        self._server = WorkerServer()

    def run(self, jobs: list[Job]) -> list[list[MeasureResult]]:
        return [run_job(job, self.options, self._server) for job in jobs]

    def close(self) -> None:
        self._server.close()


__all__ = ["LocalRunner", "Runner"]
