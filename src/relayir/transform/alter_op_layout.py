"""``AlterOpLayout``: run a convolution network in the blocked layout ``NCHW[x]c`` (x =
the CPU's vector width in floats) from its first convolution to its last, choose each
convolution's algorithm, and give dense layers pre-packed weights.

Every ``nn.dense`` whose weight is a constant becomes ``nn.contrib_dense_pack`` with the
weight in the ``NC[n]n`` panels of the matmul micro-kernels (``n`` = two vectors when it
divides the units, else one), folded by ``FoldConstant``.

Every ``nn.conv2d`` (``NCHW``/``OIHW``, static shapes, float) becomes a blocked op whose
weight is a ``layout_transform`` of the original weight — a constant once params are
bound, so ``FoldConstant`` packs it when the model is built and no kernel repacks a
weight at run time:

- ``nn.contrib_conv2d_NCHWc`` (weight ``OIHW[x]i[y]o``): the direct convolution; 1×1
  stride-1 convolutions are GEMMs in this form; grouped convolutions whose groups hold
  whole blocks;
- ``nn.contrib_depthwise_conv2d_NCHWc`` (weight ``OIHW1i[x]o``): one filter per channel;
- ``nn.contrib_conv2d_winograd_NCHWc`` (weight ``layout_transform(
  contrib_conv2d_winograd_weight_transform(W))``, ``HWOI[x]i[y]o``, and ``W`` packed
  ``OIHW[x]i[y]o`` for the outputs the transforms leave non-finite): 3×3, stride 1,
  dilation 1, ungrouped convolutions where ``choose_algorithm`` (the cost rule below)
  finds one of F(2×2), F(4×4), F(6×6) cheaper than the direct convolution; each layer
  gets its own tile.

The rest of the network follows through ``ConvertLayout``'s per-op rules (shared code):
elementwise ops, broadcasting binary ops (a per-channel constant such as a folded bias
or batch-norm shift is moved into the blocked layout, and folded), residual ``add``\\ s,
``clip``/``relu``, max/avg/global/adaptive pools, ``concatenate`` along channels (when
every input's channels are whole blocks; inputs in blocks of 16 and 8 meet in blocks of
8), reductions over unblocked axes. So a ``layout_transform`` appears only at the
network's edges (the input into the first convolution, the last feature map into
``batch_flatten``/``reshape``/``dense``) and where an op cannot take the layout:
``nn.bias_add``/``nn.prelu``/``nn.batch_norm`` on a blocked tensor (at opt level 3
``CanonicalizeOps`` and ``SimplifyInference`` have made them broadcast arithmetic
already), reductions over the channels (``softmax``, ``mean`` over ``C``), reshapes,
``concatenate`` of a channel-padded tensor, and convolutions it leaves alone
(non-``NCHW`` layouts, symbolic shapes, non-float32 dtypes, groups that split a block).

Block sizes and padding: a convolution reads its input in the block its producer left
it in (no re-blocking between convolutions). Output channels the vector width divides
get the vector width. Other counts (mobilenet_v2's 24) are padded up to whole vectors
(``pad_channels``, on by default): the weight gets zero filters (and, for the next
convolution, zero input taps) — ``nn.pad`` of a constant, folded — and per-channel
constants zeros, so the extra channels hold zeros; they ride through ``_PAD_SAFE`` ops
(lane-wise ops that keep them finite, pools) and convolutions, and a ``strided_slice``
drops them where the tensor leaves the blocked region. The register tiles of
``tir/matmul.py`` are whole vectors wide, so a padded 32-channel output runs tiled where
a 24-channel one in blocks of 8 would not. Without padding, and for a network's input
(3 channels: one block of 3) and grouped convolutions: the largest divisor that is a
multiple of 8, else the largest divisor up to the width.

``PassContext`` config (each is a knob the tuner can set):

- ``relay.AlterOpLayout.block``: the vector width in floats (default: the target's,
  else 16);
- ``relay.AlterOpLayout.conv_algorithm``: ``"auto"`` (the cost rule), ``"direct"``,
  ``"winograd"`` (wherever it applies), or a dict from ``conv_workload(...).key`` to
  ``"direct"``/``"winograd"`` for single layers (others: ``"auto"``);
- ``relay.AlterOpLayout.winograd_tile``: the output tile ``m`` of F(m×m, 3×3):
  ``"auto"`` (the cost rule's choice per layer, the default), 2, 4 or 6, or a dict from
  workload key to one of them;
- ``relay.AlterOpLayout.pad_channels``: pad output channels to whole vectors (default
  True).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from ..errors import Error
from ..ir.expr import Call, Constant, Function, Tuple, const
from ..ir.module import IRModule
from ..ir.op import call
from ..op.layout import layout_transform, parse_layout
from .analysis import typed_module
from .convert_layout import LayoutConverter, fits_layout, tensor_type
from .fold_scale_axis import reinfer
from .pass_infra import Pass, module_pass

BLOCK_KEY = "relay.AlterOpLayout.block"
ALGORITHM_KEY = "relay.AlterOpLayout.conv_algorithm"
WINOGRAD_TILE_KEY = "relay.AlterOpLayout.winograd_tile"
PAD_KEY = "relay.AlterOpLayout.pad_channels"
DEFAULT_BLOCK = 16
_ALGORITHMS = ("auto", "direct", "winograd")
WINOGRAD_TILES = (2, 4, 6)  # the output tiles m of F(m×m, 3×3) the cost rule weighs
_BLOCKED = re.compile(r"NCHW(\d+)c")

# The cost rule compares estimated times in units of one multiply-add of a tiled matrix
# product. The transforms run at about a quarter of that speed (they stream their data
# once). A weight byte costs what peak multiply-adds per second over the bandwidth the
# weights stream at says: a whole model's weights do not stay in the caches between
# runs (resnet18: 46 MB), and measured in the model the layers read them at ~10-20 GB/s
# against ~230 G multiply-adds/s — about 12 multiply-adds a byte. Winograd's transformed
# weights are (m+2)²/9 times larger than the direct ones, so the rule trades tile sizes:
# F(4×4) where the feature map is large (resnet18's 56² and 28²), F(2×2) at 14² (a
# third of F(4×4)'s weight bytes for 1.4× its products), direct at 7×7×512.
TRANSFORM_COST = 4.0
WEIGHT_BYTE_COST = 12.0


class AlterOpLayoutError(Error):
    """A bad ``relay.AlterOpLayout.*`` config value."""


@dataclasses.dataclass(frozen=True)
class ConvWorkload:
    """The shape of one ``nn.conv2d`` (``NCHW``/``OIHW``) that the cost rule reads."""

    batch: int
    channels: int
    height: int
    width: int
    out_channels: int
    kernel: tuple[int, int]
    strides: tuple[int, int]
    padding: tuple[int, int, int, int]
    dilation: tuple[int, int]
    groups: int
    out_size: tuple[int, int]

    @property
    def key(self) -> str:
        """A stable name for config dicts and benchmark tables."""
        def dims(v):
            return "x".join(map(str, v))

        return (f"conv2d_n{self.batch}_c{self.channels}_{self.height}x{self.width}"
                f"_o{self.out_channels}_k{dims(self.kernel)}_s{dims(self.strides)}"
                f"_p{dims(self.padding)}_d{dims(self.dilation)}_g{self.groups}")

    @property
    def macs(self) -> int:
        """Multiply-adds of the direct convolution."""
        kh, kw = self.kernel
        oh, ow = self.out_size
        return (self.batch * self.out_channels * oh * ow * kh * kw * self.channels
                // self.groups)

    @property
    def winograd_applies(self) -> bool:
        return (self.kernel == (3, 3) and self.strides == (1, 1) and self.dilation == (1, 1)
                and self.groups == 1)


def conv_workload(c: Call) -> ConvWorkload | None:
    """The workload of an ``NCHW``/``OIHW`` ``nn.conv2d`` call with static float32 shapes,
    else None."""
    a = c.attrs
    if (a.data_layout, a.kernel_layout, a.out_layout or "NCHW") != ("NCHW", "OIHW", "NCHW"):
        return None
    types = [tensor_type(e) for e in (*c.args, c)]
    if any(t is None or t.dtype != "float32" for t in types) or a.out_dtype not in (
            "", "float32"):
        return None
    shapes = [t.shape for t in types]
    if not all(isinstance(d, int) for s in shapes for d in s):
        return None
    (n, ch, h, w), (o, _, kh, kw), (_, _, oh, ow) = shapes
    return ConvWorkload(n, ch, h, w, o, (kh, kw), a.strides, a.padding, a.dilation, a.groups,
                        (oh, ow))


def direct_cost(wl: ConvWorkload) -> float:
    """The direct convolution's estimated cost (multiply-adds plus its weight bytes)."""
    kh, kw = wl.kernel
    return wl.macs + WEIGHT_BYTE_COST * 4 * kh * kw * wl.channels * wl.out_channels // wl.groups


