"""The one lowering path: primitive functions → a kernel library, for every executor.

``lower(functions, target)`` is what ``build`` (graph executor), ``vm.compile`` and
every later executor call: it takes the ``(kernel name, primitive function)`` pairs of a
whole module at once, so the C back end compiles all kernels in ONE translation unit.
``LOWERINGS`` maps a target kind to its lowering:

- ``numpy``: one ``NumpyKernel`` per function (the ops' references);
- ``cpu``: each function → loop IR (``tir.lower_primitive``) → C (``codegen``) → one
  shared object loaded as ``CKernel``\\ s. A function C cannot express (an op with no
  compute, a low-precision dtype) runs as a numpy kernel inside the same library.

Executors differ only in what they allow: the VM passes ``dynamic=True`` (kernels with
symbolic dims; a dynamic function the C back end cannot lower runs its reference) and
names the data-dependent functions that must run their reference (``reference``); the
AOT build passes ``runs_here=False`` (its library may be meant for another CPU: its
entry point checks the instruction sets when it runs).

The target's CPU (``Target.machine()``, ``Target.cflags()``) is passed down explicitly:
every function is lowered for its ``Machine`` and the C is compiled with its ``-march``.

Tuned schedules: ``lower_cpu`` asks ``TunedSchedules.current()`` for each function's
schedule before lowering it (``None``: the default schedules). ``relayir.autotune`` fills
that interface (``apply_history_best``, the ``relay.autotune.records`` config); this
layer only asks, so every executor picks tuning records up through this one path.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Collection, Sequence
from typing import ClassVar

import numpy as np

from ..codegen import cache
from ..codegen.c_printer import render_module
from ..codegen.compiler import compile_source
from ..ir.expr import Call, Constant, Function, Op
from ..ir.functor import post_order
from ..ir.printer import astext
from ..ir.types import TensorType, is_low_precision
from ..runtime.c_kernels import CKernelLibrary, c_kernel_library
from ..runtime.kernels import KernelError, KernelLibrary, flatten_type
from ..runtime.numpy_kernels import NumpyKernel, NumpyKernelLibrary
from ..te.computes import REFERENCE_ONLY
from ..tir import LoweringError, Schedule, lower_primitive
from ..transform.pass_infra import PassContext
from .target import BuildError, Target

Functions = Sequence[tuple[str, Function]]


def lower(functions: Functions, target: str | Target, *, reference: Collection[str] = (),
          dynamic: bool = False, runs_here: bool = True) -> KernelLibrary:
    """Lower the primitive functions of one module for ``target``.

    ``reference``: names of functions that must run their numpy reference (the VM's
    data-dependent ones). ``dynamic``: kernels may have symbolic dims (the VM); without
    it, a symbolic dim is an error (the graph executor runs static shapes).
    ``runs_here``: the kernels will run in this process, so a target CPU whose
    instruction sets this host lacks is refused (``Target.check_runs_here``)."""
    tgt = Target.parse(target)
    if runs_here:
        tgt.check_runs_here()
    try:
        lowering = LOWERINGS[tgt.kind]
    except KeyError:
        raise BuildError(f"no lowering for target kind {tgt.kind!r}") from None
    return lowering(list(functions), tgt, frozenset(reference), dynamic)


def lower_numpy(functions: Functions, target: str | Target = "numpy",
                reference: Collection[str] = (), dynamic: bool = True) -> NumpyKernelLibrary:
    """The numpy target: every function runs its ops' references."""
    return NumpyKernelLibrary({name: NumpyKernel(name, fn) for name, fn in functions},
                              str(target))


