"""Pass instruments: timing table, print IR after passes, verify after every pass.

An instrument is any object with some of ``enter_pass_ctx``, ``exit_pass_ctx``,
``should_run(mod, info)``, ``run_before_pass(mod, info)``, ``run_after_pass(mod, info)``;
hand instances to ``PassContext(instruments=[...])``.
"""

from __future__ import annotations

import sys
import time

from ..ir.analysis import check_well_formed
from ..typing.infer import infer_module


class PassTimingInstrument:
    """Wall time per pass; ``render()`` gives a table sorted by total time.

    Percentages are of the time spent in leaf passes (a ``Sequential`` contains others
    and is listed, marked ``*``, but not counted twice).
    """

    def __init__(self) -> None:
        self.timings: dict[str, list[float]] = {}
        self.containers: set[str] = set()
        self._stack: list[list] = []  # [start time, has nested passes]

    def run_before_pass(self, mod, info) -> None:
        if self._stack:
            self._stack[-1][1] = True
        self._stack.append([time.perf_counter(), False])

    def run_after_pass(self, mod, info) -> None:
        start, nested = self._stack.pop()
        self.timings.setdefault(info.name, []).append(time.perf_counter() - start)
        if nested:
            self.containers.add(info.name)

    def render(self) -> str:
        rows = sorted(self.timings.items(), key=lambda kv: -sum(kv[1]))
        leaf = sum(sum(v) for name, v in rows if name not in self.containers) or 1e-12
        lines = [f"{'pass':32s} {'calls':>5s} {'total ms':>10s} {'%':>6s}"]
        for name, times in rows:
            t = sum(times)
            pct = "" if name in self.containers else f"{100 * t / leaf:6.1f}"
            label = f"{name} *" if name in self.containers else name
            lines.append(f"{label:32s} {len(times):5d} {t * 1e3:10.2f} {pct:>6s}")
        return "\n".join(lines)


class PrintIRAfter:
    """Print the module after every pass, or only after the named ones."""

    def __init__(self, passes=None, file=None, show_meta_data: bool = False):
        self.passes = set(passes) if passes else None
        self.file = file
        self.show_meta_data = show_meta_data

    def run_after_pass(self, mod, info) -> None:
        if self.passes is None or info.name in self.passes:
            out = self.file or sys.stdout
            print(f"// after {info.name}", file=out)
            print(mod.astext(show_meta_data=self.show_meta_data), file=out)


class VerifyAfterEachPass:
    """Debug/test mode: check well-formedness and types after every pass."""

    def run_after_pass(self, mod, info) -> None:
        from ..errors import Error

        for gv, fn in mod.functions.items():
            try:
                check_well_formed(fn)
            except Error as exc:
                raise type(exc)(f"after pass {info.name}, @{gv.name_hint}: {exc}") from None
        try:
            infer_module(mod.copy())
        except Error as exc:
            raise type(exc)(f"after pass {info.name}: {exc}") from None
