"""``DynamicToStatic``: a ``dyn.*`` call whose shape inputs are constants becomes the
static op (TVM's pass of the same name).

``dyn.reshape(%x, [2, -1])`` is ``reshape(%x, newshape=[2, -1])``: the static op has
a compute (the ``dyn`` op runs through its numpy reference only), fuses, and its
result type has static extents, which the types of everything downstream inherit.
``shape_of`` of a tensor whose type is static becomes a constant. How a ``dyn`` op's
inputs become the static op's attributes is the op's own ``DYNAMIC`` entry
(``op/dynamic.py``), the same one its reference uses, so the rewrite keeps meaning.

A shape is often computed (``shape_of`` → ``take`` → ``concatenate``): after each
sweep the module is re-typed (the new static extents flow downstream) and constant
folded, which can make the shape inputs of further ``dyn`` calls constant; sweeps
repeat until none changes anything.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, Op
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.types import TensorType
from ..op.dynamic import DYNAMIC
from ..ir.op import get_op
from ..typing.infer import infer_module
from .analysis import typed_module
from .fold_constant import fold_constant
from .pass_infra import Pass, PassContext, module_pass, register_pass

_MAX_SWEEPS = 16


class _ToStatic(ExprMutator):
    """One sweep. Rebuilt nodes are untyped: their types change, the module is re-typed."""

    def __init__(self):
        super().__init__()
        self.changed = 0

    def visit_call(self, call):
        new = super().visit_call(call)
        op = new.op
        if type(op) is not Op:
            return new
        if op.name == "shape_of":
            ty = call.args[0].checked_type if call.args[0].has_type else None
            if isinstance(ty, TensorType) and ty.is_static:
                self.changed += 1
                return Constant(np.asarray(ty.shape, dtype=new.attrs.dtype))
            return new
        spec = DYNAMIC.get(op.name)
        if spec is None:
            return new
        _, shapes = spec.split(new.args)
        if not all(type(s) is Constant for s in shapes):
            return new
        data, attrs = spec.static_call_parts(
            [a.data if type(a) is Constant and i in spec.shape_args else a
             for i, a in enumerate(new.args)], new.attrs)
        self.changed += 1
        return Call(get_op(spec.static), tuple(data), attrs).with_span(call.span)


def dynamic_to_static(mod: IRModule) -> IRModule:
    mod = typed_module(mod)
    for _ in range(_MAX_SWEEPS):
        sweep = _ToStatic()
        functions = {gv: sweep.visit(fn) for gv, fn in mod.functions.items()}
        if not sweep.changed:
            return mod
        mod = infer_module(mod.with_functions(functions))
        with np.errstate(all="ignore"):
            mod = mod.with_functions({gv: fold_constant(fn)
                                      for gv, fn in mod.functions.items()})
    return mod


@module_pass(opt_level=0, name="DynamicToStatic")
def _dynamic_to_static(mod: IRModule, ctx: PassContext) -> IRModule:
    return dynamic_to_static(mod)


def DynamicToStatic() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``DynamicToStatic``: ``dyn.*`` ops with constant shape inputs → static ops."""
    return _dynamic_to_static


register_pass("DynamicToStatic", DynamicToStatic)
