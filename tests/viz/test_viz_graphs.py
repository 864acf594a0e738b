"""The graphs the explorer draws: Relay functions (fused groups and closures as
clusters, foldable blocks), the pass-by-pass pipeline, torch's FX and autograd graphs."""

import numpy as np
import pytest

import relayir as relay
from relayir.backend import bind_param_arrays
from relayir.testing.models import get_workload
from relayir.transform import FuseOps, InferType, PassContext
from relayir.typing.infer import infer_module
from relayir.viz import example_module
from relayir.viz.dataflow import function_graph
from relayir.viz.graph import blocks, make_graph
from relayir.viz.pipeline import pipeline_steps, rules_fired


def _typed(name, **knobs):
    mod, params, _ = get_workload(name, **knobs)
    return infer_module(bind_param_arrays(mod, params).copy())


def _labels(graph):
    return [n["l"] for n in graph.nodes]


def test_mlp_graph_is_its_op_chain_with_weights_as_constant_inputs():
    g = function_graph(_typed("mlp")["main"])
    assert _labels(g) == ["%data", "nn.dense", "nn.bias_add", "nn.relu", "nn.dense",
                          "nn.bias_add", "nn.softmax"]
    assert g.edges == [(i, i + 1) for i in range(6)]
    assert g.nodes[1]["t"] == "1×256 float32"
    assert "constant inputs: 256×784 float32" in g.nodes[1]["h"]
    assert g.nodes[-1].get("o") == 1 and g.clusters == []


def test_fused_functions_are_clusters_named_as_their_kernels():
    with PassContext(opt_level=3):
        fused = FuseOps()(_typed("mlp"))
    g = function_graph(InferType()(fused)["main"])
    assert [c["l"] for c in g.clusters] == ["fused_nn_dense_nn_bias_add_nn_relu",
                                            "fused_nn_dense_nn_bias_add", "fused_nn_softmax"]
    assert [n["c"] for n in g.nodes] == [-1, 0, 0, 0, 1, 1, 2]
    # the calls of the fused functions are drawn through: the ops inside chain up
    assert g.edges == [(i, i + 1) for i in range(6)]


def test_closures_keep_what_they_share_with_main_outside():
    g = function_graph(example_module("list")["main"])
    by_label = {n["l"]: n for n in g.nodes}
    closure = by_label["multiply"]["c"]
    assert closure >= 0 and g.clusters[closure]["k"] == "closure"
    inside = [n["l"] for n in g.nodes if n["c"] == closure]
    assert sorted(inside) == ["%x", "multiply"]  # the closure's parameter and body
    assert by_label["%b"]["c"] == -1  # main's, captured by the closure: outside
    assert by_label["%b"]["k"] == "input"
    # @map / @foldl are calls, not free-standing global nodes
    assert not any(n["k"] == "global" for n in g.nodes)
    assert [n["l"] for n in g.nodes].count("Cons") == 3


def test_resnet_blocks_fold_and_repeat():
    g = function_graph(_typed("resnet18", image_size=32)["main"])
    sizes = [len(b["nodes"]) for b in g.blocks]
    # the stem, then basic blocks: 8 nodes without downsampling, 11 with
    assert sizes.count(8) == 5 and sizes.count(11) == 3
    plain = {b["sig"] for b in g.blocks if len(b["nodes"]) == 8}
    assert len(plain) == 1  # the same ops in the same order: one signature
    # nodes in a block are contiguous in the topological order
    for b in g.blocks:
        assert b["nodes"] == list(range(b["nodes"][0], b["nodes"][-1] + 1))


def test_blocks_of_a_diamond_and_a_chain():
    def graph(n, edges):
        return make_graph([{"l": f"op{i}", "k": "op", "c": -1} for i in range(n)], edges)

    # 0 -> (1, 2) -> 3 -> 4: the diamond is one block, 4 starts a run
    g = graph(5, [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)])
    assert [b["nodes"] for b in g.blocks] == [[1, 2, 3]]
    chain = graph(60, [(i, i + 1) for i in range(59)])
    assert [len(b["nodes"]) for b in chain.blocks] == [24, 24, 12]
    assert blocks(graph(1, [])) == []


def test_a_chain_of_100000_nodes_is_drawn_without_recursion():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(100_000):
        y = relay.negative(y)
    g = function_graph(relay.Function([x], y))
    assert len(g.nodes) == 100_001 and len(g.edges) == 100_000
    assert g.nodes[-1].get("o") == 1


def test_pipeline_steps_show_each_pass_and_what_it_changed():
    steps, optimized = pipeline_steps(_typed("resnet18", image_size=32), 3, "numpy")
    names = [s["name"] for s in steps]
    assert names[0] == "imported" and names[-1] == "FuseOps"
    assert names.count("FoldConstant") == 3
    first = {s["name"]: s for s in reversed(steps)}  # the first step of each pass
    inference = first["SimplifyInference"]
    assert inference["removed"] == {"nn.batch_norm": 20}
    assert inference["rules"]["batch_norm"] == 20
    assert any(n.get("a") for n in inference["graph"]["nodes"])  # new nodes marked
    folded = next(s for s in steps[1:] if s["name"] == "FoldConstant" and not s.get("same"))
    assert folded["constants"] < folded["constants_before"]
    fused = steps[-1]
    assert fused["fused"] == len(fused["graph"]["clusters"]) > 0
    assert fused["text"] == optimized.astext(show_meta_data=False)
    unchanged = [s for s in steps if s.get("same")]
    assert unchanged and all("text" not in s for s in unchanged)


def test_rules_fired_reads_the_rewrite_debug_line():
    assert rules_fired("SimplifyExpr: rules fired: a x2, b-c x10\n") == {"a": 2, "b-c": 10}
    assert rules_fired("SimplifyExpr: rules fired: none\n") == {}


def test_torch_graphs():
    torch = pytest.importorskip("torch")
    from relayir.viz.torch_graphs import autograd_graph, export_graph

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            return torch.relu(self.fc(x))

    net = Net()
    program = torch.export.export(net, (torch.zeros(2, 4),))
    fx = export_graph(program)
    labels = _labels(fx)
    assert labels[-1] == "output" and "linear" in labels and "relu" in labels
    assert {"x", "p_fc_weight", "p_fc_bias"} <= set(labels)
    assert next(n for n in fx.nodes if n["l"] == "linear")["t"] == "2×3 float32"
    loss = net(torch.ones(2, 4)).sum()
    tape = autograd_graph(loss, {id(net.fc.weight): "fc.weight"})
    labels = _labels(tape)
    assert "AccumulateGrad fc.weight" in labels and "SumBackward0" in labels
    assert tape.nodes[-1]["l"] == "SumBackward0"  # drawn from the leaves to the loss
    assert np.all([s < d for s, d in tape.edges])
