"""The CPU a kernel is generated for: one table of per-ISA choices, and this host's CPU.

``MACHINES`` is the ONE table of what depends on the vector instruction set: float32
lanes per vector register, architectural vector registers, the ``NCHW[x]c`` block width
``AlterOpLayout`` gives convolutions, typical cache sizes, and the int8 product path.
Register tiles of matmul-like stages (``tir/matmul.py``) are sized from ``lanes`` and
``vector_registers``; the cache-blocking knobs ``kc``, ``mc``, ``nc`` of ``Schedule``
default from the cache sizes. Code that differs by ISA reads a ``Machine``, never a CPU
flag of its own.

Which ``Machine``: the target's (``backend.target.Target.machine()``: ``-mcpu=haswell``
gives ``MACHINES["avx2"]`` whatever this host is, with this host's cache sizes), passed
to lowering (``lower_primitive(..., machine=)``), the layout pass and the tuner's search
space. ``host_machine()`` is this CPU, read once per process from its feature flags
(CPUID as Linux reports it in ``/proc/cpuinfo``) and the cache sizes in
``/sys/devices/system/cpu``; where those are missing it falls back on what the
architecture guarantees (``PORTABLE``: 128-bit vectors, 16 registers). It is what
``-mcpu=native`` (the default) means. The micro-kernels are written with GCC vector
extensions and the C routines choose their instructions by the compiler's macros for the
same ``-march``, so a wrong guess costs speed, never correctness.

``X86_FEATURES`` names the x86 instruction sets a ``-march`` may let the compiler use,
three ways: the compiler's predefined macro, ``__builtin_cpu_supports``' name, and
``/proc/cpuinfo``'s: the AOT entry point checks them at run time, and a build refuses a
target CPU whose instruction sets this host lacks (``missing_features``).
"""

from __future__ import annotations

import dataclasses
import functools
import platform
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Machine:
    """``isa``: ``avx512``, ``avx2``, ``neon``... or ``portable``; ``lanes``: float32
    values per vector register; ``vector_registers``: architectural vector registers;
    ``nchwc_block``: the channel block of ``NCHW[x]c`` convolutions (``AlterOpLayout``);
    ``int8``: the path of the 8-bit products (``codegen/routines_int8.py``:
    ``avx512vnni``, ``avxvnni``, ``avx2`` or ``scalar``, what the C routines' macros pick
    for the same CPU); ``l1d_bytes`` / ``l2_bytes`` / ``l3_bytes``: data cache sizes seen
    by one core (the L3 is shared)."""

    isa: str = "portable"
    lanes: int = 4
    vector_registers: int = 16
    l1d_bytes: int = 32 * 1024
    l2_bytes: int = 512 * 1024
    l3_bytes: int = 8 * 1024 * 1024
    nchwc_block: int = 4
    int8: str = "scalar"

    @property
    def vector_bytes(self) -> int:
        return 4 * self.lanes


_K, _M = 1024, 1024 * 1024

# The per-ISA table. AVX2's entries are AVX-512's rules applied to 16 ymm registers of 8
# floats (not re-measured on an AVX2 CPU yet: benchmarks/RESULTS.md says where they were).
MACHINES: dict[str, Machine] = {
    "avx512": Machine("avx512", lanes=16, vector_registers=32, l1d_bytes=48 * _K,
                      l2_bytes=1 * _M, l3_bytes=32 * _M, nchwc_block=16, int8="avx512vnni"),
    "avx2": Machine("avx2", lanes=8, vector_registers=16, l1d_bytes=32 * _K,
                    l2_bytes=512 * _K, l3_bytes=16 * _M, nchwc_block=8, int8="avx2"),
    "neon": Machine("neon", lanes=4, vector_registers=32, l1d_bytes=64 * _K, l2_bytes=1 * _M,
                    l3_bytes=8 * _M, nchwc_block=4, int8="scalar"),
    "portable": Machine(),
}
PORTABLE = MACHINES["portable"]
AVX512 = MACHINES["avx512"]
AVX2 = MACHINES["avx2"]
NEON = MACHINES["neon"]