def lower_cpu(functions: Functions, target: str | Target, reference: Collection[str] = (),
              dynamic: bool = False) -> CKernelLibrary:
    """The cpu target: generated C for every function it can express, compiled once
    (each under its tuned schedule where ``TunedSchedules.current()`` has one)."""
    tgt, tuned = Target.parse(target), TunedSchedules.current()
    machine, flags = tgt.machine(), tgt.cflags()
    key = _lowered_key(functions, tgt, tuned, reference, dynamic, flags)
    cached = _cached_library(key, functions, tgt, flags)
    if cached is not None:
        LoweringProgress.report("cached", len(functions), len(functions))
        return cached
    host, lowered = [], []  # host: (name, function, why it runs its reference)
    for done, (name, fn) in enumerate(functions):
        LoweringProgress.report("lower", done, len(functions))
        why = DATA_DEPENDENT if name in reference else reference_reason(fn)
        if why:
            host.append((name, fn, why))
            continue
        try:
            kernel = lower_primitive(fn, name, tuned.schedule_for(fn, tgt) if tuned else None,
                                     machine=machine)
        except LoweringError as exc:
            if not dynamic or is_static(fn):
                raise
            host.append((name, fn, f"{CANNOT_LOWER}: {exc}"))
            continue
        if kernel.dim_names and not dynamic:
            raise KernelError(
                f"kernel {kernel.name} has symbolic dimensions {list(kernel.dim_names)}; the "
                f"graph executor runs static shapes (use the VM for dynamic ones)")
        if not _dims_in_arguments(kernel):
            host.append((name, fn, "a loop bound is a dimension no argument holds"))
            continue
        lowered.append(kernel)
    LoweringProgress.report("compile", 0, len(lowered))
    lib = compile_c_library(lowered, tgt, flags)
    lib.kernels.update({name: NumpyKernel(name, fn, why) for name, fn, why in host})
    _remember(key, lowered, lib.source, {name: why for name, _, why in host})
    LoweringProgress.report("compile", len(lowered), len(lowered))
    return lib


class LoweringProgress:
    """``with LoweringProgress(fn):`` calls ``fn(stage, done, total)`` as ``lower_cpu``
    works: ``"lower"`` before each function goes to loop IR and C, ``"cached"`` when the
    module's C came from the lowered-C cache, ``"compile"`` before (done 0) and after the
    C compiler builds the library. Progress displays (the CLI) listen; nothing else does."""

    active: ClassVar[list[Callable[[str, int, int], None]]] = []

    def __init__(self, listener: Callable[[str, int, int], None]):
        self.listener = listener

    def __enter__(self) -> LoweringProgress:
        LoweringProgress.active.append(self.listener)
        return self

    def __exit__(self, *exc) -> None:
        LoweringProgress.active.remove(self.listener)

    @classmethod
    def report(cls, stage: str, done: int, total: int) -> None:
        for listener in cls.active:
            listener(stage, done, total)


# --------------------------------------------------------------- the lowered-C cache
# Lowering to loop IR and C is most of a cached build (the compiled object is already
# cached by its source). A static module's C and kernel table are kept under a key over
# every function's text and constants, its schedules, the target, the CPU and relayir's
# own code (cache.code_fingerprint), so a hit skips tir entirely.


def _lowered_key(functions: Functions, target: Target, tuned, reference, dynamic,
                 flags) -> str | None:
    if dynamic or not cache.cache_enabled():
        return None  # the VM's kernels may carry symbolic dims: not kept
    digest = hashlib.sha256()
    for name, fn in functions:
        schedule = tuned.schedule_for(fn, target) if tuned else None
        digest.update(f"{name}\n{name in reference}\n{schedule!r}\n".encode())
        digest.update(astext(fn, show_meta_data=False).encode())
        for node in post_order(fn.body):
            if type(node) is Constant:
                digest.update(node.data.dtype.str.encode() + repr(node.data.shape).encode())
                digest.update(np.ascontiguousarray(node.data).tobytes())
    return cache.cache_key(functions=digest.hexdigest(), target=str(target), flags=flags,
                           host=cache.host_fingerprint(), code=cache.code_fingerprint())


