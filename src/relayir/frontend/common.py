"""What every frontend shares: the converter table, the missing-operator error, names.

A frontend walks the source graph once to list the operators it has no converter for
(so one error names them all, with counts), then converts node by node through a
``ConverterTable``: a dict from the source op's name to a small function whose
signature reads like the source op's schema.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from ..errors import Error

Converter = Callable[..., object]


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


class ConverterTable(dict):
    """Source op name -> converter; ``register("a", "b")`` is a decorator."""

    def register(self, *names: str) -> Callable[[Converter], Converter]:
        def wrap(fn: Converter) -> Converter:
            for name in names:
                self[name] = fn
            return fn

        return wrap

    def missing(self, op_names: Iterable[str]) -> dict[str, int]:
        """The op names not covered, with how often each appears."""
        return dict(Counter(n for n in op_names if n not in self))


_BAD = re.compile(r"[^A-Za-z0-9_.]")


def sanitize_name(name: str) -> str:
    """A variable name the Relay printer can show: the source name where it is made of
    letters, digits, ``_`` and ``.`` (the printer quotes what is not an identifier),
    other characters replaced by ``_``; never empty."""
    return _BAD.sub("_", str(name)) or "_"
