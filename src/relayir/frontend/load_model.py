"""``load_model(path, shape=None, dtype=None)``: a model file → ``(mod, params)``.

One function for the command line and for Python. The file's suffix picks the reader:

- ``.onnx``: ``from_onnx`` (initializers become constants);
- ``.pt2``: ``torch.export.load`` then ``from_pytorch``. The saved dynamic dims stay
  dynamic (named ``<input>_dim<axis>`` unless ``shape`` names them); the inputs are
  named as ``torch.export`` names the user inputs: the forward's argument names.
  Giving a size for a dynamic dim re-exports the program with that dim fixed;
- ``.relay`` / ``.txt``: Relay text; weights, if any, in ``<stem>.params.npz`` beside
  it (read without pickle).

``shape`` maps input names to shapes (or is the command line's text,
``"x:[1,3,224,224] mask:[1,seq]"``): a dim is an int, a name (a dynamic dim; one name
is one size everywhere) or ``"?"`` (dynamic, unnamed). ``dtype`` is one dtype for every
input or a dict by name. torch and onnx are imported only for their own files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..errors import Error
from ..ir.expr import Function, Var
from ..ir.module import IRModule
from ..ir.parser import parse
from ..ir.types import Any, SymbolicDim, TensorType
from ..transform.bind import bind
from .common import sanitize_name


class ModelFileError(Error):
    """A model file is missing, unreadable or of an unknown kind, or the shapes and dtypes
    given for it do not fit its inputs."""


class InputShapeError(ModelFileError):
    """``--input-shapes`` text that does not read as ``NAME:[DIM,...] ...``."""


Shape = tuple  # of int | str (a named dynamic dim) | "?" (an unnamed one)
_ENTRY = re.compile(r"\s*(?P<name>[^\s\[\]]+?):\[(?P<dims>[^\[\]]*)\]\s*")
_DIM = re.compile(r"^(?:\d+|\?|[A-Za-z_][A-Za-z0-9_]*)$")
_FORM = "NAME:[DIM,...] separated by spaces, a DIM being a size, a name (dynamic) or ?"


def parse_input_shapes(text: str) -> dict[str, Shape]:
    """``"x:[1,3,224,224] mask:[1,seq]"`` → ``{"x": (1, 3, 224, 224), "mask": (1, "seq")}``."""
    shapes: dict[str, Shape] = {}
    pos = 0
    while pos < len(text) and text[pos:].strip():
        m = _ENTRY.match(text, pos)
        if m is None:
            raise InputShapeError(f"--input-shapes: cannot read {text[pos:].strip()!r} "
                                  f"(column {pos + 1}): expected {_FORM}")
        name, dims = m.group("name"), [d.strip() for d in m.group("dims").split(",")]
        dims = [] if dims == [""] else dims
        bad = [d for d in dims if not _DIM.match(d)]
        if bad:
            raise InputShapeError(f"--input-shapes: input {name}: dim {bad[0]!r} is not a "
                                  f"size, a name or ?")
        if name in shapes:
            raise InputShapeError(f"--input-shapes: input {name} is given twice")
        shapes[name] = tuple(int(d) if d.isdigit() else d for d in dims)
        pos = m.end()
    return shapes


def _normalise(shape) -> dict[str, Shape]:
    if shape is None:
        return {}
    if isinstance(shape, str):
        return parse_input_shapes(shape)
    out = {}
    for name, dims in dict(shape).items():
        out[str(name)] = tuple(
            "?" if d is None or isinstance(d, Any) or (isinstance(d, int) and d < 0)
            else d.name if isinstance(d, SymbolicDim) else d if isinstance(d, str) else int(d)
            for d in dims)
    return out


def _relay_dim(d):
    return Any() if d == "?" else SymbolicDim(d) if isinstance(d, str) else d


def _dtype_of(dtype, name: str) -> str | None:
    return dtype.get(name) if isinstance(dtype, Mapping) else dtype


def _check_names(path, given, names) -> None:
    unknown = [n for n in given if n not in names and sanitize_name(n) not in names]
    if unknown:
        raise ModelFileError(f"{path}: the model has no input named {unknown[0]!r}; its "
                             f"inputs are {', '.join(names) or 'none'}")


# ---------------------------------------------------------------- readers


def _load_onnx(path: str, shapes: dict, dtype) -> tuple[IRModule, dict]:
    try:
        from . import onnx as onnx_frontend  # optional dependency: only for .onnx files
    except ImportError as exc:
        raise ModelFileError(f"{path}: reading .onnx files needs the onnx package ({exc}): "
                             f"pip install 'relayir[onnx]'") from None
    relay_shapes = {n: tuple(_relay_dim(d) for d in s) for n, s in shapes.items()}
    default = dtype if isinstance(dtype, str) else "float32"
    mod, params = onnx_frontend.from_onnx(path, shape=relay_shapes, dtype=default)
    names = [p.name_hint for p in mod["main"].params if p.name_hint not in params]
    _check_names(path, shapes, names)
    _check_dtypes(path, mod, dtype, params)
    return mod, params


def _check_dtypes(path, mod, dtype, params) -> None:
    """A typed model's inputs keep their dtypes: a different one given is an error."""
    for p in mod["main"].params:
        want = _dtype_of(dtype, p.name_hint)
        ann = p.type_annotation
        if want and p.name_hint not in params and isinstance(ann, TensorType) \
                and ann.dtype != want:
            raise ModelFileError(f"{path}: input {p.name_hint} is {ann.dtype} in the model, "
                                 f"not {want}")


