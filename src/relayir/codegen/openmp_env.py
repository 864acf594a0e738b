"""Threads of the generated kernels on a busy machine: how the OpenMP runtime waits, set
before it starts, and a fallback to one thread while helper threads start late.

A thread team that finishes a parallel loop does not sleep at once: libgomp's idle
threads spin (300,000 pause loops by default, ~25 ms at the ~85 ns a pause takes on this
Zen 4) hoping the next loop comes soon, and so does the master at a loop's closing
barrier. On a quiet machine that makes back-to-back kernels cheap. On a busy one it is
ruinous: a spinning thread loses the scheduler's favour that a thread waking from sleep
gets, so when the next loop opens its helper waits for a time slice of the competing
process, and every loop waits for its slowest thread (issue 12 measured relayir 3.3x
slower beside one busy process, ONNX Runtime 2.1x; on this shared machine an inference
of a few microseconds sometimes took 10-25 ms).

Two measures, both measured on resnet18, BERT and the MLP (``benchmarks/compare.py
--busy``):

1. The spin is shortened to about the longest gap between two parallel loops of one
   inference (``SPIN_COUNT`` pause loops, ~0.85 ms; ``KMP_BLOCKTIME`` for LLVM's
   libomp): threads stay hot across an inference and sleep soon after it.
2. Every parallel loop (the C printer's and the C routines') checks
   ``team_guard_source()``'s guard: while helper threads keep starting late, loops run
   on the calling thread alone, which needs no partner (see there).

The OpenMP runtimes read their settings once, from the environment, when a process
first loads them, so ``prepare_openmp()`` runs when ``relayir.codegen`` is imported
(``import relayir``), and again before the compiler's OpenMP probe and every kernel
library load. A runtime loaded after ``import relayir`` (torch's, which the kernels then
share: it has libgomp's soname) reads them too; one loaded before (``import torch``
first) keeps its own settings, the kernels run on it, and only the guard applies: set
``GOMP_SPINCOUNT`` in the environment, or import relayir first.

A user's choice always wins: nothing is set when the user set the variable or
``OMP_WAIT_POLICY``. ``RELAYIR_OMP_SPINCOUNT`` changes relayir's value (``default``
leaves the runtime's own); ``RELAYIR_TEAM_LATE_US`` the guard's threshold (0: off).
``status()`` says what was done.
"""

from __future__ import annotations

import os

SPIN_COUNT = 10000  # libgomp pause loops before sleeping (~0.85 ms at ~85 ns a pause)
BLOCK_TIME_MS = 1  # libomp's equivalent, in milliseconds (its unit)
# a helper thread starting this late means its core is taken (0: never fall back)
TEAM_LATE_US = int(os.environ.get("RELAYIR_TEAM_LATE_US", "500"))
TEAM_LATE_GAP = 32  # two late starts fewer teams apart than this: no single hiccup
TEAM_SERIAL_MS = (2, 200)  # ... then loops run on one thread this long, doubling while
TEAM_CALM_MS = 1000  # ... helpers keep starting late (no late start for this long: reset)

_status: dict[str, str] = {}


# the runtimes ``-fopenmp`` links against (a vendored copy under another name, such as
# torch's ``libgomp-<hash>.so.1``, is a separate runtime that never runs relayir's loops)
_RUNTIMES = ("libgomp.so", "libomp.so", "libiomp5.so")


