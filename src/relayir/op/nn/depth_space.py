"""Block rearrangements: ``nn.depth_to_space``, ``nn.space_to_depth`` (ONNX/Relay
semantics) and ``nn.upsampling`` (Relay's integer-style upsampling, an ``image.resize2d``).

``mode`` orders the channels of a block: ``DCR`` (depth-column-row, ONNX's default: the
block offset is the slow part of the channel) or ``CRD`` (column-row-depth: the block
offset is the fast part, PyTorch's ``pixel_shuffle``). ``space_to_depth`` takes a ``mode``
too so that each op is the exact inverse of the other with the same mode.
"""

from __future__ import annotations

import dataclasses

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import set_fields
from ..image import Resize2DAttrs, _resize_ref
from ..type_rel import fail, tensor
from ._common import _from_canonical, _layout, _positive, _scaled, _static, _to_canonical


@dataclasses.dataclass(frozen=True)
class DepthSpaceAttrs(Attrs):
    block_size: int = 1
    layout: str = "NCHW"
    mode: str = "DCR"

    def __post_init__(self):
        if self.mode not in ("DCR", "CRD"):
            raise ValueError(f"mode must be DCR or CRD, found {self.mode!r}")
        set_fields(self, block_size=_positive(self.block_size, "block_size"))
        _layout(self.layout, "NCHW", "layout")


def _depth_space_rel(types, attrs, to_space: bool):
    data = tensor(types[0])
    if data.ndim != 4:
        fail(f"data must have rank 4 ({attrs.layout}), found {data}")
    dims = dict(zip(attrs.layout, data.shape))
    b = attrs.block_size
    if to_space:
        if _static(dims["C"]) and dims["C"] % (b * b):
            fail(f"channels must be a multiple of block_size**2 = {b * b}, found {data}")
        dims.update(C=_scaled(dims["C"], divide=b * b), H=_scaled(dims["H"], multiply=b),
                    W=_scaled(dims["W"], multiply=b))
    else:
        for a in "HW":
            if _static(dims[a]) and dims[a] % b:
                fail(f"{a} must be a multiple of block_size {b}, found {data}")
        dims.update(C=_scaled(dims["C"], multiply=b * b), H=_scaled(dims["H"], divide=b),
                    W=_scaled(dims["W"], divide=b))
    return TensorType(tuple(dims[a] for a in attrs.layout), data.dtype)


def _depth_to_space_ref(data, attrs):
    x = _to_canonical(data, attrs.layout, "NCHW")
    n, c, h, w = x.shape
    b = attrs.block_size
    if attrs.mode == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return _from_canonical(y.reshape(n, c // (b * b), h * b, w * b), "NCHW", attrs.layout)


def _space_to_depth_ref(data, attrs):
    x = _to_canonical(data, attrs.layout, "NCHW")
    n, c, h, w = x.shape
    b = attrs.block_size
    y = x.reshape(n, c, h // b, b, w // b, b)
    y = y.transpose(0, 3, 5, 1, 2, 4) if attrs.mode == "DCR" else y.transpose(0, 1, 3, 5, 2, 4)
    return _from_canonical(y.reshape(n, c * b * b, h // b, w // b), "NCHW", attrs.layout)


register_op("nn.depth_to_space", rel=lambda t, a: _depth_space_rel(t, a, True),
            ref=_depth_to_space_ref, pattern=OpPattern.INJECTIVE, num_inputs=1,
            attrs=DepthSpaceAttrs)
register_op("nn.space_to_depth", rel=lambda t, a: _depth_space_rel(t, a, False),
            ref=_space_to_depth_ref, pattern=OpPattern.INJECTIVE, num_inputs=1,
            attrs=DepthSpaceAttrs)


def depth_to_space(data, block_size, layout="NCHW", mode="DCR"):
    return call("nn.depth_to_space", [data], block_size=block_size, layout=layout, mode=mode)


def space_to_depth(data, block_size, layout="NCHW", mode="DCR"):
    return call("nn.space_to_depth", [data], block_size=block_size, layout=layout, mode=mode)


# ---------------------------------------------------------------- upsampling


@dataclasses.dataclass(frozen=True)
class UpSamplingAttrs(Attrs):
    scale_h: float = 1.0
    scale_w: float = 1.0
    layout: str = "NCHW"
    method: str = "nearest_neighbor"
    align_corners: bool = False

    def __post_init__(self):
        if min(self.scale_h, self.scale_w) <= 0:
            raise ValueError(f"scales must be positive, found {self.scale_h}, {self.scale_w}")
        set_fields(self, scale_h=float(self.scale_h), scale_w=float(self.scale_w),
                   align_corners=bool(self.align_corners))
        self.as_resize((1, 1, 1, 1))  # validates method and layout

    def out_hw(self, h, w) -> tuple:
        return (int(round(h * self.scale_h)) if _static(h) else h,
                int(round(w * self.scale_w)) if _static(w) else w)

    def as_resize(self, shape) -> Resize2DAttrs:
        """The ``image.resize2d`` attrs this upsampling of data of ``shape`` is (TVM's
        rule: asymmetric or align_corners coordinates, nearest rounds down)."""
        dims = dict(zip(self.layout, shape))
        mode = "align_corners" if self.align_corners else "asymmetric"
        nearest = self.method in ("nearest_neighbor", "nearest")
        return Resize2DAttrs(size=self.out_hw(dims["H"], dims["W"]), layout=self.layout,
                             method=self.method, coordinate_transformation_mode=mode,
                             rounding_method="floor" if nearest else "")


def _upsampling_rel(types, attrs):
    data = tensor(types[0])
    if data.ndim != 4:
        fail(f"data must have rank 4 ({attrs.layout}), found {data}")
    dims = dict(zip(attrs.layout, data.shape))
    dims["H"], dims["W"] = attrs.out_hw(dims["H"], dims["W"])
    return TensorType(tuple(dims[a] for a in attrs.layout), data.dtype)


def _upsampling_ref(data, attrs):
    return _resize_ref(data, attrs.as_resize(data.shape))


register_op("nn.upsampling", rel=_upsampling_rel, ref=_upsampling_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=UpSamplingAttrs)


def upsampling(data, scale_h=1, scale_w=1, layout="NCHW", method="nearest_neighbor",
               align_corners=False):
    """Relay's ``nn.upsampling``: output ``round(H * scale_h) x round(W * scale_w)``."""
    return call("nn.upsampling", [data], scale_h=scale_h, scale_w=scale_w, layout=layout,
                method=method, align_corners=align_corners)

