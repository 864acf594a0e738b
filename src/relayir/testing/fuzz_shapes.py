"""Samplers of the shape and layout ops (reshape, transpose, concatenate, split, slices,
take / gather / scatter, sort / topk / unique, ...): registered into
``fuzz_ops.SAMPLERS``, which imports this file (see there for what a sampler returns)."""

from __future__ import annotations

import math

import numpy as np

from .fuzz_build import ALL, NUMERIC, Builder
from .fuzz_ops import _axis, sampler


def _factor(n: int, b: Builder) -> tuple:
    """A random factorisation of ``n`` into 1-3 parts."""
    parts = []
    while n > 1 and len(parts) < 2 and b.coin(0.6):
        ds = [d for d in range(2, n + 1) if n % d == 0]
        d = b.choice(ds)
        parts.append(d)
        n //= d
    parts.append(n)
    b.rng.shuffle(parts)
    return tuple(parts)


@sampler("reshape")
def _reshape(b):
    x = b.data((0, 4), ALL, lo=0)
    shape = b.shape(x)
    new = list(_factor(math.prod(shape), b)) if math.prod(shape) else [0]
    if b.coin(0.4):
        new[b.randint(0, len(new) - 1)] = -1
    if shape and len(new) <= len(shape) and b.coin(0.2):
        new[0] = 0  # copy the input's first dimension
        if shape[0] != (math.prod(shape) // max(math.prod(new[1:]), 1) if -1 not in new
                        else shape[0]):
            new = [shape[0], -1]
    return [x], {"newshape": tuple(new)}


@sampler("meshgrid")
def _meshgrid(b):
    dtype = b.choice(ALL)
    return [tuple(b.new(b.random_shape(b.randint(0, 1), 1, 4), dtype)
                  for _ in range(b.randint(1, 3)))], {"indexing": b.choice(("ij", "xy"))}


@sampler("unravel_index")
def _unravel_index(b):
    shape, dtype = b.random_shape(b.randint(1, 3), 1, 5), b.choice(("int32", "int64"))
    n = b.randint(0, 1)
    return [b.index(b.random_shape(n, 1, 4), math.prod(shape), dtype, negative=False),
            b.ints(shape, dtype)], {}


@sampler("reshape_like")
def _reshape_like(b):
    x = b.data((1, 4), ALL)
    like = b.new(_factor(math.prod(b.shape(x)), b), b.choice(ALL))
    return [x, like], {}


@sampler("transpose")
def _transpose(b):
    x = b.data((1, 4), ALL)
    perm = list(range(b.ndim(x)))
    b.rng.shuffle(perm)
    return [x], {"axes": None if b.coin(0.2) else tuple(perm)}


@sampler("squeeze")
def _squeeze(b):
    x = b.data((1, 4), ALL, pred=lambda s, d: 1 in s, lo=1, hi=3)
    ones = [k for k, d in enumerate(b.shape(x)) if d == 1]
    return [x], {"axis": None if b.coin(0.3) else tuple(b.sample(ones, b.randint(1, len(ones))))}


@sampler("expand_dims")
def _expand_dims(b):
    x = b.data((0, 3), ALL, lo=0)
    n = b.ndim(x)
    return [x], {"axis": b.randint(-n - 1, n), "num_newaxis": b.randint(0, 2)}


def _parts(b: Builder, x: int, axis: int, n: int, same: bool) -> tuple:
    shape, dtype = list(b.shape(x)), b.dtype(x)
    parts = [x]
    for _ in range(n - 1):
        s = list(shape)
        if not same:
            s[axis] = b.randint(0, 3)
        parts.append(b.like(s, dtype))
    b.rng.shuffle(parts)
    return tuple(parts)


@sampler("concatenate")
def _concatenate(b):
    x = b.data((1, 4), ALL)
    axis = _axis(b, b.ndim(x))
    return [_parts(b, x, axis, b.randint(1, 3), False)], {"axis": axis}


@sampler("stack")
def _stack(b):
    x = b.data((0, 3), ALL, lo=0)
    n = b.ndim(x)
    return [_parts(b, x, 0, b.randint(1, 3), True)], {"axis": b.randint(-n - 1, n)}


@sampler("split")
def _split(b):
    x = b.data((1, 3), ALL)
    axis = _axis(b, b.ndim(x))
    d = b.shape(x)[axis]
    if b.coin(0.5):
        divs = [k for k in range(1, d + 1) if d % k == 0]
        return [x], {"indices_or_sections": b.choice(divs), "axis": axis}
    cuts = sorted(b.randint(0, d) for _ in range(b.randint(1, 3)))
    return [x], {"indices_or_sections": tuple(cuts), "axis": axis}


