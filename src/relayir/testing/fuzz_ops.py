"""One sampler per registered op: valid random inputs and attrs for the fuzzer.

``SAMPLERS[name](b)`` returns ``(args, attrs)``: ``args`` are step indices of the
``Builder`` ``b`` (a tuple of indices for a tuple input such as ``concatenate``'s),
taken from earlier values when they fit so that ops chain, or new inputs; ``attrs``
are drawn to fit the inputs' concrete shapes (strides, padding, dilation, groups, axes,
keepdims, layouts, modes). A sample the op's relation refuses is simply drawn again,
so samplers may be a little generous. ``NOT_SAMPLED`` names the ops left out, each
with the reason; a test checks that every registered op is in one of the two.
"""

from __future__ import annotations

import numpy as np

from .fuzz_build import ALL, FLOATS, INTS, NUMERIC, Builder
from .fuzz_program import StepError

SAMPLERS: dict = {}
NOT_SAMPLED: dict[str, str] = {}

F32 = ("float32",)
SIGNED = ("int32", "int32", "int64", "int8", "int16")


def sampler(*names: str):
    def register(fn):
        for n in names:
            if n in SAMPLERS:
                raise ValueError(f"a fuzz sampler for {n} is already registered")
            SAMPLERS[n] = fn if len(names) == 1 else (lambda b, n=n: fn(b, n))
        return fn

    return register


def _axis(b: Builder, ndim: int) -> int:
    a = b.randint(0, max(ndim - 1, 0))
    return a - ndim if ndim and b.coin(0.3) else a


def _axes(b: Builder, ndim: int):
    """``None``, one axis, or a tuple of distinct axes (some negative)."""
    r = b.rng.random()
    if r < 0.25 or ndim == 0:
        return None
    k = 1 if r < 0.6 else b.randint(1, ndim)
    picked = b.sample(range(ndim), k)
    return tuple(a - ndim if b.coin(0.3) else a for a in picked)


# ---------------------------------------------------------------- elementwise


