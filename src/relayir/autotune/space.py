"""Search spaces: the valid schedules of a task, from ONE table of knobs.

A knob is a ``Schedule`` field with the values worth trying for a task kind
(``KNOBS``); a new knob of the kernel work is one ``Knob(...)`` line here (a name that
``Schedule`` lacks is skipped, so the table may run ahead of the schedule). Values are
pruned by the task's shape (a cache block at least as long as the loop it blocks is the
same schedule as none) and joint rules (``RULES``: a register tile must fit the vector
registers; an untiled nest has no tile shape or cache blocks), so no invalid or
duplicate point is ever generated.

A config is a dict ``{knob: value}``; the schedule lowering uses for it is
``schedule_for(kind, hints, config)``: the kind's default ``Schedule`` with the
compute's hints (``attrs["schedule"]``) and then the config applied, for the stages of
the task's kind (other stages keep their defaults). Records store the dict.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Callable, Iterator

from ..tir import Schedule, default_schedule
from ..tir.machine import Machine
from .task import Profile, Task

MATMUL = ("conv", "dense")  # stages tiled by tir/matmul.py's micro-kernels
LOOPS = ("pool", "softmax", "norm", "reduce", "injective", "broadcast", "elemwise")
REDUCING = ("pool", "softmax", "norm", "reduce")


@dataclasses.dataclass(frozen=True)
class Knob:
    """``name``: a ``Schedule`` field; ``kinds``: task kinds it is searched for;
    ``values(profile, machine)``: the values worth trying for a task."""

    name: str
    kinds: tuple[str, ...]
    values: Callable[[Profile, Machine], tuple]


def _below(limit: int, candidates) -> tuple:
    """``0`` (derived from the caches) and the blocks shorter than the loop they block."""
    return (0, *(v for v in candidates if v < limit))


def _tile_columns(p: Profile, m: Machine) -> tuple:
    widest = max(m.lanes, -(-p.columns // m.lanes) * m.lanes)  # columns, whole vectors
    return (0, *(k * m.lanes for k in (1, 2, 3, 4) if k * m.lanes <= max(widest, 2 * m.lanes)))


def _tile_rows(p: Profile, m: Machine) -> tuple:
    rows = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28)
    return (0, *(r for r in rows if r < m.vector_registers and r <= max(p.rows, 1)))


KNOBS: tuple[Knob, ...] = (
    # matmul-like stages (tir/matmul.py): register tile, B form, cache blocking
    Knob("tile_n", MATMUL, _tile_columns),
    Knob("tile_m", MATMUL, _tile_rows),
    Knob("tile_form", MATMUL, lambda p, m: ("auto", "direct", "packed")),
    Knob("kc", MATMUL, lambda p, m: _below(p.reduction, (64, 128, 256, 512))),
    Knob("mc", MATMUL, lambda p, m: _below(p.rows, (16, 32, 64, 128))),
    Knob("nc", MATMUL, lambda p, m: _below(p.columns, (64, 128, 256, 512))),
    # threads
    Knob("parallel", MATMUL + LOOPS, lambda p, m: (True, False)),
    Knob("parallel_collapse", MATMUL + LOOPS, lambda p, m: (1, 2, 3)),
    Knob("parallel_min_work", LOOPS, lambda p, m: (1 << 10, 1 << 13, 1 << 15, 1 << 17)),
    # loop nests of the other stages
    Knob("vectorize", LOOPS, lambda p, m: (True, False)),
    Knob("unroll", LOOPS, lambda p, m: (0, 2, 4, 8)),
    Knob("reduce_inner", REDUCING, lambda p, m: ("auto", "reduce", "spatial")),
    Knob("fuse_axes", ("injective", "broadcast", "elemwise"), lambda p, m: (True, False)),
)

_FIELDS = {f.name for f in dataclasses.fields(Schedule)}


def _registers_hold(c: dict, m: Machine) -> bool:
    """A ``tile_m × tile_n`` tile: accumulators + one register per column vector + one
    broadcast must fit the vector registers (``tile_m == 0``: the kernel sizes it)."""
    nv = c.get("tile_n", 0) // m.lanes
    return c.get("tile_m", 0) == 0 or c["tile_m"] * nv + nv + 1 <= m.vector_registers


def _untiled_has_no_tile(c: dict, m: Machine) -> bool:
    """``tile_n == 0`` runs the untiled nest: tile rows, form and blocks mean nothing."""
    return c.get("tile_n", 1) != 0 or all(c.get(k, d) == d for k, d in (
        ("tile_m", 0), ("tile_form", "auto"), ("kc", 0), ("mc", 0), ("nc", 0)))


def _unroll_without_simd(c: dict, m: Machine) -> bool:
    """The C printer puts ``#pragma GCC unroll`` between ``#pragma omp simd`` and its
    loop, which GCC rejects: ``unroll`` only on loops that are not vectorised."""
    return not c.get("unroll") or not c.get("vectorize", True)


@dataclasses.dataclass(frozen=True)
class Rule:
    knobs: tuple[str, ...]
    holds: Callable[[dict, Machine], bool]


RULES: tuple[Rule, ...] = (
    Rule(("tile_n", "tile_m"), _registers_hold),
    Rule(("tile_n", "tile_m", "tile_form", "kc", "mc", "nc"), _untiled_has_no_tile),
    Rule(("unroll", "vectorize"), _unroll_without_simd),
)


def schedule_for(kind: str, hints, config: dict, machine: Machine | None = None) -> dict:
    """What ``tir.lower_primitive`` takes for a task of ``kind`` under ``config``: the
    kind's stages get the default with ``hints`` and ``config`` applied."""
    base = default_schedule(kind, machine).replace(**dict(hints))
    return {kind: base.replace(**{k: v for k, v in config.items() if k in _FIELDS})}


