"""Tokens of the Relay text format.

One compiled regular expression matches each token together with the whitespace and
comments before it, and ``re.split`` runs it over the whole text in C: a 100,000-line
program is never walked character by character, nor even token by token, in Python.
Kinds are read off each token's text with dictionary lookups (also run by ``map`` in
C), and offsets are a running sum of the split pieces' lengths. Tokens live in three
parallel lists (kind, text, offset) because the parser reads them by index millions of
times; line and column are computed only when a node needs a span or an error a place.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from itertools import accumulate
from operator import itemgetter

from ..errors import ParseError

_SKIP = r"(?:\s+|//[^\n]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/)*+"  # possessive: no re-splitting
_TOKEN = "|".join([  # most frequent first; the kind is read off the text afterwards
    r"%[A-Za-z0-9_]+",
    r'%"(?:[^"\\\n]|\\.)*"',  # a quoted name: %"conv1.weight"
    r"[()\[\]{},;:.?]",
    r"==|=>?",
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*",
    r"->",
    r"(?<=\.)\d+",  # right after a dot, a tuple index: ``%t.1.0`` is not the float ``1.0``
    r"-?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:[A-Za-z_][A-Za-z0-9_]*)?|inf\b|nan\b)",
    r"@[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*",
    r'"(?:[^"\\\n]|\\.)*"',
    r'\#\[version\s*=\s*"[^"\n]*"\]',
    r"!=|<=|>=|[-+*/<>]",  # infix operators (a '-' before a digit starts a number)
    r"\S",  # anything else is an error, reported with its place
])
# split() with two groups yields ["", skipped, token, "", skipped, token, ..., rest]: a
# flat list of strings, so offsets are a running sum of lengths, all done in C
_REGEX = re.compile(f"({_SKIP})({_TOKEN})", re.DOTALL)
_TRAILING = re.compile(f"{_SKIP}\\Z", re.DOTALL)  # whitespace and comments after the last token
_METADATA = re.compile(r"^#\[metadata\][ \t]*$", re.MULTILINE)

EOF = "EOF"

# A number's suffix names its dtype (``2f``, ``3i64``); with none it is int32, or float32
# when written with a point, an exponent, inf or nan.
LITERAL_DTYPES = {
    "": None, "f": "float32", "f16": "float16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
}
# what the printer writes: each dtype's shortest suffix (the longest go in first and
# are overwritten), and none for int32, as a bare integer reads back as int32
LITERAL_SUFFIX = {
    **{d: s for s, d in sorted(LITERAL_DTYPES.items(), key=lambda e: -len(e[0])) if d},
    "int32": "",
}
_EXACT = {c: c for c in "()[]{},;:=.?"}
_EXACT.update({"->": "ARROW", "=>": "FATARROW", "inf": "NUMBER", "nan": "NUMBER",
               "-inf": "NUMBER", "-nan": "NUMBER"})
_EXACT.update({c: "ERR" for c in "\"#%@"})  # a lone start of a longer token
INFIX = ("+", "-", "*", "/", "<", ">", "<=", ">=", "==", "!=")
_EXACT.update(dict.fromkeys(INFIX, "BINOP"))
_FIRST = {c: "IDENT" for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"}
_FIRST.update({c: "NUMBER" for c in "0123456789-"})
_FIRST.update({"%": "LOCAL", "@": "GLOBAL", '"': "STRING", "#": "VERSION"})


def _trailing_start(text: str, end: int) -> int:
    """Where the whitespace and comments after the last token begin (searching only the
    tail unless a comment runs past it)."""
    start = max(0, end - 65536)
    m = _TRAILING.search(text, start, end)
    if m is not None and m.start() == start and start > 0:
        m = _TRAILING.search(text, 0, end)
    return m.start() if m is not None else end


def local_name(token: str) -> str:
    """The name hint of a ``%name`` or ``%"quoted.name"`` token."""
    if token.startswith('%"'):
        return json.loads(token[1:])
    return token[1:]


class Tokens:
    """The token lists of one text, plus offset → (line, column) conversion.

    ``vals`` keep their sigils (``%x``, ``@f``): ``%0`` and ``%x`` are both ``LOCAL``
    and the parser tells a numbered binding from a variable by its digits.
    """

    def __init__(self, text: str, source_name: str = "", end: int | None = None):
        self.text = text
        self.source_name = source_name
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        end = len(text) if end is None else end
        last = _trailing_start(text, end)
        parts = _REGEX.split(text[:last])
        vals = parts[2::3]
        starts = list(accumulate(map(len, parts)))[1::3]
        # kind = _EXACT[text], else _FIRST[first character]; map() keeps the loop in C
        kinds = list(map(_EXACT.get, vals, map(_FIRST.get, map(itemgetter(0), vals))))
        for bad in ("ERR", None):
            if bad in kinds:
                self._bad_char(starts[kinds.index(bad)])
        if "/" in vals:  # the division operator, unless it opens a comment never closed
            for i in (i for i, v in enumerate(vals) if v == "/"):
                if text.startswith("/*", starts[i]):
                    self._bad_char(starts[i])
        kinds.append(EOF)
        vals.append("")
        starts.append(end)
        self.kinds, self.vals, self.starts = kinds, vals, starts

    def location(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def error(self, message: str, offset: int) -> ParseError:
        line, col = self.location(offset)
        return ParseError(shorten_quotes(message), line, col, self.source_name)

    def _bad_char(self, offset: int) -> None:
        rest = self.text[offset:offset + 2]
        if rest == "/*":
            raise self.error("unterminated comment: expected '*/'", offset)
        if rest[:1] == '"':
            raise self.error("unterminated string: expected '\"' before the end of the line",
                             offset)
        raise self.error(f"unexpected character {rest[:1]!r}", offset)


_LONG_WORD = re.compile(r"\S{121,}")  # longer than twice shorten_quotes' keep


def shorten_quotes(message: str, keep: int = 60) -> str:
    """``message`` with every word longer than ``2 * keep`` characters (a quoted token:
    a name, a number, a string of the text, which may be megabytes long) cut to its
    first and last ``keep`` characters around a count of what was left out."""
    return _LONG_WORD.sub(lambda m: f"{m.group()[:keep]}...[{len(m.group()) - 2 * keep} "
                          f"characters]...{m.group()[-keep:]}", message)


def split_metadata(text: str) -> tuple[int, int]:
    """Offsets of the end of the program and of the start of the metadata JSON.

    The metadata section is the last line reading exactly ``#[metadata]``; strings
    cannot span lines, so such a line is never part of the program text.
    """
    matches = list(_METADATA.finditer(text))
    if not matches:
        return len(text), len(text)
    return matches[-1].start(), matches[-1].end()
