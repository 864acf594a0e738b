"""ONNX converter tables, one small file per family; ``TABLE`` is their union."""

from . import elementwise, nn, reduce, shape
from .base import OnnxTable

TABLE = OnnxTable()
for _family in (elementwise, nn, shape, reduce):
    for _name, _variants in _family.TABLE.items():
        TABLE.setdefault(_name, []).extend(_variants)
        TABLE[_name].sort(key=lambda p: p[0])

__all__ = ["TABLE"]
