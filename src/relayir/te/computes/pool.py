"""Computes of the pools: max/avg over 1, 2 or 3 spatial axes, global and adaptive
average (2-D), in any layout that permutes ``NC`` + the spatial letters.

Windows read the input through a bounds check instead of a padded copy; when a pool
has no padding the simplifier proves the check always true and drops it. Where the
layout's innermost axis is a padded spatial one (``W`` of ``NCHW``), the check would
sit in the vectorised loop and keep it scalar (a 3x3 stride-2 max pool of 64x112x112
ran 10-16x slower than without padding), so the window reads a padded copy instead
(``conv.padded``, filled with the reduction's identity). Averages accumulate in float64
(int64 for integers, which then floor-divide like the reference).
"""

from __future__ import annotations

from ...op.layout import parse_layout
from ...op.nn.pool import pool_out_shape
from .. import expr as E
from .. import tensor as te
from ..tensor import compute
from .common import COMPUTE, float_acc, static
from .conv import padded


def _letters(attrs) -> tuple[str, str]:
    """One letter per axis of the input and of the output layout (the blocked
    ``NCHW16c`` → ``NCHWc``: its ``c`` passes through a pool like ``N`` and ``C``)."""
    return (parse_layout(attrs.layout).letters,
            parse_layout(attrs.out_layout or attrs.layout).letters)


def _dims(letters: str, index) -> dict:
    return dict(zip(letters, index))


def _read(x, letters: str, o: dict, h, w):
    """``x`` at output index ``o``'s non-spatial axes and spatial position ``(h, w)``."""
    pos = {**o, "H": h, "W": w}
    return x[tuple(pos[a] for a in letters)]


class _Window:
    """Geometry of one spatial axis of a pool."""

    def __init__(self, size, k: int, stride: int, dilation: int, before: int, after: int):
        self.size, self.k, self.s, self.d = size, k, stride, dilation
        self.before, self.after = before, after

    def pos(self, o, r):
        return o * self.s + r * self.d - self.before

    def inside(self, p):
        return [p >= 0, p < self.size]

    def count(self, o, include_pad: bool) -> E.Expr:
        """How many taps of the window at ``o`` land in the counted range."""
        lo = -self.before if include_pad else 0
        hi = self.size + self.after if include_pad else self.size
        start = o * self.s - self.before
        d = self.d
        first = E.Max(E.FloorDiv(lo - start + (d - 1), E.IntImm(d)), E.IntImm(0))
        last = E.Min(E.FloorDiv(hi - 1 - start, E.IntImm(d)), E.IntImm(self.k - 1))
        return E.Max(last - first + 1, E.IntImm(0))


def _windows(x, attrs) -> list:
    lay, sp = _letters(attrs)[0], attrs._spatial
    p, n = attrs.padding, len(sp)
    return [_Window(x.shape[lay.index(a)], attrs.pool_size[j], attrs.strides[j],
                    attrs.dilation[j], p[j], p[j + n]) for j, a in enumerate(sp)]


def _pool(attrs, inputs, out, kind: str):
    x = inputs[0]
    (lay, olay), sp = _letters(attrs), attrs._spatial
    wins = _windows(x, attrs)
    dtype = x.dtype
    sizes = [static(w.size) for w in wins]
    if None in sizes:
        raise E.TEError("pools over symbolic spatial dimensions are not supported")
    pool_out_shape(sizes, attrs)  # validates the geometry

    acc = float_acc(dtype)
    fill = E.min_value(dtype) if kind == "max" else E.const(0, dtype)
    copy = None
    if lay[-1] in sp and _pads(wins[sp.index(lay[-1])], out, olay, lay[-1]):
        after = [max(_reach(w, out, olay, a) - w.before - static(w.size), 0)
                 for w, a in zip(wins, sp)]
        copy = padded(x, lay, sp, (*[w.before for w in wins], *after), fill=fill)

    def fn(*i):
        o = _dims(olay, i)
        rs = [te.reduce_axis(w.k, f"r{a.lower()}") for w, a in zip(wins, sp)]
        pos = {a: w.pos(o[a], r.var) for a, w, r in zip(sp, wins, rs)}
        inside = E.logical_and(*[c for a, w in zip(sp, wins) for c in w.inside(pos[a])])
        if copy is not None:  # in the padded copy's coordinates: no check
            pos = {a: p + w.before for (a, p), w in zip(pos.items(), wins)}
            inside = E.const(True, "bool")
        pos.update((a, j) for a, j in o.items() if a not in sp)
        value = (x if copy is None else copy)[tuple(pos[a] for a in lay)]
        if kind == "max":
            return te.max(E.select(inside, value, E.min_value(dtype)), rs)
        total = te.sum(E.select(inside, E.cast(acc, value), E.const(0, acc)), rs, dtype=acc)
        count = E.IntImm(1)
        for a, w in zip(sp, wins):
            count = count * w.count(o[a], attrs.count_include_pad)
        count = E.Max(count, E.IntImm(1))
        if E.is_float(dtype):
            return E.cast(dtype, total / E.cast(acc, count))
        return E.cast(dtype, E.FloorDiv(total, E.cast(acc, count)))

    return compute(out.shape, fn, name=f"{kind}_pool{len(sp)}d", tag="pool")


