"""Passes over ``IRModule``s (Relay's ``relay.transform``)."""

from ..typing.infer import infer_expr as infer_type
from .bind import bind, bind_params
from .instrument import PassTimingInstrument, PrintIRAfter, VerifyAfterEachPass
from .pass_infra import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    Sequential,
    function_pass,
    get_pass,
    module_pass,
    register_pass,
)
from .type_check import InferType

__all__ = [
    "FunctionPass", "InferType", "ModulePass", "Pass", "PassContext", "PassInfo", "Sequential",
    "bind", "bind_params", "function_pass", "get_pass", "infer_type", "module_pass",
    "register_pass", "PassTimingInstrument", "PrintIRAfter", "VerifyAfterEachPass",
]
