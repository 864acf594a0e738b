"""Computes of ``nn.conv1d``, ``nn.conv2d`` and ``nn.conv3d`` (grouped, dilated, any layouts).

A padded input is its own tensor marked ``materialize``: lowering writes it once into a
temporary, so the convolution's inner loop reads without bounds checks.
"""

from __future__ import annotations

from .. import expr as E
from .. import tensor as te
from ..tensor import compute
from .common import COMPUTE, declare_reference_only, static
from .nn import product_acc


def padded(x, layout: str, spatial: str, pads: tuple, materialize: bool = True, fill=None):
    """``x`` with zeros (or ``fill``, an expression) around its ``spatial`` axes
    (``pads``: before..., after...), a tensor of its own marked ``materialize`` (a
    matrix-product tile reads it in place), or inlined into its reader as a select
    (``materialize=False``: a memory-bound reader saves writing and reading a padded
    copy); ``x`` itself when nothing is padded."""
    n = len(spatial)
    before = dict(zip(spatial, pads[:n]))
    after = dict(zip(spatial, pads[n:]))
    if not any(pads):
        return x
    shape = tuple(d + before.get(a, 0) + after.get(a, 0) for a, d in zip(layout, x.shape))
    zero = E.const(0, x.dtype) if fill is None else fill

    def fn(*i):
        idx, inside = [], []
        for a, j, d in zip(layout, i, x.shape):
            b = before.get(a, 0)
            if b or after.get(a, 0):
                j = j - b
                inside += [j >= 0, j < d]
            idx.append(j)
        return E.select(E.logical_and(*inside), x[tuple(idx)], zero)

    return compute(shape, fn, name="pad", tag="injective",
                   attrs={"materialize": True} if materialize else {})


def _conv(attrs, inputs, out):
    data, weight = inputs
    sp = attrs._spatial
    dl, kl = attrs.data_layout, attrs.kernel_layout
    ol = attrs.out_layout or dl
    groups = attrs.groups
    o_total = static(weight.shape[kl.index("O")])
    if o_total is None:
        raise E.TEError("convolution needs a static number of output channels")
    og = o_total // groups
    cin = weight.shape[kl.index("I")]
    ks = [weight.shape[kl.index(a)] for a in sp]
    x = padded(data, dl, sp, attrs.padding)
    acc = product_acc(out.dtype)

    def fn(*i):
        o = dict(zip(ol, i))
        rc = te.reduce_axis(cin, "rc")
        rs = [te.reduce_axis(k, f"r{a.lower()}") for a, k in zip(sp, ks)]
        g = E.truncdiv(o["C"], og) if groups > 1 else E.IntImm(0)
        pos = {"N": o["N"], "C": g * cin + rc.var}
        for j, a in enumerate(sp):
            pos[a] = o[a] * attrs.strides[j] + rs[j].var * attrs.dilation[j]
        wpos = {"O": o["C"], "I": rc.var}
        wpos.update({a: r.var for a, r in zip(sp, rs)})
        src = (E.cast(acc, x[tuple(pos[a] for a in dl)])
               * E.cast(acc, weight[tuple(wpos[a] for a in kl)]))
        return E.cast(out.dtype, te.sum(src, [rc, *rs], dtype=acc))

    return compute(out.shape, fn, name=f"conv{len(sp)}d", tag="conv")


COMPUTE.register("nn.conv2d", "nn.conv1d", "nn.conv3d")(_conv)


def _conv_transpose(attrs, inputs, out):
    """``out[o] = sum x[i] * w[r]`` over the taps with ``i * stride + r * dilation - before
    == o``: each output position gathers the input positions that write it."""
    data, weight = inputs
    sp = attrs._spatial
    dl, kl = attrs.data_layout, attrs.kernel_layout
    ol = attrs.out_layout or dl
    og = static(weight.shape[kl.index("O")])
    cin = static(weight.shape[kl.index("I")])
    if og is None or cin is None:
        raise E.TEError("a transposed convolution needs static channel counts")
    cg = cin // attrs.groups
    ks = [weight.shape[kl.index(a)] for a in sp]
    sizes = [data.shape[dl.index(a)] for a in sp]
    acc = product_acc(out.dtype)

    def fn(*i):
        o = dict(zip(ol, i))
        rc = te.reduce_axis(cg, "rc")
        rs = [te.reduce_axis(k, f"r{a.lower()}") for a, k in zip(sp, ks)]
        g = E.truncdiv(o["C"], og) if attrs.groups > 1 else E.IntImm(0)
        pos = {"N": o["N"], "C": g * cg + rc.var}
        wpos = {"I": g * cg + rc.var, "O": E.truncmod(o["C"], og) if attrs.groups > 1
                else o["C"]}
        hit = []
        for j, a in enumerate(sp):
            s = attrs.strides[j]
            num = o[a] + attrs.padding[j] - rs[j].var * attrs.dilation[j]
            q = E.truncdiv(num, s) if s > 1 else num
            hit += [num >= 0, q < sizes[j]]
            if s > 1:
                hit.append(E.equal(E.truncmod(num, s), E.IntImm(0)))
            pos[a], wpos[a] = q, rs[j].var
        src = (E.cast(acc, data[tuple(pos[a] for a in dl)])
               * E.cast(acc, weight[tuple(wpos[a] for a in kl)]))
        body = E.select(E.logical_and(*hit), src, E.const(0, acc))
        return E.cast(out.dtype, te.sum(body, [rc, *rs], dtype=acc))

    return compute(out.shape, fn, name=f"conv{len(sp)}d_transpose", tag="conv")


COMPUTE.register("nn.conv1d_transpose", "nn.conv2d_transpose",
                 "nn.conv3d_transpose")(_conv_transpose)


declare_reference_only("nn.deformable_conv2d", "its bilinear taps read at data-dependent "
                       "positions; no C compute yet")
