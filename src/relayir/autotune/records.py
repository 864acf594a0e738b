"""Tuning records: every measurement as one JSON line, human-readable and stable.

A line::

    {"task": "9f0c...", "name": "fused_nn_dense_add", "kind": "dense", "target": "cpu",
     "cpu": "AMD EPYC 9R14 [a1b2...]", "schedule": {"tile_m": 4, "tile_n": 32, ...},
     "costs": [0.000131, 0.000129, ...], "reference": [0.000262, 0.000258, ...],
     "error": null, "flops": 25690112.0,
     "time": 1733070000.5, "version": "0.1.0"}

``task`` + ``target`` + ``cpu`` are the task's key (``task.Task.key``); ``schedule`` is
the config (knob → value) applied over the default schedule of the task's ``kind``;
``costs`` are seconds per run, one per measurement (empty with an ``error``);
``reference``: the default schedule's costs, each measured just before the candidate's
(the ratio ranks candidates on a machine whose load changes: ``worker.py``). Lines are
appended and flushed as measurements arrive, so an interrupted run keeps its records,
and files from several runs or machines can be concatenated.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Iterable

from ..errors import Error
from ..version import __version__

FIELDS = ("task", "name", "kind", "target", "cpu", "schedule", "costs", "reference", "error",
          "flops", "time", "version")


class RecordError(Error):
    """A records file that cannot be read."""


@dataclasses.dataclass
class Record:
    task: str
    name: str
    kind: str
    target: str
    cpu: str
    schedule: dict
    costs: list[float]
    reference: list[float] = dataclasses.field(default_factory=list)
    error: str | None = None
    flops: float = 0.0
    time: float = dataclasses.field(default_factory=time.time)
    version: str = __version__

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.task, self.target, self.cpu)

    @property
    def cost(self) -> float:
        """Seconds per run: the fastest measurement (``inf`` for an error; see
        ``worker.MeasureResult.cost`` for why not the median)."""
        return min(self.costs) if self.costs and not self.error else math.inf

    @property
    def relative(self) -> float | None:
        """Cost over the reference's, each the fastest of its measurements (``None``
        without a reference, ``inf`` for an error)."""
        if self.error or not self.costs:
            return math.inf
        return min(self.costs) / min(self.reference) if self.reference else None

    def to_json(self) -> str:
        return json.dumps({f: getattr(self, f) for f in FIELDS}, sort_keys=False)

    @classmethod
    def from_json(cls, line: str, where: str = "") -> Record:
        try:
            obj = json.loads(line)
            missing = [f for f in ("task", "target", "cpu", "schedule", "costs") if f not in obj]
            if missing:
                raise ValueError(f"missing {', '.join(missing)}")
            return cls(**{f: obj[f] for f in FIELDS if f in obj})
        except (ValueError, TypeError) as exc:
            raise RecordError(f"{where}: not a tuning record ({exc}); expected one JSON object "
                              f"per line with the fields {', '.join(FIELDS)}") from None


def append_records(path: str | os.PathLike, records: Iterable[Record]) -> None:
    """Append ``records`` to ``path`` (created if missing), one line each, flushed."""
    lines = "".join(r.to_json() + "\n" for r in records)
    if lines:
        with open(path, "a", encoding="utf-8") as f:
            f.write(lines)
            f.flush()


def load_records(path: str | os.PathLike) -> list[Record]:
    """Every record in ``path``; blank lines are skipped, anything else malformed is a
    ``RecordError`` naming its line."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    out.append(Record.from_json(line, f"{os.fspath(path)}:{n}"))
    except OSError as exc:
        raise RecordError(f"cannot read tuning records {os.fspath(path)}: {exc}") from None
    return out


MIN_GAIN = 0.97  # a config replaces the default when its median ratio to it is below this


def best_configs(records: Iterable[Record]) -> dict[tuple, tuple[dict, float]]:
    """Per task key: ``(config, seconds)`` of the fastest config; a key whose records
    found nothing faster than its default schedule is left out (the default applies).

    A record's score is its ratio to the reference (the default schedule measured in
    alternation; the plain cost without one). A config's score is the median over its
    records; where some configs were measured more than once (the tuner re-measures
    its finalists and the default side by side), only those compete — a config seen
    once may owe its place to one quiet moment of a shared machine. With references, a
    config must beat the reference itself: a median ratio below ``MIN_GAIN``. The
    seconds are the score times the default's least disturbed time (the score itself
    without references)."""
    base: dict[tuple, float] = {}
    scores: dict[tuple, dict[str, tuple[dict, list]]] = {}
    for r in records:
        if r.error or not r.costs:
            continue
        if r.reference:
            base[r.key] = min(base.get(r.key, math.inf), min(r.reference))
        rel = r.relative
        configs = scores.setdefault(r.key, {})
        text = json.dumps(r.schedule, sort_keys=True)
        configs.setdefault(text, (r.schedule, []))[1].append(rel if rel is not None else r.cost)
    best = {}
    for key, configs in scores.items():
        seen = list(configs.values())
        confirmed = [c for c in seen if len(c[1]) > 1]
        config, values = min(confirmed or seen, key=lambda c: _median(c[1]))
        if key in base and _median(values) >= MIN_GAIN:
            continue  # nothing beat the default beside it
        best[key] = (config, _median(values) * base.get(key, 1.0))
    return best


def _median(values: list[float]) -> float:
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


__all__ = ["FIELDS", "MIN_GAIN", "Record", "RecordError", "append_records", "best_configs",
           "load_records"]
