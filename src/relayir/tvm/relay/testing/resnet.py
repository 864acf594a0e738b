"""``relay.testing.resnet.get_workload``: relayir's (torchvision-style) ResNet."""

from __future__ import annotations

from ....testing.models import resnet as _resnet
from ._workload import image_size, ndarray_params, typed


def get_workload(batch_size: int = 1, num_classes: int = 1000, num_layers: int = 18,
                 image_shape=(3, 224, 224), layout: str = "NCHW", dtype: str = "float32",
                 **kwargs):
    """``(mod, params)``: ``@main(%data: (batch, 3, H, W), weights...)`` → logits."""
    size = image_size("resnet", image_shape, layout, dtype)
    mod, params = _resnet(num_layers, batch_size, size, num_classes)
    return typed(mod), ndarray_params(params)


__all__ = ["get_workload"]
