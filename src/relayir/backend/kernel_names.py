"""Readable kernel names, as TVM gives them: ``fused_nn_conv2d_add_nn_relu``."""

from __future__ import annotations

import zlib

from ..ir.expr import Call, Function, Op
from ..ir.functor import post_order


def kernel_base_name(func: Function, limit: int = 64) -> str:
    """``fused_`` and the ops of the body in order; a long name keeps a readable prefix
    and a checksum of the rest (BERT's attention groups)."""
    names = []
    for node in post_order(func.body):
        if type(node) is Call and type(node.op) is Op:
            names.append(node.op.name.replace(".", "_"))
    base = "fused_" + "_".join(names) if names else "fused_copy"
    if len(base) > limit:
        digest = f"{zlib.crc32(base.encode()):08x}"
        base = base[: limit - 9].rstrip("_") + "_" + digest
    return base


__all__ = ["kernel_base_name"]