@sampler("strided_slice")
def _strided_slice(b):
    x = b.data((1, 4), ALL)
    shape = b.shape(x)
    n = b.randint(1, len(shape))
    axes = tuple(b.sample(range(len(shape)), n)) if b.coin(0.4) else None
    sel = axes if axes is not None else tuple(range(n))
    begin, end, strides = [], [], []
    mode = "size" if b.coin(0.15) else "end"
    for a in sel:
        d = shape[a]
        if mode == "size":
            begin.append(b.randint(0, d))
            end.append(b.choice((-1, b.randint(0, d))))
            strides.append(1)
            continue
        s = b.choice((1, 1, 2, 3, -1, -2))
        begin.append(b.randint(-d - 1, d + 1))
        end.append(b.randint(-d - 2, d + 2))
        strides.append(s)
    attrs = {"begin": tuple(begin), "end": tuple(end), "axes": axes, "slice_mode": mode}
    if mode == "end" and b.coin(0.8):
        attrs["strides"] = tuple(strides)
    return [x], attrs


@sampler("take")
def _take(b):
    x = b.data((1, 3), ALL)
    shape = b.shape(x)
    axis = None if b.coin(0.2) else _axis(b, len(shape))
    n = math.prod(shape) if axis is None else shape[axis]
    mode = b.choice(("clip", "wrap", "fast"))
    batch = 0
    if axis is not None and b.coin(0.2):
        a = axis % len(shape)
        batch = b.randint(0, a)
    ishape = tuple(shape[:batch]) + b.random_shape(b.randint(0, 2), 0, 3)
    lo_hi = (0, n) if mode == "fast" else (-n - 2, n + 2)
    v = b.nrng.integers(lo_hi[0], max(lo_hi[1], 1), size=ishape)
    idx = b.new(ishape, b.choice(("int32", "int64")), exact=v, edges=0.0)
    return [x, idx], {"axis": axis, "mode": mode, "batch_dims": batch}


@sampler("broadcast_to")
def _broadcast_to(b):
    x = b.data((0, 3), ALL, lo=1, hi=3)
    shape = [b.randint(1, 3) if d == 1 else d for d in b.shape(x)]
    lead = [b.randint(0, 3) for _ in range(b.randint(0, 2))]
    return [x], {"shape": tuple(lead + shape)}


@sampler("tile")
def _tile(b):
    x = b.data((0, 3), ALL, lo=0)
    return [x], {"reps": tuple(b.randint(0, 3) for _ in range(b.randint(0, 4)))}


@sampler("repeat")
def _repeat(b):
    x = b.data((1, 3), ALL)
    return [x], {"repeats": b.randint(0, 3), "axis": _axis(b, b.ndim(x))}


@sampler("reverse")
def _reverse(b):
    x = b.data((1, 4), ALL, lo=0)
    return [x], {"axis": _axis(b, b.ndim(x))}


@sampler("layout_transform")
def _layout_transform(b):
    src, dst = b.choice((("NCHW", "NHWC"), ("NHWC", "NCHW"), ("NCHW", "NCHW4c"),
                         ("NCHW4c", "NCHW"), ("NCHW4c", "NCHW2c"), ("NCW", "NWC")))
    shape = []
    for a in src:
        if a == "c":
            shape.append(int(src[src.index("c") - 1]))
        elif a.isdigit():
            continue
        elif a == "C":
            shape.append(4 * b.randint(1, 2))
        else:
            shape.append(b.randint(1, 4))
    return [b.like(shape, b.choice(NUMERIC), reuse=0.3)], {"src_layout": src,
                                                            "dst_layout": dst}


@sampler("nn.batch_flatten")
def _batch_flatten(b):
    return [b.data((1, 4), ALL, lo=0)], {}


@sampler("nn.pad")
def _pad(b):
    x = b.data((1, 4), NUMERIC)
    mode = b.choice(("constant", "constant", "edge", "reflect"))
    widths = []
    for d in b.shape(x):
        top = d - 1 if mode == "reflect" else 3
        widths.append((b.randint(0, max(top, 0)), b.randint(0, max(top, 0))))
    return [x, b.new((), b.dtype(x))], {"pad_width": tuple(widths), "pad_mode": mode}


@sampler("gather")
def _gather(b):
    x = b.data((1, 3), ALL)
    shape = b.shape(x)
    axis = _axis(b, len(shape))
    ishape = [b.randint(1, d) for d in shape]
    ishape[axis] = b.randint(0, 4)
    return [x, b.index(ishape, shape[axis], b.choice(("int32", "int64")))], {"axis": axis}


