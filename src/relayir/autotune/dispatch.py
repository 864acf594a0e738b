"""``apply_history_best``: builds use the best tuned schedule of each task.

``ApplyHistoryBest`` is the ``backend.lowering.TunedSchedules`` that the one lowering
path asks for every primitive function, so ``build`` (graph and AOT executors) and
``vm.compile`` pick the records up the same way::

    with autotune.apply_history_best("records.json"):
        lib = relayir.build(mod, target="cpu", params=params)
    # or: PassContext(config={"relay.autotune.records": "records.json"})

A function is found by its task key (structural digest, target, CPU); a function with
no record keeps the default schedule. Records of the same function for another target
or CPU are ignored with a ``TuningWarning`` (a schedule tuned on one CPU says little
about another, and its ``-march=native`` code may not even run there).
"""

from __future__ import annotations

import functools
import os
import warnings

from ..backend.lowering import TunedSchedules
from ..backend.target import Target
from ..ir.expr import Function
from .conv_algorithms import pass_config as conv_pass_config
from .records import Record, RecordError, best_configs, load_records
from .space import schedule_for
from .task import host_cpu, profile, target_name, workload_digest


class TuningWarning(UserWarning):
    """Tuning records that a build cannot use (another target or CPU)."""


class ApplyHistoryBest(TunedSchedules):
    """The best config per task key of ``records`` (a path or ``Record``\\ s)."""

    def __init__(self, records: str | os.PathLike | list[Record]):
        self.source = os.fspath(records) if isinstance(records, (str, os.PathLike)) \
            else "records"
        loaded = load_records(records) if isinstance(records, (str, os.PathLike)) \
            else list(records)
        self.best = best_configs(loaded)
        self.elsewhere: dict[str, set] = {}  # workload -> {(target, cpu)} it has records for
        for task, target, cpu in self.best:
            self.elsewhere.setdefault(task, set()).add((target, cpu))
        self._warned: set = set()
        self._profiles: dict = {}  # workload -> task.Profile
        self.applied: dict[str, dict] = {}  # workload -> config, for reports and tests

    def __len__(self) -> int:
        return len(self.best)

    def schedule_for(self, fn: Function, target: Target) -> dict | None:
        if Target.parse(target).kind != "cpu" or not self.best:
            return None
        workload = workload_digest(fn)
        here = (target_name(target), host_cpu())
        found = self.best.get((workload, *here))
        if found is None:
            self._warn_elsewhere(workload, here)
            return None
        config = found[0]
        self.applied[workload] = config
        prof = self._profiles.get(workload)
        if prof is None:
            prof = self._profiles[workload] = profile(fn)
        return schedule_for(prof.kind, prof.hints, config, Target.parse(target).machine())

    def pass_config(self, target: Target) -> dict:
        """The best convolution algorithm per workload (``conv_algorithms``' records) as
        ``AlterOpLayout``'s configs, for this target and CPU."""
        if Target.parse(target).kind != "cpu":
            return {}
        here = (target_name(target), host_cpu())
        chosen = {task: config for (task, *where), (config, _) in self.best.items()
                  if tuple(where) == here and "algorithm" in config}
        return conv_pass_config(chosen)

    def _warn_elsewhere(self, workload: str, here: tuple) -> None:
        others = self.elsewhere.get(workload)
        if not others or workload in self._warned:
            return
        self._warned.add(workload)
        target, cpu = sorted(others)[0]
        warnings.warn(
            f"{self.source}: a tuning record of this kernel (task {workload[:12]}) was "
            f"measured for target {target!r} on CPU {cpu!r}, not {here[0]!r} on {here[1]!r}; "
            f"ignored (the default schedule is used)", TuningWarning, stacklevel=4)


def apply_history_best(records: str | os.PathLike | list[Record]) -> ApplyHistoryBest:
    """``with apply_history_best("records.json"): build(...)``: the best record of each
    task applies to every build, ``vm.compile`` and AOT build inside the block."""
    return ApplyHistoryBest(records)


@functools.lru_cache(maxsize=8)
def _read(path: str, mtime_ns: int, size: int) -> ApplyHistoryBest:
    return ApplyHistoryBest(path)


def read_records_file(path: str) -> ApplyHistoryBest:
    """The ``relay.autotune.records`` config's reader: read once per file version."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise RecordError(f"PassContext config relay.autotune.records: cannot read tuning "
                          f"records {path}: {exc.strerror}") from None
    return _read(os.path.abspath(path), st.st_mtime_ns, st.st_size)


TunedSchedules.reader = read_records_file

__all__ = ["ApplyHistoryBest", "TuningWarning", "apply_history_best", "read_records_file"]
