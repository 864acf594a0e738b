"""``InferType``: type-check a module; every node's checked type is filled in."""

from __future__ import annotations

from ..ir.module import IRModule
from ..typing.infer import infer_module
from .pass_infra import Pass


def _infer_type(mod: IRModule) -> IRModule:
    new = mod.copy()
    infer_module(new)
    return new


def InferType() -> Pass:  # noqa: N802  (Relay's name)
    return Pass(_infer_type, "InferType", opt_level=0)
