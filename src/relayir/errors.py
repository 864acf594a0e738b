"""The errors a user can cause.

Every error raised for bad input is a subclass of :class:`Error`, and its message
names the place (operator, expression, input name, ``line:column``) and what was
expected versus what was found.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every relayir error a user can cause."""


class ParseError(Error):
    """The Relay text could not be parsed; the message carries ``line:column``."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source_name: str = ""):
        self.line = line
        self.column = column
        self.source_name = source_name
        where = f"{source_name}:" if source_name else ""
        super().__init__(f"{where}{line}:{column}: {message}" if line else message)


class TypeInferenceError(Error):
    """A program is not well typed: an operator's type relation or a unification failed."""


class TypeNotInferredError(Error, AttributeError):
    """``expr.checked_type`` before type inference; also an AttributeError so that
    ``hasattr(expr, "checked_type")`` answers False, as in TVM."""


class WellFormedError(Error):
    """A variable is bound twice or used where it is not bound."""


class OpError(Error):
    """An operator was used wrongly: unknown name, bad attributes, wrong argument count."""


class InterpreterError(Error):
    """The reference interpreter met a value it cannot evaluate (e.g. a failed match)."""


class KernelError(Error):
    """A kernel was given arrays that do not match its types, or reported a failure
    (``code``: the C kernel's non-zero status)."""

    def __init__(self, message: str, kernel: str = "", code: int | None = None):
        self.kernel = kernel
        self.code = code
        super().__init__(message)
