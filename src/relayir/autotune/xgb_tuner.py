"""The model-guided tuner: simulated annealing over the space, scored by XGBoost.

Each batch: the cost model (``cost_model.XGBoostCostModel``, retrained on every
measurement so far) scores candidates met by a simulated-annealing walk — a population
started from the best measured points and random ones, each step changing one knob
(``ConfigSpace.neighbour``), a worse score accepted with probability
``exp(Δ / temperature)`` as the temperature cools. The best-scored unmeasured points
fill the batch, except that each slot is, with probability ``epsilon``, a random point
(ε-greedy: the model never sees regions it does not already favour otherwise).

Scoring a point needs its features (``features.py``), which need it lowered (from the
task's tensor expressions, built once): the walk is bounded by ``plan`` lowerings per
proposed candidate — a lowering takes 20-300 ms on the 2-core development machine, so
the walk costs about what measuring the batch does — and features are cached. The
``TrainingSet`` and model are shared across the tasks of a tuning run, and seeded from
earlier records, so a new task starts with a model trained on the others (transfer).
"""

from __future__ import annotations

import math

import numpy as np

from ..tir import build_te, lower_tensors
from .cost_model import TrainingSet, XGBoostCostModel
from .features import features
from .space import ConfigSpace
from .task import Task
from .tuner import Tuner


class XGBTuner(Tuner):
    name = "xgb"

    def __init__(self, task: Task, space: ConfigSpace, seed: int = 0,
                 model: XGBoostCostModel | None = None, data: TrainingSet | None = None,
                 epsilon: float = 0.1, plan: int = 4, population: int = 16):
        super().__init__(task, space, seed)
        self.model = model or XGBoostCostModel(seed=seed)
        self.data = data if data is not None else TrainingSet()
        self.epsilon = epsilon
        self.plan = plan
        self.population = population
        self._features: dict[tuple, np.ndarray | None] = {}
        self._graph = None  # the task's tensor expressions, built once for all lowerings

    # ------------------------------------------------------------ features
    def features_of(self, point: tuple, kernel=None) -> np.ndarray | None:
        if point in self._features:
            return self._features[point]
        config = self.space.config(point)
        if kernel is None:
            try:
                g = self._graph = self._graph or build_te(self.task.func)
                kernel = lower_tensors(g.inputs, g.outputs, "k", self.space.schedule(config),
                                       g.dim_vars, g.input_types, g.output_types)
            except Exception:  # noqa: BLE001  (a point lowering refuses scores lowest)
                kernel = None
        x = features(kernel, self.task.profile, config) if kernel is not None else None
        self._features[point] = x
        return x

    # ------------------------------------------------------------ learning
    def update(self, points, costs, kernels=None) -> None:
        super().update(points, costs)
        kernels = kernels or [None] * len(points)
        for p, c, k in zip(points, costs, kernels):
            x = self.features_of(p, k)
            if x is not None:
                self.data.add(self.task.workload, x, c)
        self.model.fit(self.data)

    # ------------------------------------------------------------ search
    def _propose(self, n: int, taken: set) -> list[tuple]:
        if n <= 0:
            return []
        if not self.model.trained:
            return self._random_unmeasured(n, taken)
        ranked = self._anneal(budget=self.plan * n, taken=taken)
        out: list[tuple] = []
        for _ in range(n):
            if self.rng.random() < self.epsilon or not ranked:
                out += self._random_unmeasured(1, taken)
            else:
                p = ranked.pop(0)
                taken.add(p)
                out.append(p)
        return out

    def _score(self, points: list[tuple]) -> np.ndarray:
        xs = [self.features_of(p) for p in points]
        ok = [i for i, x in enumerate(xs) if x is not None]
        scores = np.full(len(points), -np.inf)
        if ok:
            scores[ok] = self.model.predict(np.stack([xs[i] for i in ok]))
        return scores

    def _lowerings(self, points) -> int:
        return sum(p not in self._features for p in points)

    def _anneal(self, budget: int, taken: set) -> list[tuple]:
        """Unmeasured points met by the walk, best score first."""
        best_measured = sorted((c, p) for p, c in self.measured.items() if math.isfinite(c))
        pop = [p for _, p in best_measured[: self.population // 2]]
        pop += [self.space.sample(self.rng) for _ in range(self.population - len(pop))]
        budget -= self._lowerings(pop)
        scores = self._score(pop)
        seen: dict[tuple, float] = {}
        spread = float(np.std(scores[np.isfinite(scores)])) if np.isfinite(scores).any() else 1.0
        temperature = 1.0
        while True:
            for p, s in zip(pop, scores):
                if p not in self.measured and p not in taken:
                    seen[p] = s
            if budget <= 0:
                break
            moved = [self.space.neighbour(p, self.rng) for p in pop]
            budget -= max(self._lowerings(moved), 1)
            new = self._score(moved)
            for p, s in zip(moved, new):
                if p not in self.measured and p not in taken:
                    seen[p] = s
            for i, (s_old, s_new) in enumerate(zip(scores, new)):
                delta = (s_new - s_old) / (spread or 1.0)
                if s_new >= s_old or (np.isfinite(delta) and
                                      self.rng.random() < math.exp(delta / temperature)):
                    pop[i], scores[i] = moved[i], s_new
            temperature = max(temperature * 0.75, 0.05)
        return [p for p, s in sorted(seen.items(), key=lambda kv: -kv[1]) if np.isfinite(s)]


__all__ = ["XGBTuner"]