_FLOAT_UNARY = ("exp", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid", "erf",
                "floor", "ceil", "round", "trunc", "sin", "cos", "tan", "isnan", "isinf",
                "isfinite", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")


@sampler(*_FLOAT_UNARY)
def _float_unary(b, name):
    return [b.data((0, 4), FLOATS, lo=0)], {}


@sampler("abs", "negative", "sign", "copy", "nn.relu", "zeros_like", "ones_like")
def _numeric_unary(b, name):
    return [b.data((0, 4), NUMERIC, lo=0)], {}


@sampler("logical_not")
def _logical_not(b):
    return [b.data((0, 4), ("bool",), lo=0)], {}


@sampler("bitwise_not")
def _bitwise_not(b):
    return [b.data((0, 4), INTS + ("bool",), lo=0)], {}


_ARITH = ("add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod",
          "power", "maximum", "minimum")
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


@sampler(*_ARITH, *_COMPARE)
def _binary(b, name):
    x = b.data((0, 4), NUMERIC, lo=0)
    y = b.broadcast_partner(x)
    return ([x, y] if b.coin(0.5) else [y, x]), {}


@sampler("logical_and", "logical_or", "logical_xor")
def _logical(b, name):
    x = b.data((0, 3), ("bool",), lo=0)
    return [x, b.broadcast_partner(x)], {}


@sampler("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")
def _bitwise(b, name):
    kinds = INTS if "shift" in name else INTS + ("bool",)
    x = b.data((0, 3), kinds, lo=0)
    return [x, b.broadcast_partner(x)], {}


@sampler("where")
def _where(b):
    x = b.data((0, 3), ALL, lo=0)
    y = b.broadcast_partner(x)
    c = b.broadcast_partner(x, "bool")
    return [c, x, y], {}


@sampler("clip")
def _clip(b):
    x = b.data((0, 4), NUMERIC, lo=0)
    lo, hi = sorted([b.choice((-2.5, -1.0, 0.0, 0.5, 3.7)), b.choice((-1.0, 0.0, 1.0, 2.5))])
    if b.coin(0.1):
        lo, hi = hi, lo  # a_min > a_max: a_min wins (TVM's order)
    return [x], {"a_min": lo, "a_max": hi}


@sampler("cast")
def _cast(b):
    return [b.data((0, 4), ALL, lo=0)], {"dtype": b.choice(ALL)}


@sampler("nn.leaky_relu")
def _leaky_relu(b):
    return [b.data((1, 4), FLOATS)], {"alpha": b.choice((0.01, 0.2, -0.5, 1.5))}


@sampler("nn.prelu", "nn.bias_add")
def _per_channel(b, name):
    x = b.data((1, 4), FLOATS)
    axis = _axis(b, b.ndim(x))
    return [x, b.like((b.shape(x)[axis],), b.dtype(x))], {"axis": axis}


@sampler("full")
def _full(b):
    dtype = b.choice(ALL)
    fill = b.new((), b.choice(NUMERIC))
    return [fill], {"shape": b.random_shape(b.randint(0, 3), 0), "dtype": dtype}


@sampler("full_like")
def _full_like(b):
    x = b.data((0, 3), NUMERIC, lo=0)
    return [x, b.new((), b.dtype(x))], {}


@sampler("zeros", "ones")
def _init(b, name):
    return [], {"shape": b.random_shape(b.randint(0, 3), 0), "dtype": b.choice(ALL)}


@sampler("arange")
def _arange(b):
    dtype = b.choice(("float32", "int32", "int64", "float64"))
    start = b.randint(-5, 5)
    step = b.choice((1, 2, -1, 0.5, -1.5)) if dtype.startswith("float") else b.choice((1, 3, -2))
    return [], {"start": start, "stop": start + step * b.randint(0, 8) + 0.25 * (step > 0),
                "step": step, "dtype": dtype}


# ---------------------------------------------------------------- reductions


@sampler("sum", "prod", "mean", "max", "min", "logsumexp", "variance", "std", "all", "any",
         "argmax", "argmin")
def _reduce(b, name):
    dtypes = {"all": ("bool",), "any": ("bool",), "logsumexp": FLOATS, "variance": FLOATS,
              "std": FLOATS, "mean": NUMERIC}.get(name, NUMERIC)
    x = b.data((0, 4), dtypes, lo=0)
    attrs = {"axis": _axes(b, b.ndim(x)), "keepdims": b.coin(0.4), "exclude": b.coin(0.15)}
    if name in ("argmax", "argmin"):
        attrs["select_last_index"] = b.coin(0.3)
    if name in ("variance", "std"):
        attrs["unbiased"] = b.coin(0.3)
    return [x], attrs


# ---------------------------------------------------------------- nn: dense and conv


@sampler("nn.dense")
def _dense(b):
    x = b.data((1, 3), FLOATS + ("int8",), lo=0)
    k = b.shape(x)[-1]
    units = b.randint(0, 5)
    w = b.like((units, k), b.dtype(x))
    attrs = {"units": units} if b.coin(0.3) else {}
    if b.dtype(x) == "int8":
        attrs["out_dtype"] = "int32"
    return [x, w], attrs


@sampler("nn.contrib_dense_pack")
def _dense_pack(b):
    x = b.data(2, FLOATS[:1], lo=0)
    k, block = b.shape(x)[1], b.choice((4, 8, 16))
    w = b.like((b.randint(1, 2), k, block), b.dtype(x))
    return [x, w], {"weight_layout": f"NC{block}n"}


@sampler("nn.matmul")
def _matmul(b):
    ta, tb = b.coin(0.3), b.coin(0.3)
    m, k, n = b.randint(1, 5), b.randint(0, 5), b.randint(1, 5)
    dtype = b.choice(FLOATS)
    a = b.like((k, m) if ta else (m, k), dtype)
    c = b.like((n, k) if tb else (k, n), dtype)
    return [a, c], {"transpose_a": ta, "transpose_b": tb}


@sampler("nn.batch_matmul")
def _batch_matmul(b):
    ta, tb = b.coin(0.3), b.coin(0.7)
    m, k, n = b.randint(1, 5), b.randint(1, 5), b.randint(1, 5)
    ba, bb = b.choice(((2, 2), (1, 3), (3, 1), (1, 1)))
    dtype = b.choice(FLOATS)
    a = b.like((ba, k, m) if ta else (ba, m, k), dtype)
    c = b.like((bb, n, k) if tb else (bb, k, n), dtype)
    return [a, c], {"transpose_a": ta, "transpose_b": tb}


def _window(b: Builder, size: int, transpose: bool = False) -> tuple:
    """(kernel, stride, dilation, pad_before, pad_after) valid for an axis of ``size``."""
    for _ in range(20):
        k, s, d = b.randint(1, 3), b.choice((1, 1, 2, 3)), b.choice((1, 1, 2))
        p0, p1 = b.randint(0, 2), b.randint(0, 2)
        if transpose or size + p0 + p1 >= (k - 1) * d + 1:
            return k, s, d, p0, p1
    return 1, 1, 1, 0, 0


_CONV_LAYOUTS = {1: (("NCW", "OIW"), ("NWC", "WIO")),
                 2: (("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI")),
                 3: (("NCDHW", "OIDHW"), ("NDHWC", "DHWIO"))}


def _place(layout: str, dims: dict) -> tuple:
    return tuple(dims[a] for a in layout)


@sampler("nn.conv1d", "nn.conv2d", "nn.conv3d")
def _conv(b, name):
    n = int(name[-2])
    sp = "DHW"[3 - n:]
    dl, kl = b.choice(_CONV_LAYOUTS[n])
    groups = b.choice((1, 1, 1, 2, 3))
    cin, cout = groups * b.randint(1, 2), groups * b.randint(1, 3)
    sizes = [b.randint(1, 7) for _ in sp]
    wins = [_window(b, s) for s in sizes]
    dtype = b.choice(("float32",) * 4 + ("float64",))
    x = b.like(_place(dl, {"N": b.randint(1, 2), "C": cin, **dict(zip(sp, sizes))}), dtype,
               reuse=0.3)
    w = b.like(_place(kl, {"O": cout, "I": cin // groups, **{a: wn[0] for a, wn in
                                                             zip(sp, wins)}}), dtype)
    return [x, w], {"strides": tuple(wn[1] for wn in wins),
                    "dilation": tuple(wn[2] for wn in wins),
                    "padding": tuple(wn[3] for wn in wins) + tuple(wn[4] for wn in wins),
                    "groups": groups, "data_layout": dl, "kernel_layout": kl,
                    "channels": cout if b.coin(0.3) else None}


