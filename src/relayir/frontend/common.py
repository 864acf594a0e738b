"""What every frontend shares: the converter table, the missing-operator error, names,
and the slot that holds the import in progress.

A frontend walks the source graph once to list the operators it has no converter for
(so one error names them all, with counts), then converts node by node through a
``ConverterTable``: a dict from the source op's name to a small function whose
signature reads like the source op's schema. Converters read the import in progress
(shapes, opset) through their frontend's ``current_import()`` rather than an argument,
so their signatures stay the schema's; it lives in a ``ContextVar``, so each thread (and
asyncio task) sees only its own import and a nested import restores the outer one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from ..errors import Error

Converter = Callable[..., object]
State = TypeVar("State")


class UnsupportedOperatorError(Error):
    """The source model uses operators the frontend cannot convert; ``missing`` maps
    each one to how many times it occurs."""

    def __init__(self, missing: dict[str, int], frontend: str = ""):
        self.missing = dict(sorted(missing.items()))
        total = sum(self.missing.values())
        lines = "\n".join(f"  {name}: {n}" for name, n in self.missing.items())
        where = f"{frontend} " if frontend else ""
        super().__init__(f"{len(self.missing)} unsupported {where}operator(s) "
                         f"({total} node(s)):\n{lines}")


class ConversionError(Error):
    """A supported operator was used in a way the converter cannot express."""


class DuplicateConverterError(Error):
    """A second converter was registered for a source op that already has one (a table
    refuses it rather than let the module imported last win, as ``OpTable`` does)."""

    def __init__(self, name: str, first: Converter, second: Converter):
        super().__init__(f"converter for {name} registered twice: first {_where(first)}, "
                         f"then {_where(second)}")


class NoImportInProgressError(Error):
    """A converter helper asked for the import in progress outside any import."""

    def __init__(self, frontend: str):
        super().__init__(f"no {frontend} import in progress: converter helpers (shape, "
                         f"dtype, subgraphs) work only while from_{frontend.lower()} runs")


def _where(fn: Converter) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


class ConverterTable(dict):
    """Source op name -> converter; ``register("a", "b")`` is a decorator. A name is
    registered once: a second converter raises ``DuplicateConverterError``."""

    def register(self, *names: str) -> Callable[[Converter], Converter]:
        def wrap(fn: Converter) -> Converter:
            for name in names:
                self.add(name, fn)
            return fn

        return wrap

    def add(self, name: str, fn: Converter) -> None:
        if name in self:
            raise DuplicateConverterError(name, self[name], fn)
        self[name] = fn

    def merge(self, family: ConverterTable) -> None:
        """Add a family's table to this union; an op both define raises."""
        for name, fn in family.items():
            self.add(name, fn)

    def missing(self, op_names: Iterable[str]) -> dict[str, int]:
        """The op names not covered, with how often each appears."""
        return dict(Counter(n for n in op_names if n not in self))


def current(slot: ContextVar[State], frontend: str) -> State:
    """The ``frontend`` import running in this thread (or task); outside one, a clear
    ``NoImportInProgressError`` rather than an ``IndexError`` from an empty stack."""
    try:
        return slot.get()
    except LookupError:
        raise NoImportInProgressError(frontend) from None


@contextmanager
def entered(slot: ContextVar[State], state: State) -> Iterator[State]:
    """``state`` is the current import inside the ``with`` block; leaving it restores
    whatever was current before (by token: correct for nested imports, and a thread's
    value is never seen by another)."""
    token = slot.set(state)
    try:
        yield state
    finally:
        slot.reset(token)


_BAD = re.compile(r"[^A-Za-z0-9_.]")


def sanitize_name(name: str) -> str:
    """A variable name the Relay printer can show: the source name where it is made of
    letters, digits, ``_`` and ``.`` (the printer quotes what is not an identifier),
    other characters replaced by ``_``; never empty."""
    return _BAD.sub("_", str(name)) or "_"
