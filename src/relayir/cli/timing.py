"""How the CLI times a model (``relayir run`` of an artifact, a model file or a built-in
model): warm-up runs, then a window of timed runs whose median is the latency."""

from __future__ import annotations

import time
from collections.abc import Callable

TIMED_S = 0.5  # the default timing window: thousands of runs of a small model, so that
# one descheduled run (a busy machine, a helper thread late) does not move the median
WARM_S = 0.2  # warm-up: OpenMP's thread team awake, the caches warm (one warm-up run
# left the first timed runs 10x slower: a median far above the minimum)


def timed_runs(time_one: Callable[[], float], repeat: int | None, at_least: int) -> list[float]:
    """Seconds per run (``time_one()`` runs once and returns its seconds): ``repeat``
    runs, or, after up to ``WARM_S`` of warm-up runs, as many as ``TIMED_S`` holds and at
    least ``at_least`` (one run of a small model is no latency a user can trust)."""
    if repeat is not None:
        return [time_one() for _ in range(repeat)]
    warm = time.perf_counter()
    while time.perf_counter() - warm < WARM_S and time_one() < WARM_S:
        pass
    times, start = [], time.perf_counter()
    while len(times) < at_least or time.perf_counter() - start < TIMED_S:
        times.append(time_one())
    return times


__all__ = ["TIMED_S", "WARM_S", "timed_runs"]