def winograd_cost(wl: ConvWorkload, tile: int) -> float:
    """Winograd F(tile×tile, 3×3)'s estimated cost: the batched products, the transforms
    and the transformed weights, (tile+2)²/9 times the direct ones."""
    alpha = tile + 2
    oh, ow = wl.out_size
    tiles = wl.batch * -(-oh // tile) * -(-ow // tile)
    c, o = wl.channels, wl.out_channels
    gemm = alpha * alpha * tiles * c * o
    # two 1-D passes each way: 2α³ per input tile and channel, (α + m)·α·m per output
    transforms = tiles * (2 * alpha ** 3 * c + (alpha + tile) * alpha * tile * o)
    return gemm + TRANSFORM_COST * transforms + WEIGHT_BYTE_COST * 4 * alpha * alpha * c * o


def choose_algorithm(wl: ConvWorkload, tiles=WINOGRAD_TILES) -> tuple[str, int | None]:
    """The cost rule: ``("winograd", m)`` for the cheapest F(m×m, 3×3) among ``tiles``
    when it is cheaper than the direct convolution, else ``("direct", None)``."""
    if not wl.winograd_applies:
        return "direct", None
    best = min(tiles, key=lambda m: winograd_cost(wl, m))
    return ("winograd", best) if winograd_cost(wl, best) < direct_cost(wl) else ("direct", None)


def winograd_pays(wl: ConvWorkload, tile: int = 4) -> bool:
    """Whether F(tile×tile, 3×3) is estimated cheaper than the direct convolution."""
    return wl.winograd_applies and winograd_cost(wl, tile) < direct_cost(wl)


def choose_block(channels: int, width: int) -> int:
    """The channel block for ``channels`` (see the module docstring)."""
    if channels % width == 0:
        return width
    divisors = [d for d in range(1, min(channels, max(width, 8)) + 1) if channels % d == 0]
    vector = [d for d in divisors if d % 8 == 0]
    return max(vector) if vector else max(d for d in divisors if d <= width)


def _per_layer(value, wl: ConvWorkload):
    """A config value, or its entry for ``wl`` when it is a dict by workload key."""
    return value.get(wl.key, "auto") if isinstance(value, Mapping) else value


@dataclasses.dataclass(frozen=True)
class _Config:
    block: int
    algorithm: object  # "auto" | "direct" | "winograd" | {workload key: algorithm}
    tile: object  # "auto" | 2 | 4 | 6 | {workload key: tile}
    pad: bool

    def choice(self, wl: ConvWorkload) -> tuple[str, int | None]:
        """``("winograd", m)`` or ``("direct", None)`` for one convolution."""
        algo, tile = _per_layer(self.algorithm, wl), _per_layer(self.tile, wl)
        tiles = WINOGRAD_TILES if tile == "auto" else (tile,)
        if algo == "auto":
            return choose_algorithm(wl, tiles)
        if algo == "winograd" and wl.winograd_applies:
            return "winograd", min(tiles, key=lambda m: winograd_cost(wl, m))
        return "direct", None


def _values(value) -> list:
    return list(value.values()) if isinstance(value, Mapping) else [value]


def _config(ctx, block: int | None, algorithm, tile, pad: bool) -> _Config:
    """The pass's arguments, overridden by the ``PassContext`` config."""
    cfg = ctx.config
    b = cfg.get(BLOCK_KEY, block or DEFAULT_BLOCK)
    if isinstance(b, bool) or not isinstance(b, int) or b < 1:
        raise AlterOpLayoutError(f"{BLOCK_KEY} must be a positive int, found {b!r}")
    algo = cfg.get(ALGORITHM_KEY, algorithm)
    if not all(isinstance(v, str) and v in _ALGORITHMS for v in _values(algo)):
        raise AlterOpLayoutError(f"{ALGORITHM_KEY} must be one of {_ALGORITHMS} or a dict "
                                 f"of them by workload key, found {algo!r}")
    tile = cfg.get(WINOGRAD_TILE_KEY, tile)
    if not all(v == "auto" or (type(v) is int and v in WINOGRAD_TILES)
               for v in _values(tile)):
        raise AlterOpLayoutError(f"{WINOGRAD_TILE_KEY} must be 'auto', one of "
                                 f"{WINOGRAD_TILES} or a dict of them by workload key, "
                                 f"found {tile!r}")
    pad = cfg.get(PAD_KEY, pad)
    if not isinstance(pad, bool):
        raise AlterOpLayoutError(f"{PAD_KEY} must be True or False, found {pad!r}")
    return _Config(b, algo, tile, pad)


# Ops a tensor with zero-padded channels may pass through: each works lane by lane (or
# pools within a lane) and keeps the padding finite, so a convolution that reads it with
# zero weights adds exactly nothing (0 · x = 0 needs x finite: no log, divide, sqrt...).
_PAD_SAFE = frozenset({
    "nn.relu", "clip", "nn.leaky_relu", "negative", "sigmoid", "tanh", "add", "subtract",
    "multiply", "maximum", "minimum", "nn.max_pool2d", "nn.avg_pool2d",
    "nn.global_avg_pool2d", "nn.global_max_pool2d", "nn.adaptive_avg_pool2d",
})


def _round_up(n: int, block: int) -> int:
    return -(-n // block) * block


class _Alter(LayoutConverter):
    """``ConvertLayout``'s machinery with the convolution rule, and channel padding: a
    convolution whose output channels the vector width does not divide computes them
    rounded up to whole vectors (its weight padded with zero filters, folded), and the
    padded tensor flows on through ``_PAD_SAFE`` ops and convolutions (which read the
    extra channels with zero weights). ``self.real[node]`` is the true channel count of
    a node whose converted value is padded; its original-layout value (``visit``) drops
    the padding with a ``strided_slice`` after the ``layout_transform`` back."""

    def __init__(self, config: _Config):
        super().__init__({})
        self.config = config
        self.real: dict = {}
        self._pad_to: int | None = None  # while a padded op's operands are moved ...
        self._real = 0  # ... from this many channels

    # ------------------------------------------------------------ padding

    def visit_call(self, c):
        out = super().visit_call(c)
        real = self.real.get(c)
        if real is None:
            return out
        orig = self.converted[c][1][1]
        return call("strided_slice", [out], begin=[0], end=[real], axes=[orig.index("C")])

    def in_layout(self, node, layout: str, orig: str):
        entry = self.converted.get(node)
        if node in self.real and entry[1][0] != layout:  # leave the padding behind first
            plain = self.visit(node)
            if layout == orig:
                return plain
            key = (node, orig, layout)
            if key not in self.moved:
                self.moved[key] = layout_transform(plain, orig, layout)
            return self.moved[key]
        return super().in_layout(node, layout, orig)

    def _padded_state(self, c: Call):
        """``(state, real channels)`` when ``c`` may run on the padded tensors it reads
        (every converted operand padded alike), else None; ``()`` when none is padded."""
        args = [f for a in c.args for f in (a.fields if type(a) is Tuple else (a,))]
        padded = [(self._tensor_state(a), self.real[a]) for a in args if a in self.real]
        if not padded:
            return ()
        converted = [a for a in args if self.state(a) is not None]
        if c.op.name not in _PAD_SAFE or any(a not in self.real for a in converted) or len(
                set(padded)) > 1:
            return None
        return padded[0]

    def _can_broadcast(self, t, target: str, orig: str) -> bool:
        if self._pad_to is None:
            return super()._can_broadcast(t, target, orig)
        if all(d == 1 for d in t.shape):
            return True
        full = (1,) * (len(orig) - t.ndim) + tuple(t.shape)
        axis = orig.index("C")
        return full[axis] == self._real and fits_layout(
            full[:axis] + (self._pad_to,) + full[axis + 1:], orig, target)

    def _broadcast_operand(self, a, t, target: str, orig: str):
        if self._pad_to is None or all(d == 1 for d in t.shape):
            return super()._broadcast_operand(a, t, target, orig)
        n = len(orig)
        full = self.visit(a)
        if t.ndim < n:
            full = call("expand_dims", [full], axis=0, num_newaxis=n - t.ndim)
        widths = [(0, 0)] * n
        widths[orig.index("C")] = (0, self._pad_to - self._real)
        return layout_transform(_pad(full, widths, t.dtype), orig, target)

    # ------------------------------------------------------------ rules

    def convert_call(self, c: Call):
        if c.op.name == "nn.conv2d":
            return self.conv2d(c)
        if c.op.name == "nn.dense":
            return self.dense(c)
        padded = self._padded_state(c)
        if padded is None:
            return None  # its operands go back to the original layout, unpadded
        if not padded:
            return super().convert_call(c)
        (cur, _), self._real = padded
        self._pad_to = _round_up(self._real, parse_layout(cur).factor("C"))
        try:
            result = super().convert_call(c)
        finally:
            self._pad_to = None
        if result is not None and result[1] is not None and isinstance(result[1][0], str):
            self.real[c] = self._real
        return result

    def _input_block(self, node) -> int | None:
        """The block the input already has (``NCHW[x]c``), if any."""
        state = self._tensor_state(node)
        if state is None or state[1] != "NCHW":
            return None
        m = _BLOCKED.fullmatch(state[0])
        return int(m.group(1)) if m else None

    def conv2d(self, c: Call):
        wl = conv_workload(c)
        if wl is None:
            return None
        width = self.config.block
        g, ch, o = wl.groups, wl.channels, wl.out_channels
        have = self._input_block(c.args[0])
        padded_in = c.args[0] in self.real
        c_in = _round_up(ch, have) if padded_in else ch  # channels the input holds
        weight = self.visit(c.args[1])
        a = c.attrs
        if g == ch == o:  # depthwise, one filter per channel
            x = have if have and c_in % have == 0 else choose_block(ch, width)
            y, o_out, g = x, c_in, c_in
            op = "nn.contrib_depthwise_conv2d_NCHWc"
            w = layout_transform(_pad_weight(weight, c_in - o, 0), "OIHW", f"OIHW1i{x}o")
            attrs = dict(strides=a.strides, dilation=a.dilation, groups=g,
                         kernel_size=wl.kernel, kernel_layout=f"OIHW1i{x}o")
        else:
            if padded_in and g > 1:
                return None  # padding would shift the groups (the input comes back plain)
            ig, og = c_in // g, o // g
            x = have if have and ig % have == 0 else choose_block(ig, width)
            pad_out = g == 1 and self.config.pad and o % width != 0
            y = width if pad_out else choose_block(og, width)
            o_out = _round_up(o, y)
            weight = _pad_weight(weight, o_out - o, c_in - ch)
            algorithm, tile = self.config.choice(wl)
            if algorithm == "winograd":
                op = "nn.contrib_conv2d_winograd_NCHWc"
                u = call("nn.contrib_conv2d_winograd_weight_transform", [weight],
                         tile_size=tile)
                # and the direct packing, for the outputs the transforms leave non-finite
                w = (layout_transform(u, "HWOI", f"HWOI{x}i{y}o"),
                     layout_transform(weight, "OIHW", f"OIHW{x}i{y}o"))
                attrs = dict(tile_size=tile, kernel_size=wl.kernel,
                             kernel_layout=f"HWOI{x}i{y}o")
            else:
                op = "nn.contrib_conv2d_NCHWc"
                w = layout_transform(weight, "OIHW", f"OIHW{x}i{y}o")
                attrs = dict(strides=a.strides, dilation=a.dilation, groups=g,
                             kernel_size=wl.kernel, kernel_layout=f"OIHW{x}i{y}o")
        data = self.in_layout(c.args[0], f"NCHW{x}c", "NCHW")
        expr = call(op, [data, *(w if type(w) is tuple else (w,))], data_layout=f"NCHW{x}c",
                    out_layout=f"NCHW{y}c",
                    padding=a.padding, channels=o_out, out_dtype=a.out_dtype, **attrs)
        if o_out != o:
            self.real[c] = o
        return expr.with_span(c.span), (f"NCHW{y}c", "NCHW")


    def dense(self, c: Call):
        """``nn.dense(x, W)`` with a constant ``W`` → ``nn.contrib_dense_pack(x,
        layout_transform(W, "NC", "NC[n]n"))``: the weight in the panels the matmul
        micro-kernels stream, packed once by ``FoldConstant``. ``n`` is two vectors (the
        tile width ``tir/matmul.py`` prefers), else one; units it does not divide, a weight
        computed at run time, or other dtypes keep ``nn.dense``. ``x`` is read in its
        original layout."""
        x, w = c.args
        tx, tw = tensor_type(x), tensor_type(w)
        if (type(w) is not Constant or tx is None or tw is None or tw.ndim != 2
                or {tx.dtype, tw.dtype} != {"float32"} or c.attrs.out_dtype not in ("", "float32")
                or not all(isinstance(d, int) for d in tw.shape)):
            return None
        units = tw.shape[0]
        n = next((b for b in (2 * self.config.block, self.config.block) if units % b == 0),
                 None)
        if n is None or 0 in tw.shape:  # an empty weight: nothing to pack (fuzz seed 130098)
            return None
        layout = f"NC{n}n"
        packed = layout_transform(self.visit(w), "NC", layout)
        expr = call("nn.contrib_dense_pack", [self.visit(x), packed], units=units,
                    out_dtype=c.attrs.out_dtype, weight_layout=layout)
        return expr.with_span(c.span), None


def _pad(e, widths, dtype: str):
    return call("nn.pad", [e, const(0, dtype)], pad_width=widths)


def _pad_weight(weight, out_extra: int, in_extra: int):
    """``OIHW`` weights with zero filters for padded output channels and zero taps for
    padded input channels (a constant: folded)."""
    if not out_extra and not in_extra:
        return weight
    return _pad(weight, [(0, out_extra), (0, in_extra), (0, 0), (0, 0)], "float32")


def alter_function(func: Function, mod: IRModule, config: _Config) -> Function:
    new = _Alter(config).visit(func)
    return new if new is func else reinfer(new, mod)


def AlterOpLayout(  # noqa: N802  (Relay's pass name)
        block: int | None = None, conv_algorithm="auto", winograd_tile="auto",
        pad_channels: bool = True) -> Pass:
    """Blocked layouts and convolution algorithms for a CPU whose vectors hold ``block``
    floats (``None``: 16). Each argument is the default of its ``PassContext`` config key
    (``BLOCK_KEY``, ``ALGORITHM_KEY``, ``WINOGRAD_TILE_KEY``, ``PAD_KEY``), which
    overrides it."""

    @module_pass(opt_level=3, name="AlterOpLayout")
    def alter_op_layout(mod: IRModule, ctx) -> IRModule:
        config = _config(ctx, block, conv_algorithm, winograd_tile, pad_channels)
        mod = typed_module(mod)
        functions = {gv: f if f.is_primitive else alter_function(f, mod, config)
                     for gv, f in mod.functions.items()}
        if all(functions[gv] is f for gv, f in mod.functions.items()):
            return mod
        return mod.with_functions(functions)

    return alter_op_layout


__all__ = ["ALGORITHM_KEY", "BLOCK_KEY", "PAD_KEY", "WINOGRAD_TILE_KEY", "AlterOpLayout",
           "AlterOpLayoutError", "ConvWorkload", "WINOGRAD_TILES", "choose_algorithm",
           "choose_block", "conv_workload", "direct_cost", "winograd_cost", "winograd_pays"]
