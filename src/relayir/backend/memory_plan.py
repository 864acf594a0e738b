"""Static memory planning for the graph executor (TVM's ``GraphPlanMemory``).

Every tensor of the graph (an *entry*: one output of one node) gets a storage id, and
the executor allocates one buffer per storage id. Inputs, parameters and the graph's
outputs each own their storage. Intermediates share: nodes run in graph order, a node's
outputs are given storage first, and then every input whose last reader this node was
returns its storage to a free pool (so a kernel never writes over what it reads). A
request takes the smallest free storage that fits; when none fits it takes the largest
free storage within a factor ``MATCH_RANGE`` of the request and grows it; only when the
pool has nothing in range is a new storage made. Sizes are in bytes, so tensors of
different dtypes share storage too.

``plan_memory(graph)`` works on the graph JSON itself (the ``nodes``, ``heads`` and
``attrs.shape`` / ``attrs.dltype`` lists), and ``MemoryPlan.from_graph`` recomputes
the report from a graph that already has its ``storage_id`` list, e.g. a loaded one.

``pack_offsets`` is the other planner: it places tensors at byte offsets inside ONE
buffer from a conflict relation (which tensors are live at the same time), so that a
small tensor can sit in the part of a big dead one's storage that is free. The VM's
storage plan (``vm/liveness.py``) uses it; its lifetimes come from dataflow liveness
over bytecode with branches, so it takes conflicts rather than graph order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MATCH_RANGE = 16

INPUT, OUTPUT, INTERMEDIATE = "input", "output", "intermediate"


def entry_nbytes(shape, dtype: str) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n * np.dtype(dtype).itemsize


@dataclass(frozen=True)
class MemoryPlan:
    """Storage ids per entry and what they cost.

    ``planned_bytes`` is the bytes of the intermediate storages; ``naive_bytes`` what one
    buffer per intermediate tensor would take. Inputs/params (``input_bytes``) and
    outputs (``output_bytes``) are never shared and counted apart.
    """

    storage_ids: tuple[int, ...]
    storage_sizes: tuple[int, ...]
    storage_kinds: tuple[str, ...]
    planned_bytes: int
    naive_bytes: int
    input_bytes: int
    output_bytes: int
    num_intermediates: int

    @property
    def num_storages(self) -> int:
        return len(self.storage_sizes)

    @property
    def ratio(self) -> float:
        """Planned over naive intermediate bytes (lower is better)."""
        return self.planned_bytes / self.naive_bytes if self.naive_bytes else 1.0

    @property
    def total_bytes(self) -> int:
        return self.planned_bytes + self.input_bytes + self.output_bytes

    def __str__(self) -> str:
        mib = 1 << 20
        return (f"memory plan: {self.num_intermediates} intermediate tensors in "
                f"{self.storage_kinds.count(INTERMEDIATE)} storages, "
                f"{self.planned_bytes / mib:.2f} MiB planned vs {self.naive_bytes / mib:.2f} MiB "
                f"one-buffer-per-tensor ({100 * self.ratio:.1f}%); inputs and params "
                f"{self.input_bytes / mib:.2f} MiB, outputs {self.output_bytes / mib:.2f} MiB")

    @staticmethod
    def from_graph(graph: dict) -> MemoryPlan:
        """The report of a graph that already carries ``attrs.storage_id``."""
        entries = _Entries(graph)
        sids = list(graph["attrs"]["storage_id"][1])
        n_storage = max(sids, default=-1) + 1
        sizes = [0] * n_storage
        kinds = [INTERMEDIATE] * n_storage
        for eid, sid in enumerate(sids):
            sizes[sid] = max(sizes[sid], entries.nbytes[eid])
            if entries.kind[eid] != INTERMEDIATE:
                kinds[sid] = entries.kind[eid]
        return _report(entries, sids, sizes, kinds)


class _Entries:
    """Per-entry facts read from a graph: size, kind, readers."""

    def __init__(self, graph: dict):
        attrs = graph["attrs"]
        shapes = attrs["shape"][1]
        dtypes = attrs["dltype"][1]
        self.nodes = graph["nodes"]
        self.row_ptr = graph["node_row_ptr"]
        self.nbytes = [entry_nbytes(s, d) for s, d in zip(shapes, dtypes)]
        n = len(self.nbytes)
        self.kind = [INTERMEDIATE] * n
        for eid in (self.row_ptr[h[0]] + h[1] for h in graph["heads"]):
            self.kind[eid] = OUTPUT
        for nid, node in enumerate(self.nodes):
            if node["op"] == "null":
                self.kind[self.row_ptr[nid]] = INPUT
        self.readers = [0] * n
        for node in self.nodes:
            for src, index, _ in node["inputs"]:
                self.readers[self.row_ptr[src] + index] += 1

    def eid(self, nid: int, index: int = 0) -> int:
        return self.row_ptr[nid] + index


def _report(entries: _Entries, sids, sizes, kinds) -> MemoryPlan:
    def total(kind):
        return sum(s for s, k in zip(sizes, kinds) if k == kind)

    inter = [b for b, k in zip(entries.nbytes, entries.kind) if k == INTERMEDIATE]
    return MemoryPlan(tuple(sids), tuple(sizes), tuple(kinds), total(INTERMEDIATE), sum(inter),
                      total(INPUT), total(OUTPUT), len(inter))


def plan_memory(graph: dict, match_range: int = MATCH_RANGE) -> MemoryPlan:
    """Assign storage ids to every entry of ``graph`` (see the module docstring)."""
    entries = _Entries(graph)
    n = len(entries.nbytes)
    sids = [-1] * n
    sizes: list[int] = []
    kinds: list[str] = []
    free: list[int] = []  # free intermediate storage ids
    refs = list(entries.readers)

    def new(eid: int, kind: str) -> None:
        sids[eid] = len(sizes)
        sizes.append(entries.nbytes[eid])
        kinds.append(kind)

    def alloc(eid: int) -> None:
        need = entries.nbytes[eid]
        best = None  # smallest free storage that fits
        grow = None  # else the largest one in range, to be grown
        for sid in free:
            size = sizes[sid]
            if size >= need:
                if (best is None or size < sizes[best]) and size <= need * match_range:
                    best = sid
            elif size * match_range >= need and (grow is None or size > sizes[grow]):
                grow = sid
        sid = best if best is not None else grow
        if sid is None:
            new(eid, INTERMEDIATE)
            return
        free.remove(sid)
        sizes[sid] = max(sizes[sid], need)
        sids[eid] = sid

    def release(eid: int) -> None:
        if entries.kind[eid] == INTERMEDIATE:
            free.append(sids[eid])

    for nid, node in enumerate(entries.nodes):
        first, last = entries.row_ptr[nid], entries.row_ptr[nid + 1]
        if node["op"] == "null":
            new(first, INPUT)
            continue
        for eid in range(first, last):
            if entries.kind[eid] == OUTPUT:
                new(eid, OUTPUT)
            else:
                alloc(eid)
        for src, index, _ in node["inputs"]:
            eid = entries.eid(src, index)
            refs[eid] -= 1
            if refs[eid] == 0:
                release(eid)
        for eid in range(first, last):  # an output nobody reads is free at once
            if refs[eid] == 0:
                release(eid)
    return _report(entries, sids, sizes, kinds)


def pack_offsets(sizes, conflicts, alignment: int = 64) -> tuple[list[int], int]:
    """Byte offsets in one buffer for tensors of ``sizes`` bytes such that tensors that
    conflict (``conflicts[i]``: the indices live at the same time as ``i``) never
    overlap; returns ``(offsets, buffer bytes)``. Greedy by size, as TFLite's arena
    planner: largest first, each in the smallest gap between its already placed
    conflicts that holds it (else after the last of them). Offsets are multiples of
    ``alignment``."""
    def padded(i: int) -> int:
        return -(-int(sizes[i]) // alignment) * alignment

    offsets = [-1] * len(sizes)
    total = 0
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        need = padded(i)
        busy = sorted((offsets[j], offsets[j] + padded(j)) for j in conflicts.get(i, ())
                      if offsets[j] >= 0)
        at, best, best_gap = 0, None, None
        for lo, hi in busy:
            gap = lo - at
            if gap >= need and (best_gap is None or gap < best_gap):
                best, best_gap = at, gap
            at = max(at, hi)
        offsets[i] = at if best is None else best
        total = max(total, offsets[i] + need)
    return offsets, total


__all__ = ["MATCH_RANGE", "MemoryPlan", "entry_nbytes", "pack_offsets", "plan_memory"]
