"""What a ``-march=`` CPU name means to the C compiler: the instruction sets it enables.

A target's CPU (``"cpu -mcpu=haswell"``) is compiled with ``-march=haswell``, so the
compiler is the authority on what that name means: its predefined macros for it
(``cc -march=haswell -dM -E``) say which instruction sets the generated code may use.
``tir.machine.machine_from_flags`` turns them into the ``Machine`` (``MACHINES`` entry)
the kernels are sized for, and ``tir.machine.missing_features`` into the instruction sets
this host lacks. Names are the compiler's own (gcc's ``-march`` list; clang takes the
same x86 names); an unknown one comes back with the compiler's list of valid names.
"""

from __future__ import annotations

import functools
import re
import subprocess

from .compiler import Compiler, find_compiler

__all__ = ["MarchInfo", "march_info"]

_TIMEOUT = 60.0
_VALID = re.compile(r"valid (?:arguments to|target CPU values)[^:]*:\s*(.*)", re.IGNORECASE)


class MarchInfo:
    """``macros``: the compiler's predefined macro names under ``-march=<name>`` (None
    when the compiler refuses the name); ``valid``: the names the compiler lists as
    valid (empty when it accepted the name or lists none); ``message``: its complaint."""

    def __init__(self, macros: frozenset | None, valid: tuple[str, ...], message: str):
        self.macros = macros
        self.valid = valid
        self.message = message


def march_info(name: str, compiler: Compiler | None = None) -> MarchInfo:
    """The compiler's macros for ``-march=name`` (one preprocessor run, memoised)."""
    return _march_info((compiler or find_compiler()).command, name)


@functools.cache
def _march_info(command: tuple[str, ...], name: str) -> MarchInfo:
    cmd = [*command, f"-march={name}", "-dM", "-E", "-x", "c", "-"]
    try:
        r = subprocess.run(cmd, input="", capture_output=True, text=True, timeout=_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as e:
        return MarchInfo(None, (), str(e))
    if r.returncode == 0:
        macros = frozenset(line.split()[1] for line in r.stdout.splitlines()
                           if line.startswith("#define ") and len(line.split()) > 1)
        return MarchInfo(macros, (), "")
    valid: tuple[str, ...] = ()
    for line in r.stderr.splitlines():
        m = _VALID.search(line)
        if m:
            valid = tuple(w for w in re.split(r"[,\s]+", m.group(1)) if w)
            break
    first = r.stderr.strip().splitlines()
    return MarchInfo(None, valid, first[0] if first else f"exit status {r.returncode}")
