"""Progress of a tuning run: tasks done, trials, best GFLOP/s and speed-up so far.

A ``rich`` progress bar on a terminal (rich is the CLI's optional dependency, ``pip
install "relayir[cli]"``); elsewhere (logs, pipes, no rich) one plain line per finished
task on stderr; nothing with ``progress=False``.
"""

from __future__ import annotations

import sys


def _rich_progress(stream):
    """A rich progress bar on ``stream``, or None without rich (optional; imported only
    when a bar is shown, so ``import relayir`` does not load it)."""
    try:
        from rich.console import Console as RichConsole
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )
    except ImportError:
        return None
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[best]}"), TimeElapsedColumn(),
                    console=RichConsole(file=stream), transient=False)


class TuneProgress:
    def __init__(self, total: int, tasks: int, enabled: bool = True, stream=None):
        self.stream = stream or sys.stderr
        self.tasks = tasks
        self.enabled = enabled
        self._bar = None
        if enabled and _isatty(self.stream):
            self._bar = _rich_progress(self.stream)
        if self._bar is not None:
            self._bar.start()
            self._id = self._bar.add_task("tuning", total=total, best="")

    def task(self, index: int, name: str) -> None:
        if self._bar is not None:
            self._bar.update(self._id, description=f"task {index + 1}/{self.tasks} {name[:40]}")

    def advance(self, trials: int, gflops: float, speedup: float) -> None:
        if self._bar is not None:
            self._bar.update(self._id, advance=trials,
                             best=f"best {gflops:7.1f} GFLOP/s  {speedup:4.2f}x default")

    def task_done(self, index: int, name: str, trials: int, gflops: float, speedup: float,
                  seconds: float) -> None:
        line = (f"[task {index + 1}/{self.tasks}] {name}: {trials} trials, best "
                f"{gflops:.1f} GFLOP/s, {speedup:.2f}x the default, {seconds:.0f} s")
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        elif self.enabled:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["TuneProgress"]