def _lowered_path(key: str):
    return cache.cache_dir() / "lowered" / f"{key}.json"


def _remember(key: str | None, lowered: Sequence, source: str, host: dict[str, str]) -> None:
    if key is None:
        return
    table = []
    for k in lowered:
        types = [*k.input_types, *k.output_types]
        if k.dim_names or not all(isinstance(d, (int, np.integer)) for t in types
                                  for d in t.shape):
            return
        table.append({"name": k.name,
                      "inputs": [[list(map(int, t.shape)), t.dtype] for t in k.input_types],
                      "outputs": [[list(map(int, t.shape)), t.dtype] for t in k.output_types]})
    cache.publish_json({"source": source, "kernels": table, "host": host}, _lowered_path(key))


def _cached_library(key: str | None, functions: Functions, target,
                    flags) -> CKernelLibrary | None:
    entry = None if key is None else cache.read_json(_lowered_path(key))
    if not isinstance(entry, dict):
        return None
    try:
        fns = dict(functions)
        types = [(k["name"], [TensorType(tuple(s), d) for s, d in k["inputs"]],
                  [TensorType(tuple(s), d) for s, d in k["outputs"]], ()) for k in entry["kernels"]]
        host = {name: NumpyKernel(name, fns[name], why) for name, why in entry["host"].items()}
        source = entry["source"]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # a damaged entry is a miss; the fresh lowering overwrites it
    lib = _c_library(source, types, target, flags)
    lib.kernels.update(host)
    return lib


LOWERINGS: dict[str, Callable[..., KernelLibrary]] = {"numpy": lower_numpy, "cpu": lower_cpu}

RECORDS_CONFIG = "relay.autotune.records"  # PassContext config: a tuning records file


class TunedSchedules:
    """Schedules found by tuning, looked up per primitive function: ``schedule_for``
    returns what ``tir.lower_primitive`` takes (a ``Schedule``, a dict from compute tag
    to ``Schedule``) or ``None`` for the defaults. ``relayir.autotune`` subclasses it
    (``apply_history_best``) and sets ``reader``; this layer never imports the tuner.

    In effect (``current()``): the innermost ``with`` one, else the records file named
    by ``PassContext(config={"relay.autotune.records": path})``, read by ``reader``."""

    active: ClassVar[list[TunedSchedules]] = []
    reader: ClassVar[Callable[[str], TunedSchedules] | None] = None

    def schedule_for(self, fn: Function, target: Target) -> Schedule | dict | None:
        return None

    def pass_config(self, target: Target) -> dict:
        """``PassContext`` config entries for graph-level choices (each convolution's
        algorithm: ``relay.AlterOpLayout.*`` dicts by workload key); none by default."""
        return {}

    def __enter__(self) -> TunedSchedules:
        TunedSchedules.active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        TunedSchedules.active.remove(self)

    @classmethod
    def current(cls) -> TunedSchedules | None:
        if cls.active:
            return cls.active[-1]
        records = PassContext.current().config.get(RECORDS_CONFIG)
        if records is None or isinstance(records, TunedSchedules):
            return records
        if cls.reader is None:
            raise BuildError(f"PassContext config {RECORDS_CONFIG!r} needs relayir.autotune "
                             f"to read {records!r}; import relayir.autotune first")
        return cls.reader(os.fspath(records))


def merged_config(config: dict, extra: dict) -> dict:
    """``config`` with the tuned entries ``extra``: a dict of the user's is merged with
    the tuned one (the user's entries win), any other value of the user's wins whole."""
    merged = dict(config)
    for key, value in extra.items():
        have = merged.get(key)
        if have is None:
            merged[key] = value
        elif isinstance(have, dict) and isinstance(value, dict):
            merged[key] = {**value, **have}
    return merged


