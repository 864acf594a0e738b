"""``op/sparse.py``'s ops run through their numpy references: the number of values
``sparse_fill_empty_rows`` adds depends on the data, and ``sparse_reshape``'s index
arithmetic reads the values of its two shape tensors (their ``-1`` included)."""

from .common import declare_reference_only

declare_reference_only("sparse_fill_empty_rows", "its output extent depends on the data")
declare_reference_only("sparse_reshape", "its strides are the values of its shape inputs")
