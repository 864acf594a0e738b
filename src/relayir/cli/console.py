"""Where the commands write: results on stdout, progress and notes on stderr.

Progress and tables come from ``rich`` (an optional dependency: ``pip install
'relayir[cli]'``). Progress shows only when stderr is a terminal: a spinner with the
phase and its elapsed time, then one line per finished phase; in logs and pipes the
commands stay quiet unless ``--verbose``, which prints one plain line per phase (and
per pass). Without rich, a terminal gets the same phase lines in plain text and tables
are plain aligned columns.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

try:  # optional: progress and tables; plain text without it
    from rich import box
    from rich.console import Console as RichConsole
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.table import Table
    from rich.text import Text
except ImportError:
    RichConsole = None

PIPE_WIDTH = 200  # rich wraps table cells at 80 columns when it cannot ask a terminal


def one_line(exc: BaseException) -> str:
    """An error's message on one line: a list after its first line joins with commas
    (an unsupported-operator error names every op)."""
    lines = [x.strip() for x in str(exc).strip().splitlines() if x.strip()]
    if not lines:
        return type(exc).__name__
    return lines[0] + (" " + ", ".join(lines[1:]) if len(lines) > 1 else "")


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Task:
    """A phase of work in progress; ``update`` says what it is doing now."""

    def __init__(self, update=None):
        self._update = update

    def update(self, text: str) -> None:
        if self._update is not None:
            self._update(text)


class Console:
    def __init__(self, verbose: bool = False, out=None, err=None):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.verbose = verbose
        self.live = _isatty(self.err)  # progress on a terminal only
        self._task: Task | None = None
        if RichConsole is not None:
            self._rich_out = RichConsole(file=self.out, highlight=False,
                                         width=None if _isatty(self.out) else PIPE_WIDTH)
            self._rich_err = RichConsole(file=self.err, highlight=False)

    @property
    def rich(self) -> bool:
        return RichConsole is not None

    # ------------------------------------------------------------ text
    def print(self, text: str = "") -> None:
        """A line of results (stdout)."""
        print(text, file=self.out, flush=True)

    def note(self, text: str) -> None:
        """A line the user should see wherever output goes (stderr)."""
        self._err_line(text)

    def step(self, text: str) -> None:
        """A detail shown with ``--verbose`` only (stderr)."""
        if self.verbose:
            self._err_line(text)

    def _err_line(self, text: str) -> None:
        if self.rich and self.live:
            self._rich_err.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.err, flush=True)

    def json(self, obj, path: str = "-") -> None:
        text = json.dumps(obj, indent=2)
        if path == "-":
            self.print(text)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")

    # ------------------------------------------------------------ progress
    @contextmanager
    def task(self, text: str) -> Iterator[Task]:
        """A phase: a spinner on a terminal, a line when it ends (terminal or
        ``--verbose``); nothing in a pipe otherwise. Nested phases share the outer line."""
        if self._task is not None:
            self._task.update(text)
            yield self._task
            return
        start = time.perf_counter()
        if self.live and self.rich:
            columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
            with Progress(*columns, console=self._rich_err, transient=True) as progress:
                tid = progress.add_task(text, total=None)
                self._task = Task(lambda s: progress.update(tid, description=f"{text}: {s}"))
                try:
                    yield self._task
                finally:
                    self._task = None
        else:
            if self.live:
                print(f"{text} ...", file=self.err, flush=True)
            self._task = Task()
            try:
                yield self._task
            finally:
                self._task = None
        if self.live or self.verbose:
            self._err_line(f"{text}: done in {time.perf_counter() - start:.2f} s")

    # ------------------------------------------------------------ tables
    def table(self, columns: Sequence[str], rows: Sequence[Sequence[object]],
              title: str | None = None) -> None:
        """A table on stdout; the first column left-aligned, the others right."""
        cells = [[str(c) for c in row] for row in rows]
        if self.rich:
            table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False,
                          pad_edge=False)
            for i, name in enumerate(columns):
                table.add_column(Text(name), justify="left" if i == 0 else "right")
            for row in cells:  # Text: a cell's brackets are not markup
                table.add_row(*(Text(x) for x in row))
            self._rich_out.print(table)
            return
        widths = [max(len(x) for x in col) for col in zip(columns, *cells)]
        if title:
            self.print(title)
        for row in [list(columns), *cells]:
            self.print("  ".join(x.ljust(w) if i == 0 else x.rjust(w)
                                 for i, (x, w) in enumerate(zip(row, widths))).rstrip())


__all__ = ["Console", "Task", "one_line"]
