"""Partition an ``IndexedGraph`` into fusion groups (TVM's ``GraphPartitioner``).

Groups live in a union-find forest indexed like the graph (group ``i`` starts as node
``i`` alone). A group's union-find root is also its output node: fusion only ever merges
a node, and everything on the paths from it, into the group of its post-dominator, which
lies downstream of all of them.

Three sweeps over the nodes in topological order, each trying to fuse a node into the
group of its immediate post-dominator when every path between them qualifies:

0. ``out_elemwise_fusable`` ops (conv2d, dense, pools) absorb the elementwise and
   broadcast ops that follow them up to their post-dominator when the paths are
   elementwise; elementwise/broadcast ops fuse forward into injective, broadcast,
   reduction or conv-anchored groups.
1. The same for elementwise/broadcast ops, plus injective ops and tuples fusing forward
   when every path is injective. Deferring injective ops to this sweep lets conv2d
   finish absorbing its epilogue first. As the issue asks, an injective producer also
   fuses into the reduction it feeds (TVM stops injective chains at a reduction).
2. Injective ops fuse into a tuple that was itself fused into an injective consumer
   (the fields of a ``concatenate``).

Reductions never absorb their consumers and opaque ops stay alone (TVM's rules). A
fusion is refused when the group would hold more than ``max_depth`` op calls (TVM
counts every node; inlined constants, tuples and projections are free here, so the
knob means what its users expect).
"""

from __future__ import annotations

from ...ir.expr import Call, Op
from .dominator import PostDominatorTree
from .indexed_graph import (
    BROADCAST,
    COMM_REDUCE,
    ELEMWISE,
    INJECTIVE,
    OPAQUE,
    OUT_ELEMWISE_FUSABLE,
    TUPLE,
    IndexedGraph,
)


def _into_anchor(kind: int, is_sink: bool) -> bool:
    return kind <= BROADCAST


def _elemwise_forward(kind: int, is_sink: bool) -> bool:
    if not is_sink:
        return kind <= INJECTIVE
    return kind <= INJECTIVE or kind in (COMM_REDUCE, OUT_ELEMWISE_FUSABLE)


def _injective(kind: int, is_sink: bool) -> bool:
    return kind <= INJECTIVE


def _injective_or_reduce_sink(kind: int, is_sink: bool) -> bool:
    return kind <= INJECTIVE or (is_sink and kind == COMM_REDUCE)


class _Partitioner:
    def __init__(self, graph: IndexedGraph, max_depth: int):
        n = len(graph)
        self.graph = graph
        self.max_depth = max_depth
        self.uf = list(range(n))  # union-find parent; a root is its own parent
        self.pattern = list(graph.pattern)  # per group record, as TVM keeps it
        self.anchored = [p == OUT_ELEMWISE_FUSABLE for p in graph.pattern]
        # max_depth counts op calls: inlined constants, tuples and projections are free
        self.size = [int(type(e) is Call and isinstance(e.op, Op)) for e in graph.nodes]

    def find(self, i: int) -> int:
        uf = self.uf
        root = i
        while uf[root] != root:
            root = uf[root]
        while uf[i] != root:
            uf[i], i = root, uf[i]
        return root

    def _paths(self, src: int, sink: int):
        """Every node on a path from ``src`` (excluded) to ``sink`` (included), once."""
        outputs = self.graph.outputs
        seen = set()
        stack = [o for o, _ in outputs[src]]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            yield v
            if v != sink:
                stack.extend(o for o, _ in outputs[v])

    def check_path(self, src: int, sink: int, fcond) -> bool:
        find, pattern = self.find, self.pattern
        return all(fcond(pattern[find(v)], v == sink) for v in self._paths(src, sink))

    def fits(self, src: int, sink: int) -> bool:
        """Would the merged group hold at most ``max_depth`` op calls?"""
        find, size = self.find, self.size
        target = find(sink)
        roots = {find(src)} | {find(v) for v in self._paths(src, sink)}
        roots.discard(target)
        return size[target] + sum(size[r] for r in roots) <= self.max_depth

    def merge(self, child: int, parent: int) -> None:
        child, parent = self.find(child), self.find(parent)
        if child == parent:
            return
        self.size[parent] += self.size[child]
        self.uf[child] = parent
        if self.anchored[child]:
            self.anchored[parent] = True
            self.pattern[parent] = max(self.pattern[child], self.pattern[parent])

    def commit(self, src: int, sink: int) -> None:
        self.merge(src, sink)
        for v in self._paths(src, sink):
            if v != sink:
                self.merge(v, sink)

    def try_fuse(self, src: int, sink: int, fcond) -> None:
        outs = self.graph.outputs[src]
        if len(outs) == 1:  # the common case: the post-dominator is the only reader
            target = self.find(sink)
            if fcond(self.pattern[target], True):
                root = self.find(src)
                if root == target or self.size[root] + self.size[target] <= self.max_depth:
                    self.merge(src, sink)
            return
        if self.check_path(src, sink, fcond) and self.fits(src, sink):
            self.commit(src, sink)

    def run(self, dom: PostDominatorTree, phase: int) -> None:
        find, pattern = self.find, self.pattern
        for nid in range(len(self.uf)):
            kind = pattern[nid]
            sink = dom.parent[nid]
            if kind == OPAQUE or sink < 0:
                continue
            if phase == 2:
                if kind > INJECTIVE:
                    continue
                sink_root = find(sink)
                if pattern[sink_root] == TUPLE:
                    continue
                if pattern[sink] == TUPLE and pattern[sink_root] <= INJECTIVE:
                    self.try_fuse(nid, sink, _injective)
                continue
            if find(nid) == find(sink) or pattern[sink] == TUPLE:
                continue
            if kind == OUT_ELEMWISE_FUSABLE:
                if phase == 0 and dom.pattern[nid] == ELEMWISE:
                    self.try_fuse(nid, sink, _into_anchor)
            elif kind <= BROADCAST:
                if dom.pattern[nid] <= INJECTIVE or dom.pattern[nid] == COMM_REDUCE:
                    self.try_fuse(nid, sink, _elemwise_forward)
            elif kind in (INJECTIVE, TUPLE) and phase == 1:
                self.try_fuse(nid, sink, _injective_or_reduce_sink)


def partition(graph: IndexedGraph, opt_level: int = 2, max_depth: int = 256) -> list[int]:
    """The group of every node, as the index of the group's output node.

    At ``opt_level`` 0 nothing fuses: every node is its own group.
    """
    if opt_level == 0 or len(graph) == 0:
        return list(range(len(graph)))
    p = _Partitioner(graph, max_depth)
    dom = PostDominatorTree(graph)
    for phase in range(3):
        p.run(dom, phase)
    return [p.find(i) for i in range(len(graph))]
