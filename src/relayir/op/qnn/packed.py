"""``qnn.contrib_dense_packed``: ``data (..., K) uint8 x weight (N, K) int8 → int32``,
the weight packed at build time as ``vpdpbusd`` reads it (``pack_weight``): blocks of 16
output columns, in a block groups of 4 consecutive ``k`` per column, zero padded,
``(ceil(N/16), ceil(K/4), 16, 4)``. ``CanonicalizeQNN`` lowers 8-bit dense layers and
convolutions (by im2col) to it; the cpu target runs it as the C routine
``rl_qgemm_u8s8`` (``codegen/routines_int8.py``), exact like this reference."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import attr_int, set_fields
from ..type_rel import dim_may_equal, fail, tensors

BLOCK_N, GROUP_K = 16, 4


def packed_shape(n: int, k: int) -> tuple:
    return (-(-n // BLOCK_N), -(-k // GROUP_K), BLOCK_N, GROUP_K)


def pack_weight(w: np.ndarray) -> np.ndarray:
    """``(N, K)`` int8 → ``(ceil(N/16), ceil(K/4), 16, 4)``, zero padded."""
    n, k = w.shape
    nb, k4, _, _ = packed_shape(n, k)
    padded = np.zeros((nb * BLOCK_N, k4 * GROUP_K), np.int8)
    padded[:n, :k] = w
    return np.ascontiguousarray(
        padded.reshape(nb, BLOCK_N, k4, GROUP_K).transpose(0, 2, 1, 3))


def unpack_weight(p: np.ndarray, n: int, k: int) -> np.ndarray:
    nb, k4, bn, gk = p.shape
    return p.transpose(0, 2, 1, 3).reshape(nb * bn, k4 * gk)[:n, :k]


@dataclasses.dataclass(frozen=True)
class DensePackedAttrs(Attrs):
    units: int = 1

    def __post_init__(self):
        set_fields(self, units=attr_int(self.units, "units"))
        if self.units < 1:
            raise ValueError(f"units must be >= 1, found {self.units}")


def _rel(types, attrs):
    data, weight = tensors(types, ("data", "weight"))
    if data.dtype != "uint8" or weight.dtype != "int8":
        fail(f"data must be uint8 and weight int8, found {data} and {weight}")
    if data.ndim < 1 or weight.ndim != 4:
        fail(f"data must have rank >= 1 and the packed weight rank 4, found {data} and "
             f"{weight}")
    k = data.shape[-1]
    if not isinstance(k, int):
        fail(f"the reduction extent of data must be static, found {data}")
    want = packed_shape(attrs.units, k)
    if not all(dim_may_equal(a, b) for a, b in zip(weight.shape, want)):
        fail(f"the weight packed for units={attrs.units} and {k} inputs has shape {want}, "
             f"found {weight}")
    return TensorType((*data.shape[:-1], attrs.units), "int32")


def _ref(data, weight, attrs):
    w = unpack_weight(weight, attrs.units, data.shape[-1]).astype(np.int64)
    return np.matmul(data.astype(np.int64), w.T).astype(np.int32)


register_op("qnn.contrib_dense_packed", rel=_rel, ref=_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2, arg_names=("data", "weight"),
            attrs=DensePackedAttrs,
            description="uint8 data x int8 weight packed for vpdpbusd → int32, exact")


def contrib_dense_packed(data, weight, units):
    """``data @ unpack(weight).T`` in int32; ``weight`` from ``pack_weight``."""
    return call("qnn.contrib_dense_packed", [data, weight], units=units)