def _reach(w: _Window, out, olay: str, a: str) -> int:
    """One past the last padded-coordinate index a window along ``a`` reads."""
    n = static(out.shape[olay.index(a)])
    return (n - 1) * w.s + (w.k - 1) * w.d + 1


def _pads(w: _Window, out, olay: str, a: str) -> bool:
    """Whether some window along ``a`` reads outside the input."""
    return bool(w.before) or _reach(w, out, olay, a) > w.before + static(w.size)


for _n in (1, 2, 3):
    COMPUTE.register(f"nn.max_pool{_n}d")(
        lambda attrs, inputs, out: _pool(attrs, inputs, out, "max"))
    COMPUTE.register(f"nn.avg_pool{_n}d")(
        lambda attrs, inputs, out: _pool(attrs, inputs, out, "avg"))


def _global(kind: str):
    def rule(attrs, inputs, out):
        x = inputs[0]
        lay, olay = _letters(attrs)
        h, w = x.shape[lay.index("H")], x.shape[lay.index("W")]
        dtype = x.dtype

        def fn(*i):
            o = _dims(olay, i)
            rh, rw = te.reduce_axis(h, "rh"), te.reduce_axis(w, "rw")
            value = _read(x, lay, o, rh.var, rw.var)
            if kind == "max":
                return te.max(value, [rh, rw])
            acc = float_acc(dtype)
            total = te.sum(value, [rh, rw], acc_dtype=acc, dtype=acc)
            n = E.cast(acc, h * w)
            return E.cast(dtype, E.divide(total, n))  # the reference truncates int means

        return compute(out.shape, fn, name=f"global_{kind}_pool2d", tag="pool")

    return rule


COMPUTE.register("nn.global_avg_pool2d")(_global("avg"))
COMPUTE.register("nn.global_max_pool2d")(_global("max"))


def _bins(size: int, n: int):
    """PyTorch's adaptive bins ``[floor(i*size/n), ceil((i+1)*size/n))``; the widest."""
    starts = [(i * size) // n for i in range(n)]
    ends = [-((-(i + 1) * size) // n) for i in range(n)]
    return max(e - s for s, e in zip(starts, ends))


@COMPUTE.register("nn.adaptive_avg_pool2d")
def adaptive_avg_pool2d(attrs, inputs, out):
    x = inputs[0]
    lay, olay = _letters(attrs)
    h, w = static(x.shape[lay.index("H")]), static(x.shape[lay.index("W")])
    oh, ow = static(out.shape[olay.index("H")]), static(out.shape[olay.index("W")])
    if None in (h, w, oh, ow):
        raise E.TEError("adaptive_avg_pool2d needs static spatial dimensions")
    kh, kw = _bins(h, oh), _bins(w, ow)
    dtype = x.dtype
    acc = float_acc(dtype)

    def fn(*i):
        o = _dims(olay, i)
        hs, ws = E.truncdiv(o["H"] * h, oh), E.truncdiv(o["W"] * w, ow)
        he = E.truncdiv((o["H"] + 1) * h + (oh - 1), oh)
        we = E.truncdiv((o["W"] + 1) * w + (ow - 1), ow)
        rh, rw = te.reduce_axis(kh, "rh"), te.reduce_axis(kw, "rw")
        inside = E.logical_and(rh.var < he - hs, rw.var < we - ws)
        value = _read(x, lay, o, hs + rh.var, ws + rw.var)
        total = te.sum(E.select(inside, E.cast(acc, value), E.const(0, acc)), [rh, rw],
                       dtype=acc)
        count = E.cast(acc, (he - hs) * (we - ws))
        if E.is_float(dtype):
            return E.cast(dtype, total / count)
        return E.cast(dtype, E.FloorDiv(total, count))

    return compute(out.shape, fn, name="adaptive_avg_pool2d", tag="pool")