# (compiler macro without its underscores, __builtin_cpu_supports name, /proc/cpuinfo name)
X86_FEATURES = (
    ("SSE3", "sse3", "pni"), ("SSSE3", "ssse3", "ssse3"), ("SSE4_1", "sse4.1", "sse4_1"),
    ("SSE4_2", "sse4.2", "sse4_2"), ("POPCNT", "popcnt", "popcnt"), ("AVX", "avx", "avx"),
    ("AVX2", "avx2", "avx2"), ("FMA", "fma", "fma"), ("F16C", "f16c", "f16c"),
    ("BMI", "bmi", "bmi1"), ("BMI2", "bmi2", "bmi2"), ("AVX512F", "avx512f", "avx512f"),
    ("AVX512VL", "avx512vl", "avx512vl"), ("AVX512BW", "avx512bw", "avx512bw"),
    ("AVX512DQ", "avx512dq", "avx512dq"), ("AVX512CD", "avx512cd", "avx512cd"),
    ("AVX512VNNI", "avx512vnni", "avx512_vnni"), ("AVX512BF16", "avx512bf16", "avx512_bf16"),
    ("AVX512FP16", "avx512fp16", "avx512_fp16"), ("AVX512VBMI", "avx512vbmi", "avx512vbmi"),
    ("AVX512VBMI2", "avx512vbmi2", "avx512_vbmi2"), ("AVX512IFMA", "avx512ifma", "avx512ifma"),
    ("AVX512BITALG", "avx512bitalg", "avx512_bitalg"),
    ("AVX512VPOPCNTDQ", "avx512vpopcntdq", "avx512_vpopcntdq"),
    ("AVXVNNI", "avxvnni", "avx_vnni"),
)


def _normalised(flags) -> set:
    return {f.strip("_").lower().replace("_", "") for f in flags}


def _int8_path(norm: set) -> str:
    """The 8-bit product path ``routines_int8.py``'s macros choose for these features."""
    if {"avx512vnni", "avx512bw"} <= norm:
        return "avx512vnni"
    if "avxvnni" in norm:
        return "avxvnni"
    return "avx2" if "avx2" in norm else "scalar"


def machine_from_flags(flags: set, arch: str) -> Machine:
    """The ``MACHINES`` entry named by CPU feature ``flags`` (``/proc/cpuinfo`` spelling,
    or the compiler's ``__AVX512F__`` / ``__AVX2__`` / ``__ARM_NEON`` macros) on
    architecture ``arch`` (``platform.machine()``), with its int8 path."""
    norm = _normalised(flags)
    if "avx512f" in norm:
        isa = "avx512"
    elif "avx2" in norm or ("avx" in norm and "fma" in norm):
        isa = "avx2"
    elif arch.lower() in ("arm64", "aarch64") or "asimd" in norm or "armneon" in norm:
        isa = "neon"
    else:
        isa = "portable"
    return dataclasses.replace(MACHINES[isa], int8=_int8_path(norm) if isa != "neon" else
                               "scalar")


def missing_features(macros) -> list[str]:
    """The x86 instruction sets the compiler ``macros`` of a ``-march`` enable that this
    CPU lacks (``__builtin_cpu_supports`` names, in ``X86_FEATURES`` order); empty off
    x86 or where ``/proc/cpuinfo`` says nothing."""
    have = _cpu_flags()
    if not have or platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    norm = _normalised(macros)
    return [name for macro, name, cpuinfo in X86_FEATURES
            if macro.lower().replace("_", "") in norm and cpuinfo not in have]


@functools.lru_cache(maxsize=1)
def _cpu_flags() -> frozenset:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def _size(text: str) -> int | None:
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}.get(text[-1:], 1)
    digits = text.rstrip("KMG")
    return int(digits) * scale if digits.isdigit() else None


def _cache_sizes() -> dict:
    """``{(level, type): bytes}`` of cpu0's caches, from sysfs (empty elsewhere)."""
    out = {}
    for d in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = int((d / "level").read_text())
            kind = (d / "type").read_text().strip()
            size = _size((d / "size").read_text())
        except (OSError, ValueError):
            continue
        if size:
            out[(level, kind)] = size
    return out


def with_host_caches(m: Machine) -> Machine:
    """``m`` with this host's cache sizes where sysfs has them (a library built for
    another ``-mcpu`` still runs on this host's caches)."""
    caches = _cache_sizes()
    return dataclasses.replace(
        m,
        l1d_bytes=caches.get((1, "Data"), m.l1d_bytes),
        l2_bytes=caches.get((2, "Unified"), m.l2_bytes),
        l3_bytes=caches.get((3, "Unified"), m.l3_bytes),
    )


@functools.lru_cache(maxsize=1)
def host_machine() -> Machine:
    """This CPU, read once per process."""
    return with_host_caches(machine_from_flags(_cpu_flags(), platform.machine()))


__all__ = ["AVX2", "AVX512", "MACHINES", "NEON", "PORTABLE", "X86_FEATURES", "Machine",
           "host_machine", "machine_from_flags", "missing_features", "with_host_caches"]