@sampler("gather_nd")
def _gather_nd(b):
    x = b.data((1, 4), ALL)
    shape = b.shape(x)
    batch = b.randint(0, len(shape) - 1) if b.coin(0.3) else 0
    m = b.randint(1, len(shape) - batch)
    y = b.random_shape(b.randint(0, 2), 1, 3)
    ishape = (m, *shape[:batch], *y)
    v = np.stack([b.nrng.integers(-shape[batch + k], shape[batch + k], size=ishape[1:])
                  for k in range(m)])
    return [x, b.new(ishape, "int64", exact=v, edges=0.0)], {"batch_dims": batch}


@sampler("scatter_elements")
def _scatter_elements(b):
    x = b.data((1, 3), NUMERIC)
    shape = b.shape(x)
    axis = _axis(b, len(shape))
    ushape = [b.randint(1, d) for d in shape]
    idx = b.index(ushape, shape[axis], b.choice(("int32", "int64")))
    upd = b.like(ushape, b.dtype(x))
    reduction = b.choice(("update", "add", "mul", "min", "max"))
    return [x, idx, upd], {"axis": axis, "reduction": reduction}


@sampler("scatter_nd")
def _scatter_nd(b):
    x = b.data((1, 3), NUMERIC)
    shape = b.shape(x)
    m = b.randint(1, len(shape))
    y = b.random_shape(b.randint(0, 2), 1, 3)
    v = np.stack([b.nrng.integers(-shape[k], shape[k], size=y) for k in range(m)])
    idx = b.new((m, *y), "int64", exact=v, edges=0.0)
    upd = b.like((*y, *shape[m:]), b.dtype(x))
    return [x, idx, upd], {"mode": b.choice(("update", "add", "mul", "min", "max"))}


@sampler("one_hot")
def _one_hot(b):
    depth = b.randint(1, 5)
    ishape = b.random_shape(b.randint(0, 2), 0, 4)
    idx = b.index(ishape, depth + 1, b.choice(("int32", "int64")))  # some out of range
    dtype = b.choice(NUMERIC)
    on, off = b.new((), dtype), b.new((), dtype)
    return [idx, on, off], {"depth": depth, "axis": b.randint(-1, len(ishape)),
                            "dtype": dtype}


@sampler("trilu")
def _trilu(b):
    x = b.data((2, 4), ALL, lo=0)
    return [x], {"k": b.randint(-3, 3), "upper": b.coin()}


@sampler("cumsum", "cumprod")
def _scan(b, name):
    x = b.data((1, 3), NUMERIC, lo=0)
    attrs = {"axis": None if b.coin(0.2) else _axis(b, b.ndim(x)),
             "exclusive": b.coin(0.3), "reverse": b.coin(0.3)}
    if b.coin(0.2):
        attrs["dtype"] = b.choice(("int64", "float64", "float32"))
    return [x], attrs


_EINSUM = (("ij,jk->ik", ((2, 3), (3, 4))), ("ii->i", ((3, 3),)), ("ij->ji", ((2, 5),)),
           ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))), ("i,j->ij", ((3,), (4,))),
           ("...ij->...ji", ((2, 2, 3),)), ("ij,ij->", ((3, 2), (3, 2))), ("iij->j", ((2, 2, 3),)))


@sampler("einsum")
def _einsum(b):
    eq, shapes = b.choice(_EINSUM)
    dtype = b.choice(("float32", "float32", "float64", "int32"))
    return [tuple(b.like(s, dtype) for s in shapes)], {"equation": eq}


@sampler("sort", "argsort")
def _sort(b, name):
    x = b.data((1, 3), NUMERIC, lo=0)
    attrs = {"axis": _axis(b, b.ndim(x)), "is_ascend": b.coin()}
    if name == "argsort":
        attrs["dtype"] = b.choice(("int32", "int64"))
    return [x], attrs


@sampler("topk")
def _topk(b):
    x = b.data((1, 3), NUMERIC)
    axis = _axis(b, b.ndim(x))
    return [x], {"k": b.randint(-1, b.shape(x)[axis]), "axis": axis,
                 "ret_type": b.choice(("both", "values", "indices")), "is_ascend": b.coin(),
                 "dtype": b.choice(("int32", "int64"))}


@sampler("unique")
def _unique(b):
    x = b.data(1, NUMERIC, lo=0)
    return [x], {"is_sorted": b.coin(0.7)}


@sampler("argwhere")
def _argwhere(b):
    return [b.data((1, 3), ("bool",), lo=0)], {}


@sampler("shape_of")
def _shape_of(b):
    return [b.data((0, 4), ALL, lo=0)], {"dtype": b.choice(("int32", "int64"))}
