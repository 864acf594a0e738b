"""``relay.testing.mlp.get_workload``: relayir's MLP behind Relay's image input.

Relay's MLP takes ``%data`` of ``(batch,) + image_shape`` and flattens it; relayir's
takes ``(batch, features)``. The adapter gives relayir's ``@main`` Relay's input:
``%data`` becomes ``nn.batch_flatten`` of a new ``%data`` of the image shape.
"""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import Function, var
from ....ir.module import IRModule
from ....op.nn import batch_flatten
from ....testing.models import mlp
from ....transform.bind import bind
from ._workload import ndarray_params, typed


def get_workload(batch_size: int, num_classes: int = 10, image_shape=(1, 28, 28),
                 dtype: str = "float32"):
    """``(mod, params)``: ``@main(%data: (batch,) + image_shape, weights...)`` →
    ``(batch, num_classes)`` softmax probabilities."""
    if dtype != "float32":
        raise Error(f"relay.testing.mlp: relayir's MLP is float32, found {dtype!r}")
    features = int(np.prod(image_shape))
    mod, params = mlp(batch_size, features, num_classes=num_classes)
    main = mod["main"]
    flat, weights = main.params[0], main.params[1:]
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    body = bind(main.body, {flat: batch_flatten(data)})
    return typed(IRModule.from_expr(Function([data, *weights], body))), ndarray_params(params)


__all__ = ["get_workload"]
