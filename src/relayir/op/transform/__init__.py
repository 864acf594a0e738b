"""Tensor transforms: reshape, layout, slicing, gathering, joining, creation, cast.

One module per family (shape, join, index, convert, creation, replicate); each op is
one definition there (attrs, relation, numpy reference, registration), with its
Relay-style constructor at the end of that module. Shapes are computed once: where
the reference needs a shape (``reshape``, ``strided_slice``) it calls the same helper
the relation uses, so the value and the type cannot disagree.

Dimensions that are ``Any()`` or symbolic pass through unchanged where an op only
moves them (transpose, concatenate's other axes), and become ``Any()`` where the output
would need arithmetic on them (``n * 3``, a slice of an unknown extent).
"""

from __future__ import annotations

from .convert import (
    CastAttrs,
    ClipAttrs,
    cast,
    clip,
    where,
)
from .creation import (
    FullAttrs,
    InitOpAttrs,
    full,
    full_like,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from .index import (
    StridedSliceAttrs,
    TakeAttrs,
    slice_plan,
    slice_range,
    strided_slice,
    take,
    unravel_index,
)
from .join import (
    ConcatenateAttrs,
    SplitAttrs,
    StackAttrs,
    concatenate,
    split,
    stack,
)
from .replicate import (
    BroadcastToAttrs,
    MeshgridAttrs,
    RepeatAttrs,
    ReverseAttrs,
    TileAttrs,
    broadcast_to,
    meshgrid,
    repeat,
    reverse,
    tile,
)
from .shape import (
    ExpandDimsAttrs,
    ReshapeAttrs,
    ReshapeLikeAttrs,
    SqueezeAttrs,
    TransposeAttrs,
    expand_dims,
    reshape,
    reshape_like,
    reshape_shape,
    squeeze,
    transpose,
    transpose_perm,
)

__all__ = [
    "broadcast_to", "cast", "clip", "concatenate", "expand_dims", "full", "full_like",
    "meshgrid", "ones", "ones_like", "repeat", "reshape", "reshape_like", "reverse", "split",
    "squeeze", "stack", "strided_slice", "take", "tile", "transpose", "unravel_index",
    "where", "zeros", "zeros_like",
]