class ConfigSpace:
    """The valid configs of one task. Knobs tied by a rule are enumerated together (a
    *group*: its valid combinations listed once); independent groups multiply, so the
    size is exact without listing the whole product.

    A point is a tuple of indices, one per group; ``config(point)`` is its dict."""

    def __init__(self, task: Task, machine: Machine | None = None,
                 knobs: tuple[Knob, ...] = KNOBS):
        self.task = task
        self.machine = machine or task.target.machine()
        p = task.profile
        defaults = schedule_for(p.kind, p.hints, {}, self.machine)[p.kind]
        self.knobs: dict[str, tuple] = {}
        for k in knobs:
            if p.kind not in k.kinds or k.name not in _FIELDS:
                continue
            values = tuple(dict.fromkeys(k.values(p, self.machine)))
            default = getattr(defaults, k.name)
            if default not in values:  # the default schedule is always a point
                values = (default, *values)
            self.knobs[k.name] = values
        self.default_config = {k: getattr(defaults, k) for k in self.knobs}
        self.groups: list[tuple[tuple[str, ...], list[tuple]]] = []
        for names in _groups(list(self.knobs), RULES):
            rules = [r for r in RULES if set(r.knobs) & set(names)]
            combos = [combo for combo in itertools.product(*(self.knobs[n] for n in names))
                      if all(r.holds({**self.default_config, **dict(zip(names, combo))},
                                     self.machine) for r in rules)]
            self.groups.append((names, combos))
        self._index = [{combo: i for i, combo in enumerate(combos)} for _, combos in self.groups]

    def __len__(self) -> int:
        return math.prod(len(combos) for _, combos in self.groups)

    def config(self, point: tuple) -> dict:
        out = {}
        for (names, combos), i in zip(self.groups, point):
            out.update(zip(names, combos[i]))
        return out

    def point(self, config: dict) -> tuple | None:
        """The point of ``config`` (knobs it lacks take their default), or ``None``
        when it is not in this space."""
        full = {**self.default_config, **config}
        out = []
        for (names, _), index in zip(self.groups, self._index):
            i = index.get(tuple(full.get(n) for n in names))
            if i is None:
                return None
            out.append(i)
        return tuple(out)

    @property
    def default_point(self) -> tuple:
        return self.point(self.default_config)

    def schedule(self, config: dict) -> dict:
        p = self.task.profile
        return schedule_for(p.kind, p.hints, config, self.machine)

    def sample(self, rng: random.Random) -> tuple:
        return tuple(rng.randrange(len(combos)) for _, combos in self.groups)

    def __iter__(self) -> Iterator[tuple]:
        """Every point, in grid order (the first knob slowest)."""
        return itertools.product(*(range(len(combos)) for _, combos in self.groups))

    def neighbour(self, point: tuple, rng: random.Random) -> tuple:
        """``point`` with one knob changed (to a valid combination of its group)."""
        movable = [g for g, (_, combos) in enumerate(self.groups) if len(combos) > 1]
        if not movable:
            return point
        g = rng.choice(movable)
        names, combos = self.groups[g]
        current = combos[point[g]]
        close = [i for i, c in enumerate(combos)
                 if sum(a != b for a, b in zip(c, current)) == 1]
        out = list(point)
        out[g] = rng.choice(close) if close else rng.randrange(len(combos))
        return tuple(out)

    def describe(self) -> str:
        """``12,960 points: tile_n 3 · tile_m 9 · ...`` (values per knob)."""
        knobs = " · ".join(f"{k} {len(v)}" for k, v in self.knobs.items())
        return f"{len(self):,} points ({knobs})"


def _groups(names: list[str], rules) -> list[tuple[str, ...]]:
    """Knobs joined by rules whose knobs are all in the space, in table order."""
    parent = {n: n for n in names}

    def find(n):
        while parent[n] != n:
            n = parent[n]
        return n

    for r in rules:
        present = [k for k in r.knobs if k in parent]
        for a, b in zip(present, present[1:]):
            parent[find(b)] = find(a)
    out: dict[str, list[str]] = {}
    for n in names:
        out.setdefault(find(n), []).append(n)
    return [tuple(v) for v in out.values()]


__all__ = ["KNOBS", "RULES", "ConfigSpace", "Knob", "Rule", "schedule_for"]
