"""Neural-network operators (``nn.*``): dense layers, convolutions, pooling, normalisation.

Each op is defined once here: attrs dataclass, type relation, numpy reference, fusion
pattern, and a constructor with Relay's Python signature (``relayir.nn.conv2d``).

Semantic choices where Relay leaves room (all references run in inference mode):

- Layouts are any permutation of the canonical letters (``NCHW``/``NHWC``/..., ``OIHW``/
  ``HWIO``/...). An empty ``kernel_layout`` means the usual partner of ``data_layout``
  (``NHWC`` → ``HWIO``, otherwise ``OIHW``); an ``out_layout`` equal to the data layout
  is stored as ``""`` so equal programs have equal attrs.
- ``padding`` is stored as ``(before..., after...)`` per spatial axis: conv2d/pool2d
  ``(top, left, bottom, right)``, conv1d ``(left, right)``.
- Pooling with ``ceil_mode`` uses PyTorch's rule: a last window that would start in the
  right padding is dropped (TVM's formula keeps it and pools only padding there).
- ``count_include_pad`` counts the user's padding, never the ceil-mode overhang (PyTorch).
- Float references accumulate in float64 and cast back; integer ones in int64.
- Ops whose maths needs fractions (leaky_relu, prelu, softmax, norms) require floats.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..ir.expr import Constant, Expr, TupleGetItem, Var, const
from ..ir.types import Any, TensorType, TupleType, is_float
from .attrs_util import attr_dtype, set_fields
from .registry import Attrs, OpPattern, call, register_op
from .type_rel import (
    broadcast_dim,
    check_axis,
    dim_may_equal,
    fail,
    float_identity_rel,
    identity_rel,
    num_elements,
    require_float,
    same_dtype,
    tensor,
    tensors,
)

# ---------------------------------------------------------------- attribute helpers


def _ints(value, n: int, name: str, minimum: int = 0) -> tuple:
    """``2`` → ``(2, 2)``; a sequence must have ``n`` entries, each ``>= minimum``."""
    vals = tuple(value) if isinstance(value, (list, tuple, np.ndarray)) else (value,) * n
    if len(vals) != n:
        raise ValueError(f"{name} needs {n} values, found {value!r}")
    out = tuple(int(v) for v in vals)
    if any(v < minimum for v in out):
        raise ValueError(f"{name} values must be >= {minimum}, found {value!r}")
    return out


def _padding(value, n: int) -> tuple:
    """1, n or 2n ints → ``(before_0, ..., before_{n-1}, after_0, ..., after_{n-1})``."""
    vals = tuple(value) if isinstance(value, (list, tuple, np.ndarray)) else (value,)
    if len(vals) == 1:
        vals = vals * (2 * n)
    elif len(vals) == n:
        vals = vals * 2
    if len(vals) != 2 * n:
        raise ValueError(f"padding needs 1, {n} or {2 * n} values, found {value!r}")
    return _ints(vals, 2 * n, "padding")


def _dtype_attr(value) -> str:
    """An ``out_dtype``: ``""`` (the inputs' dtype) or a dtype name."""
    return "" if value in ("", None) else attr_dtype(value, "out_dtype")


def _layout(value: str, letters: str, name: str) -> str:
    if sorted(value) != sorted(letters):
        raise ValueError(f"{name} must be a permutation of {letters!r}, found {value!r}")
    return value


def _implied_kernel_layout(data_layout: str, spatial: str) -> str:
    """Relay's partner layouts: ``NHWC`` → ``HWIO``, anything else → ``OIHW``."""
    return spatial + "IO" if data_layout == "N" + spatial + "C" else "OI" + spatial


def _layouts(obj, letters: str, data_field: str, kernel: str | None = None) -> None:
    """Check the data layout, resolve ``kernel_layout=""`` and canonicalise ``out_layout``."""
    data = _layout(getattr(obj, data_field), letters, data_field)
    if kernel is not None:
        kl = obj.kernel_layout or _implied_kernel_layout(data, letters[2:])
        set_fields(obj, kernel_layout=_layout(kl, kernel, "kernel_layout"))
    if obj.out_layout:
        _layout(obj.out_layout, letters, "out_layout")
        if obj.out_layout == data:
            set_fields(obj, out_layout="")


def _positive(value, name: str) -> int:
    if int(value) < 1:
        raise ValueError(f"{name} must be >= 1, found {value!r}")
    return int(value)


# ---------------------------------------------------------------- relation helpers


def _acc_dtype(*dtypes: str) -> str:
    """float64 if any of ``dtypes`` is a float, else int64 (wraps like C on the cast back)."""
    return "float64" if any(is_float(d) for d in dtypes) else "int64"


def _static(*dims) -> bool:
    return all(isinstance(d, int) for d in dims)


def _out_dtype(attrs, a: TensorType, b: TensorType, names) -> str:
    """Inputs may differ in dtype only when ``out_dtype`` says what the result is."""
    if attrs.out_dtype:
        return attrs.out_dtype
    return same_dtype(a, b, names)


def _rank(t: TensorType, name: str, ranks, layout: str = "") -> None:
    if t.ndim not in ranks:
        want = " or ".join(str(r) for r in ranks)
        extra = f" ({layout})" if layout else ""
        fail(f"{name} must have rank {want}{extra}, found {t}")


def _param(data: TensorType, param: TensorType, name: str, axis: int) -> None:
    """A per-channel parameter: shape ``(data.shape[axis],)`` and the data's dtype."""
    c = data.shape[axis]
    if param.ndim != 1 or not dim_may_equal(param.shape[0], c):
        fail(f"{name} must have shape ({c},) to match axis {axis} of data: "
             f"data is {data} but {name} is {param}")
    same_dtype(data, param, ("data", name))


def _axis(axis: int, data: TensorType) -> int:
    return check_axis(axis, data.ndim, of=f"data {data}")


def _layout_shape(dims: dict, layout: str) -> tuple:
    return tuple(dims[ch] for ch in layout)


def _to_canonical(x: np.ndarray, layout: str, canonical: str) -> np.ndarray:
    return np.transpose(x, [layout.index(ch) for ch in canonical])


def _from_canonical(x: np.ndarray, canonical: str, layout: str) -> np.ndarray:
    return np.transpose(x, [canonical.index(ch) for ch in layout])


def _window_out(d, k, stride, dilation, before, after, ceil_mode=False):
    """Output extent of a sliding window, or ``Any()`` if ``d`` or ``k`` is not static."""
    if not _static(d, k):
        return Any()
    num = d + before + after - ((k - 1) * dilation + 1)
    if not ceil_mode:
        return num // stride + 1 if num >= 0 else 0
    out = -(-num // stride) + 1 if num >= 0 else 0
    if out > 0 and (out - 1) * stride >= d + before:  # PyTorch: no window starts in padding
        out -= 1
    return out


# ---------------------------------------------------------------- window helpers (refs)


def _windows(x: np.ndarray, out_hw, kernel, strides, dilation) -> np.ndarray:
    """A read-only ``(N, C, OH, OW, KH, KW)`` view of ``x`` (NCHW, already padded)."""
    sn, sc, sh, sw = x.strides
    shape = (x.shape[0], x.shape[1], *out_hw, *kernel)
    st = (sn, sc, sh * strides[0], sw * strides[1], sh * dilation[0], sw * dilation[1])
    return as_strided(x, shape, st, writeable=False)


def _pad_hw(x: np.ndarray, pads, value=0) -> np.ndarray:
    top, left, bottom, right = pads
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


# ---------------------------------------------------------------- dense / matmul


@dataclasses.dataclass(frozen=True)
class DenseAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""

    def __post_init__(self):
        if self.units is not None:
            set_fields(self, units=_positive(self.units, "units"))
        set_fields(self, out_dtype=_dtype_attr(self.out_dtype))


def _check_units(attrs, out_dim, weight: TensorType, name: str = "weight"):
    """The output width: the weight's, or ``units`` when the weight's is not static."""
    if attrs.units is None:
        return out_dim
    if not dim_may_equal(out_dim, attrs.units):
        fail(f"units={attrs.units} but {name} gives {out_dim} output units: {name} is {weight}")
    return attrs.units


def _dense_rel(types, attrs):
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    _rank(weight, "weight", (2,), "units, in")
    if data.ndim < 1:
        fail(f"data must have rank >= 1, found {data}")
    if not dim_may_equal(data.shape[-1], weight.shape[1]):
        fail(f"units mismatch: data is {data} but weight is {weight}")
    units = _check_units(attrs, weight.shape[0], weight)
    return TensorType((*data.shape[:-1], units), dtype)


def _dense_ref(data, weight, attrs):
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    return np.matmul(data.astype(acc), weight.astype(acc).T).astype(dtype)


register_op("nn.dense", rel=_dense_rel, ref=_dense_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            num_inputs=2, arg_names=("data", "weight"), attrs=DenseAttrs,
            description="data (..., in) x weight (units, in) → (..., units)")


@dataclasses.dataclass(frozen=True)
class MatmulAttrs(Attrs):
    units: int | None = None
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = False

    def __post_init__(self):
        DenseAttrs.__post_init__(self)
        set_fields(self, transpose_a=bool(self.transpose_a), transpose_b=bool(self.transpose_b))


def _matmul_rel(types, attrs):
    a, b = tensors(types, ("tensor_a", "tensor_b"))
    dtype = _out_dtype(attrs, a, b, ("tensor_a", "tensor_b"))
    _rank(b, "tensor_b", (2,))
    if a.ndim < (2 if attrs.transpose_a else 1):
        fail(f"tensor_a must have rank >= {2 if attrs.transpose_a else 1}, found {a}")
    rows = a.shape[:-2] + ((a.shape[-1],) if attrs.transpose_a else a.shape[-2:-1])
    k_a = a.shape[-2] if attrs.transpose_a else a.shape[-1]
    k_b, n = (b.shape[1], b.shape[0]) if attrs.transpose_b else b.shape
    if not dim_may_equal(k_a, k_b):
        fail(f"reduction mismatch ({k_a} vs {k_b}, transpose_a={attrs.transpose_a}, "
             f"transpose_b={attrs.transpose_b}): tensor_a is {a} but tensor_b is {b}")
    return TensorType((*rows, _check_units(attrs, n, b, "tensor_b")), dtype)


def _matmul_ref(a, b, attrs):
    dtype = attrs.out_dtype or a.dtype.name
    acc = _acc_dtype(dtype, a.dtype.name)
    a, b = a.astype(acc), b.astype(acc)
    if attrs.transpose_a:
        a = np.swapaxes(a, -1, -2)
    return np.matmul(a, b.T if attrs.transpose_b else b).astype(dtype)


register_op("nn.matmul", rel=_matmul_rel, ref=_matmul_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
            arg_names=("tensor_a", "tensor_b"), attrs=MatmulAttrs)


@dataclasses.dataclass(frozen=True)
class BatchMatmulAttrs(Attrs):
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = True

    def __post_init__(self):
        set_fields(self, out_dtype=_dtype_attr(self.out_dtype), transpose_a=bool(self.transpose_a),
                   transpose_b=bool(self.transpose_b))


def _batch_matmul_rel(types, attrs):
    a, b = tensors(types, ("tensor_a", "tensor_b"))
    dtype = _out_dtype(attrs, a, b, ("tensor_a", "tensor_b"))
    _rank(a, "tensor_a", (3,))
    _rank(b, "tensor_b", (3,))
    batch = broadcast_dim(a.shape[0], b.shape[0])
    if batch is None:
        fail(f"batch sizes differ ({a.shape[0]} vs {b.shape[0]}, neither is 1): "
             f"tensor_a is {a} but tensor_b is {b}")
    m, k_a = (a.shape[2], a.shape[1]) if attrs.transpose_a else a.shape[1:]
    n, k_b = b.shape[1:] if attrs.transpose_b else (b.shape[2], b.shape[1])
    if not dim_may_equal(k_a, k_b):
        fail(f"reduction mismatch ({k_a} vs {k_b}, transpose_a={attrs.transpose_a}, "
             f"transpose_b={attrs.transpose_b}): tensor_a is {a} but tensor_b is {b}")
    return TensorType((batch, m, n), dtype)


def _batch_matmul_ref(a, b, attrs):
    dtype = attrs.out_dtype or a.dtype.name
    acc = _acc_dtype(dtype, a.dtype.name)
    a, b = a.astype(acc), b.astype(acc)
    if attrs.transpose_a:
        a = np.swapaxes(a, 1, 2)
    if attrs.transpose_b:
        b = np.swapaxes(b, 1, 2)
    return np.matmul(a, b).astype(dtype)


register_op("nn.batch_matmul", rel=_batch_matmul_rel, ref=_batch_matmul_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
            arg_names=("tensor_a", "tensor_b"), attrs=BatchMatmulAttrs)


# ---------------------------------------------------------------- activations


@dataclasses.dataclass(frozen=True)
class BiasAddAttrs(Attrs):
    axis: int = 1

    def __post_init__(self):
        set_fields(self, axis=int(self.axis))


def _bias_add_rel(types, attrs):
    data, bias = tensors(types, ("data", "bias"))
    axis = _axis(attrs.axis, data)
    _param(data, bias, "bias", axis)
    return data


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """Reshape a 1-D per-channel array to broadcast along ``axis`` of a rank-``ndim`` array."""
    return v.reshape([-1 if i == axis else 1 for i in range(ndim)])


def _bias_add_ref(data, bias, attrs):
    axis = attrs.axis % data.ndim
    return (data + _along(bias, axis, data.ndim)).astype(data.dtype)


register_op("nn.bias_add", rel=_bias_add_rel, ref=_bias_add_ref, pattern=OpPattern.BROADCAST,
            num_inputs=2, arg_names=("data", "bias"), attrs=BiasAddAttrs)


def _relu_ref(data, attrs):
    return np.maximum(data, np.zeros((), data.dtype))


register_op("nn.relu", rel=identity_rel, ref=_relu_ref, pattern=OpPattern.ELEMWISE,
            num_inputs=1)


@dataclasses.dataclass(frozen=True)
class LeakyReluAttrs(Attrs):
    alpha: float = 0.01

    def __post_init__(self):
        set_fields(self, alpha=float(self.alpha))


def _leaky_relu_ref(data, attrs):
    x = data.astype("float64")
    return np.where(x > 0, x, attrs.alpha * x).astype(data.dtype)


register_op("nn.leaky_relu", rel=float_identity_rel, ref=_leaky_relu_ref,
            pattern=OpPattern.ELEMWISE, num_inputs=1, attrs=LeakyReluAttrs)


@dataclasses.dataclass(frozen=True)
class PReluAttrs(Attrs):
    axis: int = 1

    def __post_init__(self):
        set_fields(self, axis=int(self.axis))


def _prelu_rel(types, attrs):
    data, alpha = tensors(types, ("data", "alpha"))
    require_float(data)
    axis = _axis(attrs.axis, data)
    _param(data, alpha, "alpha", axis)
    return data


def _prelu_ref(data, alpha, attrs):
    x = data.astype("float64")
    a = _along(alpha.astype("float64"), attrs.axis % data.ndim, data.ndim)
    return np.where(x > 0, x, a * x).astype(data.dtype)


register_op("nn.prelu", rel=_prelu_rel, ref=_prelu_ref, pattern=OpPattern.BROADCAST,
            num_inputs=2, arg_names=("data", "alpha"), attrs=PReluAttrs)


@dataclasses.dataclass(frozen=True)
class SoftmaxAttrs(Attrs):
    axis: int = -1

    def __post_init__(self):
        set_fields(self, axis=int(self.axis))


def _softmax_rel(types, attrs):
    t = float_identity_rel(types, attrs)
    _axis(attrs.axis, t)
    return t


def _shifted(data, axis):
    x = data.astype("float64")
    return x - np.max(x, axis=axis, keepdims=True)


def _softmax_ref(data, attrs):
    e = np.exp(_shifted(data, attrs.axis))
    return (e / e.sum(axis=attrs.axis, keepdims=True)).astype(data.dtype)


def _log_softmax_ref(data, attrs):
    s = _shifted(data, attrs.axis)
    return (s - np.log(np.exp(s).sum(axis=attrs.axis, keepdims=True))).astype(data.dtype)


register_op("nn.softmax", rel=_softmax_rel, ref=_softmax_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=SoftmaxAttrs)
register_op("nn.log_softmax", rel=_softmax_rel, ref=_log_softmax_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=SoftmaxAttrs)


# ---------------------------------------------------------------- convolution


@dataclasses.dataclass(frozen=True)
class Conv2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCHW"
    kernel_layout: str = ""  # resolved from data_layout: NHWC → HWIO, otherwise OIHW
    out_layout: str = ""
    out_dtype: str = ""

    _spatial = "HW"

    def __post_init__(self):
        n = len(self._spatial)
        set_fields(self, strides=_ints(self.strides, n, "strides", 1),
                   padding=_padding(self.padding, n),
                   dilation=_ints(self.dilation, n, "dilation", 1),
                   groups=_positive(self.groups, "groups"))
        if self.channels is not None:
            set_fields(self, channels=_positive(self.channels, "channels"))
        if self.kernel_size is not None:
            set_fields(self, kernel_size=_ints(self.kernel_size, n, "kernel_size", 1))
        set_fields(self, out_dtype=_dtype_attr(self.out_dtype))
        _layouts(self, "NC" + self._spatial, "data_layout", "OI" + self._spatial)

    def non_default_items(self) -> list[tuple[str, object]]:
        """Leave out a kernel layout that the data layout implies, as the text omits it."""
        implied = _implied_kernel_layout(self.data_layout, self._spatial)
        return [(k, v) for k, v in super().non_default_items()
                if not (k == "kernel_layout" and v == implied)]


@dataclasses.dataclass(frozen=True)
class Conv1DAttrs(Conv2DAttrs):
    strides: tuple = (1,)
    padding: tuple = (0, 0)
    dilation: tuple = (1,)
    data_layout: str = "NCW"

    _spatial = "W"


def _conv_rel(types, attrs):
    sp = attrs._spatial
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    dl, kl = attrs.data_layout, attrs.kernel_layout

    def bad(problem: str):
        fail(f"{problem}: data is {data} but weight is {weight}")

    if data.ndim != len(dl) or weight.ndim != len(kl):
        bad(f"data must have rank {len(dl)} ({dl}) and weight rank {len(kl)} ({kl})")
    dd = dict(zip(dl, data.shape))
    wd = dict(zip(kl, weight.shape))
    c, o, i, g = dd["C"], wd["O"], wd["I"], attrs.groups
    if _static(c, i) and c != i * g:
        bad(f"input channels mismatch: data has {c} channels but weight expects "
            f"{i} x groups {g} = {i * g}")
    if _static(c) and c % g:
        bad(f"data has {c} channels, which groups={g} does not divide")
    if _static(o) and o % g:
        bad(f"weight has {o} output channels, which groups={g} does not divide")
    if attrs.channels is not None and not dim_may_equal(o, attrs.channels):
        bad(f"channels={attrs.channels} but weight has {o} output channels")
    ks = [wd[s] for s in sp]
    if attrs.kernel_size is not None and not all(map(dim_may_equal, ks, attrs.kernel_size)):
        bad(f"kernel_size={attrs.kernel_size} but the weight's kernel is {tuple(ks)}")
    out = {"N": dd["N"], "C": o if _static(o) or attrs.channels is None else attrs.channels}
    n = len(sp)
    for j, s in enumerate(sp):
        d = _window_out(dd[s], ks[j], attrs.strides[j], attrs.dilation[j], attrs.padding[j],
                        attrs.padding[j + n])
        if isinstance(d, int) and d < 1:
            bad(f"the kernel (dilation {attrs.dilation}) is larger than the padded input "
                f"along {s}")
        out[s] = d
    return TensorType(_layout_shape(out, attrs.out_layout or dl), dtype)


def _conv2d_nchw(x, w, strides, pads, dilation, groups):
    """Grouped conv by im2col: one (batched) GEMM, no Python loop over pixels."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    g, og = groups, o // groups
    oh = (h + pads[0] + pads[2] - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    win = _windows(_pad_hw(x, pads), (oh, ow), (kh, kw), strides, dilation)
    cols = win.reshape(n, g, cg, oh, ow, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
    cols = cols.reshape(g, n * oh * ow, cg * kh * kw)
    wm = w.reshape(g, og, cg * kh * kw).transpose(0, 2, 1)
    out = np.matmul(cols, wm)  # (g, n*oh*ow, og)
    return out.reshape(g, n, oh, ow, og).transpose(1, 0, 4, 2, 3).reshape(n, o, oh, ow)


def _conv_ref(data, weight, attrs):
    sp = attrs._spatial
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    x = _to_canonical(data, attrs.data_layout, "NC" + sp).astype(acc)
    w = _to_canonical(weight, attrs.kernel_layout, "OI" + sp).astype(acc)
    strides, dilation, pads = attrs.strides, attrs.dilation, attrs.padding
    if len(sp) == 1:  # conv1d is conv2d over a height of 1
        x, w = x[:, :, None, :], w[:, :, None, :]
        strides, dilation, pads = (1, *strides), (1, *dilation), (0, pads[0], 0, pads[1])
    out = _conv2d_nchw(x, w, strides, pads, dilation, attrs.groups)
    if len(sp) == 1:
        out = out[:, :, 0, :]
    return _from_canonical(out, "NC" + sp, attrs.out_layout or attrs.data_layout).astype(dtype)


register_op("nn.conv2d", rel=_conv_rel, ref=_conv_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            num_inputs=2, arg_names=("data", "weight"), attrs=Conv2DAttrs)
register_op("nn.conv1d", rel=_conv_rel, ref=_conv_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            num_inputs=2, arg_names=("data", "weight"), attrs=Conv1DAttrs)


# ---------------------------------------------------------------- pooling


@dataclasses.dataclass(frozen=True)
class MaxPool2DAttrs(Attrs):
    pool_size: tuple = (1, 1)
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False

    def __post_init__(self):
        set_fields(self, pool_size=_ints(self.pool_size, 2, "pool_size", 1),
                   strides=_ints(self.strides, 2, "strides", 1),
                   dilation=_ints(self.dilation, 2, "dilation", 1),
                   padding=_padding(self.padding, 2), ceil_mode=bool(self.ceil_mode))
        _layouts(self, "NCHW", "layout")


@dataclasses.dataclass(frozen=True)
class AvgPool2DAttrs(MaxPool2DAttrs):
    count_include_pad: bool = False

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, count_include_pad=bool(self.count_include_pad))


def _pool_out_hw(h, w, attrs):
    p = attrs.padding
    return tuple(
        _window_out(d, attrs.pool_size[j], attrs.strides[j], attrs.dilation[j], p[j], p[j + 2],
                    attrs.ceil_mode)
        for j, d in enumerate((h, w))
    )


def _pool_rel(types, attrs):
    data = tensor(types[0])
    _rank(data, "data", (4,), attrs.layout)
    dims = dict(zip(attrs.layout, data.shape))
    oh, ow = _pool_out_hw(dims["H"], dims["W"], attrs)
    if (isinstance(oh, int) and oh < 1) or (isinstance(ow, int) and ow < 1):
        fail(f"pool_size {attrs.pool_size} (dilation {attrs.dilation}) is larger than the "
             f"padded input: data is {data}")
    dims.update(H=oh, W=ow)
    return TensorType(_layout_shape(dims, attrs.out_layout or attrs.layout), data.dtype)


def _pool_geometry(x, attrs):
    """Padding with the ceil-mode overhang added after, and the output size."""
    oh, ow = _pool_out_hw(x.shape[2], x.shape[3], attrs)
    t, lf, b, r = attrs.padding
    need = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in
            zip((oh, ow), attrs.strides, attrs.pool_size, attrs.dilation)]
    b = max(b, need[0] - x.shape[2] - t)
    r = max(r, need[1] - x.shape[3] - lf)
    return (t, lf, b, r), (oh, ow)


def _max_pool2d_ref(data, attrs):
    x = _to_canonical(data, attrs.layout, "NCHW")
    low = -np.inf if is_float(x.dtype.name) else np.iinfo(x.dtype).min
    pads, out_hw = _pool_geometry(x, attrs)
    win = _windows(_pad_hw(x, pads, low), out_hw, attrs.pool_size, attrs.strides, attrs.dilation)
    out = win.max(axis=(4, 5))
    return _from_canonical(out, "NCHW", attrs.out_layout or attrs.layout).astype(data.dtype)


def _tap_counts(size, before, after, overhang, out, k, s, d, include_pad):
    """Per output position: how many window taps land on counted positions (1-D)."""
    mask = np.zeros(before + size + after + overhang)
    mask[(0 if include_pad else before):before + size + (after if include_pad else 0)] = 1
    idx = np.arange(out)[:, None] * s + np.arange(k)[None, :] * d
    return mask[idx].sum(axis=1)


def _avg_pool2d_ref(data, attrs):
    dtype = data.dtype.name
    x = _to_canonical(data, attrs.layout, "NCHW").astype(_acc_dtype(dtype))
    pads, (oh, ow) = _pool_geometry(x, attrs)
    win = _windows(_pad_hw(x, pads), (oh, ow), attrs.pool_size, attrs.strides, attrs.dilation)
    total = win.sum(axis=(4, 5))
    b, r = attrs.padding[2:]
    counts = [
        _tap_counts(x.shape[2 + j], pads[j], user_after, pads[j + 2] - user_after, o,
                    attrs.pool_size[j], attrs.strides[j], attrs.dilation[j],
                    attrs.count_include_pad)
        for j, (user_after, o) in enumerate(((b, oh), (r, ow)))
    ]
    count = np.maximum(np.outer(*counts), 1)
    out = total / count if is_float(dtype) else total // count.astype("int64")
    return _from_canonical(out, "NCHW", attrs.out_layout or attrs.layout).astype(dtype)


register_op("nn.max_pool2d", rel=_pool_rel, ref=_max_pool2d_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=MaxPool2DAttrs)
register_op("nn.avg_pool2d", rel=_pool_rel, ref=_avg_pool2d_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=AvgPool2DAttrs)


@dataclasses.dataclass(frozen=True)
class GlobalPool2DAttrs(Attrs):
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        _layouts(self, "NCHW", "layout")


@dataclasses.dataclass(frozen=True)
class AdaptivePool2DAttrs(Attrs):
    """``output_size``: ``None``/``()`` keeps the input size; a ``None`` entry keeps that axis."""

    output_size: tuple | None = None
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        size = self.output_size
        if size is not None:
            size = tuple(size) if isinstance(size, (list, tuple)) else (size, size)
            if len(size) == 1:
                size = size * 2
            if len(size) not in (0, 2):
                raise ValueError(f"output_size needs 1 or 2 values, found {self.output_size!r}")
            size = tuple(None if v is None else _positive(v, "output_size") for v in size)
            set_fields(self, output_size=size or None)
        _layouts(self, "NCHW", "layout")


def _adaptive_hw(h, w, attrs):
    size = attrs.output_size or (None, None)
    return tuple(d if s is None else s for d, s in zip((h, w), size))


def _adaptive_pool_rel(types, attrs):
    data = tensor(types[0])
    _rank(data, "data", (4,), attrs.layout)
    dims = dict(zip(attrs.layout, data.shape))
    if isinstance(attrs, GlobalPool2DAttrs):
        dims.update(H=1, W=1)
    else:
        dims["H"], dims["W"] = _adaptive_hw(dims["H"], dims["W"], attrs)
    return TensorType(_layout_shape(dims, attrs.out_layout or attrs.layout), data.dtype)


def _global_pool_ref(reduce):
    def ref(data, attrs):
        x = data.astype(_acc_dtype(data.dtype.name)) if reduce is np.mean else data
        axes = (attrs.layout.index("H"), attrs.layout.index("W"))
        out = reduce(x, axis=axes, keepdims=True)
        if attrs.out_layout:
            out = _from_canonical(out, attrs.layout, attrs.out_layout)
        return out.astype(data.dtype)

    return ref


def _adaptive_avg_pool2d_ref(data, attrs):
    """PyTorch's bins ``[floor(i*H/oh), ceil((i+1)*H/oh))``, summed with an integral image."""
    dtype = data.dtype.name
    x = _to_canonical(data, attrs.layout, "NCHW").astype(_acc_dtype(dtype))
    h, w = x.shape[2:]
    oh, ow = _adaptive_hw(h, w, attrs)
    integral = np.zeros((*x.shape[:2], h + 1, w + 1), x.dtype)
    integral[:, :, 1:, 1:] = x.cumsum(axis=2).cumsum(axis=3)
    i, j = np.arange(oh), np.arange(ow)
    hs, he = (i * h) // oh, -((-(i + 1) * h) // oh)
    ws, we = (j * w) // ow, -((-(j + 1) * w) // ow)
    total = (integral[:, :, he[:, None], we] - integral[:, :, hs[:, None], we]
             - integral[:, :, he[:, None], ws] + integral[:, :, hs[:, None], ws])
    count = np.outer(he - hs, we - ws)
    out = total / count if is_float(dtype) else total // count
    return _from_canonical(out, "NCHW", attrs.out_layout or attrs.layout).astype(dtype)


register_op("nn.global_avg_pool2d", rel=_adaptive_pool_rel, ref=_global_pool_ref(np.mean),
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=GlobalPool2DAttrs)
register_op("nn.global_max_pool2d", rel=_adaptive_pool_rel, ref=_global_pool_ref(np.max),
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=GlobalPool2DAttrs)
register_op("nn.adaptive_avg_pool2d", rel=_adaptive_pool_rel, ref=_adaptive_avg_pool2d_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=AdaptivePool2DAttrs)


# ---------------------------------------------------------------- normalisation


@dataclasses.dataclass(frozen=True)
class NormAttrs(Attrs):
    """Attrs of batch_norm and instance_norm (``axis`` is the channel axis)."""

    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    def __post_init__(self):
        set_fields(self, axis=int(self.axis), epsilon=float(self.epsilon), center=bool(self.center),
                   scale=bool(self.scale))


@dataclasses.dataclass(frozen=True)
class LayerNormAttrs(NormAttrs):
    axis: int = -1


@dataclasses.dataclass(frozen=True)
class GroupNormAttrs(NormAttrs):
    num_groups: int = 1

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, num_groups=_positive(self.num_groups, "num_groups"))


_NORM_PARAMS = ("gamma", "beta", "moving_mean", "moving_var")


def _norm_rel(types, attrs):
    """data plus per-channel params (gamma, beta[, moving_mean, moving_var])."""
    data = tensor(types[0])
    require_float(data)
    params = tensors(types[1:], _NORM_PARAMS)
    axis = _axis(attrs.axis, data)
    for p, name in zip(params, _NORM_PARAMS):
        _param(data, p, name, axis)
    return axis, data, params


def _batch_norm_rel(types, attrs):
    _, data, params = _norm_rel(types, attrs)
    return TupleType((data, params[2], params[3]))


def _stat_norm_rel(types, attrs):
    """instance_norm / group_norm: statistics per sample, so a batch axis is needed."""
    axis, data, _ = _norm_rel(types, attrs)
    if data.ndim < 2 or axis == 0:
        fail(f"axis {attrs.axis} must be a channel axis other than the batch axis 0 "
             f"of data: data is {data}")
    if isinstance(attrs, GroupNormAttrs):
        c = data.shape[axis]
        if _static(c) and c % attrs.num_groups:
            fail(f"num_groups={attrs.num_groups} does not divide the {c} channels of data: "
                 f"data is {data}")
    return data


def _layer_norm_rel(types, attrs):
    return _norm_rel(types, attrs)[1]


def _affine(y, gamma, beta, attrs, axis):
    if attrs.scale:
        y = y * _along(gamma.astype("float64"), axis, y.ndim)
    if attrs.center:
        y = y + _along(beta.astype("float64"), axis, y.ndim)
    return y


def _normalise(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _batch_norm_ref(data, gamma, beta, mean, var, attrs):
    axis = attrs.axis % data.ndim
    x = data.astype("float64")
    m, v = (_along(a.astype("float64"), axis, data.ndim) for a in (mean, var))
    y = _affine((x - m) / np.sqrt(v + attrs.epsilon), gamma, beta, attrs, axis)
    return y.astype(data.dtype), mean.copy(), var.copy()


def _layer_norm_ref(data, gamma, beta, attrs):
    axis = attrs.axis % data.ndim
    y = _normalise(data.astype("float64"), axis, attrs.epsilon)
    return _affine(y, gamma, beta, attrs, axis).astype(data.dtype)


def _instance_norm_ref(data, gamma, beta, attrs):
    axis = attrs.axis % data.ndim
    axes = tuple(i for i in range(data.ndim) if i not in (0, axis))
    y = _normalise(data.astype("float64"), axes, attrs.epsilon)
    return _affine(y, gamma, beta, attrs, axis).astype(data.dtype)


def _group_norm_ref(data, gamma, beta, attrs):
    axis = attrs.axis % data.ndim
    g, shape = attrs.num_groups, data.shape
    x = data.astype("float64").reshape(*shape[:axis], g, shape[axis] // g, *shape[axis + 1:])
    axes = tuple(i for i in range(x.ndim) if i not in (0, axis))
    y = _normalise(x, axes, attrs.epsilon).reshape(shape)
    return _affine(y, gamma, beta, attrs, axis).astype(data.dtype)


register_op("nn.batch_norm", rel=_batch_norm_rel, ref=_batch_norm_ref, pattern=OpPattern.OPAQUE,
            num_inputs=5, arg_names=("data", *_NORM_PARAMS), attrs=NormAttrs,
            description="inference mode: normalises with the moving statistics")
register_op("nn.layer_norm", rel=_layer_norm_rel, ref=_layer_norm_ref, pattern=OpPattern.OPAQUE,
            num_inputs=3, arg_names=("data", "gamma", "beta"), attrs=LayerNormAttrs)
register_op("nn.group_norm", rel=_stat_norm_rel, ref=_group_norm_ref, pattern=OpPattern.OPAQUE,
            num_inputs=3, arg_names=("data", "gamma", "beta"), attrs=GroupNormAttrs)
register_op("nn.instance_norm", rel=_stat_norm_rel, ref=_instance_norm_ref,
            pattern=OpPattern.OPAQUE, num_inputs=3, arg_names=("data", "gamma", "beta"),
            attrs=NormAttrs)


# ---------------------------------------------------------------- dropout, pad, flatten


@dataclasses.dataclass(frozen=True)
class DropoutAttrs(Attrs):
    rate: float = 0.5

    def __post_init__(self):
        rate = float(self.rate)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be in [0, 1], found {self.rate!r}")
        set_fields(self, rate=rate)


def _dropout_rel(types, attrs):
    t = float_identity_rel(types, attrs)
    return TupleType((t, t))


def _dropout_ref(data, attrs):
    return data.copy(), np.ones_like(data)


register_op("nn.dropout", rel=_dropout_rel, ref=_dropout_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=DropoutAttrs,
            description="inference mode: (data, ones); training passes rewrite it")


_PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect"}


@dataclasses.dataclass(frozen=True)
class PadAttrs(Attrs):
    pad_width: tuple = ()
    pad_mode: str = "constant"

    def __post_init__(self):
        width = tuple(_ints(p, 2, "pad_width entry") for p in self.pad_width)
        set_fields(self, pad_width=width)
        if self.pad_mode not in _PAD_MODES:
            raise ValueError(f"pad_mode must be one of {', '.join(_PAD_MODES)}, "
                             f"found {self.pad_mode!r}")


def _pad_rel(types, attrs):
    data, value = tensors(types, ("data", "pad_value"))
    if len(attrs.pad_width) != data.ndim:
        fail(f"pad_width has {len(attrs.pad_width)} entries but data has rank {data.ndim}: "
             f"data is {data}")
    if value.ndim != 0:
        fail(f"pad_value must be a scalar, found {value}")
    same_dtype(data, value, ("data", "pad_value"))
    out = []
    for axis, (d, (before, after)) in enumerate(zip(data.shape, attrs.pad_width)):
        if isinstance(d, int):
            if attrs.pad_mode == "reflect" and max(before, after) >= max(d, 1):
                fail(f"reflect padding {(before, after)} needs axis {axis} longer than the "
                     f"padding: data is {data}")
            if attrs.pad_mode == "edge" and d == 0 and before + after:
                fail(f"edge padding of the empty axis {axis}: data is {data}")
            out.append(d + before + after)
        else:
            out.append(d if before == after == 0 else Any())
    return TensorType(tuple(out), data.dtype)


def _pad_ref(data, pad_value, attrs):
    mode = _PAD_MODES[attrs.pad_mode]
    if mode == "constant":
        return np.pad(data, attrs.pad_width, mode, constant_values=pad_value[()])
    return np.pad(data, attrs.pad_width, mode)


register_op("nn.pad", rel=_pad_rel, ref=_pad_ref, pattern=OpPattern.INJECTIVE, num_inputs=2,
            arg_names=("data", "pad_value"), attrs=PadAttrs)


def _batch_flatten_rel(types, attrs):
    data = tensor(types[0])
    if data.ndim < 1:
        fail(f"data must have rank >= 1, found {data}")
    rest = num_elements(data.shape[1:])
    return TensorType((data.shape[0], Any() if rest is None else rest), data.dtype)


def _batch_flatten_ref(data, attrs):
    return data.reshape(data.shape[0], -1)


register_op("nn.batch_flatten", rel=_batch_flatten_rel, ref=_batch_flatten_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=1)


# ---------------------------------------------------------------- Relay-style constructors


def dense(data, weight, units=None, out_dtype=""):
    """``data @ weight.T``; ``weight`` is ``(units, in)``."""
    return call("nn.dense", [data, weight], units=units, out_dtype=out_dtype)


def matmul(tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False):
    """``op(a) @ op(b)``; ``tensor_b`` is 2-D, ``transpose_a`` swaps a's last two axes."""
    return call("nn.matmul", [tensor_a, tensor_b], units=units, out_dtype=out_dtype,
                transpose_a=transpose_a, transpose_b=transpose_b)


def batch_matmul(tensor_a, tensor_b, out_dtype="", transpose_a=False, transpose_b=True):
    """3-D batched matmul; ``tensor_b`` is ``(batch, N, K)`` by default, as in Relay."""
    return call("nn.batch_matmul", [tensor_a, tensor_b], out_dtype=out_dtype,
                transpose_a=transpose_a, transpose_b=transpose_b)


def bias_add(data, bias, axis=1):
    return call("nn.bias_add", [data, bias], axis=axis)


def relu(data):
    return call("nn.relu", [data])


def leaky_relu(data, alpha=0.01):
    return call("nn.leaky_relu", [data], alpha=alpha)


def prelu(data, alpha, axis=1):
    return call("nn.prelu", [data, alpha], axis=axis)


def softmax(data, axis=-1):
    return call("nn.softmax", [data], axis=axis)


def log_softmax(data, axis=-1):
    return call("nn.log_softmax", [data], axis=axis)


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="",
           out_layout="", out_dtype=""):
    """2-D convolution. ``kernel_layout=""`` picks ``HWIO`` for NHWC data, else ``OIHW``."""
    return call("nn.conv2d", [data, weight], strides=strides, padding=padding,
                dilation=dilation, groups=groups, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)


def conv1d(data, weight, strides=1, padding=0, dilation=1, groups=1, channels=None,
           kernel_size=None, data_layout="NCW", kernel_layout="", out_layout="", out_dtype=""):
    """1-D convolution. ``kernel_layout=""`` picks ``WIO`` for NWC data, else ``OIW``."""
    return call("nn.conv1d", [data, weight], strides=strides, padding=padding,
                dilation=dilation, groups=groups, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)


def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout="NCHW", out_layout="", ceil_mode=False):
    return call("nn.max_pool2d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode)


def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout="NCHW", out_layout="", ceil_mode=False, count_include_pad=False):
    return call("nn.avg_pool2d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode, count_include_pad=count_include_pad)


def global_avg_pool2d(data, layout="NCHW", out_layout=""):
    return call("nn.global_avg_pool2d", [data], layout=layout, out_layout=out_layout)


def global_max_pool2d(data, layout="NCHW", out_layout=""):
    return call("nn.global_max_pool2d", [data], layout=layout, out_layout=out_layout)


def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout=""):
    return call("nn.adaptive_avg_pool2d", [data], output_size=output_size, layout=layout,
                out_layout=out_layout)


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True,
               scale=True):
    """Returns the call, a 3-tuple ``(out, moving_mean, moving_var)``: use ``[0]``."""
    return call("nn.batch_norm", [data, gamma, beta, moving_mean, moving_var], axis=axis,
                epsilon=epsilon, center=center, scale=scale)


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    return call("nn.layer_norm", [data, gamma, beta], axis=axis, epsilon=epsilon,
                center=center, scale=scale)


