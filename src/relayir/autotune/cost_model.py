"""The learned cost model: XGBoost ranking candidates by predicted speed.

``XGBoostCostModel`` is trained on ``TrainingSet`` rows (``features.features`` of a
measured candidate, and its speed relative to the best of its task: 1 for the best,
0 for an error), grouped by task, with a pairwise ranking objective (``rank:pairwise``):
the tuner only needs an order, and ranking is what transfers across tasks whose
absolute speeds differ by orders of magnitude. ``xgboost`` is optional (``pip install
"relayir[tune]"``); without it the ``xgb`` tuner says so and the random and grid tuners
still work.
"""

from __future__ import annotations

import numpy as np

from .task import TuningError


def _import_xgboost():
    """XGBoost, imported when a model is trained: optional, and ``import relayir`` must
    not pay its import time."""
    try:
        import xgboost
    except ImportError:
        raise TuningError('the xgb tuner needs xgboost: pip install "relayir[tune]" (or use '
                          'tuner="random" / "grid")') from None
    return xgboost

XGB_PARAMS = {
    "objective": "rank:pairwise",
    "max_depth": 6,
    "eta": 0.3,
    "gamma": 1e-4,
    "min_child_weight": 1,
    "subsample": 1.0,
    "lambda": 1.0,
    "nthread": 1,  # the measurements need the cores more than the model does
    "verbosity": 0,
}


def require_xgboost() -> None:
    """Fail early, with the install line, where xgboost is missing."""
    _import_xgboost()


class TrainingSet:
    """Measured candidates of every task seen so far: features and costs by task, so a
    new task starts with a model trained on the others (transfer learning)."""

    def __init__(self):
        self.rows: dict[str, list[tuple[np.ndarray, float]]] = {}

    def add(self, task: str, x: np.ndarray, cost: float) -> None:
        self.rows.setdefault(task, []).append((x, cost))

    def __len__(self) -> int:
        return sum(len(r) for r in self.rows.values())

    def arrays(self) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """``(X, y, group sizes)``: ``y`` = the task's best cost / this cost (0: error)."""
        xs, ys, groups = [], [], []
        for rows in self.rows.values():
            finite = [c for _, c in rows if np.isfinite(c)]
            if not finite:
                continue
            best = min(finite)
            xs.extend(x for x, _ in rows)
            ys.extend(best / c if np.isfinite(c) else 0.0 for _, c in rows)
            groups.append(len(rows))
        if not xs:
            return np.zeros((0, 0), "float32"), np.zeros(0), []
        return np.stack(xs), np.asarray(ys, "float32"), groups


class XGBoostCostModel:
    """``fit(training_set)`` then ``predict(X)``: higher means faster."""

    def __init__(self, rounds: int = 80, seed: int = 0, params: dict | None = None):
        self._xgb = _import_xgboost()
        self.rounds = rounds
        self.params = {**XGB_PARAMS, "seed": seed, **(params or {})}
        self.booster = None

    @property
    def trained(self) -> bool:
        return self.booster is not None

    def fit(self, data: TrainingSet) -> None:
        x, y, groups = data.arrays()
        if len(y) < 2 or float(y.max() - y.min()) == 0.0:
            return  # nothing to rank yet
        xgboost = self._xgb
        dtrain = xgboost.DMatrix(x, label=y)
        dtrain.set_group(groups)
        self.booster = xgboost.train(self.params, dtrain, num_boost_round=self.rounds)

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self.booster is None or len(x) == 0:
            return np.zeros(len(x))
        return self.booster.predict(self._xgb.DMatrix(np.asarray(x, "float32")))


__all__ = ["TrainingSet", "XGBoostCostModel", "require_xgboost"]