def _load_pt2(path: str, shapes: dict, dtype) -> tuple[IRModule, dict]:
    try:  # optional dependency: only for .pt2 files
        import torch

        from .pytorch import from_pytorch
        from .pytorch_ops.base import relay_dtype
    except ImportError as exc:
        raise ModelFileError(f"{path}: reading .pt2 files needs torch ({exc}): "
                             f"pip install 'relayir[torch]'") from None
    try:
        program = torch.export.load(path)
    except Exception as exc:  # noqa: BLE001  (zip, pickle-free loader and torch errors)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelFileError(f"{path}: not a program saved by torch.export.save: "
                             f"{first}") from None
    users = _user_inputs(path, program)
    _check_names(path, shapes, [n for n, _ in users])
    names: dict[str, str] = {}  # torch symbol -> the dim's name
    fixed: dict[str, int] = {}  # torch symbol -> the size the caller gave it
    infos = []
    for name, val in users:
        given = shapes.get(name, shapes.get(sanitize_name(name)))
        dims = _pt2_dims(path, name, val.shape, given, names, fixed)
        dt = relay_dtype(val.dtype)
        want = _dtype_of(dtype, name)
        if want and want != dt:
            raise ModelFileError(f"{path}: input {name} is {dt} in the saved program, "
                                 f"not {want}")
        infos.append((name, (dims, dt)))
    if fixed:
        program = _reexport(torch, program, users, infos, fixed)
    return from_pytorch(program, infos)


def _user_inputs(path, program) -> list[tuple[str, object]]:
    user = set(program.graph_signature.user_inputs)
    out = [(n.name, n.meta.get("val")) for n in program.graph.nodes
           if n.op == "placeholder" and n.name in user]
    for name, val in out:
        if not hasattr(val, "shape"):
            raise ModelFileError(f"{path}: input {name} is not a tensor ({type(val).__name__})")
    return out


def _pt2_dims(path, name, saved, given, names, fixed) -> tuple:
    """The input's dims for ``from_pytorch``: sizes, and names for dynamic dims."""
    if given is not None and len(given) != len(saved):
        raise ModelFileError(f"{path}: input {name} has rank {len(saved)} in the saved "
                             f"program, the shape given has {len(given)} dims")
    dims = []
    for axis, d in enumerate(saved):
        want = given[axis] if given is not None else "?"
        if isinstance(d, int):
            if want != "?" and want != d:
                raise ModelFileError(
                    f"{path}: input {name} dim {axis} is {d} in the saved program, "
                    f"not {want}: re-export it with torch.export.Dim to make it dynamic")
            dims.append(d)
            continue
        sym = str(d)
        if isinstance(want, int):
            if fixed.setdefault(sym, want) != want:
                raise ModelFileError(f"{path}: input {name} dim {axis} is the dynamic dim "
                                     f"{names.get(sym, sym)}, given {fixed[sym]} elsewhere")
        elif want != "?" and names.setdefault(sym, want) != want:
            raise ModelFileError(f"{path}: input {name} dim {axis} is the dynamic dim named "
                                 f"{names[sym]} elsewhere (one dim in the saved program); "
                                 f"give it one name")
        names.setdefault(sym, f"{sanitize_name(name)}_dim{axis}")
        dims.append(fixed.get(sym, names[sym]))
    return tuple(dims)