def group_norm(data, gamma, beta, num_groups, axis=1, epsilon=1e-5, center=True, scale=True):
    return call("nn.group_norm", [data, gamma, beta], num_groups=num_groups, axis=axis,
                epsilon=epsilon, center=center, scale=scale)


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    return call("nn.instance_norm", [data, gamma, beta], axis=axis, epsilon=epsilon,
                center=center, scale=scale)


def dropout_raw(data, rate=0.5):
    """The ``nn.dropout`` call itself: a tuple ``(out, mask)``."""
    return call("nn.dropout", [data], rate=rate)


def dropout(data, rate=0.5):
    """Field 0 of ``nn.dropout`` (its output), as Relay's ``dropout`` returns."""
    return TupleGetItem(dropout_raw(data, rate), 0)


def _known_dtype(expr) -> str | None:
    if getattr(expr, "has_type", False) and isinstance(expr.checked_type, TensorType):
        return expr.checked_type.dtype
    if isinstance(expr, Var) and isinstance(expr.type_annotation, TensorType):
        return expr.type_annotation.dtype
    if isinstance(expr, Constant):
        return expr.data.dtype.name
    if isinstance(expr, np.ndarray):
        return expr.dtype.name
    return None


def pad(data, pad_width, pad_value=0, pad_mode="constant"):
    """Pad ``data``. A Python-number ``pad_value`` becomes a constant of data's dtype when
    that is known here (annotated var, constant, typed expr), otherwise float32; pass an
    expression (``relayir.const(0, "int32")``) to choose it."""
    if not isinstance(pad_value, Expr):
        pad_value = const(pad_value, dtype=_known_dtype(data) or "float32")
    return call("nn.pad", [data, pad_value], pad_width=pad_width, pad_mode=pad_mode)


def batch_flatten(data):
    return call("nn.batch_flatten", [data])


__all__ = [
    "adaptive_avg_pool2d", "avg_pool2d", "batch_flatten", "batch_matmul", "batch_norm",
    "bias_add", "conv1d", "conv2d", "dense", "dropout", "dropout_raw", "global_avg_pool2d",
    "global_max_pool2d", "group_norm", "instance_norm", "layer_norm", "leaky_relu",
    "log_softmax", "matmul", "max_pool2d", "pad", "prelu", "relu", "softmax",
]
