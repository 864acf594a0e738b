"""AOT codegen: the graph executor's schedule and memory plan as ONE C entry point.

``aot_sources(graph, params, library, mod_name)`` takes what ``build`` makes for the
graph executor — the graph JSON (kernel calls in execution order, the memory plan's
``storage_id`` / ``storage_offset``), its params and the C kernel library ``lower``
compiled from its primitive functions — and writes one C file:

1. the kernels' translation unit unchanged (``library.source``: the graph executor's
   kernels), after ``#define``\\ s that give each kernel symbol the model's prefix; with
   ``-Bsymbolic`` at link time (``LINK_FLAGS``), two models link into one program;
2. the weights: every param at a 64-byte aligned offset of ``weights.bin``, linked in
   as read-only data with the assembler's ``.incbin``. No size goes to a side file: the
   blob costs the compiler nothing (the assembler copies bytes, where a C initialiser of
   ResNet-18's 11.7 M floats takes minutes), the library stays one self-contained file,
   and the OS maps its pages on first touch and shares them between processes — what a
   side file mapped at load would give, without an init call or a second file to ship;
3. the schedule: one ``CALL`` per kernel in the graph's order, on ``INPUT(i)`` /
   ``OUTPUT(j)`` (the caller's buffers), ``WEIGHT(offset)`` and ``ARENA(offset)`` (the
   plan's offsets in the workspace); an output that is an input, a weight or another
   output is copied at the end;
4. the C interface that ``model.h`` declares: ``<prefix>run``, the input and output
   tables, ``<prefix>last_error`` (``SOURCE_TEMPLATE`` and ``HEADER_TEMPLATE`` below).

Threads: ``<prefix>run`` runs in a workspace of the calling thread (allocated on its
first call, kept until ``<prefix>release_workspace``), so concurrent calls never share
intermediates; ``<prefix>run_with_workspace`` takes the caller's. Error messages are per
thread too; there is no other mutable global state.

CPU: kernels are compiled with the target's ``-march`` (``native`` unless the target
names a CPU: ``"cpu -mcpu=haswell"``). The interface functions are compiled
for baseline x86-64 and check, before any kernel runs, that this CPU has every
instruction set the compiler was allowed to use, so a C program on an older CPU gets an
error, not SIGILL; the fingerprint in the ``relayir_aot`` section lets Python refuse the
library before loading it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

import numpy as np

from ..codegen.c_printer import HEADER
from ..codegen.cache import cache_dir, host_fingerprint
from ..codegen.compiler import compile_source, default_flags
from ..ir.expr import Call, Function, Op
from ..ir.functor import post_order
from ..ir.types import TensorType
from ..runtime.c_kernels import CKernelLibrary
from ..runtime.executor import AotSources, TensorInfo
from ..runtime.executor.aot_library import FORMAT, FORMAT_VERSION
from ..runtime.kernels import flatten_type
from ..runtime.memory_plan import ALIGNMENT, ARENA, MemoryPlan, entry_nbytes, storage_offsets
from ..runtime.numpy_kernels import NumpyKernel
from ..tir.machine import X86_FEATURES
from ..version import __version__
from .lowering import uses_reference_only
from .target import BuildError, Target

_VM_HINT = ("compile it with the VM instead (relayir.vm.compile or "
            "relayir.create_executor(\"vm\", ...)), which runs dynamic shapes and control flow")


# -Bsymbolic: calls inside the library bind to its own definitions, so the helpers the
# kernels share (routines, micro-kernels: global symbols without the model's prefix) of
# one model never stand in for another's when two libraries are linked into one program.
LINK_FLAGS = ("-shared", "-Wl,-Bsymbolic")


class AotBuildError(BuildError):
    """``build(..., executor="aot")`` cannot compile this module into one C entry point."""


# ---------------------------------------------------------------- checks


def aot_prefix(mod_name: str) -> str:
    """The C symbol prefix: ``relayir_`` for the default name, else ``relayir_<name>_``."""
    if mod_name == "default":
        return "relayir_"
    if not re.fullmatch(r"[A-Za-z0-9_]+", mod_name):
        raise AotBuildError(f"mod_name {mod_name!r} names the C functions (relayir_<name>_run); "
                            f"expected letters, digits and '_'")
    return f"relayir_{mod_name}_"


def check_aot_target(target: Target) -> None:
    if target.kind != "cpu":
        raise AotBuildError(f"executor=\"aot\" compiles the model to C: it needs target \"cpu\" "
                            f"(or \"llvm\", \"c\"), found {str(target)!r}")


def check_static_signature(main: Function) -> None:
    """A clear error for a dynamic input or result, before any work."""
    where = [(f"input %{p.name_hint}", p.checked_type) for p in main.params]
    where.append(("the result of @main", main.checked_type.ret_type))
    for what, ty in where:
        tensors = flatten_type(ty) if not isinstance(ty, TensorType) else [ty]
        for t in tensors:
            for i, d in enumerate(t.shape):
                if not isinstance(d, (int, np.integer)):
                    raise AotBuildError(
                        f"executor=\"aot\" compiles static shapes only, but {what} has type {t} "
                        f"whose dimension {i} is {d!r} (dynamic); give it a static shape or "
                        f"{_VM_HINT}")


def check_c_only(functions, library=None) -> None:
    """Every kernel must be C: name those that would run a numpy reference."""
    host = {name for name, fn in functions if uses_reference_only(fn)}
    if library is not None:
        host |= {n for n, k in library.kernels.items() if isinstance(k, NumpyKernel)}
    if not host:
        return
    fns = dict(functions)
    listed = "; ".join(f"{n} (ops: {', '.join(_op_names(fns[n]))})" for n in sorted(host))
    raise AotBuildError(
        f"executor=\"aot\" compiles every kernel to C, but {len(host)} kernel(s) can only run "
        f"their numpy reference: {listed}. Build with executor=\"graph\" or the VM, which run "
        f"such kernels from Python")


def _op_names(fn: Function) -> list[str]:
    names = [n.op.name for n in post_order(fn.body) if type(n) is Call and type(n.op) is Op]
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------- the schedule


@dataclass
class Schedule:
    """The entry point's content: its tensors, weights, workspace and C statements."""

    inputs: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)
    weights: bytearray = field(default_factory=bytearray)
    workspace_bytes: int = 0
    statements: list[str] = field(default_factory=list)
    num_calls: int = 0