def _reexport(torch, program, users, infos, fixed):
    """The saved program exported again with the dims given sizes fixed (a saved
    ``ExportedProgram`` keeps its graph; only a new export specialises it)."""
    shared: dict[str, object] = {}
    args, dynamic = [], []
    for (_, val), (_, (dims, _)) in zip(users, infos):
        axes, example = {}, []
        for axis, d in enumerate(dims):
            if isinstance(d, str):
                if d not in shared:
                    shared[d] = torch.export.Dim(d.replace(".", "_"))
                axes[axis] = shared[d]
                example.append(8)  # neither 0 nor 1, which export would specialise
            else:
                example.append(d)
        make = torch.randn if val.dtype.is_floating_point else torch.zeros
        args.append(make(example, dtype=val.dtype))
        dynamic.append(axes or None)
    spec = tuple(dynamic) if any(dynamic) else None
    return torch.export.export(program.module(), tuple(args), dynamic_shapes=spec)


def _load_relay(path: str, shapes: dict, dtype) -> tuple[IRModule, dict]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: cannot read it as text: {exc}") from None
    mod = parse(text, source_name=path)
    params = _relay_params(path)
    if "main" not in [gv.name_hint for gv in mod.functions]:
        raise ModelFileError(f"{path}: the module defines no @main")
    fn = mod["main"]
    names = [p.name_hint for p in fn.params if p.name_hint not in params]
    _check_names(path, shapes, names)
    if shapes or dtype:
        mod = _retype_main(mod, fn, shapes, dtype, params)
    return mod, params


def params_path(path: str | os.PathLike) -> Path:
    """Where the weights of a Relay text file live: ``<stem>.params.npz`` beside it."""
    p = Path(path)
    return p.with_name(p.stem + ".params.npz")


def _relay_params(path) -> dict[str, np.ndarray]:
    npz = params_path(path)
    if not npz.exists():
        return {}
    try:
        with np.load(npz, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{npz}: cannot read the params: {exc}") from None


def _retype_main(mod, fn, shapes, dtype, params) -> IRModule:
    """``@main`` with the given inputs' types replaced (its body re-checked by inference)."""
    mapping, new_params = {}, []
    for p in fn.params:
        ann = p.type_annotation
        dims = shapes.get(p.name_hint)
        dt = _dtype_of(dtype, p.name_hint) if p.name_hint not in params else None
        if dims is None and not dt:
            new_params.append(p)
            continue
        shape = tuple(_relay_dim(d) for d in dims) if dims is not None \
            else getattr(ann, "shape", None)
        if shape is None:
            raise ModelFileError(f"input {p.name_hint} has no declared shape; give its shape "
                                 f"as well as its dtype")
        v = Var(p.name_hint, TensorType(shape, dt or getattr(ann, "dtype", "float32")))
        mapping[p] = v
        new_params.append(v)
    new = mod.copy()
    new["main"] = Function(new_params, bind(fn.body, mapping), None, fn.type_params, fn.attrs)
    return new


READERS = {".onnx": _load_onnx, ".pt2": _load_pt2, ".relay": _load_relay, ".txt": _load_relay}


def is_model_file(path: str | os.PathLike) -> bool:
    """Whether ``load_model`` reads ``path`` (by its suffix)."""
    return Path(path).suffix.lower() in READERS


def load_model(path: str | os.PathLike, shape=None, dtype=None) -> tuple[IRModule, dict]:
    """Import the model in ``path`` (see the module docstring) as ``(mod, params)``."""
    path = os.fspath(path)
    suffix = Path(path).suffix.lower()
    if suffix not in READERS:
        raise ModelFileError(f"{path}: unknown model kind {suffix or '(no suffix)'!r}; "
                             f"relayir reads {', '.join(READERS)}")
    if not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else "not found"
        raise ModelFileError(f"{path}: {what}")
    return READERS[suffix](path, _normalise(shape), dtype)


__all__ = ["InputShapeError", "ModelFileError", "READERS", "is_model_file", "load_model",
           "params_path", "parse_input_shapes"]
