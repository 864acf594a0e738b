"""Saving and loading a VM ``Executable`` as one file, without pickle.

``exe.save(path)`` writes a zip archive through the graph executor's archive helpers
(``runtime/module.py``: atomic write, kernel-library members):

- ``meta.json``: ``{"format": "relayir.vm_executable", "format_version": 2,
  "relayir_version", "target", "functions": [...], "kernel_names", "constructors",
  "messages", "num_constants", "library", "kernels", "shape_funcs"}``. A function is
  its name, parameter names and types (JSON: ``{"tensor": [dims], "dtype"}`` /
  ``{"tuple": [...]}`` / ``null``), register count, closure flag and instructions
  ``[opcode name, operands...]`` (lists for register tuples and shapes); constants are
  referred to by their index in the pool;
- ``constants.npz``: the constant pool (``c0``, ``c1``, ...), read with
  ``allow_pickle=False``;
- the kernel library's members: for the cpu target the shared object with the CPU
  fingerprint it was built for (a mismatch on load is an error, not a crash); for the
  numpy target each kernel's primitive function as Relay text in the kernel table,
  re-lowered on load. ``kernels`` says where each kernel index lives: ``{"library":
  name}``, ``{"numpy": Relay text}`` (a kernel the cpu target runs on the host) or
  ``null`` (a reshape, no kernel); ``shape_funcs`` holds each dynamic kernel's primitive
  function as Relay text, rebuilt into a ``ShapeFunction`` on load.

``Executable.load(path)`` checks the format and its version (another one is a clear
``ModuleFormatError``) and validates every instruction against the opcode table
(``opcodes.py``): its operand count, and each operand by its role (registers, indices
into their tables, jumps, shapes, dtypes), so a corrupt file fails at load, not inside
a kernel (planned storage is checked too: each view must lie inside its
``AllocStorage`` buffer). Control flow is checked too, so a corrupt file cannot hang
or run off its code: a function has instructions, every jump goes forward (the
compiler emits only forward ``If``/``Goto`` jumps; loops are recursive calls), and the
last instruction does not fall through, so every path ends in ``Ret`` or ``Fatal``.
"""

from __future__ import annotations

import io
import os

import numpy as np

from ..ir.parser import parse_dim
from ..ir.types import GlobalTypeVar, TensorType, TupleType
from ..runtime.module import (
    ModuleFormatError,
    library_entry,
    load_library_entry,
    load_params,
    read_archive,
    write_archive,
)
from ..runtime.numpy_kernels import NumpyKernel
from .bytecode import Instruction, Opcode, VMFunction
from .decode import VMError, planned_storage
from .opcodes import DTYPE, IMM, JUMP, SHAPE

FORMAT = "relayir.vm_executable"
FORMAT_VERSION = 2  # 2: planned storage (AllocStorage; AllocTensor on storage + offset)


# ---------------------------------------------------------------- JSON pieces


def _type_json(ty):
    if isinstance(ty, TensorType):
        return {"tensor": [d if isinstance(d, int) else repr(d) for d in ty.shape],
                "dtype": ty.dtype}
    if isinstance(ty, TupleType):
        return {"tuple": [_type_json(f) for f in ty.fields]}
    return None  # ADTs, closures: not checked on entry


def _json_type(obj):
    if obj is None:
        return None
    if "tensor" in obj:
        return TensorType(tuple(d if isinstance(d, int) else parse_dim(d) for d in obj["tensor"]),
                          obj["dtype"])
    return TupleType(tuple(_json_type(f) for f in obj["tuple"]))


def _operand_json(x):
    if isinstance(x, (tuple, list)):
        return [_operand_json(v) for v in x]
    if isinstance(x, (int, np.integer)):
        return int(x)
    return str(x)  # dtypes


def _json_operand(x):
    return tuple(_json_operand(v) for v in x) if isinstance(x, list) else x


def _function_json(fn: VMFunction) -> dict:
    return {"name": fn.name, "param_names": list(fn.param_names),
            "param_types": [_type_json(t) for t in fn.param_types],
            "num_regs": fn.num_regs, "closure": fn.closure,
            "dim_ranges": {k: list(v) for k, v in fn.dim_ranges.items()},
            "instructions": [[ins.op.name] + [_operand_json(a) for a in ins.args]
                             for ins in fn.instructions]}


class _LoadedConstructor:
    """What the VM needs of a constructor (its tag and names) after a load; the ADT's
    definition is not saved."""

    __slots__ = ("name_hint", "tag", "belong_to")

    def __init__(self, type_name: str, name: str, tag: int):
        self.name_hint = name
        self.tag = tag
        self.belong_to = GlobalTypeVar(type_name)

    def __repr__(self) -> str:
        return self.name_hint


