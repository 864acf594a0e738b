"""Built modules: what ``relayir.build`` returns, and saving/loading them as one file.

A ``GraphExecutorFactoryModule`` holds the three parts of a compiled model: the graph
JSON (schedule and memory plan), the kernel library and the params (the constants
the graph reads). ``export_library(path)`` writes them into one zip archive, without
pickle:

- ``meta.json``: ``{"format": "relayir.graph_module", "format_version": 2, "target",
  "mod_name", "relayir_version", "library": {"kind", "kernels": [...]}}``. The kernel
  table has one entry per kernel (name, input and output types); a numpy kernel also
  holds its primitive function as Relay text, rebuilt on load;
- ``graph.json``: TVM's graph JSON, with the memory plan's ``storage_offset`` list
  besides ``storage_id`` (new in version 2; version 1 files still load);
- ``params.npz``: the params, read back with ``allow_pickle=False``;
- the library's own files (``lib.so`` for the C target).

``load_module(path)`` reads it back (checking the format and its version) into a
factory module, which ``relayir.graph_executor.GraphModule`` runs. Given a shared
library (an AOT module's ``export_library("model.so")``: an ELF file, not a zip), it
returns the ``AotExecutorFactoryModule`` that ``runtime.executor.AotModule`` runs.

``write_archive`` / ``read_archive`` (atomic write; format and version check) and
``library_entry`` / ``load_library_entry`` (a kernel library's table and files) are
shared with the VM's ``Executable.save`` / ``load`` (``vm/serialize.py``).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
import zlib

import numpy as np

from ..errors import Error
from ..version import __version__
from .executor import AotExecutorFactoryModule, is_shared_library, load_aot_module
from .graph_executor import GraphModule
from .libraries import load_library
from .memory_plan import MemoryPlan
from .params import ModuleFormatError, load_params, save_params

FORMAT = "relayir.graph_module"
FORMAT_VERSION = 2  # 2: intermediates packed in one arena (graph attr storage_offset)
READ_VERSIONS = (1, 2)  # a version-1 graph has no storage_offset: one buffer per storage id


class GraphExecutorFactoryModule:
    """What ``build`` returns (Relay's ``GraphExecutorFactoryModule``)."""

    def __init__(self, graph_json: str, lib, params: dict[str, np.ndarray], target: str,
                 mod_name: str = "default", ir_mod=None):
        self.graph_json = graph_json
        self.lib = lib
        self.params = dict(params)
        self.target = target
        self.mod_name = mod_name
        self.ir_mod = ir_mod  # the optimised, fused module (not saved by export_library)
        self._graph: dict | None = None

    @property
    def graph(self) -> dict:
        if self._graph is None:
            self._graph = json.loads(self.graph_json)
        return self._graph

    def get_graph_json(self) -> str:
        return self.graph_json

    get_executor_config = get_graph_json

    def get_lib(self):
        return self.lib

    def get_params(self) -> dict[str, np.ndarray]:
        return dict(self.params)

    @property
    def memory_plan(self):
        """The memory plan's report (planned vs one-buffer-per-tensor bytes)."""
        return MemoryPlan.from_graph(self.graph)

    def __getitem__(self, key: str):
        """``lib["default"](dev)`` as in TVM: a function of the device giving a GraphModule."""
        if key != self.mod_name:
            raise Error(f"this module is named {self.mod_name!r}, not {key!r}")

        def create(device=None):
            return GraphModule(self)

        return create

    def export_library(self, path: str | os.PathLike) -> None:
        export_library(self, path)

    def __repr__(self) -> str:
        n = sum(1 for node in self.graph["nodes"] if node["op"] != "null")
        return (f"<GraphExecutorFactoryModule {self.mod_name}: target {self.target}, "
                f"{n} kernel calls, {len(self.lib)} kernels, {len(self.params)} params>")


def write_archive(path: str | os.PathLike, meta: dict, members: dict[str, bytes | str],
                  stored=()) -> None:
    """Write ``meta.json`` and ``members`` into one zip archive at ``path``, atomically:
    written next to ``path`` and renamed into place (shared with ``Executable.save``).
    Members named in ``stored`` are not compressed (loading them is then a copy)."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".relayir-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("meta.json", json.dumps(meta, indent=1))
            for name, data in members.items():
                z.writestr(name, data, zipfile.ZIP_STORED if name in stored else None)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_archive(path: str | os.PathLike, fmt: str, version: int | tuple[int, ...], required=(),
                 what: str = "module") -> tuple[dict, dict[str, bytes]]:
    """``(meta, members)`` of an archive written by ``write_archive``, after checking
    its format name and version (one version, or a tuple of the readable ones, newest
    last); ``required`` members must be present. Every ``.json`` member must be UTF-8
    JSON and the meta must name its ``target``, so a damaged file is a
    ``ModuleFormatError`` here rather than a raw decoding error later. A truncated
    archive (``write_archive`` writes ``meta.json`` first, so its name opens the file)
    is reported as such: its zip directory is gone, and a zip reader may find the
    directory of a stored member (``params.npz`` is itself a zip) instead."""
    path = os.fspath(path)
    try:
        with zipfile.ZipFile(path) as z:
            members = {name: z.read(name) for name in z.namelist()}
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, ValueError) as exc:
        if _opens_like_an_archive(path):
            raise ModuleFormatError(f"{path} is a truncated or damaged relayir {what} archive "
                                    f"({exc}); write it again") from None
        raise ModuleFormatError(f"{path} is not a relayir {what} archive: {exc}") from None
    if "meta.json" not in members:
        if _opens_like_an_archive(path):
            raise ModuleFormatError(f"{path} is a truncated or damaged relayir {what} archive "
                                    f"(its zip directory is missing); write it again")
        raise ModuleFormatError(f"{path} is not a relayir {what} archive: it lacks meta.json")
    parsed = {}
    for name in [n for n in members if n.endswith(".json")]:
        try:
            parsed[name] = json.loads(members[name].decode("utf-8"))
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise ModuleFormatError(f"{path}: {name} is not UTF-8 JSON: {exc}") from None
    meta = parsed["meta.json"]
    del members["meta.json"]
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise ModuleFormatError(f"{path}: format {found!r}, expected {fmt!r}")
    found = meta.get("format_version")
    versions = version if isinstance(version, tuple) else (version,)
    if found not in versions:
        readable = " or ".join(str(v) for v in versions)
        raise ModuleFormatError(
            f"{path} was written in {what} format version {found}; this relayir reads "
            f"version {readable}: rebuild the model with this relayir")
    if not isinstance(meta.get("target"), str):
        raise ModuleFormatError(f"{path}: meta.json names no target (found "
                                f"{meta.get('target')!r}): a damaged {what} archive")
    missing = set(required) - set(members)
    if missing:
        raise ModuleFormatError(
            f"{path} is not a relayir {what} archive: it lacks {', '.join(sorted(missing))}")
    return meta, members


_FIRST_MEMBER = b"meta.json"  # the name in the local header that opens every archive


def _opens_like_an_archive(path: str) -> bool:
    """Whether the file starts as ``write_archive`` starts one (a zip local header for
    ``meta.json``): then a failure to read it means truncation or damage."""
    try:
        with open(path, "rb") as f:
            head = f.read(30 + len(_FIRST_MEMBER))
    except OSError:
        return False
    return head[:4] == b"PK\x03\x04" and head[30:] == _FIRST_MEMBER


def library_entry(lib) -> tuple[dict, dict[str, bytes]]:
    """A kernel library's ``meta.json`` entry and its archive members."""
    files = lib.files()
    return {"kind": lib.kind, "kernels": lib.kernel_table(), "files": sorted(files)}, files


def load_library_entry(path, entry: dict, members: dict[str, bytes], target: str):
    """Rebuild (numpy) or load (C) the kernel library that ``library_entry`` saved; a
    malformed entry (missing keys, wrong types) is a ``ModuleFormatError``."""
    if not (isinstance(entry, dict) and isinstance(entry.get("kind"), str)
            and isinstance(entry.get("kernels"), list)
            and all(isinstance(k, dict) for k in entry["kernels"])
            and isinstance(entry.get("files", []), list)):
        raise ModuleFormatError(f"{path}: a malformed kernel library entry in meta.json "
                                "(expected {\"kind\": str, \"kernels\": [{...}], \"files\": "
                                f"[...]}}, found {str(entry)[:80]})")
    files = {}
    for name in entry.get("files", []):
        if name not in members:
            raise ModuleFormatError(f"{path}: the library file {name} is missing")
        files[name] = members[name]
    try:
        return load_library(entry["kind"], entry["kernels"], files, target)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ModuleFormatError(f"{path}: a malformed kernel table in meta.json "
                                f"({type(exc).__name__}: {exc})") from None


def export_library(module: GraphExecutorFactoryModule, path: str | os.PathLike) -> None:
    """Write ``module`` to ``path`` as one archive (see the module docstring). The file
    appears atomically: it is written next to ``path`` and renamed into place."""
    library, files = library_entry(module.get_lib())
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "relayir_version": __version__,
        "target": module.target,
        "mod_name": module.mod_name,
        "library": library,
    }
    write_archive(path, meta, {"graph.json": module.get_graph_json(),
                               "params.npz": save_params(module.get_params()), **files},
                  stored=("params.npz", "lib.so"))  # barely compressible: load is a copy


def load_module(path: str | os.PathLike
                ) -> GraphExecutorFactoryModule | AotExecutorFactoryModule:
    """Read a module written by ``export_library``; kernels are rebuilt or loaded. A
    shared library is an AOT module (checked for this CPU before it is loaded)."""
    if is_shared_library(path):
        return load_aot_module(path)
    meta, members = read_archive(path, FORMAT, READ_VERSIONS, ("graph.json", "params.npz"))
    graph_json = members["graph.json"].decode()
    params = load_params(members["params.npz"])
    lib = load_library_entry(path, meta["library"], members, meta["target"])
    return GraphExecutorFactoryModule(graph_json, lib, params, meta["target"],
                                      meta.get("mod_name", "default"))


__all__ = ["FORMAT_VERSION", "GraphExecutorFactoryModule", "ModuleFormatError", "export_library",
           "library_entry", "load_library_entry", "load_module", "load_params", "read_archive",
           "save_params", "write_archive"]
