"""Passes over ``IRModule``s (Relay's ``relay.transform``)."""

from ..typing.infer import infer_expr as infer_type
from .infer_type import InferType
from .pass_infra import Pass

__all__ = ["InferType", "Pass", "infer_type"]
