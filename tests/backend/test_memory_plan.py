"""The static memory plan: intermediates packed at offsets in one arena, valid (tensors
live at the same time never overlap, checked by brute force over the execution order),
at the lower bound on real models, recomputable from a graph, and runs to the
reference on the numpy and cpu targets, also after export → load."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.memory_plan import (
    ALIGNMENT,
    ARENA,
    INPUT,
    INTERMEDIATE,
    OUTPUT,
    MemoryPlan,
    entry_nbytes,
    plan_memory,
)
from relayir.runtime.module import load_module
from relayir.testing.models import get_workload, make_inputs
from relayir.transform import PassContext

MODELS = [
    ("resnet18", dict(image_size=32)),
    ("mobilenet_v2", dict(image_size=32)),
    ("bert", dict(num_layers=2, seq_len=16, vocab=1000)),
]


def build(name, target="numpy", **kw):
    mod, params, _ = get_workload(name, **kw)
    with PassContext(opt_level=3):
        return relay.build(mod, target=target, params=params)


def lifetimes(graph: dict) -> tuple[list[int], list[int]]:
    """Per entry, the node that writes it and the last node that reads it."""
    nodes, row_ptr = graph["nodes"], graph["node_row_ptr"]
    start, end = [0] * row_ptr[-1], [0] * row_ptr[-1]
    for nid, node in enumerate(nodes):
        for eid in range(row_ptr[nid], row_ptr[nid + 1]):
            start[eid] = end[eid] = nid
        for src, i, _ in node["inputs"]:
            end[row_ptr[src] + i] = max(end[row_ptr[src] + i], nid)
    return start, end


def check_plan(graph: dict, plan: MemoryPlan) -> None:
    """At every node, the byte ranges of the tensors live there are disjoint (brute
    force over the execution order); every tensor fits its storage at an aligned
    offset; intermediates are in the arena; inputs and outputs own their storage."""
    row_ptr = graph["node_row_ptr"]
    shapes, dtypes = graph["attrs"]["shape"][1], graph["attrs"]["dltype"][1]
    assert list(plan.storage_ids) == graph["attrs"]["storage_id"][1]
    assert list(plan.storage_offsets) == graph["attrs"]["storage_offset"][1]
    start, end = lifetimes(graph)
    heads = {row_ptr[nid] + i for nid, i, _ in graph["heads"]}
    inputs = {row_ptr[nid] for nid, n in enumerate(graph["nodes"]) if n["op"] == "null"}
    nbytes = [entry_nbytes(s, d) for s, d in zip(shapes, dtypes)]
    users: dict[int, list[int]] = {}
    for eid, (sid, off) in enumerate(zip(plan.storage_ids, plan.storage_offsets)):
        assert off % ALIGNMENT == 0 and off + nbytes[eid] <= plan.storage_sizes[sid]
        users.setdefault(sid, []).append(eid)
        if eid in heads or eid in inputs:
            assert plan.storage_kinds[sid] == (OUTPUT if eid in heads else INPUT)
        else:
            assert sid == ARENA and plan.storage_kinds[sid] == INTERMEDIATE
    for sid, eids in users.items():
        if plan.storage_kinds[sid] != INTERMEDIATE:
            assert len(eids) == 1, f"storage {sid} ({plan.storage_kinds[sid]}) is shared"
    for nid in range(len(graph["nodes"])):
        live = sorted((plan.storage_offsets[e], plan.storage_offsets[e] + nbytes[e], e)
                      for e in users.get(ARENA, ()) if start[e] <= nid <= end[e])
        for (_, hi, a), (lo, _, b) in zip(live, live[1:]):
            assert hi <= lo, f"node {nid}: entries {a} and {b} overlap in the arena"


def lower_bound(graph: dict, plan: MemoryPlan, padded: bool = False) -> int:
    """The most intermediate bytes live at one node (each rounded up to the alignment
    when ``padded``)."""
    start, end = lifetimes(graph)
    shapes, dtypes = graph["attrs"]["shape"][1], graph["attrs"]["dltype"][1]
    inter = [e for e, sid in enumerate(plan.storage_ids) if sid == ARENA]
    size = {e: entry_nbytes(shapes[e], dtypes[e]) for e in inter}
    if padded:
        size = {e: -(-n // ALIGNMENT) * ALIGNMENT for e, n in size.items()}
    return max((sum(size[e] for e in inter if start[e] <= nid <= end[e])
                for nid in range(len(graph["nodes"]))), default=0)


@pytest.mark.parametrize("name, kw", MODELS, ids=[m[0] for m in MODELS])
def test_plan_is_valid_and_packs(name, kw):
    lib = build(name, **kw)
    plan = lib.memory_plan
    check_plan(lib.graph, plan)
    print(f"\n{name}: {plan}")
    assert plan.storage_kinds.count(INTERMEDIATE) == 1
    assert lower_bound(lib.graph, plan) <= plan.planned_bytes < plan.naive_bytes
    assert plan == plan_memory(lib.graph)  # recomputed from the JSON: the same plan


def test_resnet18_arena_is_the_lower_bound_within_alignment_padding():
    lib = build("resnet18", image_size=32)
    plan = lib.memory_plan
    bound = lower_bound(lib.graph, plan)
    print(f"\nresnet18: arena {plan.planned_bytes} bytes, lower bound {bound} bytes, "
          f"naive {plan.naive_bytes} bytes ({100 * plan.ratio:.1f}%)")
    assert bound <= plan.planned_bytes == lower_bound(lib.graph, plan, padded=True)
    assert plan.peak_bytes == plan.planned_bytes
    assert plan.planned_bytes <= 0.5 * plan.naive_bytes


def _reference(name, kw):
    mod, params, _ = get_workload(name, **kw)
    inputs = make_inputs(name, mod)
    expected = relay.create_executor("debug", mod, params=params).evaluate()(**inputs)
    return inputs, expected


def _run(lib, inputs) -> np.ndarray:
    gm = relay.graph_executor.GraphModule(lib)
    gm.run(**inputs)
    gm.run(**inputs)  # a second run over the same arena gives the same result
    return gm.get_output(0)


@pytest.mark.parametrize("target", ["numpy", "cpu"])
@pytest.mark.parametrize("name, kw", MODELS[:2] + [("mlp", {})],
                         ids=["resnet18", "mobilenet_v2", "mlp"])
def test_planned_results_equal_the_reference(name, kw, target):
    inputs, expected = _reference(name, kw)
    lib = build(name, target=target, **kw)
    check_plan(lib.graph, lib.memory_plan)
    np.testing.assert_allclose(_run(lib, inputs), expected, rtol=1e-4, atol=1e-5)


def test_export_load_round_trip_keeps_the_plan(tmp_path):
    inputs, expected = _reference("resnet18", dict(image_size=32))
    lib = build("resnet18", image_size=32)
    path = tmp_path / "resnet18.relayir"
    lib.export_library(path)
    loaded = load_module(path)
    assert loaded.memory_plan == lib.memory_plan
    np.testing.assert_allclose(_run(loaded, inputs), expected, rtol=1e-4, atol=1e-5)


def test_outputs_inputs_never_shared_and_dead_outputs_are_packed():
    x = relay.var("x", shape=(4, 4))
    a = relay.nn.relu(x)
    parts = relay.split(relay.exp(a), indices_or_sections=2, axis=0)  # parts[1] is dead
    b = relay.tanh(parts[0])
    c = relay.sigmoid(b)
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Tuple([c, b])))
    with PassContext(opt_level=0):
        lib = relay.build(mod)
    plan = lib.memory_plan
    check_plan(lib.graph, plan)
    assert plan.storage_kinds.count(INPUT) == 1
    assert plan.storage_kinds.count(OUTPUT) == 2
    data = np.linspace(-1, 1, 16, dtype="float32").reshape(4, 4)
    expected = relay.create_executor("debug", mod).evaluate()(data)
    got = relay.create_executor("graph", mod).evaluate()(data)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_mixed_dtypes_share_the_arena():
    x = relay.var("x", shape=(8,), dtype="int32")
    h = relay.cast(x, "float32")       # 32 bytes
    h = relay.nn.relu(h)
    g = relay.concatenate([h, h], axis=0)  # 64 bytes, where the dead 32-byte ones were
    g = relay.cast(relay.exp(g), "int32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.sum(g)))
    with PassContext(opt_level=0):
        lib = relay.build(mod)
    plan = lib.memory_plan
    check_plan(lib.graph, plan)
    assert plan.planned_bytes < plan.naive_bytes
    data = np.arange(8, dtype="int32") - 3
    expected = relay.create_executor("debug", mod).evaluate()(data)
    got = relay.create_executor("graph", mod).evaluate()(data)
    np.testing.assert_array_equal(got, expected)
