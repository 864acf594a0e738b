"""``tvm.target``: ``Target("llvm")`` over relayir's ``backend.target.Target``.

relayir compiles for the host CPU (``"llvm"``, ``"llvm -mcpu=..."``, ``"c"``: generated
C) or runs the numpy references (``"numpy"``); a GPU target is refused when parsed. The
TVM spelling stays readable as ``target.kind.name`` (``"llvm"``), while relayir's own
code sees its kind (``"cpu"``) in the same field.
"""

from __future__ import annotations

import os

from ...backend.target import BuildError
from ...backend.target import Target as _Target
from ..runtime.ndarray import device
from . import codegen


class TargetKind(str):
    """relayir's kind (``"cpu"``) as a string, with TVM's spelling as ``.name``."""

    def __new__(cls, kind: str, name: str):
        obj = super().__new__(cls, kind)
        obj.name = name
        return obj


# TVM's device target kinds: a Target of one of them can be made and passed around (a
# pass may read it, as in TVM on a machine without the device), never built for
DEVICE_KINDS = ("cuda", "rocm", "opencl", "metal", "vulkan", "nvptx", "hexagon", "webgpu",
                "aocl", "sdaccel")


class Target(_Target):
    """``Target("llvm -mcpu=skylake")``, ``Target("llvm", host="llvm")``; also a context
    manager (``with Target("llvm"): ...`` makes it ``Target.current()``). A device
    target (``Target("cuda")``) is a description only: building for it is refused."""

    _stack: list[Target] = []

    def __init__(self, target="llvm", host=None):
        if isinstance(target, dict):
            target = target.get("kind", "llvm")
        words = str(target).split() if isinstance(target, str) else []
        if words and words[0] in DEVICE_KINDS:
            parsed = _Target(words[0], tuple(words[1:]), str(target))
        else:
            parsed = _Target.parse(str(target) if not isinstance(target, _Target) else target)
        text = parsed.text or str(parsed)
        spelling = text.split()[0] if text else parsed.kind
        object.__setattr__(self, "kind", TargetKind(parsed.kind, spelling))
        object.__setattr__(self, "options", parsed.options)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "host", None if host is None else Target(host))

    @property
    def keys(self) -> list[str]:
        return [self.kind.name, "gpu"] if self.kind.name in DEVICE_KINDS else ["cpu"]

    def __getattr__(self, name: str):
        raise _missing("tvm.target.Target", name)

    @property
    def attrs(self) -> dict[str, str]:
        out = {}
        for opt in self.options:
            key, _, value = opt.lstrip("-").partition("=")
            out[key] = value
        return out

    @property
    def mcpu(self) -> str:
        return self.attrs.get("mcpu", "")

    @property
    def max_function_args(self) -> int:
        """The most arguments a kernel may take (TVM: 0, no limit, unless the target
        string sets ``-max_function_args``); relayir's C kernels take an argument array."""
        return int(self.attrs.get("max_function_args", 0))

    def with_host(self, host=None) -> Target:
        """This target with ``host`` as its host (TVM's ``Target.with_host``)."""
        return Target(self.text, host=host)

    def __enter__(self) -> Target:
        Target._stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        Target._stack.pop()

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        if Target._stack:
            return Target._stack[-1]
        if not allow_none:
            raise RuntimeError("no target in scope: use `with tvm.target.Target(...)`")
        return None

    def __repr__(self) -> str:
        return self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return self.text == other
        return isinstance(other, _Target) and str(other) == self.text


def resolve_target(target, default: str = "llvm"):
    """A relay.build/create_executor ``target`` argument as relayir takes it: a string,
    a ``Target``, a ``{device: target}`` dict (its host entry), or None (the target in
    scope, else ``default``)."""
    if isinstance(target, dict):
        target = target.get("cpu", next(iter(target.values()), None))
    if target is None:
        target = Target.current() or default
    target = target if isinstance(target, _Target) else Target(target)
    name = getattr(target.kind, "name", target.kind)
    if name in DEVICE_KINDS:
        raise BuildError(f"target {str(target)!r}: relayir builds for the host CPU ('llvm', "
                         f"'c') or runs numpy references ('numpy'), not for {name}")
    return target


class VirtualDevice:
    """``VirtualDevice(device, target, memory_scope)``: a record of where a value lives.
    relayir has one device (the host CPU) and no device planning, so it is only carried
    (e.g. in a text format's metadata table)."""

    def __init__(self, device=None, target=None, memory_scope: str = ""):
        self.device = device
        self.target = target
        self.memory_scope = memory_scope

    def __repr__(self) -> str:
        return f"VirtualDevice({self.device}, {self.target}, {self.memory_scope!r})"

    def __getattr__(self, name: str):
        raise _missing("tvm.target.VirtualDevice", name)


def _missing(cls: str, name: str) -> AttributeError:
    """An attribute TVM's class has and relayir.tvm's does not: an AttributeError naming
    the API (a dunder stays a plain AttributeError for copy, pickle and hasattr)."""
    if name.startswith("__"):
        return AttributeError(name)
    return AttributeError(f"{cls}.{name} is not part of relayir (docs/tvm-compat.md lists "
                          f"what relayir.tvm covers)")


CPU_KINDS = ("llvm", "c")


def target_kind(target) -> str:
    """TVM's kind name of a target string or ``Target`` (``"llvm"``, ``"cuda"``, ...)."""
    return target.split()[0] if isinstance(target, str) else target.kind.name


def device_enabled(target) -> bool:
    """Whether relayir can run ``target``: the host CPU targets only."""
    return target_kind(target) in CPU_KINDS


def enabled_targets() -> list:
    """``[(target, device)]`` to test on: ``TVM_TEST_TARGETS`` (``;``-separated) limited
    to the CPU targets, else ``llvm``."""
    names = [t.strip() for t in os.environ.get("TVM_TEST_TARGETS", "").split(";") if t.strip()]
    names = [t for t in names if device_enabled(t)] or ["llvm"]
    return [(t, device(target_kind(t))) for t in names]


def create(target: str) -> Target:
    return Target(target)


def _device(name: str):
    def make(*args, **kwargs) -> Target:
        return Target(name)  # a description: building for it is refused

    make.__name__ = name
    return make


cuda = _device("cuda")
rocm = _device("rocm")
mali = _device("opencl")
intel_graphics = _device("opencl")
arm_cpu = _device("arm_cpu")  # not a kind: refused when made (relayir builds for the host)
rasp = _device("arm_cpu")


__all__ = ["CPU_KINDS", "DEVICE_KINDS", "Target", "TargetKind", "VirtualDevice", "arm_cpu",
           "create", "cuda", "device_enabled", "enabled_targets", "mali", "resolve_target",
           "rocm", "target_kind"]
