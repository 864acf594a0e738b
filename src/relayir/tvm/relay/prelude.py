"""``relay.prelude``: ``Prelude(mod)`` with Relay's attribute names (``p.cons``,
``p.nil``, ``p.l``, ``p.optional``, ``p.map``, ...) over relayir's prelude.

The tensor-array part of Relay's prelude (``get_global_var(name, dtype)`` for
``tensor_array_*``, ``StaticTensorArrayOps``) is not offered: relayir has no
tensor-array ADTs.
"""

from __future__ import annotations

from ...errors import Error
from ...prelude import Prelude as _Prelude
from ..error import not_in_relayir

# Relay's attribute → relayir's constructor / type name
_RELAY_NAMES = {
    "l": "List", "cons": "Cons", "nil": "Nil", "optional": "Option", "some": "Some",
    "none": "None", "tree": "Tree", "rose": "Rose", "nat": "nat", "z": "zero", "s": "succ",
}


class Prelude(_Prelude):
    def __getattr__(self, name: str):
        if name in _RELAY_NAMES:
            name = _RELAY_NAMES[name]
        return super().__getattr__(name)

    def get_global_var(self, canonical: str, dtype: str | None = None):
        if dtype is not None:
            raise Error(f"Prelude.get_global_var({canonical!r}, {dtype!r}): relayir's "
                        f"prelude has no tensor-array functions")
        return super().get_global_var(canonical)

    def get_type(self, canonical: str, dtype: str | None = None):
        return super().get_type(canonical)

    def get_ctor(self, ty_name: str, canonical: str | None = None, dtype: str | None = None):
        """Relay's ``get_ctor(type name, constructor name, dtype)``; also relayir's
        ``get_ctor(constructor name)``."""
        return super().get_ctor(canonical if canonical is not None else ty_name)

    def load_prelude(self) -> None:
        """Loaded by the constructor."""


_NO_TENSOR_ARRAY = "relayir's prelude has no tensor-array ADTs"
TensorArrayOps = not_in_relayir("tvm.relay.prelude.TensorArrayOps", _NO_TENSOR_ARRAY)
StaticTensorArrayOps = not_in_relayir("tvm.relay.prelude.StaticTensorArrayOps",
                                      _NO_TENSOR_ARRAY)
get_tensor_array_shape = not_in_relayir("tvm.relay.prelude.get_tensor_array_shape",
                                        _NO_TENSOR_ARRAY)

__all__ = ["Prelude", "StaticTensorArrayOps", "TensorArrayOps", "get_tensor_array_shape"]
