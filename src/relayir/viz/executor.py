"""The Graph executor view's data: ``relay.build``'s graph JSON as it is, the kernels
in execution order, every tensor's lifetime and place in the memory plan, the plan's
totals (``MemoryPlan.from_graph`` of that same JSON), per-kernel times from
``GraphModule.profile()`` and the median latency of a run.

Lifetimes are in kernel positions: a tensor lives from the kernel that writes it to the
last kernel that reads it, as the planner counts them (``runtime/memory_plan.py``).
"""

from __future__ import annotations

import json

import numpy as np

from ..backend import build
from ..runtime.graph_executor import GraphModule
from ..runtime.memory_plan import ARENA, MemoryPlan, entry_nbytes, storage_offsets
from ..transform import PassContext


def timeline(graph: dict) -> tuple[list[dict], list[dict]]:
    """``(kernels, entries)``: each kernel's node, name and entries read and written;
    each entry's shape, dtype, bytes, storage id and offset, kind and lifetime (first
    and last kernel position; inputs and params start at -1)."""
    nodes, row_ptr = graph["nodes"], graph["node_row_ptr"]
    attrs = graph["attrs"]
    shapes, dtypes = attrs["shape"][1], attrs["dltype"][1]
    sids, offsets = attrs["storage_id"][1], storage_offsets(graph)
    outputs = {row_ptr[nid] + i for nid, i, _ in graph["heads"]}
    kernels: list[dict] = []
    entries: list[dict] = []
    position: dict[int, int] = {}  # node id -> kernel position
    for nid, node in enumerate(nodes):
        kind = "input" if node["op"] == "null" else "intermediate"
        if node["op"] != "null":
            position[nid] = len(kernels)
            kernels.append({"node": nid, "name": node["attrs"]["func_name"],
                            "inputs": [row_ptr[s] + i for s, i, _ in node["inputs"]],
                            "outputs": list(range(row_ptr[nid], row_ptr[nid + 1]))})
        for eid in range(row_ptr[nid], row_ptr[nid + 1]):
            start = position.get(nid, -1)
            entries.append({"name": node["name"], "shape": list(shapes[eid]),
                            "dtype": dtypes[eid], "bytes": entry_nbytes(shapes[eid], dtypes[eid]),
                            "storage": sids[eid], "offset": offsets[eid],
                            "kind": "output" if eid in outputs else kind,
                            "start": start, "end": start})
    for k in kernels:
        for eid in k["inputs"]:
            entries[eid]["end"] = max(entries[eid]["end"], position[k["node"]])
    return kernels, entries


def _plan_json(plan: MemoryPlan) -> dict:
    return {"planned_bytes": plan.planned_bytes, "naive_bytes": plan.naive_bytes,
            "peak_bytes": plan.peak_bytes, "input_bytes": plan.input_bytes,
            "output_bytes": plan.output_bytes, "intermediates": plan.num_intermediates,
            "storages": plan.num_storages, "arena_storage": ARENA, "text": str(plan)}


def repeats_for(seconds_per_run: float, budget: float = 0.5) -> int:
    """How many timed runs fit ``budget`` seconds (1 to 10)."""
    return int(min(10, max(1, budget / max(seconds_per_run, 1e-6))))


def executor_section(mod, params: dict, inputs: dict[str, np.ndarray] | None,
                     target, opt_level: int) -> dict:
    """Build ``mod`` for the graph executor and describe the result (and, with
    ``inputs``, run it: profile and latency)."""
    with PassContext(opt_level=opt_level):
        lib = build(mod, target=target, params=params)
    graph = json.loads(lib.get_graph_json())
    kernels, entries = timeline(graph)
    section = {"graph": graph, "kernels": kernels, "entries": entries,
               "plan": _plan_json(MemoryPlan.from_graph(graph))}
    if inputs is not None:
        module = GraphModule(lib)
        report = module.profile(**inputs)
        mean = {r.name: r.mean_us for r in report.rows}
        for k in kernels:
            k["us"] = round(mean.get(k["name"], 0.0), 3)
        runs = repeats_for(report.wall_ms / 1e3)
        latency = module.benchmark(number=1, repeat=runs, warmup=0)
        section["profile"] = {"wall_ms": report.wall_ms, "kernel_ms": report.total_ms,
                              "table": report.table(limit=30)}
        section["latency_ms"] = latency.median
        section["runs"] = runs
    return section


__all__ = ["executor_section", "repeats_for", "timeline"]
