"""``tvm.topi.testing``: the numpy references TVM's tests compare with, as calls of
relayir's op references (one oracle for both, so these check the compiled kernels
against the same numpy code the interpreter runs)."""

from __future__ import annotations

import numpy as np

from ...ir.op import get_op, make_attrs
from ..error import refusing_module


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


def searchsorted_ref(sorted_sequence, values, right: bool, out_dtype: str) -> np.ndarray:
    """Indices of ``values`` in the innermost rows of ``sorted_sequence`` (leading
    dimensions matched pairwise, as Relay's ``searchsorted``)."""
    seq, vals = np.asarray(sorted_sequence), np.asarray(values)
    side = "right" if right else "left"
    if seq.ndim == 1:
        return np.searchsorted(seq, vals, side=side).astype(out_dtype)
    rows = zip(seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1]))
    out = np.stack([np.searchsorted(s, v, side=side) for s, v in rows])
    return out.reshape(vals.shape).astype(out_dtype)


def _pads(padding, n: int) -> tuple:
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    return padding * 2 if len(padding) == n else padding


def _conv(name: str, data_layout: str, kernel_layout: str, n: int):
    def conv(a_np, w_np, stride, padding, groups: int = 1):
        strides = (stride,) * n if isinstance(stride, int) else tuple(stride)
        return _ref(name, a_np, w_np, strides=strides, padding=_pads(padding, n),
                    groups=groups, data_layout=data_layout, kernel_layout=kernel_layout)

    return conv


conv2d_nchw_python = _conv("nn.conv2d", "NCHW", "OIHW", 2)
conv2d_nhwc_python = _conv("nn.conv2d", "NHWC", "HWIO", 2)
conv3d_ncdhw_python = _conv("nn.conv3d", "NCDHW", "OIDHW", 3)


def _deformable(data_layout: str, kernel_layout: str):
    def deformable_conv2d(a_np, offset_np, w_np, stride, padding, dilation, deformable_groups,
                          groups):
        pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
        return _ref("nn.deformable_conv2d", a_np, offset_np, w_np, strides=pair(stride),
                    padding=_pads(padding, 2), dilation=pair(dilation),
                    deformable_groups=deformable_groups, groups=groups,
                    data_layout=data_layout, kernel_layout=kernel_layout)

    return deformable_conv2d


deformable_conv2d_nchw_python = _deformable("NCHW", "OIHW")
deformable_conv2d_nhwc_python = _deformable("NHWC", "HWIO")


def depth_to_space_python(data, block_size: int, mode: str = "DCR") -> np.ndarray:
    from ..relay.op.nn import RELAY_DEPTH_TO_SPACE_MODES

    mode = RELAY_DEPTH_TO_SPACE_MODES.get(mode, mode)
    return _ref("nn.depth_to_space", data, block_size=block_size, layout="NCHW", mode=mode)


def space_to_depth_python(data, block_size: int) -> np.ndarray:
    return _ref("nn.space_to_depth", data, block_size=block_size, layout="NCHW")


def _roi_align(layout: str):
    def roi_align(a_np, rois_np, pooled_size, spatial_scale, sample_ratio, mode="avg"):
        mode = mode.decode() if isinstance(mode, bytes) else mode
        return _ref("vision.roi_align", a_np, rois_np, pooled_size=pooled_size,
                    spatial_scale=spatial_scale, sample_ratio=sample_ratio, layout=layout,
                    mode=mode)

    return roi_align


roi_align_nchw_python = _roi_align("NCHW")
roi_align_nhwc_python = _roi_align("NHWC")


def conv1d_ncw_python(a_np, w_np, stride, padding, dilation):
    strides = (stride,) if isinstance(stride, int) else tuple(stride)
    dil = (dilation,) if isinstance(dilation, int) else tuple(dilation)
    return _ref("nn.conv1d", a_np, w_np, strides=strides, padding=_pads(padding, 1),
                dilation=dil)


