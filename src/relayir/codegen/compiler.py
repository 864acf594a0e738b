"""Find the system C compiler and compile a C source string to a cached shared object.

This is the middle one of the three pure codegen steps (render → compile → load):
it takes a string and returns a path; it never looks at IR.

Default flags and why:

- ``-O3 -march=native``: generated kernels are only worth having when vectorised
  for the CPU they run on. A target that names its CPU (``"cpu -mcpu=haswell"``)
  passes ``march="haswell"`` instead. The flags and the host CPU are part of the
  cache key (see :func:`cache.host_fingerprint`) so a shared cache directory never
  serves an object built for another CPU, nor an AVX2 build for an AVX-512 one.
- ``-fopenmp``: kernels parallelise their outer loop with ``#pragma omp``. Probed
  once per compiler; without it the pragmas are ignored and kernels run serially.
- ``-ffp-contract=fast``: lets the compiler fuse ``a*b+c`` into FMA. It changes
  rounding by at most an ulp per fused operation (within the 1e-5 tolerance the
  kernels are tested at) and is a large win for dense and conv2d. gcc does this
  by default in GNU mode; it is spelled out so clang and ``-std=c99`` agree.
- no ``-ffast-math``: it implies ``-ffinite-math-only`` (``isnan`` folds to false,
  ``max(x, NaN)`` and ``inf`` arithmetic stop matching numpy), reassociates
  reductions, and with gcc < 13 (and some clang releases) linking a ``-shared``
  object pulls in ``crtfastmath.o``, which turns on flush-to-zero for the whole
  process when the library is loaded. The numpy target is the semantic reference; NaN and inf
  must behave the same on both.
- ``-std=gnu11``: C99 plus ``_Alignas``/``static_assert`` and the GNU
  extensions (``__attribute__((aligned))``, ``M_PI`` from ``math.h``).
- ``-fPIC -shared``: the output is a shared object; added even to user flags.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import logging
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import Error
from ..version import __version__
from . import cache
from .openmp_env import prepare_openmp

__all__ = [
    "assemble_source",
    "CompileError",
    "Compiler",
    "CompilerNotFoundError",
    "CompilerWarning",
    "compile_source",
    "default_flags",
    "find_compiler",
    "has_compiler",
]

CANDIDATES = ("cc", "gcc", "clang")
BASE_FLAGS = ("-O3", "-std=gnu11", "-fPIC", "-shared", "-ffp-contract=fast")
REQUIRED_FLAGS = ("-fPIC", "-shared")
LINK_FLAGS = ("-lm",)  # after the source file, where the linker wants libraries
DEFAULT_TIMEOUT = 600.0
_PROBE_TIMEOUT = 60.0
_MAX_MESSAGE = 20000
_HINT = (
    'Build with target="numpy", which runs the reference kernels and needs no C compiler, '
    "or install gcc or clang, or set CC to a C compiler (e.g. CC=/usr/bin/gcc)."
)

log = logging.getLogger(__name__)

_PROBE_SOURCE = """\
#include <omp.h>
int relayir_probe(int n) {
    int s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < n; i++) s += i;
    return s + 0 * omp_get_max_threads();
}
"""


class CompileError(Error):
    """The C compiler failed. Carries the full command line, the compiler's
    message and the path of the kept ``.c`` file, so the failure can be
    reproduced by pasting the command into a shell."""

    def __init__(
        self,
        message: str,
        *,
        command: Sequence[str] = (),
        stderr: str = "",
        source_path: Path | None = None,
        returncode: int | None = None,
    ):
        self.command = list(command)
        self.stderr = stderr
        self.source_path = source_path
        self.returncode = returncode
        super().__init__(message)


class CompilerNotFoundError(CompileError):
    """No usable C compiler; the numpy target needs none."""


class CompilerWarning(UserWarning):
    """The compiler lacks a feature (OpenMP, ``-march=native``); kernels still work."""


@dataclass(frozen=True)
class Compiler:
    """A C compiler found on this machine.

    ``command`` is the argv prefix (``$CC`` may carry arguments, e.g. ``ccache gcc``
    or ``gcc -m64``); ``path`` is its first word resolved on ``PATH``."""

    command: tuple[str, ...]
    path: str
    version: str
    openmp: bool
    native: bool  # accepts -march=native

    def identity(self) -> dict:
        """What goes into the cache key: another compiler, version or wrapper
        argument means another object."""
        return {"command": list(self.command), "path": self.path, "version": self.version}


def has_compiler() -> bool:
    """Whether ``find_compiler`` finds one (the tests' guard for the cpu target)."""
    try:
        find_compiler()
    except CompilerNotFoundError:
        return False
    return True


def find_compiler() -> Compiler:
    """``$CC`` (split like a shell would, run without one), else ``cc``, ``gcc``,
    ``clang`` on ``PATH``. Memoised per (``$CC``, ``$PATH``); the first call costs
    a ``--version`` run and one probe compile (~0.1 s)."""
    return _find_compiler(os.environ.get("CC", "").strip(), os.environ.get("PATH", ""))


@functools.cache
def _find_compiler(cc: str, path_env: str) -> Compiler:
    if cc:
        try:
            candidates = [("$CC=" + repr(cc), shlex.split(cc))]
        except ValueError as e:
            raise CompilerNotFoundError(
                f"No C compiler was found: CC={cc!r} cannot be split into words ({e}).\n" + _HINT
            ) from None
    else:
        candidates = [(name, [name]) for name in CANDIDATES]
    tried = []
    for label, argv in candidates:
        if not argv:
            tried.append(f"{label} (empty)")
            continue
        exe = shutil.which(argv[0], path=path_env or None)
        if exe is None:
            tried.append(f"{label} (not found)")
            continue
        command = (exe, *argv[1:])
        version, problem = _version(command)
        if problem:
            tried.append(f"{label} -> {exe} ({problem})")
            continue
        openmp, native = _probe(command)
        return Compiler(command, exe, version, openmp, native)
    raise CompilerNotFoundError(
        "No C compiler was found. Tried: " + "; ".join(tried) + ".\n" + _HINT
    )


find_compiler.cache_clear = _find_compiler.cache_clear  # type: ignore[attr-defined]


def _version(command: tuple[str, ...]) -> tuple[str, str]:
    try:
        r = subprocess.run(
            [*command, "--version"], capture_output=True, text=True, timeout=_PROBE_TIMEOUT
        )
    except (OSError, subprocess.SubprocessError) as e:
        return "", f"cannot run: {e}"
    if r.returncode != 0:
        return "", f"'--version' exited with {r.returncode}: {r.stderr.strip()[:200]}"
    lines = (r.stdout or r.stderr).strip().splitlines()
    return (lines[0].strip() if lines else "unknown"), ""


def _probe(command: tuple[str, ...]) -> tuple[bool, bool]:
    """Whether ``-fopenmp`` and ``-march=native`` work: compile, link and load a
    tiny OpenMP library (loading catches a runtime library the linker found but
    the loader cannot). One compile when both work, three when one does not."""
    with tempfile.TemporaryDirectory(prefix="relayir-probe-") as d:
        src = Path(d) / "probe.c"
        src.write_text(_PROBE_SOURCE, encoding="utf-8")

        def works(*extra: str) -> tuple[bool, str]:
            out = Path(d) / f"probe{len(os.listdir(d))}.so"
            cmd = [*command, "-O0", *REQUIRED_FLAGS, *extra, str(src), "-o", str(out)]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=_PROBE_TIMEOUT)
            except (OSError, subprocess.SubprocessError) as e:
                return False, str(e)
            if r.returncode != 0:
                return False, r.stderr.strip()
            if "-fopenmp" in extra:
                prepare_openmp()  # the probe may be the first to load the OpenMP runtime
                try:
                    ctypes.CDLL(str(out))
                except OSError as e:
                    return False, str(e)
            return True, ""

        if works("-march=native", "-fopenmp")[0]:
            return True, True
        native, native_msg = works("-march=native")
        openmp, openmp_msg = works("-fopenmp")
    name = shlex.join(command)
    if not openmp:
        warnings.warn(
            f"C compiler {name} cannot build OpenMP code ({_first_line(openmp_msg)}); "
            "kernels will run on one thread. Install the OpenMP runtime (libgomp / libomp) "
            "or set CC to a compiler that has it.",
            CompilerWarning,
            stacklevel=4,
        )
    if not native:
        warnings.warn(
            f"C compiler {name} does not accept -march=native ({_first_line(native_msg)}); "
            "kernels are built for the baseline CPU and may be slower.",
            CompilerWarning,
            stacklevel=4,
        )
    return openmp, native


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else "no message"


