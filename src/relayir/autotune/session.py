"""``tune``: tune every task of a model within a trial budget, recording as it goes.

1. ``extract_tasks`` (under the current ``PassContext``: tune under the one you build
   with);
2. measure each task's default schedule (all tasks at once: a cluster runs them in
   parallel), which gives each task's share of the model's time, weight × cost;
3. split the remaining trials by that share — the tuner spends trials where the time is;
4. per task, heaviest first: batches of ``batch`` candidates from the tuner, built into
   one C file per job, measured by the runner, every result appended to ``records``;
5. the finalists (``confirm`` best configs and the default) are measured again side by
   side, three times: the best config is the finalist with the lowest median ratio to
   the default (``records.best_configs``), not the one that met the quietest moment.

Measurements of this run's tasks already in ``records`` are loaded first: their configs
are not measured again, and they train the cost model (``xgb``) before any new
measurement. The model and its training set are shared across tasks: a task starts with
a model trained on the tasks before it (transfer learning).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable

from ..ir.expr import Function
from ..ir.module import IRModule
from .conv_algorithms import chosen_context, tune_conv_algorithms
from .cost_model import TrainingSet, XGBoostCostModel, require_xgboost
from .measure import Built, Job, TaskData, build_job
from .progress import TuneProgress
from .records import Record, append_records, best_configs, load_records
from .runner import LocalRunner, Runner
from .space import ConfigSpace
from .task import Task, TuningError, extract_tasks, target_name
from .tuner import GridTuner, RandomTuner, Tuner
from .worker import MeasureResult
from .xgb_tuner import XGBTuner

TUNERS: dict[str, type[Tuner]] = {"xgb": XGBTuner, "random": RandomTuner, "grid": GridTuner}


@dataclasses.dataclass
class TaskResult:
    """One task's outcome: ``default_cost``: the default schedule's least disturbed time
    (seconds per run); ``best_cost``: the best config's (its ratio to the default, times
    that); ``curve[i]``: the best cost relative to the default after ``i + 1`` trials;
    ``errors``: candidates that crashed, hung, computed a wrong result or failed to
    build."""

    task: Task
    space_size: int
    trials: int = 0
    errors: int = 0
    default_cost: float = math.inf
    best_cost: float = math.inf
    best_config: dict = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    curve: list[float] = dataclasses.field(default_factory=list)

    @property
    def speedup(self) -> float:
        ok = math.isfinite(self.best_cost) and math.isfinite(self.default_cost)
        return self.default_cost / self.best_cost if ok else 1.0

    @property
    def gflops(self) -> float:
        return self.task.flops / self.best_cost / 1e9 if math.isfinite(self.best_cost) else 0.0

    @property
    def default_gflops(self) -> float:
        return (self.task.flops / self.default_cost / 1e9
                if math.isfinite(self.default_cost) else 0.0)


class TuningSession:
    """The state one tuning run shares across tasks: runner, records, model."""

    def __init__(self, runner: Runner | None = None, records: str | os.PathLike | None = None,
                 tuner: str = "xgb", batch: int = 8, seed: int = 0,
                 builder: Callable = build_job):
        if tuner not in TUNERS:
            raise TuningError(f"unknown tuner {tuner!r}; expected one of {', '.join(TUNERS)}")
        if tuner == "xgb":
            require_xgboost()
        if batch < 1:
            raise TuningError(f"batch must be >= 1, found {batch}")
        self.runner = runner or LocalRunner()
        self.records_path = os.fspath(records) if records is not None else None
        self.records: list[Record] = []  # this run's
        self.tuner_name = tuner
        self.batch = batch
        self.seed = seed
        self.builder = builder
        self.data = TrainingSet()
        self.model = XGBoostCostModel(seed=seed) if tuner == "xgb" else None
        self._earlier = load_records(self.records_path) \
            if self.records_path and os.path.exists(self.records_path) else []

    # ------------------------------------------------------------ per task
    def start(self, task: Task) -> tuple[Tuner, ConfigSpace, TaskData, TaskResult]:
        space = ConfigSpace(task)
        kind = TUNERS[self.tuner_name]
        if kind is XGBTuner:
            tuner = XGBTuner(task, space, self.seed, model=self.model, data=self.data)
        else:
            tuner = kind(task, space, self.seed)
        result = TaskResult(task, len(space))
        earlier = [r for r in self._earlier if r.key == task.key]
        points, costs = [], []
        for r in earlier:
            p = space.point(r.schedule)
            if p is not None and p not in tuner.measured:
                points.append(p)
                costs.append(r.relative if r.relative is not None else r.cost)
        if points:
            tuner.update(points, costs)
        refs = [c for r in earlier if not r.error for c in r.reference]
        result.default_cost = min(refs, default=math.inf)
        return tuner, space, TaskData(task, self.seed), result

    def measure(self, task: Task, space: ConfigSpace, data: TaskData,
                points: list[tuple]) -> tuple[list[MeasureResult], list]:
        """Build and run ``points``: one result and one kernel (or ``None``) per point;
        every result is appended to the records."""
        configs = [space.config(p) for p in points]
        jobs = max(1, min(self.runner.parallelism, len(configs)))
        chunks = [list(range(i, len(configs), jobs)) for i in range(jobs)]
        builts: list[Built | None] = [None] * len(configs)
        work: list[tuple[list[int], Job]] = []
        stamp = f"t{int(time.time() * 1000) % 10**9}"
        for c, idx in enumerate(chunks):
            built, job = self.builder(task, space, [configs[i] for i in idx], data,
                                      prefix=f"{stamp}_{c}")
            for i, b in zip(idx, built):
                builts[i] = b
            if job is not None:
                work.append(([i for i, b in zip(idx, built) if b.name], job))
        results: list[MeasureResult | None] = [None] * len(configs)
        for i, b in enumerate(builts):
            if b.error:
                results[i] = MeasureResult((), b.error, task.cpu)
        for (idx, _), measured in zip(work, self.runner.run([job for _, job in work])):
            for i, r in zip(idx, measured):
                results[i] = r
        self._record(task, configs, results)
        return results, [b.kernel for b in builts]

    def _record(self, task: Task, configs: list[dict], results: list[MeasureResult]) -> None:
        new = [Record(task.workload, task.name, task.kind, target_name(task.target),
                      r.cpu or task.cpu, config, list(r.costs), list(r.reference), r.error,
                      task.flops)
               for config, r in zip(configs, results)]
        self.records.extend(new)
        if self.records_path:
            append_records(self.records_path, new)

    def run_task(self, task: Task, trials: int, state=None, progress: TuneProgress | None = None,
                 confirm: int = 3) -> TaskResult:
        """Tune ``task`` for ``trials`` measurements (the default's included)."""
        tuner, space, data, result = state or self.start(task)
        start = time.perf_counter()
        while result.trials < trials and not tuner.exhausted:
            points = tuner.next_batch(min(self.batch, trials - result.trials))
            if not points:
                break
            measured, kernels = self.measure(task, space, data, points)
            costs = [r.relative for r in measured]  # relative to the default: see worker.py
            tuner.update(points, costs, kernels)
            self.count(result, tuner, costs, measured)
            if progress is not None:
                progress.advance(len(points), self.best_gflops(result, tuner),
                                 self.speedup(tuner))
        if confirm and result.trials:
            self._confirm(task, tuner, space, data, confirm)
        self._finish(result, tuner, space)
        result.seconds += time.perf_counter() - start
        return result

    def count(self, result: TaskResult, tuner: Tuner, costs, measured) -> None:
        for c, r in zip(costs, measured):
            result.trials += 1
            result.errors += r.error is not None
            best = min(result.curve[-1] if result.curve else math.inf, c)
            result.curve.append(best)
            if r.reference:
                result.default_cost = min(result.default_cost, min(r.reference))

    def _confirm(self, task, tuner: Tuner, space, data, confirm: int, rounds: int = 3) -> None:
        """Measure the finalists again with the default, interleaved over ``rounds``: a
        candidate that won on one quiet moment of a shared machine meets the default
        under the same conditions."""
        ranked = sorted((c, p) for p, c in tuner.measured.items() if math.isfinite(c))
        finalists = [p for _, p in ranked[:confirm]]
        if space.default_point not in finalists:
            finalists.append(space.default_point)
        if len(finalists) > 1:
            for _ in range(rounds):
                self.measure(task, space, data, finalists)

    def _finish(self, result: TaskResult, tuner: Tuner, space: ConfigSpace) -> None:
        mine = [r for r in (*self._earlier, *self.records) if r.key == result.task.key]
        default = [c for r in mine if not r.error for c in r.reference] or [
            r.cost for r in mine if r.schedule == space.default_config]
        if default:
            result.default_cost = min(default)  # its least disturbed time, as best_configs
        best = best_configs(mine).get(result.task.key)
        if best is not None:
            result.best_config, result.best_cost = best
        if best is None or space.point(result.best_config) == space.default_point:
            # nothing beat the default beside it: the default is the best (ratio 1)
            result.best_config, result.best_cost = space.default_config, result.default_cost

    @staticmethod
    def best_gflops(result: TaskResult, tuner: Tuner) -> float:
        """Best so far: its cost relative to the default, times the default's time."""
        cost = tuner.best[1] * result.default_cost
        return result.task.flops / cost / 1e9 if math.isfinite(cost) and cost else 0.0

    @staticmethod
    def speedup(tuner: Tuner) -> float:
        default = tuner.measured.get(tuner.space.default_point, math.inf)
        _, best = tuner.best
        return default / best if math.isfinite(best) and math.isfinite(default) else 1.0

    def close(self) -> None:
        self.runner.close()


def tune_tasks(tasks: list[Task], trials: int, session: TuningSession,
               progress: bool = True, confirm: int = 3) -> list[TaskResult]:
    """Tune ``tasks`` within ``trials`` measurements in all (see the module doc)."""
    bar = TuneProgress(trials, len(tasks), enabled=progress)
    try:
        states = [session.start(t) for t in tasks]
        first = [(t, s) for t, s in zip(tasks, states) if not s[0].measured]
        # the defaults of every task at once: their shares of the model's time
        for (task, (tuner, space, data, result)) in first:
            if result.trials < trials:
                points = tuner.next_batch(1)
                measured, kernels = session.measure(task, space, data, points)
                tuner.update(points, [r.relative for r in measured], kernels)
                session.count(result, tuner, [r.relative for r in measured], measured)
                bar.advance(1, session.best_gflops(result, tuner), session.speedup(tuner))
        spent = sum(s[3].trials for s in states)
        shares = []
        for task, (_, _, _, result) in zip(tasks, states):
            cost = result.default_cost
            shares.append(task.weight * cost if math.isfinite(cost) else 0.0)
        total = sum(shares) or 1.0
        left = max(trials - spent, 0)
        budgets = [math.floor(left * s / total) for s in shares]
        if budgets:
            budgets[max(range(len(shares)), key=shares.__getitem__)] += left - sum(budgets)
        order = sorted(range(len(tasks)), key=lambda i: -shares[i])
        results: list[TaskResult | None] = [None] * len(tasks)
        for i in order:
            task, state = tasks[i], states[i]
            bar.task(i, task.name)
            result = state[3]
            results[i] = session.run_task(task, result.trials + budgets[i], state, bar,
                                          confirm if budgets[i] else 0)
            r = results[i]
            bar.task_done(i, task.name, r.trials, r.gflops, r.speedup, r.seconds)
        return results
    finally:
        bar.close()


def tune(mod: IRModule | Function, params: dict | None = None, target="cpu", *,
         trials: int = 200, records: str | os.PathLike | None = None,
         runner: Runner | None = None, tuner: str = "xgb", batch: int = 8,
         tasks: list[Task] | None = None, confirm: int = 3, seed: int = 0,
         progress: bool = True, conv_algorithms: bool = False) -> list[TaskResult]:
    """Tune ``mod``'s kernels for ``target`` with ``trials`` measurements in all.

    ``records``: the JSON-lines file every measurement is appended to (and earlier
    measurements of these tasks are read from); ``runner``: ``LocalRunner()`` (default)
    or ``RayRunner(...)``; ``tuner``: ``"xgb"`` (model-guided, needs ``relayir[tune]``),
    ``"random"`` or ``"grid"``; ``conv_algorithms``: first choose each convolution's
    algorithm (``conv_algorithms.tune_conv_algorithms``, measured in the whole model, not
    counted in ``trials``), then tune the kernels of the model built with them. Build
    with the result under ``apply_history_best(records)``."""
    if trials < 0:
        raise TuningError(f"trials must be >= 0, found {trials}")
    if tasks is None:
        better = (tune_conv_algorithms(mod, params, target, records=records)
                  if conv_algorithms else {})
        with chosen_context(better):
            tasks = extract_tasks(mod, params, target)
    session = TuningSession(runner, records, tuner, batch, seed)
    try:
        return tune_tasks(tasks, trials, session, progress, confirm)
    finally:
        if runner is None:
            session.close()


__all__ = ["TUNERS", "TaskResult", "TuningSession", "tune", "tune_tasks"]