def dilate_python(input_np, strides, dilation_value=0.0, out_dtype=None) -> np.ndarray:
    """``input_np`` with ``strides[i] - 1`` copies of ``dilation_value`` between elements
    along axis ``i``."""
    x = np.asarray(input_np)
    shape = tuple((d - 1) * s + 1 for d, s in zip(x.shape, strides))
    out = np.full(shape, dilation_value, dtype=out_dtype or x.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = x
    return out


def sequence_mask(data, valid_length, mask_value, axis: int) -> np.ndarray:
    """Entries past ``valid_length[b]`` along ``axis`` (0 or 1; the batch is the other
    of the two) set to ``mask_value``."""
    data = np.array(data)
    steps = np.arange(data.shape[axis])
    mask = steps[:, None] < np.asarray(valid_length)[None, :]  # (steps, batch)
    if axis == 1:
        mask = mask.T
    mask = mask.reshape(mask.shape + (1,) * (data.ndim - 2))
    return np.where(mask, data, np.asarray(mask_value, data.dtype))


def _resize(n: int, default_layout: str):
    op_name = f"image.resize{n}d"

    def resize(data, scale, layout: str = default_layout, method: str = "nearest_neighbor",
               coordinate_transformation_mode: str = "align_corners"):
        """TVM's reference resize: each spatial extent becomes ``round(extent * scale)``;
        nearest neighbour rounds half up with ``align_corners`` and down otherwise (TVM's
        reference, spelled out rather than left to the op's default); the values are
        relayir's ``image.resize`` reference with those choices."""
        data = np.asarray(data)
        axes = [layout.index(c) for c in layout if c not in "NC"]
        size = tuple(int(round(data.shape[a] * s)) for a, s in zip(axes, scale))
        rounding = ""
        if method == "nearest_neighbor":
            rounding = ("round_prefer_ceil" if coordinate_transformation_mode == "align_corners"
                        else "floor")
        return _ref(op_name, data, size=size, layout=layout, method=method,
                    coordinate_transformation_mode=coordinate_transformation_mode,
                    rounding_method=rounding)

    resize.__name__ = f"resize{n}d_python"
    return resize


resize1d_python = _resize(1, "NCW")
resize2d_python = _resize(2, "NCHW")
resize3d_python = _resize(3, "NCDHW")


def lrn_python(a_np, size, axis, bias, alpha, beta) -> np.ndarray:
    return _ref("nn.lrn", a_np, size=size, axis=axis, bias=bias, alpha=alpha, beta=beta)


def l2_normalize_python(a_np, eps, axis=None) -> np.ndarray:
    axis = tuple(axis) if axis is not None else None
    norm = np.sqrt(np.maximum(np.sum(np.square(a_np), axis=axis, keepdims=True), eps))
    return np.asarray(a_np) / norm


def matrix_set_diag(input_np, diagonal, k=0, align: str = "RIGHT_LEFT") -> np.ndarray:
    """TensorFlow's MatrixSetDiagV3, element by element (independent of the layer's
    constant-index construction in ``relay/op/_matrix_set_diag.py``)."""
    out = np.array(input_np)
    rows, cols = out.shape[-2:]
    band = np.ndim(k) != 0
    lo, hi = (int(k[0]), int(k[-1])) if band else (int(k), int(k))
    longest = min(rows + min(0, hi), cols - max(0, lo))
    upper, lower = align.split("_")
    for d in range(lo, hi + 1):
        length = min(rows + min(0, d), cols - max(0, d))
        shift = longest - length if (upper if d >= 0 else lower) == "RIGHT" else 0
        for t in range(length):
            i, j = t + max(0, -d), t + max(0, d)
            src = diagonal[..., hi - d, t + shift] if band else diagonal[..., t + shift]
            out[..., i, j] = src
    return out


def nll_loss(predictions, targets, weights, reduction: str = "mean",
             ignore_index: int = -100) -> np.ndarray:
    """PyTorch's ``nll_loss`` with class weights, looping over the targets."""
    losses = np.zeros(targets.shape, predictions.dtype)
    counted = np.zeros(targets.shape, predictions.dtype)
    for pos in np.ndindex(*targets.shape):
        c = int(targets[pos])
        if c != ignore_index:
            counted[pos] = weights[c]
            losses[pos] = -predictions[(pos[0], c, *pos[1:])] * weights[c]
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / counted.sum()


__getattr__ = refusing_module(__name__, "relayir.tvm offers the references relayir's ops "
                              "have; use numpy or relayir's op reference "
                              "(relayir.ir.op.get_op(name).reference)")


__all__ = ["batch_matmul", "conv1d_ncw_python", "conv2d_nchw_python", "conv2d_nhwc_python",
           "conv3d_ncdhw_python", "deformable_conv2d_nchw_python",
           "deformable_conv2d_nhwc_python", "depth_to_space_python", "dilate_python",
           "l2_normalize_python", "lrn_python", "resize1d_python", "roi_align_nchw_python",
           "roi_align_nhwc_python", "space_to_depth_python",
           "resize2d_python", "resize3d_python", "searchsorted_ref",
           "sequence_mask", "gather_python", "log_softmax_python", "matrix_set_diag", "nll_loss",
           "one_hot", "softmax_python",
           "strided_slice_python"]
