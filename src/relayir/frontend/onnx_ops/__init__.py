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
    for _name, _variants in _family.TABLE.items():
        TABLE.setdefault(_name, []).extend(_variants)
        TABLE[_name].sort(key=lambda p: p[0])

__all__ = ["TABLE"]
