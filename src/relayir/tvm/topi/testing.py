"""``tvm.topi.testing``: the numpy references TVM's tests compare with, as calls of
relayir's op references (one oracle for both, so these check the compiled kernels
against the same numpy code the interpreter runs)."""

from __future__ import annotations

import numpy as np

from ...ir.op import get_op, make_attrs


def _ref(op_name: str, *inputs, **attrs) -> np.ndarray:
    op = get_op(op_name)
    return op.reference(*[np.asarray(x) for x in inputs], make_attrs(op, attrs))


def softmax_python(a_np, axis: int = 1) -> np.ndarray:
    return _ref("nn.softmax", a_np, axis=axis)


def log_softmax_python(a_np, axis: int = 1) -> np.ndarray:
    return _ref("nn.log_softmax", a_np, axis=axis)


def strided_slice_python(data, begin, end, strides, slice_mode: str = "end", axes=None):
    return _ref("strided_slice", data, begin=begin, end=end, strides=strides, axes=axes,
                slice_mode=slice_mode)


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    return _ref("one_hot", indices, np.asarray(on_value, dtype), np.asarray(off_value, dtype),
                depth=depth, axis=axis, dtype=dtype)


def gather_python(data, axis, indices):
    return _ref("gather", data, indices, axis=axis)


def batch_matmul(x, y, out_dtype=None, trans_x: bool = False, trans_y: bool = True):
    return _ref("nn.batch_matmul", x, y, out_dtype=out_dtype or "", transpose_a=trans_x,
                transpose_b=trans_y)


__all__ = ["batch_matmul", "gather_python", "log_softmax_python", "one_hot", "softmax_python",
           "strided_slice_python"]