def default_flags(compiler: Compiler | None = None, march: str = "native") -> list[str]:
    """``$RELAYIR_CFLAGS`` (split like a shell would; replaces the defaults), else
    ``-O3 -std=gnu11 -fPIC -shared -ffp-contract=fast -march=<march> -fopenmp``,
    ``-march=native`` and ``-fopenmp`` only where the compiler supports them (a named
    ``march`` was checked by the caller: ``backend.target.Target``). See the module
    docstring for why each flag is there and why ``-ffast-math`` is not."""
    env = os.environ.get("RELAYIR_CFLAGS")
    if env is not None and env.strip():
        return shlex.split(env)
    compiler = compiler or find_compiler()
    flags = list(BASE_FLAGS)
    if march != "native":
        flags.append(f"-march={march}")
    elif compiler.native:
        flags.append("-march=native")
    if compiler.openmp:
        flags.append("-fopenmp")
    return flags


_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}$")


def compile_source(
    source: str,
    *,
    flags: Sequence[str] | None = None,
    name: str = "kernels",
    compiler: Compiler | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Path:
    """Compile C ``source`` to a shared object and return its path.

    The object is looked up in, and published to, the on-disk cache under a key
    over the source, the compiler (path, version, ``$CC`` words), the flags, the
    host CPU and relayir's version. With ``RELAYIR_NO_CACHE=1`` nothing is looked
    up or published; the object lives in a temporary directory removed at exit.
    ``flags`` replaces :func:`default_flags`; ``-fPIC -shared`` are added if absent.
    ``name`` only labels the files (it shows up in profilers and ``failed/``)."""
    if not _NAME.match(name):
        raise ValueError(f"compile_source: name {name!r} must be a plain file-name stem")
    compiler = compiler or find_compiler()
    flags = list(default_flags(compiler) if flags is None else flags)
    flags += [f for f in REQUIRED_FLAGS if f not in flags]
    key = cache.cache_key(
        source=source,
        compiler=compiler.identity(),
        flags=flags,
        link=list(LINK_FLAGS),
        host=cache.host_fingerprint(),
        relayir=__version__,
    )
    stem = f"{name}-{key}"
    root = cache.cache_dir()
    use_cache = cache.cache_enabled()
    final = root / "lib" / f"{stem}.so"
    if use_cache and final.exists():
        return final
    if use_cache:
        try:
            workdir = cache.make_build_dir(root, name)
        except OSError as e:
            warnings.warn(
                f"relayir cache directory {root} is not writable ({e}); compiling without "
                "the cache. Set RELAYIR_CACHE_DIR to a writable directory.",
                CompilerWarning,
                stacklevel=2,
            )
            use_cache = False
    if not use_cache:
        workdir = cache.make_build_dir(None, name)
    src, out = workdir / f"{name}.c", workdir / f"{name}.so"
    try:
        src.write_text(source, encoding="utf-8")
        command = [*compiler.command, *flags, str(src), "-o", str(out), *LINK_FLAGS]
        _run(command, source, stem, root, src, out, timeout)
        if not use_cache:
            atexit.register(shutil.rmtree, workdir, True)
            return out
        cache.publish(src, final.with_suffix(".c"))  # beside the object, for debugging
        return cache.publish(out, final)
    finally:
        if use_cache:
            shutil.rmtree(workdir, ignore_errors=True)


def assemble_source(source: str, *, flags: Sequence[str] | None = None,
                    compiler: Compiler | None = None, timeout: float = DEFAULT_TIMEOUT) -> str:
    """The assembly the compiler writes for C ``source`` with ``flags`` (as
    :func:`compile_source` compiles it, ``-S`` instead of linking); not cached."""
    compiler = compiler or find_compiler()
    flags = [f for f in (default_flags(compiler) if flags is None else flags)
             if f != "-shared"]
    workdir = cache.make_build_dir(None, "asm")
    try:
        src, out = workdir / "kernels.c", workdir / "kernels.s"
        src.write_text(source, encoding="utf-8")
        _run([*compiler.command, *flags, "-S", str(src), "-o", str(out)], source, "asm",
             None, src, out, timeout)
        return out.read_text(encoding="utf-8", errors="replace")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run(command, source, stem, root, src, out, timeout) -> None:
    try:
        r = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=src.parent)
    except FileNotFoundError as e:
        raise CompilerNotFoundError(
            f"The C compiler {command[0]} disappeared ({e}). Call "
            "relayir.codegen.find_compiler.cache_clear() after changing compilers.\n" + _HINT,
            command=command,
        ) from None
    except subprocess.TimeoutExpired:
        r = None
    if r is not None and r.returncode == 0 and out.exists():
        if r.stderr.strip():
            log.debug("compiler warnings for %s:\n%s", stem, r.stderr)
        return
    kept = cache.keep_failed(root, source, stem)
    shown = [kept.as_posix() if a == str(src) else a for a in command]
    shown = [kept.with_suffix(".so").as_posix() if a == str(out) else a for a in shown]
    if r is None:
        stderr, rc, what = "", None, f"did not finish within {timeout:g} s"
    else:
        # The build directory is about to go; point the messages at the kept file.
        stderr, rc = r.stderr.replace(str(src), kept.as_posix()), r.returncode
        what = f"exited with status {rc}" if rc else "produced no output file"
    shown_stderr = stderr.rstrip()
    if len(shown_stderr) > _MAX_MESSAGE:
        cut = len(shown_stderr) - _MAX_MESSAGE
        shown_stderr = shown_stderr[:_MAX_MESSAGE] + f"\n... ({cut} more characters in .stderr)"
    raise CompileError(
        f"C compilation failed: the compiler {what}.\n"
        f"command: {shlex.join(shown)}\n"
        f"source kept at: {kept}\n"
        f"compiler output:\n{shown_stderr or '(none)'}",
        command=shown,
        stderr=stderr,
        source_path=kept,
        returncode=rc,
    )
