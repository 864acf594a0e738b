"""Relay's ``get_workload`` signatures over relayir's built-in models."""

from __future__ import annotations

from ....errors import Error
from ...runtime.ndarray import as_ndarray
from ..transform import InferType


def image_size(name: str, image_shape, layout: str = "NCHW", dtype: str = "float32") -> int:
    """The one image extent relayir's models take, from Relay's ``image_shape``."""
    if layout != "NCHW" or dtype != "float32":
        raise Error(f"relay.testing.{name}: relayir's {name} is NCHW float32, found layout "
                    f"{layout!r} dtype {dtype!r}")
    c, h, w = image_shape
    if c != 3 or h != w:
        raise Error(f"relay.testing.{name}: relayir's {name} takes square 3-channel images, "
                    f"found image_shape {tuple(image_shape)}")
    return int(h)


def ndarray_params(params: dict) -> dict:
    return {k: as_ndarray(v) for k, v in params.items()}


def typed(mod):
    """The module type-checked with the types written in, as Relay's workloads come out
    of ``create_workload`` (so that ``parse(mod.astext())`` equals ``mod``)."""
    return InferType()(mod)
