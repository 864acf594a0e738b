"""Data layouts and the ``layout_transform`` op.

A layout names the axes of a tensor, as in TVM: upper-case letters are *primal* axes
(``N``, ``C``, ``H``, ``W``, ``O``, ``I``, ...), and a number followed by a lower-case
letter is a *sub-axis* that splits the primal axis of the same letter into an outer
part (written with the upper-case letter) and an inner block of that size:
``NCHW8c`` is NCHW with the channels split into ``C // 8`` blocks of 8, the block
innermost. A primal axis has at most one sub-axis, and a sub-axis needs its primal.

``layout_transform(data, src_layout, dst_layout)`` moves a tensor between two layouts
over the same primal axes: any permutation (``NCHW`` ↔ ``NHWC``, ``OIHW`` ↔ ``HWIO``),
splitting (``NCHW`` → ``NCHW8c``), merging, and re-blocking (``NCHW4c`` → ``NCHW8c``).
It never pads: a split needs the primal extent to be divisible by the block size, and
a bad shape is a type error that says so.
"""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np

from ..errors import TypeInferenceError
from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import Any, TensorType
from .attrs_util import set_fields
from .type_rel import fail, show_type, tensor

_TOKEN = re.compile(r"(\d*)([A-Za-z])")


@dataclasses.dataclass(frozen=True)
class Layout:
    """A parsed layout: ``axes[i]`` is ``(letter, factor)``; ``factor`` is ``None`` for a
    primal axis, the block size for a sub-axis."""

    name: str
    axes: tuple[tuple[str, int | None], ...]

    @property
    def primal(self) -> str:
        """The primal letters in the order they appear (``NCHW8c`` → ``NCHW``)."""
        return "".join(a for a, f in self.axes if f is None)

    @property
    def letters(self) -> str:
        return "".join(a for a, _ in self.axes)

    def factor(self, primal: str) -> int | None:
        """The block size of ``primal``'s sub-axis, or ``None`` when it is not split."""
        for a, f in self.axes:
            if a == primal.lower() and f is not None:
                return f
        return None

    def index(self, letter: str) -> int:
        return self.letters.index(letter)

    @property
    def is_plain(self) -> bool:
        return all(f is None for _, f in self.axes)

    def __len__(self) -> int:
        return len(self.axes)

    def __str__(self) -> str:
        return self.name


