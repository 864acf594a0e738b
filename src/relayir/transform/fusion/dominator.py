"""The post-dominator tree of an ``IndexedGraph`` (TVM's ``DominatorTree::PostDom``).

The immediate post-dominator of a node is the closest node that every path from it to
the graph's exit goes through. The graph is a DAG, so one sweep in reverse topological
order suffices: a node's post-dominator is the least common ancestor, in the tree built
so far, of all its consumers. A node with an external reference has none (its value
escapes), and neither has a node whose consumers only meet at the exit.

Alongside the parent, each node keeps the pattern of the way to it: the most
restrictive (largest) pattern among the edges and tree links crossed on the way from the
node to its post-dominator. ``elemwise`` there means every path is elementwise.
"""

from __future__ import annotations

from .indexed_graph import ELEMWISE, OPAQUE, IndexedGraph


class PostDominatorTree:
    """``parent[i]``: index of node ``i``'s immediate post-dominator, or -1;
    ``pattern[i]``: the combined pattern of the paths from ``i`` to it."""

    __slots__ = ("parent", "depth", "pattern")

    def __init__(self, graph: IndexedGraph):
        n = len(graph)
        parent = self.parent = [-1] * n
        depth = self.depth = [1] * n
        pattern = self.pattern = [OPAQUE] * n
        outputs, extern_ref = graph.outputs, graph.extern_ref
        for i in range(n - 1, -1, -1):
            outs = outputs[i]
            if extern_ref[i] or not outs:
                continue
            pat = ELEMWISE
            lca = -1
            for k, (consumer, edge) in enumerate(outs):
                if k == 0:
                    lca = consumer
                else:
                    lca, pat = self._lca(lca, consumer, pat)
                if edge > pat:
                    pat = edge
            parent[i] = lca
            pattern[i] = pat
            depth[i] = depth[lca] + 1 if lca >= 0 else 1

    def _lca(self, a: int, b: int, pat: int) -> tuple[int, int]:
        parent, depth, pattern = self.parent, self.depth, self.pattern
        while a != b:
            if a < 0 or b < 0:
                return -1, pat
            da, db = depth[a], depth[b]
            if da < db:
                pat = max(pat, pattern[b])
                b = parent[b]
            elif db < da:
                pat = max(pat, pattern[a])
                a = parent[a]
            else:
                pat = max(pat, pattern[a], pattern[b])
                a = parent[a]
                b = parent[b]
        return a, pat
