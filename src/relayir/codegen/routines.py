"""Hand-written C routines that kernels call (``te.extern`` → ``tir.CallRoutine``).

Some computations are not one loop nest per output: a recurrent layer runs its time
steps in order with a barrier between them, a softmax row is swept three times while it
stays in cache. Their C is written by hand, once, here, and a kernel calls it by name.
``render_module`` puts each routine a translation unit uses after ``HEADER`` (whose
helpers, ``rl_expf``, ``rl_max_threads``, ... they use), once, with what it requires.

Every routine takes buffer pointers, then ``int64_t`` scalars, and last ``min_work``:
the work that is worth one more thread (the stage's ``Schedule.parallel_min_work``; 0
keeps the routine on one thread). It returns 0, or nonzero on failure.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Error
from . import routines_int8, routines_norm, routines_recurrent


class Routine(NamedTuple):
    """``source``: C text defining the routine; ``requires``: entries emitted first."""

    source: str
    requires: tuple[str, ...] = ()


# Shared by every routine: the thread team a routine starts for its work.
_COMMON = r"""
/* Threads worth starting for `work` units when one thread pays off per `min_work`
   units (0: never parallel), at most one per independent `unit` and OpenMP's limit;
   one while the machine is too busy for a team (rl_team_ok, HEADER). A team's every
   thread calls rl_team_arrive() first. */
static inline int rl_team(int64_t work, int64_t min_work, int64_t units) {
  if (min_work <= 0 || work < 2 * min_work || units < 2 || !rl_team_ok()) return 1;
  int64_t n = work / min_work;
  int64_t limit = rl_max_threads();
  n = n < limit ? n : limit;
  n = n < units ? n : units;
  return n < 1 ? 1 : (int)n;
}
#ifdef _OPENMP
static inline int rl_team_size(void) { return omp_get_num_threads(); }
#else
static inline int rl_team_size(void) { return 1; }
#endif
"""


def _table() -> dict[str, Routine]:
    table = {"rl_routine_common": Routine(_COMMON)}
    for module in (routines_recurrent, routines_norm, routines_int8):
        for name, (source, requires) in module.routines().items():
            if name in table:
                raise Error(f"C routine {name} is defined twice ({module.__name__})")
            table[name] = Routine(source, ("rl_routine_common", *requires))
    return table


ROUTINES: dict[str, Routine] = _table()


class UnknownRoutineError(Error):
    """A kernel calls a C routine this table does not define."""


def routine_sources(names) -> str:
    """The C text defining the routines ``names`` and what they require, each once,
    dependencies first, in first-use order (the text is part of the cache key)."""
    out, done = [], set()
    for root in names:
        stack = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if name in done:
                continue
            entry = ROUTINES.get(name)
            if entry is None:
                raise UnknownRoutineError(f"no C routine named {name!r}; known routines: "
                                          f"{', '.join(sorted(ROUTINES))}")
            if expanded:
                done.add(name)
                out.append(entry.source.strip("\n") + "\n")
                continue
            stack.append((name, True))
            stack.extend((r, False) for r in reversed(entry.requires) if r not in done)
    return "\n".join(out) + ("\n" if out else "")


__all__ = ["ROUTINES", "Routine", "UnknownRoutineError", "routine_sources"]
