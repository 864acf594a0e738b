"""The analyses behind ``FuseOps``: the indexed dataflow graph, its post-dominator tree
and the union-find partition into fusion groups (TVM's ``fuse_ops.cc`` in three steps).
"""

from .dominator import PostDominatorTree
from .indexed_graph import IndexedGraph, Untyped
from .partition import partition

__all__ = ["IndexedGraph", "PostDominatorTree", "Untyped", "partition"]