def schedule(graph: dict, params: dict[str, np.ndarray]) -> Schedule:
    """Where every tensor of ``graph`` lives, and the kernel calls in graph order."""
    nodes, row_ptr, attrs = graph["nodes"], graph["node_row_ptr"], graph["attrs"]
    shapes = [tuple(s) for s in attrs["shape"][1]]
    dtypes = list(attrs["dltype"][1])
    sids, offsets = attrs["storage_id"][1], storage_offsets(graph)
    heads = [row_ptr[nid] + i for nid, i, _ in graph["heads"]]
    home: dict[int, int] = {}  # entry -> the output its kernel writes
    for j, eid in enumerate(heads):
        home.setdefault(eid, j)
    s = Schedule(workspace_bytes=_padded(MemoryPlan.from_graph(graph).planned_bytes))
    where = [""] * len(shapes)
    for nid, node in enumerate(nodes):
        first, end = row_ptr[nid], row_ptr[nid + 1]
        if node["op"] == "null":
            if node["name"] in params:
                s.weights.extend(bytes(-len(s.weights) % ALIGNMENT))
                where[first] = f"WEIGHT({len(s.weights)})"
                s.weights.extend(np.ascontiguousarray(params[node["name"]]).tobytes())
            else:
                where[first] = f"INPUT({len(s.inputs)})"
                s.inputs.append(TensorInfo(node["name"], shapes[first], dtypes[first]))
            continue
        for eid in range(first, end):
            if eid in home:
                where[eid] = f"OUTPUT({home[eid]})"
            elif sids[eid] == ARENA:
                where[eid] = f"ARENA({offsets[eid]})"
            else:
                raise AotBuildError(f"graph node {nid}: entry {eid} is neither an output nor in "
                                    f"the memory plan's arena (storage {sids[eid]})")
        args = [where[row_ptr[src] + i] for src, i, _ in node["inputs"]] + where[first:end]
        result = ", ".join(f"{_shape_text(shapes[e])} {dtypes[e]}" for e in range(first, end))
        s.statements.append(f"CALL({s.num_calls}, {node['attrs']['func_name']}, "
                            f"{', '.join(args)});  /* -> {result} */")
        s.num_calls += 1
    for j, eid in enumerate(heads):
        s.outputs.append(TensorInfo(f"output{j}", shapes[eid], dtypes[eid]))
        if where[eid] != f"OUTPUT({j})":  # an input, a weight or a repeated output
            s.statements.append(f"memcpy(OUTPUT({j}), {where[eid]}, "
                                f"{entry_nbytes(shapes[eid], dtypes[eid])});")
    return s


