"""The CPU a kernel is generated for: vector width, vector registers, cache sizes.

Register tiles of matmul-like stages (``tir/matmul.py``) are sized from ``lanes`` (float32
values per vector register) and ``vector_registers``; the cache-blocking knobs ``kc``,
``mc``, ``nc`` of ``Schedule`` default from the cache sizes. ``host_machine()`` reads
them once per process from the CPU's feature flags (CPUID as Linux reports it in
``/proc/cpuinfo``) and the cache sizes in ``/sys/devices/system/cpu``; where those are
missing it falls back on what the architecture guarantees (``PORTABLE``: 128-bit vectors,
16 registers). Generated C is compiled with ``-march=native`` for the same CPU, and the
micro-kernels are written with GCC vector extensions, so a wrong guess costs speed,
never correctness.
"""

from __future__ import annotations

import dataclasses
import functools
import platform
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Machine:
    """``isa``: ``avx512``, ``avx2``, ``neon``, ``sve``... or ``portable``; ``lanes``: float32
    values per vector register; ``vector_registers``: architectural vector registers;
    ``l1d_bytes`` / ``l2_bytes`` / ``l3_bytes``: data cache sizes seen by one core (the
    L3 is shared)."""

    isa: str = "portable"
    lanes: int = 4
    vector_registers: int = 16
    l1d_bytes: int = 32 * 1024
    l2_bytes: int = 512 * 1024
    l3_bytes: int = 8 * 1024 * 1024

    @property
    def vector_bytes(self) -> int:
        return 4 * self.lanes


PORTABLE = Machine()
AVX512 = Machine("avx512", 16, 32, 48 * 1024, 1024 * 1024, 32 * 1024 * 1024)
AVX2 = Machine("avx2", 8, 16, 32 * 1024, 512 * 1024, 16 * 1024 * 1024)
NEON = Machine("neon", 4, 32, 64 * 1024, 1024 * 1024, 8 * 1024 * 1024)


def machine_from_flags(flags: set, arch: str) -> Machine:
    """The vector unit named by CPU feature ``flags`` (``/proc/cpuinfo`` spelling, or the
    compiler's ``__AVX512F__`` / ``__AVX2__`` / ``__ARM_NEON`` macros lower-cased without
    underscores) on architecture ``arch`` (``platform.machine()``)."""
    norm = {f.strip("_").lower().replace("_", "") for f in flags}
    if "avx512f" in norm:
        return AVX512
    if "avx2" in norm or ("avx" in norm and "fma" in norm):
        return AVX2
    if arch.lower() in ("arm64", "aarch64") or "asimd" in norm or "armneon" in norm:
        return NEON
    return PORTABLE


def _cpu_flags() -> set:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


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


@functools.lru_cache(maxsize=1)
def host_machine() -> Machine:
    """This CPU, read once per process."""
    m = machine_from_flags(_cpu_flags(), platform.machine())
    caches = _cache_sizes()
    return dataclasses.replace(
        m,
        l1d_bytes=caches.get((1, "Data"), m.l1d_bytes),
        l2_bytes=caches.get((2, "Unified"), m.l2_bytes),
        l3_bytes=caches.get((3, "Unified"), m.l3_bytes),
    )


__all__ = ["AVX2", "AVX512", "NEON", "PORTABLE", "Machine", "host_machine",
           "machine_from_flags"]