@functools.lru_cache(maxsize=512)
def parse_layout(text: str) -> Layout:
    """``"NCHW16c"`` → ``Layout``; raises ``ValueError`` on a malformed layout."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"a layout is a non-empty string such as 'NCHW', found {text!r}")
    axes, pos = [], 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break
        pos = m.end()
        digits, letter = m.groups()
        if letter.isupper():
            if digits:
                raise ValueError(f"layout {text!r}: a block size goes before a lower-case "
                                 f"sub-axis ('{digits}{letter.lower()}'), not before {letter}")
            axes.append((letter, None))
        else:
            if not digits or int(digits) < 1:
                raise ValueError(f"layout {text!r}: sub-axis {letter!r} needs a positive "
                                 f"block size before it, such as '8{letter}'")
            axes.append((letter, int(digits)))
    if pos != len(text):
        raise ValueError(f"layout {text!r}: unexpected {text[pos:]!r}; a layout is letters "
                         f"with optional block sizes, such as 'NCHW' or 'NCHW8c'")
    letters = [a for a, _ in axes]
    for a in letters:
        if letters.count(a) > 1:
            raise ValueError(f"layout {text!r} repeats axis {a!r}")
        if a.islower() and a.upper() not in letters:
            raise ValueError(f"layout {text!r}: sub-axis {a!r} needs its primal axis "
                             f"{a.upper()!r}")
    return Layout(text, tuple(axes))


# ---------------------------------------------------------------- shapes


def _split_primal(src: Layout, dst: Layout) -> None:
    if sorted(src.primal) != sorted(dst.primal):
        raise ValueError(f"cannot transform layout {src} into {dst}: their primal axes "
                         f"differ ({src.primal} vs {dst.primal})")


def primal_dims(shape: tuple, layout: Layout) -> dict:
    """``{primal letter: full extent}`` of a tensor of ``shape`` in ``layout``."""
    dims = {}
    for (a, f), d in zip(layout.axes, shape):
        if f is not None:
            if isinstance(d, int) and d != f:
                fail(f"axis {a!r} of layout {layout} must have extent {f}, found {d}")
            continue
        block = layout.factor(a) or 1
        dims[a] = d * block if isinstance(d, int) else (d if block == 1 else Any())
    return dims


def layout_shape(dims: dict, layout: Layout) -> tuple:
    """The shape in ``layout`` of a tensor whose primal extents are ``dims``."""
    out = []
    for a, f in layout.axes:
        if f is not None:
            out.append(f)
            continue
        d, block = dims[a], layout.factor(a)
        if block is None:
            out.append(d)
        elif isinstance(d, int):
            if d % block:
                fail(f"axis {a} has extent {d}, which the block size {block} of layout "
                     f"{layout} does not divide (layout_transform does not pad)")
            out.append(d // block)
        else:
            out.append(Any())
    return tuple(out)


def transform_shape(shape: tuple, src: str, dst: str) -> tuple:
    """The shape ``layout_transform`` gives a tensor of ``shape`` (``fail``s when it
    cannot apply)."""
    s, d = parse_layout(src), parse_layout(dst)
    if len(shape) != len(s):
        fail(f"data of rank {len(shape)} cannot be in layout {src} (rank {len(s)})")
    return layout_shape(primal_dims(shape, s), d)


def transform_array(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """numpy ``layout_transform``: merge ``src``'s blocks, permute, split into ``dst``'s."""
    s, d = parse_layout(src), parse_layout(dst)
    out_shape = transform_shape(x.shape, src, dst)  # also checks rank and divisibility
    perm, merged = [], []
    for a in s.primal:  # 1. src's primal order, each outer axis followed by its block
        perm.append(s.index(a))
        if s.factor(a):
            perm.append(s.index(a.lower()))
        merged.append(x.shape[s.index(a)] * (s.factor(a) or 1))
    y = x.transpose(perm).reshape(merged)
    y = y.transpose([s.primal.index(a) for a in d.primal])  # 2. dst's primal order
    names, split = [], []
    for a, n in zip(d.primal, y.shape):  # 3. split dst's blocked axes
        f = d.factor(a)
        names += [a, a.lower()] if f else [a]
        split += [n // f, f] if f else [n]
    y = y.reshape(split).transpose([names.index(a) for a in d.letters])  # 4. dst's order
    assert y.shape == out_shape
    return np.ascontiguousarray(y)


# ---------------------------------------------------------------- the op


@dataclasses.dataclass(frozen=True)
class LayoutTransformAttrs(Attrs):
    """Both layouts are required, so the text always shows them."""

    src_layout: str
    dst_layout: str

    def __post_init__(self):
        src, dst = parse_layout(self.src_layout), parse_layout(self.dst_layout)
        _split_primal(src, dst)
        set_fields(self, src_layout=src.name, dst_layout=dst.name)


def _layout_transform_rel(types, attrs):
    t = tensor(types[0])
    if t.ndim != len(parse_layout(attrs.src_layout)):
        fail(f"data {show_type(t)} has rank {t.ndim}, but src_layout {attrs.src_layout} "
             f"has {len(parse_layout(attrs.src_layout))} axes")
    return TensorType(transform_shape(t.shape, attrs.src_layout, attrs.dst_layout), t.dtype)


def _layout_transform_ref(data, attrs):
    try:
        return transform_array(data, attrs.src_layout, attrs.dst_layout)
    except TypeInferenceError as exc:  # a dynamic shape that turned out bad at run time
        raise ValueError(str(exc)) from None


register_op("layout_transform", rel=_layout_transform_rel, ref=_layout_transform_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=LayoutTransformAttrs,
            description="move data between layouts over the same primal axes (no padding)")


def layout_transform(data, src_layout: str, dst_layout: str):
    """Transform ``data`` from ``src_layout`` to ``dst_layout`` (``"NCHW"`` → ``"NHWC"``,
    ``"NCHW"`` → ``"NCHW8c"``, ...)."""
    return call("layout_transform", [data], src_layout=src_layout, dst_layout=dst_layout)


__all__ = ["Layout", "layout_transform", "parse_layout"]