@contextlib.contextmanager
def tuned_pass_config(target: Target):
    """The current ``PassContext`` with the tuned graph-level choices in effect
    (``TunedSchedules.pass_config``) merged into its config (``merged_config``), for the
    optimisation pipeline of ``build`` and ``vm.compile``."""
    tuned = TunedSchedules.current()
    extra = tuned.pass_config(target) if tuned is not None else {}
    if not extra:
        yield
        return
    ctx = PassContext.current()
    saved = ctx.config
    ctx.config = merged_config(saved, extra)
    try:
        yield
    finally:
        ctx.config = saved


def compile_c_library(lowered: Sequence, target: str | Target,
                      flags: Sequence[str] | None = None) -> CKernelLibrary:
    """Render lowered kernels (``tir`` kernels) into one C file, compile it (cached) with
    ``flags`` (default: the target's, ``Target.cflags()``) and load it. Kernels with
    symbolic dims take them in ``dims`` (``CKernel.dim_names``)."""
    types = [(k.name, k.input_types, k.output_types, k.dim_names) for k in lowered]
    return _c_library(render_module(lowered) if lowered else "", types, target, flags)


def _c_library(source: str, types: list, target, flags=None) -> CKernelLibrary:
    """``source`` compiled (cached) and loaded with one ``CKernel`` per entry of
    ``types``; an empty library when there are none."""
    if not types:
        return CKernelLibrary({}, str(target), None, b"", "")
    flags = Target.parse(target).cflags() if flags is None else flags
    return c_kernel_library(compile_source(source, flags=flags, name="model"), types,
                            str(target), source, flags)


# why the VM's data-dependent functions (output shape known only after the call) run
# their reference; a reason each kernel library reports (``KernelLibrary.references``)
DATA_DEPENDENT = "its output shape depends on its input values (the VM runs its reference)"
CANNOT_LOWER = "the C back end cannot lower it"  # with symbolic dims (the VM's dynamic ones)


def reference_reason(fn: Function) -> str:
    """Why the numpy reference must run ``fn`` ("" when C can): it calls an op without
    a compute, or touches a dtype C has no type for (bfloat16, float8, int4, ...:
    ``is_low_precision``)."""
    nodes = [*fn.params, *post_order(fn.body)]
    for n in nodes:
        if type(n) is Call and type(n.op) is Op and n.op.name in REFERENCE_ONLY:
            return f"{n.op.name} has no C compute ({REFERENCE_ONLY[n.op.name]})"
    for n in nodes:
        low = _low_precision(n)
        if low:
            return f"{low} has no C type"
    return ""


def uses_reference_only(fn: Function) -> bool:
    """Whether the numpy reference runs ``fn`` (``reference_reason`` says why)."""
    return bool(reference_reason(fn))


def is_static(fn: Function) -> bool:
    """Whether every parameter and result of ``fn`` has a static shape."""
    types = [t for p in fn.params for t in flatten_type(p.checked_type)]
    types += flatten_type(fn.checked_type.ret_type)
    return all(isinstance(d, (int, np.integer)) for t in types for d in t.shape)


def _low_precision(node) -> str:
    """The first low-precision dtype in ``node``'s type ("" when none)."""
    if not node.has_type:
        return ""
    stack = [node.checked_type]
    while stack:
        t = stack.pop()
        if isinstance(t, TensorType) and is_low_precision(t.dtype):
            return t.dtype
        stack.extend(getattr(t, "fields", ()))
    return ""


def _dims_in_arguments(kernel) -> bool:
    named = {d.name for t in (*kernel.input_types, *kernel.output_types) for d in t.shape
             if not isinstance(d, (int, np.integer))}
    return all(n in named for n in kernel.dim_names)


__all__ = ["CANNOT_LOWER", "DATA_DEPENDENT", "LOWERINGS", "RECORDS_CONFIG", "LoweringProgress",
           "TunedSchedules", "compile_c_library", "is_static", "lower", "lower_cpu", "lower_numpy",
           "reference_reason", "uses_reference_only"]