# ---------------------------------------------------------------- save / load


def save(exe, path: str | os.PathLike) -> None:
    from ..version import __version__

    for i, c in enumerate(exe.constants):
        if not isinstance(c, np.ndarray) or c.dtype.hasobject:
            raise ModuleFormatError(f"constant {i} is not a numeric array; it cannot be saved")
    buf = io.BytesIO()
    np.savez(buf, **{f"c{i}": c for i, c in enumerate(exe.constants)})
    members = {"constants.npz": buf.getvalue()}
    library = None
    lib = exe.kernel_library
    if lib is not None:
        library, files = library_entry(lib)
        members.update(files)
    kernels = []
    for k in exe.kernels:
        if k is None:
            kernels.append(None)
        elif lib is not None and k.name in lib and lib[k.name] is k:
            kernels.append({"library": k.name})
        elif hasattr(k, "source") and callable(k.source):
            kernels.append({"numpy": k.source(), "reason": getattr(k, "reason", "")})
        else:
            raise ModuleFormatError(f"kernel {k.name} ({type(k).__name__}) cannot be saved")
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "relayir_version": __version__,
        "target": exe.target,
        "functions": [_function_json(f) for f in exe.functions],
        "kernel_names": list(exe.kernel_names),
        "constructors": [[c.belong_to.name_hint, c.name_hint, int(c.tag)]
                         for c in exe.constructors],
        "messages": list(exe.messages),
        "num_constants": len(exe.constants),
        "library": library,
        "kernels": kernels,
        "shape_funcs": [{"name": sf.name, "source": _relay_text(sf.func), "native": sf.native}
                        for sf in exe.shape_funcs],
    }
    # weights and machine code barely compress: stored as is, a load is a copy (ms)
    write_archive(path, meta, members, stored=("constants.npz", "lib.so"))


def load(path: str | os.PathLike):
    from .executable import Executable

    meta, members = read_archive(path, FORMAT, FORMAT_VERSION, ("constants.npz",),
                                 what="VM executable")
    try:
        functions = [_json_function(f) for f in meta["functions"]]
        consts = load_params(members["constants.npz"])
        constants = [consts[f"c{i}"] for i in range(meta["num_constants"])]
        constructors = [_LoadedConstructor(t, n, tag) for t, n, tag in meta["constructors"]]
        names = list(meta["kernel_names"])
        messages = list(meta["messages"])
        target = meta["target"]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ModuleFormatError(f"{path}: a malformed VM executable ({type(exc).__name__}: "
                                f"{exc})") from None
    lib = None
    if meta.get("library") is not None:
        lib = load_library_entry(path, meta["library"], members, target)
    try:
        kernels = [_kernel(lib, name, entry) for name, entry in zip(names, meta["kernels"])]
        shape_funcs = [_shape_func(sf) for sf in meta.get("shape_funcs", [])]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ModuleFormatError(f"{path}: a malformed kernel table ({type(exc).__name__}: "
                                f"{exc})") from None
    exe = Executable(functions, constants, kernels, names, constructors, messages, lib, target,
                     shape_funcs)
    _validate(path, exe)
    return exe


def _relay_text(func) -> str:
    from ..ir.printer import astext

    return astext(func, show_types=False)


def _function_of(name: str, text: str):
    from ..errors import Error
    from ..ir.expr import Function
    from ..ir.parser import parse_expr
    from ..typing.infer import infer_expr

    try:
        fn = parse_expr(text, source_name=f"kernel {name}")
    except Error as exc:
        raise ModuleFormatError(f"kernel {name}: its saved Relay text does not parse: "
                                f"{exc}") from None
    if not isinstance(fn, Function):
        raise ModuleFormatError(f"kernel {name}: the saved text is not a function")
    infer_expr(fn)
    return fn


def _kernel(lib, name: str, entry):
    if entry is None:
        return None
    if "library" in entry:
        if lib is None:
            raise ModuleFormatError(f"kernel {name} refers to a missing kernel library")
        return lib[entry["library"]]
    return NumpyKernel(name, _function_of(name, entry["numpy"]), entry.get("reason", ""))


def _shape_func(entry: dict):
    from .shape_func import ShapeFunction

    return ShapeFunction(entry["name"], _function_of(entry["name"], entry["source"]),
                         bool(entry["native"]))


