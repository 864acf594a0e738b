"""Static memory planning for the graph executor (TVM's ``GraphPlanMemory``).

Every tensor of the graph (an *entry*: one output of one node) gets a storage id and a
byte offset in that storage; the executor allocates one buffer per storage id. Inputs,
parameters and the graph's outputs each own their storage (offset 0): they outlive a
run. All intermediates share storage 0, one *arena*, at offsets ``pack_offsets`` chose:
nodes run in graph order, an entry is live from the node that writes it to its last
reader (a node's outputs are live together with its inputs, so a kernel never writes
over what it reads), and entries live at the same time never overlap. Sizes are in
bytes, so tensors of different dtypes share bytes too. The arena is close to the lower
bound, the most (64-byte padded) bytes live at once (``MemoryPlan.peak_bytes``).

``plan_memory(graph)`` works on the graph JSON itself (the ``nodes``, ``heads`` and
``attrs.shape`` / ``attrs.dltype`` lists), and ``MemoryPlan.from_graph`` recomputes
the report from a graph that already has its ``storage_id`` (and ``storage_offset``)
lists, e.g. a loaded one; a graph without ``storage_offset`` (format version 1: one
buffer per storage id) reads as all offsets 0.

``pack_offsets`` places tensors at byte offsets inside ONE buffer from a conflict
relation (which tensors are live at the same time), so that a small tensor can sit in
the part of a big dead one's bytes that is free. The VM's storage plan
(``vm/liveness.py``) uses it too; its lifetimes come from dataflow liveness over
bytecode with branches, so it takes conflicts rather than graph order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tensors import ALIGNMENT  # every offset in the arena is a multiple of it

ARENA = 0  # the storage id of the intermediates' arena

INPUT, OUTPUT, INTERMEDIATE = "input", "output", "intermediate"


def entry_nbytes(shape, dtype: str) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n * np.dtype(dtype).itemsize


def _padded(nbytes: int) -> int:
    return -(-nbytes // ALIGNMENT) * ALIGNMENT


@dataclass(frozen=True)
class MemoryPlan:
    """Storage ids and byte offsets per entry, and what they cost.

    ``planned_bytes`` is the bytes of the intermediate storage (the arena);
    ``naive_bytes`` what one buffer per intermediate tensor would take; ``peak_bytes``
    the lower bound, the most padded intermediate bytes live at once. Inputs/params
    (``input_bytes``) and outputs (``output_bytes``) are never shared and counted apart.
    """

    storage_ids: tuple[int, ...]
    storage_offsets: tuple[int, ...]
    storage_sizes: tuple[int, ...]
    storage_kinds: tuple[str, ...]
    planned_bytes: int
    naive_bytes: int
    peak_bytes: int
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
                f"one-buffer-per-tensor ({100 * self.ratio:.1f}%), lower bound "
                f"{self.peak_bytes / mib:.2f} MiB; inputs and params "
                f"{self.input_bytes / mib:.2f} MiB, outputs {self.output_bytes / mib:.2f} MiB")

    @staticmethod
    def from_graph(graph: dict) -> MemoryPlan:
        """The report of a graph that already carries ``attrs.storage_id`` (and
        ``attrs.storage_offset``; all 0 when absent)."""
        entries = _Entries(graph)
        sids = list(graph["attrs"]["storage_id"][1])
        offsets = storage_offsets(graph)
        n_storage = max(sids, default=-1) + 1
        sizes = [0] * n_storage
        kinds = [INTERMEDIATE] * n_storage
        for eid, sid in enumerate(sids):
            if entries.kind[eid] == INTERMEDIATE:
                end = offsets[eid] + _padded(entries.nbytes[eid])
            else:
                end = entries.nbytes[eid]
                kinds[sid] = entries.kind[eid]
            sizes[sid] = max(sizes[sid], end)
        return _report(entries, sids, offsets, sizes, kinds)


def storage_offsets(graph: dict) -> list[int]:
    """Byte offsets per entry in its storage; a graph without them (format version 1,
    one buffer per storage id) has every entry at offset 0."""
    attrs = graph["attrs"]
    if "storage_offset" in attrs:
        return [int(o) for o in attrs["storage_offset"][1]]
    return [0] * len(attrs["storage_id"][1])


class _Entries:
    """Per-entry facts read from a graph: size, kind, lifetime (first and last node)."""

    def __init__(self, graph: dict):
        attrs = graph["attrs"]
        shapes = attrs["shape"][1]
        dtypes = attrs["dltype"][1]
        nodes = graph["nodes"]
        row_ptr = graph["node_row_ptr"]
        self.nbytes = [entry_nbytes(s, d) for s, d in zip(shapes, dtypes)]
        n = len(self.nbytes)
        self.kind = [INTERMEDIATE] * n
        for eid in (row_ptr[h[0]] + h[1] for h in graph["heads"]):
            self.kind[eid] = OUTPUT
        self.start = [0] * n
        self.end = [0] * n
        for nid, node in enumerate(nodes):
            if node["op"] == "null":
                self.kind[row_ptr[nid]] = INPUT
            for eid in range(row_ptr[nid], row_ptr[nid + 1]):
                self.start[eid] = self.end[eid] = nid
            for src, index, _ in node["inputs"]:
                eid = row_ptr[src] + index
                self.end[eid] = max(self.end[eid], nid)

    def intermediates(self) -> list[int]:
        return [e for e, k in enumerate(self.kind) if k == INTERMEDIATE]

    def conflicts(self, eids: list[int]) -> dict[int, list[int]]:
        """For each of ``eids``, the others whose lifetime overlaps it (a sweep over
        the nodes in execution order)."""
        by_start = sorted(eids, key=lambda e: self.start[e])
        out: dict[int, list[int]] = {e: [] for e in eids}
        live: list[int] = []
        for e in by_start:
            live = [o for o in live if self.end[o] >= self.start[e]]
            for o in live:
                out[e].append(o)
                out[o].append(e)
            live.append(e)
        return out

    def peak_bytes(self, eids: list[int]) -> int:
        """The most padded bytes of ``eids`` live at one node: the arena's lower bound."""
        delta: dict[int, int] = {}
        for e in eids:
            delta[self.start[e]] = delta.get(self.start[e], 0) + _padded(self.nbytes[e])
            delta[self.end[e] + 1] = delta.get(self.end[e] + 1, 0) - _padded(self.nbytes[e])
        peak = live = 0
        for nid in sorted(delta):
            live += delta[nid]
            peak = max(peak, live)
        return peak


