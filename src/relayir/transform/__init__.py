"""Passes over ``IRModule``s (Relay's ``relay.transform``)."""

from ..typing.infer import infer_expr as infer_type
from .type_check import InferType
from .pass_infra import Pass

__all__ = ["InferType", "Pass", "infer_type"]
