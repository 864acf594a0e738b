"""Writing an AOT model for deployment. Three forms, chosen by the path:

- ``model.so``: the compiled library (self-contained: kernels, weights, entry point;
  it needs only libc, libm and the OpenMP runtime) and ``model.h`` beside it;
- ``model.tar``: a folder ``model/`` with ``model.c``, ``model.h``, ``weights.bin`` and
  a ``Makefile`` that builds ``model.so`` (override ``CC`` / ``CFLAGS`` to cross-compile);
- a directory (one that exists, or a path ending in ``/``): the same files, named
  ``model.*``, written into it.

Every file appears atomically (written beside its final name, then renamed).
"""

from __future__ import annotations

import io
import os
import shlex
import tarfile
import tempfile
from pathlib import Path

from .aot_library import AotError

_MAKEFILE = """\
# Builds the relayir AOT model with prefix {prefix} into {stem}.so; {stem}.h is its C
# interface. {stem}.c links weights.bin in with the assembler's .incbin (GNU as or clang's
# integrated assembler, ELF targets). CFLAGS are the flags relayir compiled it with here;
# to cross-compile, override them, e.g.
#   make CC=aarch64-linux-gnu-gcc CFLAGS="-O3 -std=gnu11 -fPIC -ffp-contract=fast -fopenmp"
CC ?= cc
CFLAGS ?= {cflags}
LDFLAGS ?= {ldflags}
LDLIBS ?= -lm

{stem}.so: {stem}.c weights.bin
\t$(CC) $(CFLAGS) $(LDFLAGS) -o $@ {stem}.c $(LDLIBS)

clean:
\trm -f {stem}.so

.PHONY: clean
"""


def source_files(sources, stem: str) -> dict[str, bytes]:
    """The files of the source forms (tar, directory), by name."""
    cflags = " ".join(shlex.quote(f) for f in sources.cflags)
    ldflags = " ".join(shlex.quote(f) for f in sources.ldflags)
    makefile = _MAKEFILE.format(prefix=sources.prefix, stem=stem, cflags=cflags,
                                ldflags=ldflags)
    return {f"{stem}.c": sources.source.encode(), f"{stem}.h": sources.header.encode(),
            "weights.bin": sources.weights, "Makefile": makefile.encode()}


def export_aot(sources, library_path: Path, path: str | os.PathLike) -> None:
    """Write the model to ``path`` in the form its name asks for (module docstring)."""
    text = os.fspath(path)
    target = Path(text)
    if text.endswith(("/", os.sep)) or target.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        for name, data in source_files(sources, "model").items():
            _write_atomic(target / name, data)
    elif target.suffix == ".so":
        _write_atomic(target, Path(library_path).read_bytes())
        _write_atomic(target.with_suffix(".h"), sources.header.encode())
    elif target.suffix == ".tar":
        _write_atomic(target, _tar(source_files(sources, target.stem), target.stem))
    else:
        raise AotError(f"export_library({text!r}): an AOT module is written as a shared "
                       f"library ('model.so', with 'model.h' beside it), a source archive "
                       f"('model.tar') or a directory ('model/'), found suffix "
                       f"{target.suffix or 'none'!r}")


def _tar(files: dict[str, bytes], folder: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".relayir-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o755 if path.suffix == ".so" else 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


__all__ = ["export_aot", "source_files"]