def _json_function(obj: dict) -> VMFunction:
    code = []
    for row in obj["instructions"]:
        if row[0] not in Opcode.__members__:
            raise ModuleFormatError(f"unknown opcode {row[0]!r} in @{obj['name']}")
        code.append(Instruction(Opcode[row[0]], tuple(_json_operand(a) for a in row[1:])))
    ranges = {str(k): (int(lo), None if hi is None else int(hi))
              for k, (lo, hi) in obj.get("dim_ranges", {}).items()}
    return VMFunction(obj["name"], tuple(obj["param_names"]),
                      tuple(_json_type(t) for t in obj["param_types"]), code,
                      int(obj["num_regs"]), bool(obj["closure"]), ranges)


def _validate(path, exe) -> None:
    try:
        _check_operands(path, exe)
    except (TypeError, ValueError, IndexError) as exc:
        raise ModuleFormatError(f"{path}: malformed instruction operands: {exc}") from None


def _check_operands(path, exe) -> None:
    """Every instruction's operands against the opcode table: their count, and each by
    its role (registers in the function's range, indices in their table's, jumps inside
    the function); then the planned storage (bound once, every view inside its
    buffer), so a corrupt file fails here, not inside a kernel."""
    for fn in exe.functions:
        for pc, ins in enumerate(fn.instructions):
            spec, args = ins.op.spec, ins.args
            where = f"{path}: @{fn.name} instruction {pc} ({ins.op.name})"
            if len(args) not in spec.arities:
                raise ModuleFormatError(f"{where}: {len(args)} operands, expected "
                                        f"{' or '.join(map(str, spec.arities))}")
            for operand, value in zip(spec.operands, args):
                problem = _operand_problem(operand.role, value, pc, fn, exe)
                if problem:
                    raise ModuleFormatError(f"{where}: operand {operand.name}: {problem}")
        _check_control_flow(f"{path}: @{fn.name}", fn)
        try:
            planned_storage(fn)
        except VMError as exc:
            raise ModuleFormatError(f"{path}: {exc}") from None


def _check_control_flow(where: str, fn: VMFunction) -> None:
    """Every path of ``fn`` ends in ``Ret`` or ``Fatal``: with forward jumps only, the
    program counter grows until an instruction that neither falls through nor jumps,
    provided the last instruction does not fall through (targets are in range)."""
    code = fn.instructions
    if not code:
        raise ModuleFormatError(f"{where} has no instructions: it can never return")
    for pc, ins in enumerate(code):
        for i in ins.op.spec.jumps:
            if ins.args[i] <= 0:
                raise ModuleFormatError(
                    f"{where} instruction {pc} ({ins.op.name}): jump offset {ins.args[i]} "
                    f"goes {'to itself' if ins.args[i] == 0 else 'backwards'}; the compiler "
                    "emits forward jumps only, so this file is corrupt (it would loop)")
    last = code[-1]
    if last.op.spec.falls_through:
        raise ModuleFormatError(
            f"{where} instruction {len(code) - 1} ({last.op.name}) falls through past the "
            "end of the function; every path must end in Ret or Fatal")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _operand_problem(role, value, pc: int, fn: VMFunction, exe) -> str | None:
    """What is wrong with ``value`` as an operand of ``role`` at ``pc``, or ``None``."""
    if role.register is not None:
        if role.many and not isinstance(value, tuple):
            return f"expected a tuple of registers, found {value!r}"
        bad = [r for r in (value if role.many else (value,))
               if not _is_int(r) or not 0 <= r < fn.num_regs]
        return f"registers {bad} out of range" if bad else None
    if role.table is not None:
        n = len(getattr(exe, role.table))
        ok = _is_int(value) and role.first <= value < n
        return None if ok else f"{role.table} index {value!r} out of range"
    if role is JUMP:
        ok = _is_int(value) and 0 <= pc + value < len(fn.instructions)
        return None if ok else f"jump offset {value!r} leaves the function"
    if role is SHAPE:
        ok = isinstance(value, tuple) and all(_is_int(d) and d >= 0 for d in value)
        return None if ok else f"expected a shape (non-negative ints), found {value!r}"
    if role is DTYPE:
        return None if isinstance(value, str) and _is_dtype(value) else \
            f"expected a dtype name, found {value!r}"
    if role is IMM:
        return None if _is_int(value) else f"expected an int, found {value!r}"
    raise ModuleFormatError(f"no load-time check for operands of role {role.name}")


def _is_dtype(name: str) -> bool:
    try:
        np.dtype(name)
    except TypeError:
        return False
    return True


__all__ = ["FORMAT", "FORMAT_VERSION", "load", "save"]
