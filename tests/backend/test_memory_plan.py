"""The static memory plan: valid (no two live tensors share storage), small on real
models, and recomputable from a graph."""

from __future__ import annotations

import pytest

import relayir as relay
from relayir.backend.memory_plan import (
    INPUT,
    INTERMEDIATE,
    OUTPUT,
    MemoryPlan,
    entry_nbytes,
    plan_memory,
)
from relayir.testing.models import get_workload
from relayir.transform import PassContext


def build(name, **kw):
    mod, params, _ = get_workload(name, **kw)
    with PassContext(opt_level=3):
        return relay.build(mod, params=params)


def check_plan(graph: dict, plan: MemoryPlan) -> None:
    """Every storage holds at most one live tensor at a time and is large enough;
    inputs and outputs own their storage."""
    nodes, row_ptr = graph["nodes"], graph["node_row_ptr"]
    shapes, dtypes = graph["attrs"]["shape"][1], graph["attrs"]["dltype"][1]
    n = row_ptr[-1]
    start = [0] * n
    end = [0] * n
    for nid, node in enumerate(nodes):
        for eid in range(row_ptr[nid], row_ptr[nid + 1]):
            start[eid] = end[eid] = nid
        for src, i, _ in node["inputs"]:
            end[row_ptr[src] + i] = nid
    heads = {row_ptr[nid] + i for nid, i, _ in graph["heads"]}
    by_storage: dict[int, list[int]] = {}
    for eid, sid in enumerate(plan.storage_ids):
        assert plan.storage_sizes[sid] >= entry_nbytes(shapes[eid], dtypes[eid])
        by_storage.setdefault(sid, []).append(eid)
    for sid, eids in by_storage.items():
        if plan.storage_kinds[sid] != INTERMEDIATE:
            assert len(eids) == 1, f"storage {sid} ({plan.storage_kinds[sid]}) is shared"
            continue
        assert not heads & set(eids)
        spans = sorted((start[e], end[e]) for e in eids)
        for (_, end_a), (start_b, _) in zip(spans, spans[1:]):
            assert end_a < start_b, f"storage {sid}: overlapping lifetimes {spans}"


@pytest.mark.parametrize("name, kw", [
    ("resnet18", dict(image_size=32)),
    ("mobilenet_v2", dict(image_size=32)),
    ("bert", dict(num_layers=2, seq_len=16, vocab=1000)),
])
def test_plan_is_valid_and_shares(name, kw):
    lib = build(name, **kw)
    plan = lib.memory_plan
    check_plan(lib.graph, plan)
    print(f"\n{name}: {plan}")
    assert plan.planned_bytes < plan.naive_bytes
    assert plan == plan_memory(lib.graph)  # recomputed from the JSON: the same plan


def test_resnet18_plan_at_most_half_of_naive():
    plan = build("resnet18", image_size=32).memory_plan
    print(f"\nresnet18: planned {plan.planned_bytes} bytes, naive {plan.naive_bytes} bytes "
          f"({100 * plan.ratio:.1f}%)")
    assert plan.planned_bytes <= 0.5 * plan.naive_bytes


def test_outputs_inputs_never_shared_and_dead_outputs_are_freed():
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
    x_in = relay.create_executor("debug", mod).evaluate()
    import numpy as np

    data = np.linspace(-1, 1, 16, dtype="float32").reshape(4, 4)
    expected = x_in(data)
    got = relay.create_executor("graph", mod).evaluate()(data)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_growing_and_mixed_dtypes_share_bytes():
    x = relay.var("x", shape=(8,), dtype="int32")
    h = relay.cast(x, "float32")       # 32 bytes
    h = relay.nn.relu(h)
    g = relay.concatenate([h, h], axis=0)  # 64 bytes: grows the freed 32-byte storage
    g = relay.cast(relay.exp(g), "int32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.sum(g)))
    with PassContext(opt_level=0):
        lib = relay.build(mod)
    plan = lib.memory_plan
    check_plan(lib.graph, plan)
    assert plan.planned_bytes < plan.naive_bytes
