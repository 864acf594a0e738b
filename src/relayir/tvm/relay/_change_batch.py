"""``relay.transform.ChangeBatch``: give some tensor variables a new batch size.

``data`` maps each variable to rebatch to the axis that holds its batch. Every
occurrence of such a variable, as a parameter or a use, in every function of the
module becomes one new variable of the same name and dtype with that axis set to
``batch_size``; then the module is typed again. As in Relay, each function's return
type is dropped so inference gives the new one; any other annotation (a typed ``let``
binder, an inner function's return type) is left alone, so a network that spells the
old batch in those does not type any more and says so.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...errors import Error
from ...ir.expr import Function, Var
from ...ir.module import IRModule
from ...ir.types import TensorType
from ...transform import InferType
from ...transform.bind import bind


def _rebatched(v: Var, axis: int, batch_size: int) -> Var:
    ty = v.type_annotation
    if not isinstance(ty, TensorType):
        raise Error(f"ChangeBatch: %{v.name_hint} needs a tensor type annotation to change "
                    f"its batch, found {ty}")
    shape = list(ty.shape)
    if not -len(shape) <= axis < len(shape):
        raise Error(f"ChangeBatch: %{v.name_hint} has rank {len(shape)}, no axis {axis}")
    shape[axis] = batch_size
    return Var(v.name_hint, TensorType(tuple(shape), ty.dtype))


def _with_vars(fn: Function, mapping: dict[Var, Var]) -> Function:
    params = [mapping.get(p, p) for p in fn.params]
    body = bind(fn.body, mapping)
    return Function(params, body, None, fn.type_params, fn.attrs).with_span(fn.span)


def change_batch(mod: IRModule, data: Mapping[Var, int], batch_size: int = 16) -> IRModule:
    """``mod`` with each variable of ``data`` given ``batch_size`` on its axis, typed."""
    mapping = {v: _rebatched(v, int(axis), int(batch_size)) for v, axis in data.items()}
    return InferType()(mod.with_functions(
        {gv: _with_vars(fn, mapping) for gv, fn in mod.functions.items()}))


__all__ = ["change_batch"]
