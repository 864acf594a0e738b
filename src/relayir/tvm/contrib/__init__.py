"""``tvm.contrib``: ``graph_executor`` and ``utils``."""

from . import graph_executor, utils

__all__ = ["graph_executor", "utils"]
