"""``InferType``: type-check a module; every node's checked type is filled in."""

from __future__ import annotations

from ..ir.module import IRModule
from ..typing.infer import infer_module
from .pass_infra import Pass, module_pass, register_pass


@module_pass(opt_level=0, name="InferType")
def _infer_type(mod: IRModule, ctx) -> IRModule:
    new = mod.copy()
    infer_module(new)
    return new


def InferType() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``InferType``: returns a new module whose nodes all carry checked types."""
    return _infer_type


register_pass("InferType", InferType)
