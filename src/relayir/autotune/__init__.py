"""Auto-tuning: search the schedule knobs of each kernel, measure on real hardware,
learn a cost model, and build with the best schedules found (AutoTVM-style).

::

    from relayir import autotune
    tasks = autotune.extract_tasks(mod, params, "cpu")
    autotune.tune(mod, params, "cpu", trials=500, records="r.json", tuner="xgb")
    with autotune.apply_history_best("r.json"):
        lib = relayir.build(mod, target="cpu", params=params)

Modules: ``task`` (tasks and their keys), ``space`` (the table of knobs, config
spaces), ``measure`` + ``worker`` (build a batch in one C file, run each candidate in
its own process), ``runner`` (``LocalRunner``), ``ray_runner`` (``RayRunner``),
``features`` + ``cost_model`` (loop-IR features, XGBoost ranking), ``tuner`` (grid,
random) + ``xgb_tuner`` (model-guided simulated annealing), ``records`` (JSON lines),
``dispatch`` (``apply_history_best``: the records the one lowering path uses),
``session`` (``tune``), ``progress``; ``conv_algorithms`` (``tune_conv_algorithms``:
each convolution's algorithm, measured in the whole model).
"""

from .conv_algorithms import tune_conv_algorithms
from .dispatch import ApplyHistoryBest, TuningWarning, apply_history_best
from .measure import Job, MeasureOptions, MeasureResult, TaskData, build_job, run_job
from .ray_runner import RayRunner
from .records import Record, RecordError, append_records, best_configs, load_records
from .runner import LocalRunner, Runner
from .session import TUNERS, TaskResult, TuningSession, tune, tune_tasks
from .space import KNOBS, RULES, ConfigSpace, Knob, Rule, schedule_for
from .task import Task, TuningError, extract_tasks, host_cpu, workload_digest
from .tuner import GridTuner, RandomTuner, Tuner
from .xgb_tuner import XGBTuner

__all__ = ["KNOBS", "RULES", "TUNERS", "ApplyHistoryBest", "ConfigSpace", "GridTuner", "Job",
           "Knob", "LocalRunner", "MeasureOptions", "MeasureResult", "RandomTuner", "RayRunner",
           "Record", "RecordError", "Rule", "Runner", "Task", "TaskData", "TaskResult",
           "Tuner", "TuningError", "TuningSession", "TuningWarning", "XGBTuner",
           "append_records", "apply_history_best", "best_configs", "build_job",
           "extract_tasks", "host_cpu", "load_records", "run_job", "schedule_for", "tune",
           "tune_conv_algorithms", "tune_tasks", "workload_digest"]
