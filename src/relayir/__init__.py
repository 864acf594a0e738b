"""relayir: a deep-learning compiler implementing the Relay IR design.

The names follow TVM Relay's Python API (``relay.var``, ``relay.Function``,
``relay.nn.dense``, ``relay.IRModule.from_expr``, ``relay.transform.InferType``,
``relay.create_executor``) so Relay code and knowledge carry over.
"""

import sys

from . import autotune, frontend, quantize, runtime, transform, viz, vm
from . import op as _op  # registers every operator
from .backend import build
from .errors import (
    Error,
    InterpreterError,
    OpError,
    ParseError,
    TypeInferenceError,
    WellFormedError,
)
from .executor import create_executor
from .ir import *  # noqa: F403
from .ir.op import get_op
from .ir.parser import parse, parse_expr
from .ir.printer import astext
from .op import dynamic as dyn
from .op import image, nn, qnn, vision
from .op import reduce as _reduce
from .op import tensor as _tensor
from .op import transform as _transform_ops
from .op.algorithm import *  # noqa: F403
from .op.bitwise import *  # noqa: F403
from .op.layout import layout_transform
from .op.reduce import *  # noqa: F403
from .op.scatter import *  # noqa: F403
from .op.tensor import *  # noqa: F403
from .op.transform import *  # noqa: F403
from .prelude import Prelude
from .runtime import graph_executor

# Relay's ``tvm.runtime.vm`` location of the VM: the same package, not a copy. Set here,
# above both layers, because the runtime layer sits below the VM and never imports it.
runtime.vm = vm
sys.modules[__name__ + ".runtime.vm"] = vm

from .version import __version__  # noqa: E402
