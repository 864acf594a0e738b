"""``tvm.testing.requires_*``: what this machine and relayir have, checked for real.

As TVM's ``Feature``s: a requirement is a decorator that skips the test when the feature
is missing (``requires_x``, ``requires_x(...)``), ``requires_x.marks()`` for
parametrizations, and ``bool(requires_x)``. CPU features are read from the host CPU
(``/proc/cpuinfo``'s flags, the machine name), as TVM asks LLVM for the host's
features: ``requires_x86_avx512`` runs on an AVX-512 host. Devices other than the CPU
and TVM build options relayir does not have (CUDA, OpenCL, BYOC libraries, RPC, microTVM)
are missing. ``requires_package("scipy")`` imports the package.
"""

from __future__ import annotations

import functools
import importlib.util
import platform

import pytest


class Requirement:
    """``@tvm.testing.requires_X``: skips the test unless X is available."""

    def __init__(self, name: str, available, why: str = ""):
        self.name = name
        self._available = available  # a bool or a zero-argument check, run once
        self.why = why or f"relayir.tvm: {name} is not available on this machine"

    @property
    def available(self) -> bool:
        if callable(self._available):
            self._available = bool(self._available())
        return self._available

    def marks(self, support_required: str = "") -> list:
        return [] if self.available else [pytest.mark.skip(reason=self.why)]

    def __call__(self, func=None, *args, **kwargs):
        if func is None or not callable(func):  # used with arguments: a decorator factory
            return self
        for mark in self.marks():
            func = mark(func)
        return func

    def __bool__(self) -> bool:
        return self.available


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The host CPU's feature flags (x86 ``flags``, AArch64 ``Features``), lower case."""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip().lower() in ("flags", "features"):
                    flags.update(value.split())
    except OSError:
        pass
    return frozenset(flag.lower() for flag in flags)


def machine() -> str:
    return platform.machine().lower()


def is_x86() -> bool:
    return machine() in ("x86_64", "amd64", "i386", "i686")


def is_aarch64() -> bool:
    return machine() in ("aarch64", "arm64")


def has_cpu(*any_of: str) -> bool:
    """Whether the host CPU has one of the flags given (``/proc/cpuinfo`` spelling)."""
    return bool(cpu_flags() & set(any_of))


def has_all_cpu(*flags: str) -> bool:
    return set(flags) <= cpu_flags()


def has_package(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


_NOT_IN_RELAYIR = "relayir.tvm: {} is not part of relayir (it compiles for the host CPU only)"

# name -> availability: True, a check of the host, or False (a device or TVM build
# option relayir does not have)
CHECKS = {
    "llvm": True,
    "x86": is_x86,
    "aarch64": is_aarch64,
    "x86_vnni": lambda: is_x86() and has_cpu("avx512_vnni", "avx_vnni"),
    "x86_avx512": lambda: is_x86() and has_all_cpu("avx512bw", "avx512cd", "avx512dq",
                                                   "avx512vl", "avx512f"),
    "x86_amx": lambda: is_x86() and has_cpu("amx_int8"),
    "arm_dot": lambda: is_aarch64() and has_cpu("asimddp"),
    "arm_fp16": lambda: is_aarch64() and has_cpu("asimdhp", "fphp"),
    "aarch64_sve": lambda: is_aarch64() and has_cpu("sve"),
    "aarch64_sme": lambda: is_aarch64() and has_cpu("sme"),
}
UNAVAILABLE = (
    "gpu", "multi_gpu", "cuda", "cudagraph", "cudnn", "cublas", "nccl", "nvptx", "rocm",
    "matrixcore", "hipblas", "opencl", "openclml", "vulkan", "metal", "hexagon", "tensorcore",
    "rpc", "micro", "ethosn", "ethosu", "cmsisnn", "tensorrt", "dnnl", "cutlass", "libtorch",
    "matlab", "nnapi", "corstone300", "vitis_ai", "mrvl", "aprofile_aem_fvp", "arm_sve",
)

REQUIREMENTS: dict[str, Requirement] = {
    f"requires_{name}": Requirement(name, check) for name, check in CHECKS.items()}
REQUIREMENTS.update({f"requires_{name}": Requirement(name, False, _NOT_IN_RELAYIR.format(name))
                     for name in UNAVAILABLE})


def requires_package(*packages: str) -> Requirement:
    """Skips the test unless every package imports (TVM's ``requires_package``)."""
    missing = [p for p in packages if not has_package(p)]
    return Requirement(",".join(packages), not missing,
                       f"Cannot import {', '.join(repr(p) for p in missing)}")


def requires_nvcc_version(*version) -> Requirement:
    return REQUIREMENTS["requires_cuda"]


def requires_cuda_compute_version(*version) -> Requirement:
    return REQUIREMENTS["requires_cuda"]
