"""aten converter tables, one small file per family; ``TABLE`` is their union."""

from ..common import ConverterTable
from . import activation, algorithm, creation, elementwise, linalg, nn, reduce, resize, rnn, shape

TABLE = ConverterTable()
for _family in (elementwise, activation, nn, shape, reduce, linalg, creation, resize,
                algorithm, rnn):
    TABLE.merge(_family.TABLE)  # an op two families define raises

__all__ = ["TABLE"]
