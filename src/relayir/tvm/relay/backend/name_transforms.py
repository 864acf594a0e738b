"""``tvm.relay.backend.name_transforms``: the names TVM gives what generated C code exports.

TVM builds a name from segments (``prefix_name(["Device", "cpu"])`` -> ``"TVM_Device_cpu"``,
``prefix_generated_name`` -> ``"TVMGen_..."``) and then spells it as a C function
(``TVMDeviceCpu``), variable (``tvm_device_cpu``) or constant (``TVM_DEVICE_CPU``). relayir
names its own kernels with ``relayir.tir.names``; these functions give TVM's spellings for
scripts that ask for them, with TVM's error messages (raised as ``tvm.TVMError``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ....errors import Error

_TVM = "TVM"


def _check_tvm_name(name: str, kind: str) -> None:
    if not name:
        raise Error(f"{kind} name is empty")
    if not name.startswith(_TVM):
        raise Error(f"{kind} not TVM prefixed: {name!r}")


def to_c_function_style(original_name: str) -> str:
    """``TVM_woof_woof`` -> ``TVMWoofWoof``: each ``_``-separated segment after ``TVM``
    capitalised (its other letters lower-cased), the underscores dropped."""
    _check_tvm_name(original_name, "Function")
    segments = original_name[len(_TVM):].split("_")
    return _TVM + "".join(segment.capitalize() for segment in segments)


def to_c_variable_style(original_name: str) -> str:
    """``TVM_woof_Woof`` -> ``tvm_woof_woof``."""
    _check_tvm_name(original_name, "Variable")
    return original_name.lower()


def to_c_constant_style(original_name: str) -> str:
    """``TVM_woof_Woof`` -> ``TVM_WOOF_WOOF``."""
    _check_tvm_name(original_name, "Constant")
    return original_name.upper()


def _combine(prefix: str, names: str | Sequence[str]) -> str:
    if isinstance(names, str):
        if not names:
            raise Error("Name is empty")
        names = [names]
    if not names:
        raise Error("Name segments empty")
    if not all(names):
        raise Error(f"Name segment is empty in {list(names)!r}")
    return "_".join([prefix, *names])


def prefix_name(names: str | Sequence[str]) -> str:
    """``["Device", "cpu"]`` (or one string) -> ``TVM_Device_cpu``: a name TVM exports."""
    return _combine(_TVM, names)


def prefix_generated_name(names: str | Sequence[str]) -> str:
    """``["model", "run"]`` (or one string) -> ``TVMGen_model_run``: a name TVM generates
    for a compiled model."""
    return _combine("TVMGen", names)


__all__ = ["prefix_generated_name", "prefix_name", "to_c_constant_style",
           "to_c_function_style", "to_c_variable_style"]
