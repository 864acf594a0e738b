"""``tvm.testing.utils``: the module TVM's ``tvm.testing`` helpers live in (the same
names), plus ``IS_IN_CI`` and ``generate_ref_data``."""

from __future__ import annotations

import os

from ..contrib import graph_executor
from ..relay import build
from ..runtime.ndarray import cpu
from ..transform import PassContext
from . import *  # noqa: F403
from . import __all__ as _testing_all
from .features import Requirement as Feature

IS_IN_CI = os.getenv("CI", "") == "true"


def generate_ref_data(mod, input_data: dict, params=None, target: str = "llvm") -> dict:
    """The outputs of ``mod`` on ``input_data`` by name (``output`` / ``output{i}``, or
    ``@main``'s ``output_tensor_names``), as TVM's helper computes them: built with
    ``relay.build`` at opt level 3 and run on the graph executor."""
    with PassContext(opt_level=3):
        lib = build(mod, target=target, params=params)
    m = graph_executor.GraphModule(lib["default"](cpu()))
    m.set_input(**input_data)
    m.run()
    count = m.get_num_outputs()
    outs = [m.get_output(i).numpy() for i in range(count)]
    main = mod if not hasattr(mod, "functions") else mod["main"]
    names = (getattr(main, "attrs", None) or {}).get("output_tensor_names")
    if not names:
        names = ["output"] if count == 1 else [f"output{i}" for i in range(count)]
    return dict(zip(names, outs))


__all__ = ["Feature", "IS_IN_CI", "generate_ref_data", *_testing_all]
