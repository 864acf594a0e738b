"""``tvm.script.tir`` (``T``): the dtype constructors only (``T.int32(1)`` is ``1``, as
``tvm.tir.IntImm`` is an int here); ``T.prim_func``, ``T.Buffer``, ... raise
``NotInRelayirError``."""

from ...ir.types import NATIVE_DTYPES
from ..error import refusing_module


def _dtype_constructor(dtype: str):
    cast = float if dtype.startswith(("float", "bfloat")) else \
        bool if dtype == "bool" else int

    def make(value=None, *args, **kwargs):
        return None if value is None else cast(value)

    make.__name__ = dtype
    return make


for _dtype in NATIVE_DTYPES:
    globals()[_dtype] = _dtype_constructor(_dtype)

__getattr__ = refusing_module(__name__, "relayir has no TVMScript (its loop IR is relayir.tir)")
