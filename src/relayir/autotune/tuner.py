"""Tuners: which candidates of a task to measure next.

A tuner proposes points of its task's ``ConfigSpace`` (``next_batch``) and learns their
costs (``update``). Every tuner measures the default schedule first, so a tuned task is
never worse than the default on the tuner's own measurements. ``GridTuner`` walks the
space in order and ``RandomTuner`` samples it without repeats: the baselines for tests
and comparisons. ``xgb_tuner.XGBTuner`` is the model-guided one.
"""

from __future__ import annotations

import math
import random

from .space import ConfigSpace
from .task import Task


class Tuner:
    """``measured``: point → median cost (seconds; ``inf`` for an error)."""

    name = "tuner"

    def __init__(self, task: Task, space: ConfigSpace, seed: int = 0):
        self.task = task
        self.space = space
        self.rng = random.Random(seed)
        self.measured: dict[tuple, float] = {}

    @property
    def exhausted(self) -> bool:
        return len(self.measured) >= len(self.space)

    @property
    def best(self) -> tuple[tuple | None, float]:
        finite = [(c, p) for p, c in self.measured.items() if math.isfinite(c)]
        if not finite:
            return None, math.inf
        cost, point = min(finite)
        return point, cost

    def next_batch(self, n: int) -> list[tuple]:
        """Up to ``n`` points never measured, the default schedule first."""
        out: list[tuple] = []
        default = self.space.default_point
        if default not in self.measured:
            out.append(default)
        out.extend(self._propose(n - len(out), set(out)))
        return out[:n]

    def _propose(self, n: int, taken: set) -> list[tuple]:
        raise NotImplementedError

    def update(self, points: list[tuple], costs: list[float], kernels=None) -> None:
        """Learn the costs of measured ``points`` (``kernels``: their lowered
        ``PrimFunc``\\ s, or ``None`` where lowering failed: the model tuner's features)."""
        for p, c in zip(points, costs):
            self.measured[p] = c

    def _random_unmeasured(self, n: int, taken: set) -> list[tuple]:
        out: list[tuple] = []
        tries = 0
        while len(out) < n and tries < 50 * max(n, 1):
            tries += 1
            p = self.space.sample(self.rng)
            if p not in self.measured and p not in taken:
                taken.add(p)
                out.append(p)
        if len(out) < n:  # a nearly exhausted space: take what is left, in order
            for p in self.space:
                if len(out) >= n:
                    break
                if p not in self.measured and p not in taken:
                    taken.add(p)
                    out.append(p)
        return out


class GridTuner(Tuner):
    """Every point in grid order (the first knob slowest)."""

    name = "grid"

    def __init__(self, task: Task, space: ConfigSpace, seed: int = 0):
        super().__init__(task, space, seed)
        self._order = iter(space)

    def _propose(self, n: int, taken: set) -> list[tuple]:
        out = []
        for p in self._order:
            if len(out) >= n:
                self._order = _chain(p, self._order)
                break
            if p not in self.measured and p not in taken:
                out.append(p)
        return out


def _chain(first, rest):
    yield first
    yield from rest


class RandomTuner(Tuner):
    """Uniform samples of the space, none measured twice."""

    name = "random"

    def _propose(self, n: int, taken: set) -> list[tuple]:
        return self._random_unmeasured(n, taken)


__all__ = ["GridTuner", "RandomTuner", "Tuner"]
