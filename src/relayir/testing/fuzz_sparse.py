"""Samplers for the COO sparse ops (``op/sparse.py``, ``dyn.sparse_to_dense``) and
``segment_sum``: indices are
drawn inside the dense shape, rows sorted (``sparse_fill_empty_rows`` requires it), and
never salted with edge values (they are positions). Registered into
``fuzz_ops.SAMPLERS``."""

from __future__ import annotations

import numpy as np

from .fuzz_build import NUMERIC, Builder
from .fuzz_ops import SAMPLERS, _shape_input, sampler


def _coo(b: Builder, shape: tuple, dtype: str) -> tuple[int, np.ndarray]:
    """Sorted COO indices into ``shape`` (some rows left empty): (step, rows)."""
    n = b.randint(0, 2 * shape[0])
    cols = [np.sort(b.nrng.integers(0, shape[0], size=n))]
    cols += [b.nrng.integers(0, d, size=n) for d in shape[1:]]
    rows = np.stack(cols, axis=1).reshape(n, len(shape))
    return b.new(rows.shape, dtype, exact=rows, edges=0.0), rows


@sampler("sparse_fill_empty_rows")
def _sparse_fill_empty_rows(b):
    shape = b.random_shape(b.randint(1, 3), 1, 5)
    itype, vtype = b.choice(("int32", "int64")), b.choice(NUMERIC)
    indices, rows = _coo(b, shape, itype)
    return [indices, b.new((len(rows),), vtype), b.ints(shape, itype),
            b.new((1,), vtype)], {}


@sampler("sparse_reshape")
def _sparse_reshape(b):
    shape = b.random_shape(b.randint(1, 3), 1, 5)
    itype = b.choice(("int32", "int64"))
    indices, _ = _coo(b, shape, itype)
    total = int(np.prod(shape))
    new = b.choice(([total], [-1], [1, -1], list(shape[::-1]), [-1, shape[0]]))
    return [indices, b.ints(shape, itype), b.ints(new, itype)], {}


@sampler("sparse_to_dense")
def _sparse_to_dense(b):
    shape = b.random_shape(b.randint(1, 3), 1, 5)
    itype, vtype = b.choice(("int32", "int64")), b.choice(NUMERIC)
    indices, rows = _coo(b, shape, itype)
    if len(shape) == 1 and b.coin(0.5):  # 1-D indices: one coordinate per value
        indices = b.new((len(rows),), itype, exact=rows[:, 0], edges=0.0)
    values = b.new((len(rows),) if b.coin(0.8) else (), vtype)
    return [indices, values, b.new((), vtype)], {"output_shape": shape}


def _dyn_sparse_to_dense(b):
    (indices, values, default), at = SAMPLERS["sparse_to_dense"](b)
    return [indices, _shape_input(b, at["output_shape"]), values, default], {}


SAMPLERS["dyn.sparse_to_dense"] = _dyn_sparse_to_dense


@sampler("segment_sum")
def _segment_sum(b):
    x = b.data((1, 3), NUMERIC)
    n = b.randint(1, 4)
    ids = b.index((b.randint(0, b.shape(x)[0]),), n, b.choice(("int32", "int64")),
                  negative=False)
    return [x, ids], {"num_segments": n}


def _dyn_segment_sum(b):
    args, at = SAMPLERS["segment_sum"](b)
    return [*args, _shape_input(b, [at["num_segments"]])], {}


SAMPLERS["dyn.segment_sum"] = _dyn_segment_sum