def _report(entries: _Entries, sids, offsets, sizes, kinds) -> MemoryPlan:
    def total(kind):
        return sum(s for s, k in zip(sizes, kinds) if k == kind)

    inter = entries.intermediates()
    return MemoryPlan(tuple(sids), tuple(offsets), tuple(sizes), tuple(kinds),
                      total(INTERMEDIATE), sum(entries.nbytes[e] for e in inter),
                      entries.peak_bytes(inter), total(INPUT), total(OUTPUT), len(inter))


def plan_memory(graph: dict) -> MemoryPlan:
    """Storage ids and offsets for every entry of ``graph`` (see the module docstring)."""
    entries = _Entries(graph)
    n = len(entries.nbytes)
    inter = entries.intermediates()
    sids = [-1] * n
    offsets = [0] * n
    sizes: list[int] = []
    kinds: list[str] = []
    if inter:
        packed, arena = pack_offsets([entries.nbytes[e] for e in inter],
                                     _index_conflicts(entries.conflicts(inter), inter),
                                     ALIGNMENT)
        sizes.append(arena)
        kinds.append(INTERMEDIATE)
        for e, off in zip(inter, packed):
            sids[e], offsets[e] = ARENA, off
    for eid in range(n):  # inputs, params and outputs: one storage each
        if sids[eid] < 0:
            sids[eid] = len(sizes)
            sizes.append(entries.nbytes[eid])
            kinds.append(entries.kind[eid])
    return _report(entries, sids, offsets, sizes, kinds)


def _index_conflicts(conflicts: dict[int, list[int]], eids: list[int]) -> dict[int, list[int]]:
    """Conflicts between entry ids as conflicts between positions in ``eids``."""
    pos = {e: i for i, e in enumerate(eids)}
    return {pos[e]: [pos[o] for o in others] for e, others in conflicts.items()}


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


__all__ = ["ALIGNMENT", "ARENA", "MemoryPlan", "entry_nbytes", "pack_offsets", "plan_memory",
           "storage_offsets"]