def loaded_runtime() -> str | None:
    """The OpenMP runtime already mapped into this process, if one is (Linux only)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.split()[-1]
                if os.path.basename(path).startswith(_RUNTIMES):
                    return path
    except OSError:
        return None
    return None


def prepare_openmp() -> dict[str, str]:
    """Set the OpenMP wait settings relayir wants, once per process, where the user has
    not set them and no OpenMP runtime is loaded yet. Returns ``status()``."""
    if _status:
        return _status
    wanted = os.environ.get("RELAYIR_OMP_SPINCOUNT", str(SPIN_COUNT)).strip()
    loaded = loaded_runtime()
    if wanted == "default":
        _status["openmp"] = "runtime defaults (RELAYIR_OMP_SPINCOUNT=default)"
    elif loaded is not None:
        _status["openmp"] = f"runtime already loaded ({loaded}); its settings stand"
    elif "OMP_WAIT_POLICY" in os.environ:
        _status["openmp"] = f"user's OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}"
    else:
        spins = int(wanted)
        block_ms = max(0, round(spins * BLOCK_TIME_MS / SPIN_COUNT)) if spins else 0
        for key, value in (("GOMP_SPINCOUNT", str(spins)), ("KMP_BLOCKTIME", str(block_ms))):
            if key in os.environ:
                _status[key] = f"{os.environ[key]} (user's)"
            else:
                os.environ[key] = value
                _status[key] = value
    return _status


def team_guard_source() -> str:
    """C helpers every parallel loop of a generated library goes through (``HEADER``).

    ``rl_team_ok()`` is the loop's ``if`` clause: false while the library runs on one
    thread. ``rl_team_arrive()`` runs first in every thread of a team: a helper thread
    that starts more than ``TEAM_LATE_US`` after the master opened the team was waiting
    for a core another process holds, and a fork-join loop waits for its slowest thread
    at every barrier (``rl_team_barrier()``, the C routines' barrier between steps,
    notices the same inside a team). One such start is a hiccup; a second within
    ``TEAM_LATE_GAP``
    teams means the cores are contended, and the loops of the next while run on the
    master alone (which needs no partner): ``TEAM_SERIAL_MS[0]`` at first, doubled up
    to ``[1]`` while late starts keep coming within ``TEAM_CALM_MS`` of each other. On
    a quiet machine helpers start within microseconds (spinning) or a few more (woken),
    and nothing changes. ``RELAYIR_TEAM_LATE_US`` (read at import) sets the threshold;
    0 turns the fallback off."""
    if TEAM_LATE_US <= 0:
        return ("\nstatic inline int rl_team_ok(void) { return 1; }\n"
                "static inline void rl_team_arrive(void) {}\n"
                "static inline void rl_team_barrier(void) {\n"
                "  #pragma omp barrier\n"
                "}\n")
    low, high = (ms * 1000000 for ms in TEAM_SERIAL_MS)
    return rf"""
/* Thread teams on a busy machine (codegen/openmp_env.py): a team whose helper thread
   starts late means another process holds its core; the loops of the next while run on
   one thread instead of waiting for it at every barrier. */
#ifdef _OPENMP
static int64_t rl_team_opened, rl_serial_until, rl_team_late, rl_serial_for; /* ns */
static int64_t rl_teams, rl_late_team = -{TEAM_LATE_GAP}; /* teams opened; the last late one */
static inline int64_t rl_now_ns(void) {{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}}
static inline int rl_team_ok(void) {{
  const int64_t now = rl_now_ns();
  if (now < __atomic_load_n(&rl_serial_until, __ATOMIC_RELAXED)) return 0;
  __atomic_store_n(&rl_team_opened, now, __ATOMIC_RELAXED);
  __atomic_store_n(&rl_teams, __atomic_load_n(&rl_teams, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
  return 1;
}}
/* A thread of the current team waited TEAM_LATE_US or more for its partner. */
static inline void rl_team_slow(int64_t now) {{
  const int64_t team = __atomic_load_n(&rl_teams, __ATOMIC_RELAXED);
  if (team - __atomic_exchange_n(&rl_late_team, team, __ATOMIC_RELAXED) >= {TEAM_LATE_GAP})
    return; /* the first late start in a while: a hiccup */
  const int64_t last = __atomic_exchange_n(&rl_team_late, now, __ATOMIC_RELAXED);
  int64_t serial = __atomic_load_n(&rl_serial_for, __ATOMIC_RELAXED) * 2;
  if (now - last > {TEAM_CALM_MS * 1000000}LL || serial < {low}LL) serial = {low}LL;
  serial = serial < {high}LL ? serial : {high}LL;
  __atomic_store_n(&rl_serial_for, serial, __ATOMIC_RELAXED);
  __atomic_store_n(&rl_serial_until, now + serial, __ATOMIC_RELAXED);
}}
static inline void rl_team_arrive(void) {{
  if (omp_get_thread_num() == 0) return;
  const int64_t now = rl_now_ns();
  if (now - __atomic_load_n(&rl_team_opened, __ATOMIC_RELAXED) > {TEAM_LATE_US * 1000}LL)
    rl_team_slow(now);
}}
/* A barrier inside a team (the C routines' steps) that notices a partner held up. */
static inline void rl_team_barrier(void) {{
  const int64_t start = rl_now_ns();
  #pragma omp barrier
  const int64_t now = rl_now_ns();
  if (now - start > {TEAM_LATE_US * 1000}LL) rl_team_slow(now);
}}
#else
static inline int rl_team_ok(void) {{ return 0; }}
static inline void rl_team_arrive(void) {{}}
static inline void rl_team_barrier(void) {{}}
#endif
"""


def status() -> dict[str, str]:
    """What ``prepare_openmp`` did (empty before the first kernel library loads)."""
    return dict(_status)


__all__ = ["BLOCK_TIME_MS", "SPIN_COUNT", "TEAM_CALM_MS", "TEAM_LATE_GAP", "TEAM_LATE_US",
           "TEAM_SERIAL_MS", "loaded_runtime", "prepare_openmp", "status",
           "team_guard_source"]