@sampler("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")
def _conv_transpose(b, name):
    n = int(name[-12])
    sp = "DHW"[3 - n:]
    groups = b.choice((1, 1, 2))
    cin, cout = groups * b.randint(1, 2), groups * b.randint(1, 2)
    sizes = [b.randint(1, 5) for _ in sp]
    wins = [_window(b, s, transpose=True) for s in sizes]
    out_pad = tuple(b.randint(0, max(min(wn[1], wn[2]) - 1, 0)) for wn in wins)
    x = b.like((b.randint(1, 2), cin, *sizes), "float32", reuse=0.3)
    w = b.like((cin, cout // groups, *(wn[0] for wn in wins)), "float32")
    return [x, w], {"strides": tuple(wn[1] for wn in wins),
                    "dilation": tuple(wn[2] for wn in wins),
                    "padding": tuple(wn[3] for wn in wins) + tuple(wn[4] for wn in wins),
                    "output_padding": out_pad, "groups": groups}


@sampler("nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc")
def _conv_nchwc(b, name):
    ib, ob = b.choice((2, 4)), b.choice((2, 4, 8))
    depthwise = "depthwise" in name
    cin = ib * b.randint(1, 2)
    if depthwise:
        ob = ib
        groups, cout, wi = cin, cin, 1
    else:
        groups = b.choice([g for g in (1, 2) if cin % g == 0 and (cin // g) % ib == 0] or [1])
        cout = ob * b.randint(1, 2) * groups
        wi = ib
    h, w = b.randint(2, 7), b.randint(2, 7)
    kh, kw = b.randint(1, 3), b.randint(1, 3)
    x = b.like((1, cin // ib, h, w, ib), "float32", reuse=0.2)
    i_per = (cin // groups) // wi if not depthwise else 1
    weight = b.like((cout // ob, i_per, kh, kw, wi, ob), "float32")
    return [x, weight], {"data_layout": f"NCHW{ib}c", "out_layout": f"NCHW{ob}c",
                         "kernel_layout": f"OIHW{wi}i{ob}o", "groups": groups,
                         "padding": (b.randint(0, 1),) * 4, "strides": (b.randint(1, 2),) * 2}


@sampler("nn.contrib_conv2d_winograd_NCHWc")
def _winograd(b):
    blk = b.choice((2, 4))
    cin, cout = blk * b.randint(1, 2), blk * b.randint(1, 2)
    tile = 4
    x = b.like((1, cin // blk, b.randint(3, 8), b.randint(3, 8), blk), "float32", reuse=0.2)
    w = b.like((tile + 2, tile + 2, cout // blk, cin // blk, blk, blk), "float32")
    direct = b.like((cout // blk, cin // blk, 3, 3, blk, blk), "float32")
    return [x, w, direct], {"data_layout": f"NCHW{blk}c", "out_layout": f"NCHW{blk}c",
                    "kernel_layout": f"HWOI{blk}i{blk}o", "padding": (b.randint(0, 1),) * 4,
                    "tile_size": tile}


@sampler("nn.contrib_conv2d_winograd_weight_transform")
def _winograd_weight(b):
    return [b.like((b.randint(1, 4), b.randint(1, 3), 3, 3), "float32")], {
        "tile_size": b.choice((2, 4))}


# ---------------------------------------------------------------- nn: pools, norms


_POOL_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


@sampler("nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d",
         "nn.avg_pool2d", "nn.avg_pool3d")
def _pool(b, name):
    n = int(name[-2])
    sp = "DHW"[3 - n:]
    layout = b.choice(_POOL_LAYOUTS[n])
    sizes = [b.randint(1, 7) for _ in sp]
    wins = [_window(b, s) for s in sizes]
    wins = [(k, s, d, min(p0, k - 1), min(p1, k - 1)) for k, s, d, p0, p1 in wins]
    dtype = b.choice(("float32",) * 4 + ("float64", "int32"))
    x = b.like(_place(layout, {"N": b.randint(1, 2), "C": b.randint(1, 3),
                               **dict(zip(sp, sizes))}), dtype, reuse=0.3)
    attrs = {"pool_size": tuple(w[0] for w in wins), "strides": tuple(w[1] for w in wins),
             "dilation": tuple(w[2] for w in wins),
             "padding": tuple(w[3] for w in wins) + tuple(w[4] for w in wins),
             "layout": layout, "ceil_mode": b.coin(0.3)}
    if "avg" in name:
        attrs["count_include_pad"] = b.coin(0.4)
    return [x], attrs


@sampler("nn.global_max_pool2d", "nn.global_avg_pool2d")
def _global_pool(b, name):
    layout = b.choice(("NCHW", "NHWC"))
    x = b.data(4, ("float32", "float32", "float64", "int32"), lo=1, hi=5)
    return [x], {"layout": layout}


@sampler("nn.adaptive_avg_pool2d")
def _adaptive(b):
    x = b.data(4, ("float32", "float64"), lo=1, hi=7)
    return [x], {"output_size": (b.randint(1, 4), b.randint(1, 4)),
                 "layout": b.choice(("NCHW", "NHWC"))}


@sampler("nn.softmax", "nn.log_softmax")
def _softmax(b, name):
    x = b.data((1, 4), FLOATS)
    return [x], {"axis": _axis(b, b.ndim(x))}


@sampler("nn.batch_norm")
def _batch_norm(b):
    x = b.data((2, 4), F32 + ("float64",))
    axis = _axis(b, b.ndim(x))
    c = (b.shape(x)[axis],)
    dt = b.dtype(x)
    var = b.new(c, dt, low=0.1, high=2.0)
    return [x, b.like(c, dt), b.like(c, dt), b.like(c, dt), var], {
        "axis": axis, "center": b.coin(0.8), "scale": b.coin(0.8),
        "epsilon": b.choice((1e-5, 1e-3))}


@sampler("nn.layer_norm", "nn.instance_norm")
def _norm(b, name):
    x = b.data((2, 4) if name == "nn.layer_norm" else (3, 4), FLOATS[:6] + ("float64",))
    axis = _axis(b, b.ndim(x)) if name == "nn.layer_norm" else 1
    c = (b.shape(x)[axis],)
    return [x, b.like(c, b.dtype(x)), b.like(c, b.dtype(x))], {
        "axis": axis, "center": b.coin(0.8), "scale": b.coin(0.8), "epsilon": 1e-5}


@sampler("nn.group_norm")
def _group_norm(b):
    groups = b.randint(1, 3)
    c = groups * b.randint(1, 2)
    x = b.like((b.randint(1, 2), c, b.randint(1, 4), b.randint(1, 4)), "float32", reuse=0.3)
    return [x, b.like((c,), "float32"), b.like((c,), "float32")], {"num_groups": groups}


@sampler("nn.lrn")
def _lrn(b):
    x = b.data((2, 4), F32)
    return [x], {"size": b.randint(1, 5), "axis": _axis(b, b.ndim(x)),
                 "bias": b.choice((1.0, 2.0)), "alpha": b.choice((1e-4, 0.1)),
                 "beta": b.choice((0.75, 0.5))}


@sampler("nn.dropout")
def _dropout(b):
    return [b.data((1, 3), FLOATS)], {"rate": b.choice((0.0, 0.5, 0.9))}


@sampler("nn.depth_to_space", "nn.space_to_depth")
def _depth_space(b, name):
    bs = b.randint(1, 2)
    layout = b.choice(("NCHW", "NHWC"))
    if name == "nn.depth_to_space":
        dims = {"N": 1, "C": bs * bs * b.randint(1, 2), "H": b.randint(1, 3),
                "W": b.randint(1, 3)}
    else:
        dims = {"N": 1, "C": b.randint(1, 2), "H": bs * b.randint(1, 2),
                "W": bs * b.randint(1, 2)}
    return [b.like(_place(layout, dims), b.choice(NUMERIC), reuse=0.3)], {
        "block_size": bs, "mode": b.choice(("DCR", "CRD")), "layout": layout}


@sampler("nn.upsampling")
def _upsampling(b):
    x = b.data(4, F32 + ("float64",), hi=4)
    return [x], {"scale_h": b.choice((1.0, 2.0, 1.5)), "scale_w": b.choice((1.0, 2.0, 3.0)),
                 "method": b.choice(("nearest_neighbor", "linear")),
                 "align_corners": b.coin(0.3)}


@sampler("nn.lstm_sequence", "nn.gru_sequence", "nn.rnn_sequence")
def _recurrent(b, name):
    gates = {"nn.lstm_sequence": 4, "nn.gru_sequence": 3, "nn.rnn_sequence": 1}[name]
    seq, batch, hidden = b.randint(1, 4), b.randint(1, 3), b.randint(1, 6)
    block = 16
    blocks = -(-hidden // block)
    data = b.like((seq, batch, gates * hidden), "float32", reuse=0.2)
    h0 = b.like((batch, hidden), "float32")
    w = b.new((blocks, hidden, gates, block), "float32", low=-0.5, high=0.5)
    attrs = {"reverse": b.coin(0.3)}
    if name == "nn.lstm_sequence":
        return [data, h0, b.like((batch, hidden), "float32"), w], attrs
    if name == "nn.gru_sequence":
        attrs["linear_before_reset"] = b.coin()
        return [data, h0, w, b.like((gates * hidden,), "float32")], attrs
    attrs["activation"] = b.choice(("tanh", "relu"))
    return [data, h0, w], attrs


# ---------------------------------------------------------------- image and vision


@sampler("image.resize1d", "image.resize2d", "image.resize3d")
def _resize(b, name):
    n = int(name[-2])
    sp = "DHW"[3 - n:]
    layout = "NC" + sp if b.coin(0.7) else "N" + sp + "C"
    method = b.choice(("nearest_neighbor", "linear", "cubic"))
    mode = b.choice(("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                     "tf_half_pixel_for_nn", "tf_crop_and_resize"))
    dims = {"N": 1, "C": b.randint(1, 2), **{a: b.randint(1, 5) for a in sp}}
    dtype = b.choice(("float32", "float32", "float64")) if method != "nearest_neighbor" \
        else b.choice(NUMERIC)
    x = b.like(_place(layout, dims), dtype, reuse=0.3)
    attrs = {"size": tuple(b.randint(1, 7) for _ in sp), "layout": layout, "method": method,
             "coordinate_transformation_mode": mode}
    if method == "nearest_neighbor":
        attrs["rounding_method"] = b.choice(("round", "floor", "ceil", "round_prefer_floor",
                                             "round_prefer_ceil"))
    if method == "cubic":
        attrs["cubic_exclude"] = b.randint(0, 1)
        attrs["cubic_alpha"] = b.choice((-0.5, -0.75))
    if mode == "tf_crop_and_resize":
        roi = [round(b.rng.uniform(-0.2, 0.5), 2) for _ in sp]
        roi += [round(r + b.rng.uniform(0.3, 0.8), 2) for r in roi]
        attrs["roi"] = tuple(roi)
        attrs["extrapolation_value"] = b.choice((0.0, -1.5))
    if method != "nearest_neighbor" and b.coin(0.15):
        attrs["antialias"] = True
    return [x], attrs


@sampler("image.grid_sample")
def _grid_sample(b):
    n = b.randint(1, 3)
    layout = ("NCW", "NCHW", "NCDHW")[n - 1]
    x = b.like((1, b.randint(1, 2), *(b.randint(1, 5) for _ in range(n))), "float32",
               reuse=0.3)
    out = tuple(b.randint(1, 3) for _ in range(n))
    grid = b.new((1, n, *out), "float32", low=-1.3, high=1.3)
    return [x, grid], {"layout": layout, "method": b.choice(("bilinear", "nearest", "bicubic")),
                       "padding_mode": b.choice(("zeros", "border", "reflection")),
                       "align_corners": b.coin()}


@sampler("vision.roi_align")
def _roi_align(b):
    x = b.data(4, F32, lo=2, hi=6)
    n, _, h, w = b.shape(x)
    k = b.randint(1, 3)
    boxes = np.sort(b.nrng.uniform(0, min(h, w), size=(k, 2, 2)), axis=1).reshape(k, 4)
    rois = np.concatenate([b.nrng.integers(0, n, size=(k, 1)), boxes[:, [0, 2, 1, 3]]], 1)
    return [x, b.new((k, 5), "float32", exact=rois, edges=0.0)], {
        "pooled_size": (b.randint(1, 3), b.randint(1, 3)),
        "spatial_scale": b.choice((1.0, 0.5)), "sample_ratio": b.randint(0, 2),
        "mode": b.choice(("avg", "max")), "aligned": b.coin()}


@sampler("nn.deformable_conv2d")
def _deformable_conv2d(b):
    x = b.data(4, F32, lo=1, hi=6)
    n, c, h, w = b.shape(x)
    dg = b.choice([d for d in (1, 2, c) if c % d == 0])
    groups = b.choice([g for g in (1, 2) if c % g == 0])
    k, stride, pad = b.choice((1, 3)), b.choice((1, 2)), b.randint(0, 1)
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    if min(oh, ow) < 1:
        raise StepError("the kernel is larger than the padded input")
    out = groups * b.randint(1, 2)
    offset = b.new((n, dg * k * k * 2, oh, ow), "float32", low=-2.0, high=2.0)
    weight = b.new((out, c // groups, k, k), "float32", const=b.coin(0.5), low=-1, high=1)
    return [x, offset, weight], {"strides": stride, "padding": pad, "groups": groups,
                                 "deformable_groups": dg, "channels": out,
                                 "kernel_size": (k, k)}


@sampler("random.threefry_generate")
def _threefry_generate(b):
    from ..op.random import threefry_key

    key = b.new((10,), "uint64", exact=threefry_key(b.randint(0, 1 << 20)), const=b.coin(0.5))
    return [key], {"out_shape": tuple(b.randint(0, 5) for _ in range(b.randint(0, 2)))}


@sampler("random.threefry_split")
def _threefry_split(b):
    from ..op.random import threefry_key

    return [b.new((10,), "uint64", exact=threefry_key(b.randint(0, 1 << 20)))], {}


@sampler("vision.non_max_suppression")
def _nms(b):
    batch, boxes, classes = b.randint(1, 2), b.randint(1, 5), b.randint(1, 2)
    corners = b.nrng.uniform(0, 4, size=(batch, boxes, 2, 2))
    v = np.concatenate([corners.min(axis=2), corners.max(axis=2)], -1)
    return [b.new((batch, boxes, 4), "float32", exact=v, edges=0.0),
            b.new((batch, classes, boxes), "float32", low=0, high=1)], {
        "max_output_boxes_per_class": b.randint(0, 3), "iou_threshold": b.choice((0.3, 0.7)),
        "score_threshold": b.choice((None, 0.2)), "center_point_box": b.randint(0, 1)}


# ---------------------------------------------------------------- dynamic (VM) ops


def _shape_input(b: Builder, values_) -> int:
    """A shape-like tensor: a run-time input most of the time (the point of ``dyn``)."""
    return b.ints(values_, b.choice(("int64", "int32")), const=b.coin(0.15))


def _dyn(static: str, encode):
    """A ``dyn`` op's sampler from its static op's: ``encode(b, args, attrs)`` turns
    the static attrs into ``(args, attrs)`` of the dynamic op."""

    def sample(b):
        args, attrs = SAMPLERS[static](b)
        return encode(b, args, attrs)

    return sample


SAMPLERS["dyn.reshape"] = _dyn("reshape", lambda b, a, at: (
    [a[0], _shape_input(b, [d if d != 0 else b.shape(a[0])[k] for k, d in
                            enumerate(at["newshape"])])], {}))
SAMPLERS["dyn.broadcast_to"] = _dyn("broadcast_to", lambda b, a, at: (
    [a[0], _shape_input(b, at["shape"])], {}))
SAMPLERS["dyn.tile"] = _dyn("tile", lambda b, a, at: ([a[0], _shape_input(b, at["reps"])], {}))
SAMPLERS["dyn.zeros"] = _dyn("zeros", lambda b, a, at: (
    [_shape_input(b, at["shape"])], {"dtype": at["dtype"]}))
SAMPLERS["dyn.ones"] = _dyn("ones", lambda b, a, at: (
    [_shape_input(b, at["shape"])], {"dtype": at["dtype"]}))
SAMPLERS["dyn.full"] = _dyn("full", lambda b, a, at: (
    [a[0], _shape_input(b, at["shape"])], {"dtype": at["dtype"]}))
SAMPLERS["dyn.nn.pad"] = _dyn("nn.pad", lambda b, a, at: (
    [a[0], _shape_input(b, np.asarray(at["pad_width"]).reshape(-1, 2)), a[1]],
    {"pad_mode": at["pad_mode"]}))


def _dyn_slice(b, a, at):
    n = len(at["begin"])
    strides = at.get("strides") or (1,) * n
    strides = tuple(strides) + (1,) * (n - len(strides))
    return ([a[0], _shape_input(b, at["begin"]), _shape_input(b, at["end"]),
             _shape_input(b, strides)], {"axes": at["axes"], "slice_mode": at["slice_mode"]})


SAMPLERS["dyn.strided_slice"] = _dyn("strided_slice", _dyn_slice)


def _dyn_arange(b):
    _, at = SAMPLERS["arange"](b)
    dtype = at["dtype"]
    return [b.scalar(at[k], dtype, const=b.coin(0.15)) for k in ("start", "stop", "step")], {}


SAMPLERS["dyn.arange"] = _dyn_arange


def _dyn_reduce(static: str):
    def encode(b, a, at):
        ndim = b.ndim(a[0])
        axes = at["axis"]
        axes = tuple(range(ndim)) if axes is None else ((axes,) if isinstance(axes, int)
                                                        else axes)
        if at.get("exclude"):
            picked = {x % ndim for x in axes}
            axes = tuple(k for k in range(ndim) if k not in picked)
        if not axes:
            raise StepError("dyn reductions need at least one axis")
        return [a[0], _shape_input(b, list(axes))], {"keepdims": at["keepdims"]}

    return _dyn(static, encode)


for _r in ("sum", "prod", "mean", "max", "min", "logsumexp"):
    SAMPLERS[f"dyn.{_r}"] = _dyn_reduce(_r)


def _dyn_squeeze(b, a, at):
    axes = at["axis"] or tuple(k for k, d in enumerate(b.shape(a[0])) if d == 1)
    return [a[0], _shape_input(b, list(axes))], {}


SAMPLERS["dyn.squeeze"] = _dyn("squeeze", _dyn_squeeze)


def _dyn_unsqueeze(b):
    x = b.data((0, 3), ALL, lo=0)
    rank = b.ndim(x) + b.randint(1, 2)
    axes = b.sample(range(rank), rank - b.ndim(x))
    return [x, _shape_input(b, [a - rank if b.coin(0.3) else a for a in axes])], {}


SAMPLERS["dyn.unsqueeze"] = _dyn_unsqueeze
for _s in ("cumsum", "cumprod"):
    SAMPLERS[f"dyn.{_s}"] = _dyn(_s, lambda b, a, at: (
        [a[0], _shape_input(b, at["axis"] if at["axis"] is not None else 0)],
        {"exclusive": at["exclusive"], "reverse": at["reverse"]}))
SAMPLERS["dyn.trilu"] = _dyn("trilu", lambda b, a, at: (
    [a[0], _shape_input(b, at["k"])], {"upper": at["upper"]}))
SAMPLERS["dyn.topk"] = _dyn("topk", lambda b, a, at: (
    [a[0], _shape_input(b, at["k"])], {"axis": at["axis"], "is_ascend": at["is_ascend"],
                                       "dtype": at["dtype"]}))
SAMPLERS["dyn.one_hot"] = _dyn("one_hot", lambda b, a, at: (
    [*a, _shape_input(b, at["depth"])], {"axis": at["axis"], "dtype": at["dtype"]}))


def _dyn_split(b):
    x = b.data((1, 3), ALL)
    axis = b.randint(0, b.ndim(x) - 1)
    d = b.shape(x)[axis]
    cuts = sorted(b.randint(0, d) for _ in range(b.randint(0, 2)))
    sizes = np.diff([0, *cuts, d])
    return [x, _shape_input(b, list(sizes))], {"axis": axis}


SAMPLERS["dyn.split"] = _dyn_split


def _dyn_resize(static: str):
    def encode(b, a, at):
        n = len(at["size"])
        roi = at.get("roi") or (0.0,) * 0
        rest = {k: v for k, v in at.items() if k not in ("size", "roi", "scales")}
        return ([a[0], _shape_input(b, at["size"]),
                 b.new((0,), "float32", exact=np.zeros(0), const=b.coin(0.5), edges=0.0),
                 b.new((len(roi),), "float32", exact=np.asarray(roi, "float32"),
                       const=b.coin(0.5), edges=0.0)], rest) if n else ([], {})

    return _dyn(static, encode)


for _n in (1, 2, 3):
    SAMPLERS[f"dyn.image.resize{_n}d"] = _dyn_resize(f"image.resize{_n}d")


def _dyn_nms(b):
    args, at = SAMPLERS["vision.non_max_suppression"](b)
    score = at["score_threshold"]
    return [*args, _shape_input(b, [at["max_output_boxes_per_class"]]),
            b.new((1,), "float32", exact=[at["iou_threshold"]], edges=0.0),
            b.new((1,) if score is not None else (0,), "float32",
                  exact=[score] if score is not None else [], edges=0.0)], {
        "center_point_box": at["center_point_box"]}


SAMPLERS["dyn.vision.non_max_suppression"] = _dyn_nms


# the shape ops', the QNN dialect's and the sparse ops' samplers live in their own files
# and register into SAMPLERS
from . import fuzz_qnn, fuzz_shapes, fuzz_sparse  # noqa: E402,F401,I001
