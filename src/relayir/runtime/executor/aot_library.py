"""A shared library made by the AOT executor, loaded: its C interface behind ctypes.

The library describes itself. Its ``relayir_aot`` ELF section (not loaded into memory,
kept by ``strip``) holds a JSON object: the format and its version, the symbol
``prefix`` of its C interface and the fingerprint of the CPU it was compiled for
(``-march=native``). ``AotLibrary`` reads that section from the file, refuses a
library built for another CPU *before* loading it (an error, not an illegal-instruction
crash), then reads the inputs' and outputs' names, shapes and dtypes through the C
interface itself (``<prefix>input_name`` and so on), so the C tables are the one
source of these facts.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from ...codegen.cache import host_fingerprint
from ...codegen.openmp_env import prepare_openmp
from ...errors import Error

FORMAT = "relayir.aot_library"
FORMAT_VERSION = 1
SECTION = b"relayir_aot"  # no leading dot: the assembler reads ".rel..." as relocations
ELF_MAGIC = b"\x7fELF"


class AotError(Error):
    """An AOT library that cannot be loaded here, a wrong input, or a failed run."""


@dataclass(frozen=True)
class TensorInfo:
    """One input or output of an AOT model."""

    name: str
    shape: tuple[int, ...]
    dtype: str


def is_shared_library(path: str | os.PathLike) -> bool:
    """Whether ``path`` starts like an ELF file (an exported AOT library)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


def read_aot_meta(path: str | os.PathLike) -> dict:
    """The JSON of the ``relayir_aot`` section of the ELF file at ``path`` (64-bit,
    little-endian), read from the section headers without loading the library."""
    try:
        with open(path, "rb") as f:
            raw = _elf_section(f, SECTION)
    except OSError as exc:
        raise AotError(f"cannot read {path}: {exc}") from None
    except (struct.error, ValueError, IndexError) as exc:
        raise AotError(f"{path} is not a readable ELF shared library: {exc}") from None
    if raw is None:
        raise AotError(f"{path} has no {SECTION.decode()} section: it is not a library "
                       f"exported by relayir.build(..., executor=\"aot\")")
    try:
        meta = json.loads(raw.split(b"\0", 1)[0])
    except ValueError as exc:
        raise AotError(f"{path}: the {SECTION.decode()} section is not JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise AotError(f"{path}: format {meta.get('format') if isinstance(meta, dict) else None!r},"
                       f" expected {FORMAT!r}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise AotError(f"{path} was written in AOT format version {meta.get('format_version')}; "
                       f"this relayir reads version {FORMAT_VERSION}: rebuild the model")
    return meta


def _elf_section(f, wanted: bytes) -> bytes | None:
    """The bytes of section ``wanted``: the ELF header, the section headers and the
    section-name table are read, not the whole (weights-sized) file."""
    def read(offset: int, size: int) -> bytes:
        f.seek(offset)
        data = f.read(size)
        if len(data) != size:
            raise ValueError("the file is truncated")
        return data

    ident = read(0, 64)
    if ident[:4] != ELF_MAGIC:
        raise ValueError("no ELF header")
    if ident[4] != 2 or ident[5] != 1:
        raise ValueError("only 64-bit little-endian ELF files are supported")
    shoff, = struct.unpack_from("<Q", ident, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x3A)
    table = read(shoff, shentsize * shnum)
    # each header: name, type, flags, addr, offset, size, link, info, addralign, entsize
    headers = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
    names = read(headers[shstrndx][4], headers[shstrndx][5])
    for h in headers:
        if names[h[0]: names.index(b"\0", h[0])] == wanted:
            return read(h[4], h[5])
    return None


class AotLibrary:
    """A loaded AOT library: ``run`` (the native entry point, ctypes), ``inputs`` and
    ``outputs`` (``TensorInfo``), ``workspace_size``, ``last_error()``."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.meta = read_aot_meta(self.path)
        built_for = self.meta.get("cpu")
        if built_for != host_fingerprint():
            raise AotError(
                f"{self.path} was compiled (-march=native) for another CPU (fingerprint "
                f"{built_for!r}, this CPU {host_fingerprint()!r}); refusing to load it: running "
                f"it could crash with an illegal instruction. Rebuild the model on this machine "
                f"with relayir.build(..., executor=\"aot\"), or build its exported C sources here")
        prepare_openmp()  # before the first library brings the OpenMP runtime in
        try:
            self._cdll = ctypes.CDLL(str(self.path))
        except OSError as exc:
            raise AotError(f"cannot load the AOT library {self.path}: {exc}") from None
        self.prefix = self.meta["prefix"]
        void_pp = ctypes.c_void_p
        self.run = self._function("run", ctypes.c_int32, [void_pp, void_pp])
        self.run_with_workspace = self._function("run_with_workspace", ctypes.c_int32,
                                                 [void_pp, void_pp, void_pp])
        self._last_error = self._function("last_error", ctypes.c_char_p, [])
        self.workspace_size = int(self._function("workspace_size", ctypes.c_int64, [])())
        self.inputs = self._tensors("input")
        self.outputs = self._tensors("output")

    def _function(self, name: str, restype, argtypes):
        symbol = self.prefix + name
        try:
            fn = self._cdll[symbol]
        except AttributeError:
            raise AotError(f"{self.path} has no function {symbol}: not an AOT library of "
                           f"this relayir") from None
        fn.restype, fn.argtypes = restype, argtypes
        return fn

    def _tensors(self, kind: str) -> tuple[TensorInfo, ...]:
        i32 = ctypes.c_int32
        count = self._function(f"num_{kind}s", i32, [])()
        name = self._function(f"{kind}_name", ctypes.c_char_p, [i32])
        dtype = self._function(f"{kind}_dtype", ctypes.c_char_p, [i32])
        ndim = self._function(f"{kind}_ndim", i32, [i32])
        shape = self._function(f"{kind}_shape", ctypes.POINTER(ctypes.c_int64), [i32])
        return tuple(TensorInfo(name(i).decode(), tuple(shape(i)[:ndim(i)]), dtype(i).decode())
                     for i in range(count))

    def last_error(self) -> str:
        """The message of this thread's last failed call (empty when none failed)."""
        return (self._last_error() or b"").decode(errors="replace")

    def __repr__(self) -> str:
        return (f"<AotLibrary {self.path.name}: prefix {self.prefix}, {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs, workspace {self.workspace_size} bytes>")


__all__ = ["FORMAT", "FORMAT_VERSION", "SECTION", "AotError", "AotLibrary", "TensorInfo",
           "is_shared_library", "read_aot_meta"]
