"""Local response normalisation: ``nn.lrn`` (AlexNet, GoogLeNet).

``out = x / (bias + alpha / size * sum(x[c'] ** 2 for c' in window(c))) ** beta`` where the
window along ``axis`` is ``[c - (size - 1) // 2, c + size // 2]`` clipped to the axis
(ONNX's rule; equal to PyTorch's and TVM's for the usual odd sizes).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ..attrs_util import set_fields
from ..type_rel import require_float, tensor
from ._common import _axis, _positive


@dataclasses.dataclass(frozen=True)
class LRNAttrs(Attrs):
    size: int = 5
    axis: int = 1
    bias: float = 2.0
    alpha: float = 1e-4
    beta: float = 0.75

    def __post_init__(self):
        set_fields(self, size=_positive(self.size, "size"), axis=int(self.axis),
                   bias=float(self.bias), alpha=float(self.alpha), beta=float(self.beta))

    @property
    def window(self) -> tuple[int, int]:
        """How many neighbours before and after a position the window covers."""
        before = (self.size - 1) // 2
        return before, self.size - 1 - before


def _lrn_rel(types, attrs):
    data = tensor(types[0])
    require_float(data, "data")
    _axis(attrs.axis, data)
    return data


def window_sum(x: np.ndarray, axis: int, before: int, after: int) -> np.ndarray:
    """``out[i] = sum(x[i - before : i + after + 1])`` along ``axis`` (zeros outside)."""
    widths = [(0, 0)] * x.ndim
    widths[axis] = (before, after)
    padded = np.pad(x, widths)
    n = x.shape[axis]
    return sum(np.take(padded, np.arange(k, k + n), axis=axis)
               for k in range(before + after + 1))


def _lrn_ref(data, attrs):
    x = data.astype("float64")
    axis = attrs.axis % x.ndim
    total = window_sum(x * x, axis, *attrs.window)
    return (x / (attrs.bias + attrs.alpha / attrs.size * total) ** attrs.beta).astype(data.dtype)


register_op("nn.lrn", rel=_lrn_rel, ref=_lrn_ref, pattern=OpPattern.OPAQUE, num_inputs=1,
            attrs=LRNAttrs)


def lrn(data, size=5, axis=1, bias=2.0, alpha=1e-4, beta=0.75):
    """Relay's ``nn.lrn`` (same argument order and defaults)."""
    return call("nn.lrn", [data], size=size, axis=axis, bias=bias, alpha=alpha, beta=beta)
