"""``tvm.transform`` (also ``tvm.ir.transform``): the pass infrastructure.

``PassContext`` takes Relay's keywords: ``None`` for the lists, ``opt_level`` 4
(relayir's highest level is 3: 4 runs what 3 runs), ``disabled_pass`` names from Relay
(names relayir does not know are ignored, as Relay ignores them), ``config`` keys as
Relay spells them (relayir reads ``relay.FuseOps.max_depth`` and the debug keys).
"""

from __future__ import annotations

import sys

from ..transform import instrument
from ..transform.pass_infra import (
    FunctionPass,
    ModulePass,
    Pass,
    PassInfo,
    Sequential,
    function_pass,
    module_pass,
)
from ..transform.pass_infra import PassContext as _PassContext

MAX_OPT_LEVEL = 3


class PassContext(_PassContext):
    """``with tvm.transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout"])``."""

    def __init__(self, opt_level: int = 2, required_pass=None, disabled_pass=None,
                 instruments=None, config=None, trace=None, trace_stack=None,
                 make_traceable=None, num_evals=0, tuning_api_database=None):
        super().__init__(opt_level=min(int(opt_level), MAX_OPT_LEVEL),
                         required_pass=tuple(required_pass or ()),
                         disabled_pass=tuple(disabled_pass or ()),
                         config=dict(config or {}), instruments=tuple(instruments or ()))

    @staticmethod
    def current() -> _PassContext:
        return _PassContext.current()

    @staticmethod
    def list_configs() -> dict:
        return {}


def PrintIR(header: str = "", show_meta_data: bool = False) -> Pass:  # noqa: N802 (Relay's name)
    """A pass that prints the module and returns it unchanged: to standard error, headed
    ``PrintIR(header):``, as TVM logs it."""

    def print_ir(mod, ctx):
        print(f"PrintIR({header}):\n{mod.astext(show_meta_data=show_meta_data)}",
              file=sys.stderr)
        return mod

    return ModulePass(print_ir, PassInfo("PrintIR", 0))


__all__ = ["FunctionPass", "ModulePass", "Pass", "PassContext", "PassInfo", "PrintIR",
           "Sequential", "function_pass", "instrument", "module_pass"]
