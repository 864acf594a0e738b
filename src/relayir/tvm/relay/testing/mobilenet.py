"""``relay.testing.mobilenet.get_workload``: relayir's MobileNetV2 (Relay's is V1)."""

from __future__ import annotations

from ....testing.models import mobilenet_v2
from ._workload import image_size, ndarray_params, typed


def get_workload(batch_size: int = 1, num_classes: int = 1000, image_shape=(3, 224, 224),
                 dtype: str = "float32", layout: str = "NCHW"):
    size = image_size("mobilenet", image_shape, layout, dtype)
    mod, params = mobilenet_v2(batch_size, size, num_classes)
    return typed(mod), ndarray_params(params)


__all__ = ["get_workload"]
