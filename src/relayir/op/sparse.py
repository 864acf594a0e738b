"""Sparse tensors in COO form (TensorFlow's ``tf.sparse``, Relay's names): a sparse
tensor is ``indices`` (one row of ``ndims`` coordinates per stored value), ``values``
and the dense shape as a 1-D tensor.

- ``sparse_fill_empty_rows``: every row (first coordinate) with no stored value gets
  one, ``default_value`` at column 0; gives ``(indices, values, empty_row_indicator)``.
  The number of values it adds depends on the data, so its results have ``?``
  extents and the VM runs its reference.
- ``sparse_reshape``: the indices of the same values in a tensor of ``new_shape`` (one
  ``-1`` is inferred); gives ``(new_indices, new_shape)``. Its result shapes follow
  from its input shapes; the values of the two shape tensors are read at run time.
- ``sparse_to_dense``: the dense tensor of ``output_shape`` (an attribute; a run-time
  tensor in ``dyn.sparse_to_dense``) holding the values at the indices and
  ``default_value`` elsewhere. Indices are 0-D (one value), 1-D (one coordinate per
  value) or 2-D (one row per value); values 0-D (the same at every index) or 1-D; a
  repeated index keeps its last value, a negative one counts from the end.

Input indices are expected in row-major order (``sparse_fill_empty_rows`` checks that
the rows are sorted, as its output order depends on it).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import OpError
from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import Any, TensorType, TupleType
from .attrs_util import attr_ints, set_fields
from .scatter import wrap_indices
from .type_rel import dim_may_equal, fail, require_int, show_type, tensors


def _matrix_of_indices(t: TensorType, what: str = "sparse_indices") -> None:
    require_int(t, what)
    if t.ndim != 2:
        fail(f"{what} must be a 2-D tensor (one row of coordinates per value), "
             f"found {show_type(t)}")


def _vector(t: TensorType, what: str, integer: bool = False) -> None:
    if integer:
        require_int(t, what)
    if t.ndim != 1:
        fail(f"{what} must be a 1-D tensor, found {show_type(t)}")


def _agree(a, b, what: str) -> None:
    if not dim_may_equal(a, b):
        fail(f"{what}: {a} vs {b}")


# ---------------------------------------------------------------- sparse_fill_empty_rows


def _fill_rel(types, attrs):
    ind, val, shape, default = tensors(types, ("sparse_indices", "sparse_values",
                                               "dense_shape", "default_value"))
    _matrix_of_indices(ind)
    _vector(val, "sparse_values")
    _vector(shape, "dense_shape", integer=True)
    _agree(ind.shape[0], val.shape[0], "sparse_indices and sparse_values must have one row "
           "per value")
    _agree(ind.shape[1], shape.shape[0], "sparse_indices must have one column per axis of "
           "dense_shape")
    if default.shape not in ((), (1,)) and not (default.ndim == 1 and isinstance(
            default.shape[0], Any)):
        fail(f"default_value must be a scalar or a 1-element tensor, found {show_type(default)}")
    if default.dtype != val.dtype:
        fail(f"default_value {show_type(default)} must have the dtype of sparse_values "
             f"{show_type(val)}")
    ndims = ind.shape[1]
    return TupleType((TensorType((Any(), ndims), ind.dtype), TensorType((Any(),), val.dtype),
                      TensorType((Any(),), "bool")))


def _fill_ref(indices, values, dense_shape, default_value, attrs=None):
    where = "sparse_fill_empty_rows"
    if default_value.size != 1:
        raise OpError(f"{where}: default_value must hold one value, found shape "
                      f"{default_value.shape}")
    if indices.shape[0] != values.shape[0] or indices.shape[1] != dense_shape.shape[0]:
        raise OpError(f"{where}: sparse_indices {indices.shape} must be (len(sparse_values)="
                      f"{values.shape[0]}, len(dense_shape)={dense_shape.shape[0]})")
    rows = int(dense_shape[0])
    first = indices[:, 0].astype("int64")
    if first.size and (first.min() < 0 or first.max() >= rows):
        raise OpError(f"{where}: a row index of sparse_indices is outside [0, {rows}) "
                      f"(dense_shape[0] = {rows})")
    if np.any(np.diff(first) < 0):
        raise OpError(f"{where}: the first column of sparse_indices must be sorted "
                      f"ascending, found {first.tolist()}")
    empty = np.ones(rows, dtype=bool)
    empty[first] = False
    filled = np.flatnonzero(empty)
    added = np.zeros((filled.size, indices.shape[1]), dtype=indices.dtype)
    added[:, 0] = filled
    all_indices = np.concatenate([indices, added])
    all_values = np.concatenate([values, np.full(filled.size, default_value.reshape(-1)[0],
                                                 dtype=values.dtype)])
    # the added rows hold no stored value, so a stable sort by row keeps each stored
    # row's own order and puts every added row in its place
    order = np.argsort(all_indices[:, 0], kind="stable")
    return all_indices[order], all_values[order], empty


register_op("sparse_fill_empty_rows", rel=_fill_rel, ref=_fill_ref, pattern=OpPattern.OPAQUE,
            num_inputs=4,
            arg_names=("sparse_indices", "sparse_values", "dense_shape", "default_value"),
            description="COO tensor with a default value at column 0 of every empty row")


# ---------------------------------------------------------------- sparse_reshape


def _reshape_rel(types, attrs):
    ind, prev, new = tensors(types, ("sparse_indices", "prev_shape", "new_shape"))
    _matrix_of_indices(ind)
    _vector(prev, "prev_shape", integer=True)
    _vector(new, "new_shape", integer=True)
    _agree(ind.shape[1], prev.shape[0], "sparse_indices must have one column per axis of "
           "prev_shape")
    return TupleType((TensorType((ind.shape[0], new.shape[0]), ind.dtype),
                      TensorType((new.shape[0],), new.dtype)))


def resolve_new_shape(prev: np.ndarray, new: np.ndarray, where: str) -> np.ndarray:
    """``new`` with its ``-1`` (at most one) replaced so that it holds as many elements
    as ``prev``."""
    prev, new = prev.astype("int64"), new.astype("int64").copy()
    total = int(np.prod(prev))
    unknown = np.flatnonzero(new == -1)
    if len(unknown) > 1 or np.any(new < -1):
        raise OpError(f"{where}: new_shape {new.tolist()} may hold one -1 and otherwise "
                      f"extents >= 0")
    known = int(np.prod(new[new != -1]))
    if len(unknown):
        if known == 0 or total % known:
            raise OpError(f"{where}: cannot infer the -1 of new_shape {new.tolist()} for "
                          f"prev_shape {prev.tolist()} ({total} elements)")
        new[unknown[0]] = total // known
    elif known != total:
        raise OpError(f"{where}: new_shape {new.tolist()} holds {known} elements but "
                      f"prev_shape {prev.tolist()} holds {total}")
    return new


def _row_major_strides(shape: np.ndarray) -> np.ndarray:
    strides = np.ones(len(shape), dtype="int64")
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return strides


def _reshape_ref(indices, prev_shape, new_shape, attrs=None):
    where = "sparse_reshape"
    if indices.shape[1] != prev_shape.shape[0]:
        raise OpError(f"{where}: sparse_indices {indices.shape} must have one column per "
                      f"axis of prev_shape {prev_shape.tolist()}")
    new = resolve_new_shape(prev_shape, new_shape, where)
    if np.array_equal(new, prev_shape):
        # the same shape: the indices come back as they are, as TVM's kernel gives them
        # (coordinates outside the shape included, which the row-major mapping would move)
        return indices.copy(), new.astype(new_shape.dtype)
    flat = indices.astype("int64") @ _row_major_strides(prev_shape.astype("int64"))
    out = np.empty((indices.shape[0], len(new)), dtype=indices.dtype)
    for k, stride in enumerate(_row_major_strides(new)):
        out[:, k], flat = np.divmod(flat, max(int(stride), 1))
    return out, new.astype(new_shape.dtype)


register_op("sparse_reshape", rel=_reshape_rel, ref=_reshape_ref, pattern=OpPattern.OPAQUE,
            num_inputs=3, arg_names=("sparse_indices", "prev_shape", "new_shape"),
            description="COO indices of the same values in a tensor of another shape")


# ---------------------------------------------------------------- sparse_to_dense


@dataclasses.dataclass(frozen=True)
class SparseToDenseAttrs(Attrs):
    output_shape: tuple = ()

    def __post_init__(self):
        shape = attr_ints(self.output_shape, "output_shape")
        if any(d < 0 for d in shape):
            raise ValueError(f"output_shape must hold extents >= 0, found {shape}")
        set_fields(self, output_shape=shape)


def check_sparse_to_dense(ind: TensorType, val: TensorType, default: TensorType,
                          ndim: int) -> None:
    """The checks ``sparse_to_dense`` and ``dyn.sparse_to_dense`` share (``ndim``: the
    output's rank)."""
    require_int(ind, "sparse_indices")
    if ind.ndim > 2 or val.ndim > 1:
        fail(f"sparse_indices {show_type(ind)} must be 0-D, 1-D or 2-D and sparse_values "
             f"{show_type(val)} 0-D or 1-D")
    if val.ndim == 1 and ind.ndim >= 1:
        _agree(ind.shape[0], val.shape[0], "sparse_indices and sparse_values must have one "
               "entry per value")
    columns = ind.shape[1] if ind.ndim == 2 else 1
    _agree(columns, ndim, f"sparse_indices {show_type(ind)} must give one coordinate per "
           f"output axis")
    if default.ndim != 0 or default.dtype != val.dtype:
        fail(f"default_value must be a scalar of the dtype of sparse_values "
             f"{show_type(val)}, found {show_type(default)}")


def _to_dense_rel(types, attrs):
    ind, val, default = tensors(types, ("sparse_indices", "sparse_values", "default_value"))
    check_sparse_to_dense(ind, val, default, len(attrs.output_shape))
    return TensorType(attrs.output_shape, val.dtype)


def _to_dense_ref(indices, values, default_value, attrs):
    shape = attrs.output_shape
    rows = indices.reshape(-1, 1) if indices.ndim < 2 else indices
    if rows.shape[1] != len(shape):
        raise OpError(f"sparse_to_dense: sparse_indices {indices.shape} must give one "
                      f"coordinate per axis of output_shape {shape}")
    out = np.full(shape, default_value, dtype=values.dtype)
    index = tuple(wrap_indices(rows[:, k], d, "sparse_to_dense") for k, d in enumerate(shape))
    out[index] = np.broadcast_to(values, rows.shape[:1])  # numpy: the last repeat wins
    return out


register_op("sparse_to_dense", rel=_to_dense_rel, ref=_to_dense_ref,
            pattern=OpPattern.OPAQUE, num_inputs=3,
            arg_names=("sparse_indices", "sparse_values", "default_value"),
            attrs=SparseToDenseAttrs,
            description="a dense tensor of the sparse values over a default value")


# ---------------------------------------------------------------- constructors


def sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value):
    """``(new_indices, new_values, empty_row_indicator)`` (a tuple-typed call)."""
    return call("sparse_fill_empty_rows", [sparse_indices, sparse_values, dense_shape,
                                           default_value])


def sparse_reshape(sparse_indices, prev_shape, new_shape):
    """``(new_indices, new_shape)`` (a tuple-typed call)."""
    return call("sparse_reshape", [sparse_indices, prev_shape, new_shape])


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value):
    """A dense tensor of ``output_shape`` (ints: the static op) with the values at the
    indices and ``default_value`` (a scalar expression) elsewhere."""
    return call("sparse_to_dense", [sparse_indices, sparse_values, default_value],
                output_shape=output_shape)


__all__ = ["check_sparse_to_dense", "sparse_fill_empty_rows", "sparse_reshape",
           "sparse_to_dense"]