def _padded(nbytes: int) -> int:
    return max(-(-int(nbytes) // ALIGNMENT) * ALIGNMENT, ALIGNMENT)


def _shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


# ---------------------------------------------------------------- rendering


def aot_sources(graph: dict, params: dict[str, np.ndarray], library: CKernelLibrary,
                mod_name: str = "default", target: str = "cpu", cflags=None) -> AotSources:
    """The C file, header and weights of the AOT entry point (module docstring)."""
    prefix = aot_prefix(mod_name)
    s = schedule(graph, params)
    digest = hashlib.sha256(s.weights).hexdigest()
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "prefix": prefix,
            "mod_name": mod_name, "target": target, "cpu": host_fingerprint(),
            "relayir_version": __version__, "weights_sha256": digest}
    flags = tuple(f for f in (default_flags() if cflags is None else cflags) if f != "-shared")
    march = next((f for f in reversed(flags) if f.startswith("-march=")), "the baseline CPU")
    fields = {
        "prefix": prefix, "mod_name": mod_name, "march": march,
        "meta": c_string(json.dumps(meta, sort_keys=True)),
        "weights": f"{prefix}weights", "weights_bytes": len(s.weights),
        "weights_sha256": digest, "workspace_bytes": s.workspace_bytes,
        "num_calls": s.num_calls, "schedule": "\n  ".join(s.statements) or "/* no kernels */",
        "num_inputs": len(s.inputs), "num_outputs": len(s.outputs), "isa_checks": ISA_CHECKS,
        **_tables("input", s.inputs), **_tables("output", s.outputs),
    }
    renames = "".join(f"#define {k} {prefix}{k}\n" for k in sorted(library.kernels))
    source = (f"/* The kernels of the relayir model \"{mod_name}\", compiled ahead of time: their "
              f"global symbols carry the prefix {prefix}. */\n{renames}"
              f"{library.source or HEADER}\n{SOURCE_TEMPLATE.substitute(fields)}")
    header = HEADER_TEMPLATE.substitute(
        fields, guard=f"{prefix.upper()}MODEL_H", version=__version__,
        PREFIX=prefix.upper(), tensors=_tensor_comment(s.inputs, s.outputs))
    return AotSources(prefix, source, header, bytes(s.weights), flags, LINK_FLAGS)


def _tables(kind: str, tensors: list[TensorInfo]) -> dict[str, str]:
    """The C initialisers of one side's tables (a placeholder entry when empty: C has
    no zero-length arrays)."""
    dims = [d for t in tensors for d in t.shape]
    starts = np.cumsum([0] + [len(t.shape) for t in tensors[:-1]]).tolist() if tensors else []

    def init(items) -> str:
        return "{" + (", ".join(map(str, items)) if items else "0") + "}"

    return {f"{kind}_names": init([c_string(t.name) for t in tensors]),
            f"{kind}_dtypes": init([c_string(t.dtype) for t in tensors]),
            f"{kind}_ndims": init([len(t.shape) for t in tensors]),
            f"{kind}_nbytes": init([entry_nbytes(t.shape, t.dtype) for t in tensors]),
            f"{kind}_dims": init(dims), f"{kind}_dim_starts": init(starts)}


def _tensor_comment(inputs: list[TensorInfo], outputs: list[TensorInfo]) -> str:
    lines = [f"   input  {i}: {t.name!r} {t.dtype} {_shape_text(t.shape)}"
             for i, t in enumerate(inputs)]
    lines += [f"   output {j}: {t.name!r} {t.dtype} {_shape_text(t.shape)}"
              for j, t in enumerate(outputs)]
    return "\n".join(lines).replace("*/", "* /")


def c_string(text: str) -> str:
    """``text`` as a C string literal (UTF-8; quotes, backslashes, non-printable bytes
    and ``?`` escaped, the last so that no trigraph can form)."""
    out = []
    for b in text.encode():
        c = chr(b)
        out.append("\\" + c if c in '"\\' else c if 32 <= b < 127 and c != "?" else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


# ---------------------------------------------------------------- compiling


def compile_aot(sources: AotSources, name: str = "aot") -> Path:
    """Compile the sources with the flags they carry (cached like every kernel library);
    the weights file is written content-addressed where ``.incbin`` finds it."""
    weights = _weights_file(sources.weights)
    if '"' in str(weights) or "\\" in str(weights):
        raise AotBuildError(f"the weights path {weights} holds a quote or a backslash, which "
                            f"the assembler's .incbin cannot take; set RELAYIR_CACHE_DIR")
    flags = [*sources.cflags, *sources.ldflags, f'-DRELAYIR_WEIGHTS_FILE="{weights}"']
    return compile_source(sources.source, flags=flags, name=f"aot_{name}")


def _weights_file(data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()[:32]
    # beside the compiled objects, so that clear_cache() removes it with them
    for folder in (cache_dir() / "lib", Path(tempfile.gettempdir()) / "relayir-weights"):
        path = folder / f"weights-{digest}.bin"
        try:
            if not path.exists():
                folder.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            return path
        except OSError:
            continue
    raise AotBuildError("cannot write the weights file for .incbin in the cache directory or "
                        "the temporary directory; set RELAYIR_CACHE_DIR to a writable folder")


# ---------------------------------------------------------------- the C templates

# The instruction sets a -march=... may let the compiler use, checked at run time: the
# compiler's predefined macro and the name __builtin_cpu_supports knows it by (the table
# is tir.machine.X86_FEATURES, which the build's own check reads too).
ISAS = tuple((macro, name) for macro, name, _ in X86_FEATURES)
ISA_CHECKS = "\n".join(f'#ifdef __{macro}__\n  RL_AOT_NEED("{name}");\n#endif'
                       for macro, name in ISAS)

SOURCE_TEMPLATE = Template(r"""
/* ==== relayir AOT entry point: model "$mod_name", C prefix $prefix ==== */
#include <stdarg.h>
#include <stdio.h>

/* What relayir.runtime.load_module checks before it loads this library. */
static const char rl_aot_meta[] __attribute__((section("relayir_aot"), used)) =
    $meta;

/* The weights: $weights_bytes bytes, each param 64-byte aligned, linked in as read-only
   data from RELAYIR_WEIGHTS_FILE (sha256 $weights_sha256). */
#ifndef RELAYIR_WEIGHTS_FILE
#define RELAYIR_WEIGHTS_FILE "weights.bin"
#endif
__asm__(".pushsection .rodata\n.balign 64\n"
        ".globl $weights\n.hidden $weights\n.type $weights, @object\n"
        "$weights:\n.incbin \"" RELAYIR_WEIGHTS_FILE "\"\n.size $weights, . - $weights\n"
        ".if . - $weights - $weights_bytes\n"
        ".error \"" RELAYIR_WEIGHTS_FILE " is not this model's $weights_bytes-byte weights\"\n"
        ".endif\n.popsection\n");
extern const unsigned char $weights[] __attribute__((visibility("hidden")));

#define RL_AOT_WORKSPACE_BYTES $workspace_bytes
#define RL_AOT_NUM_INPUTS $num_inputs
#define RL_AOT_NUM_OUTPUTS $num_outputs
#define INPUT(i) ((void*)inputs[i])
#define OUTPUT(j) (outputs[j])
#define WEIGHT(offset) ((void*)($weights + (offset)))
#define ARENA(offset) ((void*)(arena + (offset)))
/* One kernel call: its arguments are its inputs then its outputs (no symbolic dims). */
#define CALL(n, kernel, ...)                                          \
  do {                                                                \
    void* call_args[] = {__VA_ARGS__};                                \
    int32_t status = kernel(call_args, NULL);                         \
    if (status) return rl_aot_kernel_failed(n, #kernel, status);      \
  } while (0)

/* The interface is compiled for baseline x86-64: it checks the CPU before any kernel. */
#if defined(__x86_64__) && defined(__GNUC__)
#define RL_AOT_BASELINE __attribute__((target("arch=x86-64")))
#else
#define RL_AOT_BASELINE
#endif
#define RL_AOT_API __attribute__((visibility("default"))) RL_AOT_BASELINE

static _Thread_local char rl_aot_message[512]; /* ${prefix}last_error(), per thread */

static RL_AOT_BASELINE int32_t rl_aot_fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = snprintf(rl_aot_message, sizeof rl_aot_message, "${prefix}run: ");
  vsnprintf(rl_aot_message + n, sizeof rl_aot_message - n, format, args);
  va_end(args);
  return -1;
}

static RL_AOT_BASELINE int32_t rl_aot_kernel_failed(int call, const char* kernel, int32_t status) {
  return rl_aot_fail("kernel %s (call %d) failed with status %d", kernel, call, (int)status);
}

/* NULL, or an instruction set the compiler was allowed to use ($march) that
   this CPU lacks. */
static RL_AOT_BASELINE const char* rl_aot_missing_isa(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) /* gcc's feature names */
#define RL_AOT_NEED(isa) if (!__builtin_cpu_supports(isa)) return isa
  __builtin_cpu_init();
$isa_checks
#endif
  return NULL;
}

/* The schedule: $num_calls kernel calls; intermediates at the graph executor's memory
   plan offsets in a $workspace_bytes-byte workspace. */
static int32_t rl_aot_schedule(const void* const* inputs, void* const* outputs, char* arena) {
  (void)inputs; (void)outputs; (void)arena;
  $schedule
  return 0;
}

static const char* const rl_aot_input_names[] = $input_names;
static const char* const rl_aot_input_dtypes[] = $input_dtypes;
static const int32_t rl_aot_input_ndims[] = $input_ndims;
static const int64_t rl_aot_input_nbytes[] = $input_nbytes;
static const int64_t rl_aot_input_dims[] = $input_dims;
static const int32_t rl_aot_input_dim_starts[] = $input_dim_starts;
static const char* const rl_aot_output_names[] = $output_names;
static const char* const rl_aot_output_dtypes[] = $output_dtypes;
static const int32_t rl_aot_output_ndims[] = $output_ndims;
static const int64_t rl_aot_output_nbytes[] = $output_nbytes;
static const int64_t rl_aot_output_dims[] = $output_dims;
static const int32_t rl_aot_output_dim_starts[] = $output_dim_starts;

RL_AOT_API int32_t ${prefix}run_with_workspace(const void* const* inputs, void* const* outputs,
                                              void* workspace) {
  const char* missing = rl_aot_missing_isa();
  if (missing)
    return rl_aot_fail("this library was compiled ($march) for a CPU with %s, which "
                       "this CPU lacks; rebuild it on this machine", missing);
  if (RL_AOT_NUM_INPUTS > 0 && !inputs)
    return rl_aot_fail("inputs is NULL; expected %d input pointers", RL_AOT_NUM_INPUTS);
  for (int i = 0; i < RL_AOT_NUM_INPUTS; i++)
    if (!inputs[i]) return rl_aot_fail("input %d (\"%s\") is NULL", i, rl_aot_input_names[i]);
  if (RL_AOT_NUM_OUTPUTS > 0 && !outputs)
    return rl_aot_fail("outputs is NULL; expected %d output pointers", RL_AOT_NUM_OUTPUTS);
  for (int i = 0; i < RL_AOT_NUM_OUTPUTS; i++)
    if (!outputs[i]) return rl_aot_fail("output %d (\"%s\") is NULL", i, rl_aot_output_names[i]);
  if (!workspace || (uintptr_t)workspace % 64)
    return rl_aot_fail("the workspace (%p) must be %lld bytes at a 64-byte aligned address",
                       workspace, (long long)RL_AOT_WORKSPACE_BYTES);
  return rl_aot_schedule(inputs, outputs, (char*)workspace);
}

static _Thread_local char* rl_aot_block = NULL; /* this thread's workspace, as malloc gave it */

RL_AOT_API int32_t ${prefix}run(const void* const* inputs, void* const* outputs) {
  if (!rl_aot_block && !(rl_aot_block = (char*)malloc(RL_AOT_WORKSPACE_BYTES + 64)))
    return rl_aot_fail("cannot allocate the %lld-byte workspace",
                       (long long)RL_AOT_WORKSPACE_BYTES);
  return ${prefix}run_with_workspace(inputs, outputs,
                                    (void*)(((uintptr_t)rl_aot_block + 63) & ~(uintptr_t)63));
}

RL_AOT_API void ${prefix}release_workspace(void) { free(rl_aot_block); rl_aot_block = NULL; }
RL_AOT_API int64_t ${prefix}workspace_size(void) { return RL_AOT_WORKSPACE_BYTES; }
RL_AOT_API const char* ${prefix}last_error(void) { return rl_aot_message; }
RL_AOT_API int32_t ${prefix}num_inputs(void) { return RL_AOT_NUM_INPUTS; }
RL_AOT_API int32_t ${prefix}num_outputs(void) { return RL_AOT_NUM_OUTPUTS; }

#define RL_AOT_TABLE(type, function, count, value, none) \
  RL_AOT_API type function(int32_t i) { return i >= 0 && i < (count) ? (value) : (none); }
RL_AOT_TABLE(const char*, ${prefix}input_name, RL_AOT_NUM_INPUTS, rl_aot_input_names[i], NULL)
RL_AOT_TABLE(const char*, ${prefix}input_dtype, RL_AOT_NUM_INPUTS, rl_aot_input_dtypes[i], NULL)
RL_AOT_TABLE(int32_t, ${prefix}input_ndim, RL_AOT_NUM_INPUTS, rl_aot_input_ndims[i], -1)
RL_AOT_TABLE(int64_t, ${prefix}input_nbytes, RL_AOT_NUM_INPUTS, rl_aot_input_nbytes[i], -1)
RL_AOT_TABLE(const int64_t*, ${prefix}input_shape, RL_AOT_NUM_INPUTS,
             rl_aot_input_dims + rl_aot_input_dim_starts[i], NULL)
RL_AOT_TABLE(const char*, ${prefix}output_name, RL_AOT_NUM_OUTPUTS, rl_aot_output_names[i], NULL)
RL_AOT_TABLE(const char*, ${prefix}output_dtype, RL_AOT_NUM_OUTPUTS, rl_aot_output_dtypes[i], NULL)
RL_AOT_TABLE(int32_t, ${prefix}output_ndim, RL_AOT_NUM_OUTPUTS, rl_aot_output_ndims[i], -1)
RL_AOT_TABLE(int64_t, ${prefix}output_nbytes, RL_AOT_NUM_OUTPUTS, rl_aot_output_nbytes[i], -1)
RL_AOT_TABLE(const int64_t*, ${prefix}output_shape, RL_AOT_NUM_OUTPUTS,
             rl_aot_output_dims + rl_aot_output_dim_starts[i], NULL)
""")

HEADER_TEMPLATE = Template(r"""/* The C interface of the relayir model "$mod_name"
   (ahead-of-time compiled by relayir $version), for the shared library exported with it.

   Tensors:
$tensors

   Buffers: inputs and outputs are the caller's, contiguous and row-major, in the dtypes
   and shapes above (bool is one byte, 0 or 1; float16 is IEEE half). No alignment beyond
   the dtype's own is required. Outputs must not overlap inputs or each other, and every
   pointer must be non-NULL, even for an empty tensor.
   Threads: any number of threads may call ${prefix}run at once: each calling thread gets
   its own workspace of ${prefix}workspace_size() bytes, allocated on its first call and
   kept until it calls ${prefix}release_workspace(). ${prefix}run_with_workspace runs in
   the caller's workspace instead (64-byte aligned; one call at a time per workspace).
   Errors: the int32_t functions return 0 on success; on failure ${prefix}last_error()
   gives the calling thread's message (it names the input, the kernel or the CPU feature).
   Every symbol starts with ${prefix}, so models with different prefixes link together. */
#ifndef $guard
#define $guard

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ${PREFIX}NUM_INPUTS $num_inputs
#define ${PREFIX}NUM_OUTPUTS $num_outputs

int32_t ${prefix}run(const void* const* inputs, void* const* outputs);  /* 0 on success */
int32_t ${prefix}run_with_workspace(const void* const* inputs, void* const* outputs,
                                    void* workspace);
int64_t ${prefix}workspace_size(void);
void ${prefix}release_workspace(void);
const char* ${prefix}last_error(void);

int32_t ${prefix}num_inputs(void);
const char* ${prefix}input_name(int32_t i);      /* NULL when i is out of range */
const char* ${prefix}input_dtype(int32_t i);     /* "float32", "int64", "bool", ... */
int32_t ${prefix}input_ndim(int32_t i);          /* -1 when i is out of range */
const int64_t* ${prefix}input_shape(int32_t i);  /* ndim extents */
int64_t ${prefix}input_nbytes(int32_t i);

int32_t ${prefix}num_outputs(void);
const char* ${prefix}output_name(int32_t i);
const char* ${prefix}output_dtype(int32_t i);
int32_t ${prefix}output_ndim(int32_t i);
const int64_t* ${prefix}output_shape(int32_t i);
int64_t ${prefix}output_nbytes(int32_t i);

#ifdef __cplusplus
}
#endif

#endif /* $guard */
""")


__all__ = ["AotBuildError", "Schedule", "aot_prefix", "aot_sources", "c_string",
           "check_aot_target", "check_c_only", "check_static_signature", "compile_aot",
           "schedule"]
