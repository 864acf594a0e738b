"""C identifiers for generated code: the names a generated file must not declare, and
the one sanitiser that turns any user text (a function name, a dimension called
``for``) into a safe identifier.

Kernel names (``k_`` prefix, ``tir.lower``) and the C printer's local names (``v_``
prefix, ``codegen.c_printer``) both go through ``c_identifier``, so a name the one
avoids the other avoids too.
"""

from __future__ import annotations

import re

# the libm functions kernels call, each also with its float ("f") variant
C_MATH_FUNCTIONS = frozenset((
    "exp", "log", "log2", "log10", "sqrt", "tanh", "erf", "floor", "ceil", "trunc", "rint",
    "sin", "cos", "tan", "fabs", "pow", "fmod", "sinh", "cosh", "asin", "acos", "atan",
    "asinh", "acosh", "atanh",
))

C_RESERVED = frozenset((
    # C99 keywords
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while",
    # what the generated file declares or includes, and the kernel ABI's parameters
    "main", "free", "malloc", "memcpy", "isnan", "isinf", "isfinite", "NAN", "INFINITY",
    "HUGE_VAL", "args", "dims",
)) | {f"{m}{s}" for m in C_MATH_FUNCTIONS for s in ("", "f")}

# prefixes of the generated file's own helpers (rl_), OpenMP's (omp_) and the compiler's
_RESERVED_PREFIXES = ("rl_", "omp_", "__")

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


def c_identifier(name: str, prefix: str = "k_", fallback: str = "kernel",
                 max_len: int | None = 80) -> str:
    """A safe C identifier made from any string (never the raw user text).

    Characters other than ASCII letters, digits and ``_`` become ``_``; the result is
    cut to ``max_len`` characters (None: no limit), is ``fallback`` when empty, and gets
    ``prefix`` when it starts with a digit, is reserved (``C_RESERVED``) or starts like
    a reserved name (``rl_``, ``omp_``, ``__``)."""
    ident = _NOT_IDENTIFIER.sub("_", name)
    if max_len is not None:
        ident = ident[:max_len]
    ident = ident or fallback
    if ident[0].isdigit() or ident in C_RESERVED or ident.startswith(_RESERVED_PREFIXES):
        ident = prefix + ident
    return ident


__all__ = ["C_MATH_FUNCTIONS", "C_RESERVED", "c_identifier"]
