"""ONNX converter tables, one small file per family; ``TABLE`` is their union."""

from . import (
    algorithm,
    attention,
    composite,
    control_flow,
    elementwise,
    image,
    loss,
    nn,
    preview,
    quantize,
    reduce,
    rnn,
    sequence,
    shape,
    spectral,
    stateful,
    tfidf,
    vision,
)
from .base import OnnxTable

TABLE = OnnxTable()
for _family in (elementwise, nn, image, shape, reduce, algorithm, loss, attention, quantize,
                composite, stateful, rnn, spectral, preview, tfidf, vision,
                control_flow, sequence):
    TABLE.merge(_family.TABLE)  # an (op, since) two families define raises

__all__ = ["TABLE"]
