"""The graphs the report draws, as data: nodes (dicts the page reads), edges,
clusters, and *blocks*, the pieces of a big graph a reader can fold.

Blocks: the graph is cut at every value that is the only one alive at that point of a
topological order (a ResNet's block outputs, every link of a chain); the pieces between
cuts are blocks (a run of single nodes is one block, up to ``MAX_RUN``), a cluster
(a fused function) is never split, and blocks with the same ops in the same order get
the same signature, so the page can say "same ops as block 3".
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

MAX_RUN = 24  # single nodes folded into one block at most


@dataclass
class Graph:
    """``nodes``: dicts with ``l`` label, ``k`` kind, ``t`` short type, ``h`` hover text,
    ``n`` names to search by, ``c`` cluster index or -1 (and ``o``: the output);
    ``edges``: ``(src, dst)`` node indices; ``clusters``: ``{"l": label, "k": kind}``;
    ``blocks``: ``{"nodes": [...], "sig": int}``. Nodes are in a topological order."""

    nodes: list[dict] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)
    clusters: list[dict] = field(default_factory=list)
    blocks: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"nodes": self.nodes, "edges": [list(e) for e in self.edges],
                "clusters": self.clusters, "blocks": self.blocks}

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for n in self.nodes:
            if n["k"] == "op":
                counts[n["l"]] = counts.get(n["l"], 0) + 1
        return counts


def make_graph(nodes: list[dict], edges, clusters=()) -> Graph:
    """A ``Graph`` of these nodes (dicts as ``Graph`` says) and ``(src, dst)`` edges:
    nodes put in a topological order, blocks found."""
    perm = topological_order(len(nodes), edges)
    where = {old: new for new, old in enumerate(perm)}
    graph = Graph(nodes=[nodes[i] for i in perm], clusters=list(clusters),
                  edges=sorted({(where[s], where[d]) for s, d in edges if s != d}))
    graph.blocks = blocks(graph)
    return graph


def topological_order(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """A topological order that keeps the given order where it can (Kahn's algorithm,
    smallest index first); nodes on a cycle (a recursive closure) follow in order."""
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for s, d in set(edges):
        succ[s].append(d)
        indeg[d] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(ready)
    out: list[int] = []
    placed = [False] * n
    while ready:
        i = heapq.heappop(ready)
        out.append(i)
        placed[i] = True
        for d in succ[i]:
            indeg[d] -= 1
            if indeg[d] == 0:
                heapq.heappush(ready, d)
    out += [i for i in range(n) if not placed[i]]
    return out


def blocks(graph: Graph) -> list[dict]:
    """The foldable pieces of ``graph`` (see the module docstring), each with the
    signature of its op sequence; clusters stay whole."""
    units = _units(graph)
    if len(units) < 2:
        return []
    unit_of = {node: u for u, members in enumerate(units) for node in members}
    last_use = list(range(len(units)))
    for s, d in graph.edges:
        us, ud = unit_of[s], unit_of[d]
        last_use[us] = max(last_use[us], ud)
    pieces: list[list[int]] = []
    start, reach = 0, 0
    for u in range(len(units)):
        if reach <= u:  # nothing before u is read after u: u's value is all that lives
            pieces.append(list(range(start, u + 1)))
            start = u + 1
        reach = max(reach, last_use[u])
    if start < len(units):
        pieces.append(list(range(start, len(units))))
    merged: list[list[int]] = []  # runs of single units become one block (up to MAX_RUN)
    in_run = False
    for piece in pieces:
        single = len(piece) == 1
        if single and in_run and len(merged[-1]) < MAX_RUN:
            merged[-1].append(piece[0])
        else:
            merged.append(piece)
        in_run = single
    signatures: dict[tuple, int] = {}
    out = []
    for piece in merged:
        nodes = sorted(n for u in piece for n in units[u])
        if len(nodes) < 2:
            continue
        sig = tuple(graph.nodes[n]["l"] for n in nodes)
        out.append({"nodes": nodes, "sig": signatures.setdefault(sig, len(signatures))})
    return out


def _units(graph: Graph) -> list[list[int]]:
    """Nodes grouped so that a cluster is one unit, in topological order of the units."""
    first: dict[int, int] = {}
    units: list[list[int]] = []
    for i, n in enumerate(graph.nodes):
        c = n["c"]
        if c >= 0 and graph.clusters[c]["k"] == "fused":
            if c not in first:
                first[c] = len(units)
                units.append([])
            units[first[c]].append(i)
        else:
            units.append([i])
    unit_of = {node: u for u, members in enumerate(units) for node in members}
    edges = {(unit_of[s], unit_of[d]) for s, d in graph.edges if unit_of[s] != unit_of[d]}
    perm = topological_order(len(units), sorted(edges))
    return [units[u] for u in perm]


__all__ = ["MAX_RUN", "Graph", "blocks", "make_graph", "topological_order"]
