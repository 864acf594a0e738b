"""Frontend import state: converter tables refuse a second registration, and the import in
progress is held per thread in a ``ContextVar`` that nested imports restore."""

from __future__ import annotations

import threading

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import relayir  # noqa: E402
from relayir.frontend.common import (  # noqa: E402
    ConverterTable,
    DuplicateConverterError,
    NoImportInProgressError,
)
from relayir.frontend.onnx import from_onnx  # noqa: E402
from relayir.frontend.onnx_ops import TABLE  # noqa: E402
from relayir.frontend.onnx_ops.base import (  # noqa: E402
    OnnxImport,
    OnnxTable,
    convert_subgraph,
    current_import,
    importing,
)

F, B = TensorProto.FLOAT, TensorProto.BOOL
PROBE_DOMAIN = "relayir.test"


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, opset):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                   helper.make_opsetid(PROBE_DOMAIN, 1)])


def _probe(name_in, name_out):
    return helper.make_node("Probe", [name_in], [name_out], domain=PROBE_DOMAIN)


def _install_probe(monkeypatch, fn):
    """Register ``fn`` as the converter of ``relayir.test.Probe`` for this test only."""
    monkeypatch.setitem(TABLE, f"{PROBE_DOMAIN}.Probe", [(1, fn)])


def _run(mod, *args):
    return np.asarray(relayir.create_executor("debug", mod).evaluate()(*args))


# ------------------------------------------------------------------ duplicate registration

def test_a_second_converter_for_the_same_op_raises():
    table = ConverterTable()

    @table.register("aten.relu.default")
    def first(x):
        return x

    def second(x):
        return x

    with pytest.raises(DuplicateConverterError, match=r"aten\.relu\.default registered "
                                                      r"twice: first .*first, then .*second"):
        table.register("aten.relu.default")(second)
    assert table["aten.relu.default"] is first
    assert isinstance(DuplicateConverterError("a", first, second), relayir.Error)


def test_merging_two_families_that_define_one_op_raises():
    a, b, union = ConverterTable(), ConverterTable(), ConverterTable()
    a.register("aten.add.Tensor")(lambda x, y: x)
    b.register("aten.add.Tensor", "aten.sub.Tensor")(lambda x, y: y)
    union.merge(a)
    with pytest.raises(DuplicateConverterError, match=r"aten\.add\.Tensor"):
        union.merge(b)


def test_onnx_table_refuses_the_same_since_version_but_keeps_other_versions():
    table = OnnxTable()

    def v1(x):
        return "v1"

    def v13(x):
        return "v13"

    table.register("Squeeze")(v1)
    table.register("Squeeze", since=13)(v13)  # a new variant, not a duplicate
    with pytest.raises(DuplicateConverterError, match=r"Squeeze \(since opset 13\)"):
        table.register("Squeeze", since=13)(lambda x: "again")
    assert [table.lookup("Squeeze", opset)(None) for opset in (11, 13, 21)] == \
        ["v1", "v13", "v13"]

    other = OnnxTable()
    other.register("Squeeze", since=1)(lambda x: "other")
    with pytest.raises(DuplicateConverterError, match=r"Squeeze \(since opset 1\)"):
        table.merge(other)


# ------------------------------------------------------------------ the current import

def test_outside_an_import_the_current_import_is_a_clear_error():
    for ask in (current_import, lambda: convert_subgraph(None, {})):
        with pytest.raises(NoImportInProgressError, match="no ONNX import in progress"):
            ask()


def test_outside_an_import_torch_shape_helpers_are_a_clear_error():
    pytest.importorskip("torch")
    from relayir.frontend.pytorch_ops import base as torch_base

    x = relayir.var("x", shape=(2,))
    for ask in (torch_base.current_import, lambda: torch_base.shape(x), torch_base.out_val):
        with pytest.raises(NoImportInProgressError, match="no PyTorch import in progress"):
            ask()


def test_nested_importing_restores_the_outer_state():
    outer, inner = OnnxImport(9, lambda g, i: []), OnnxImport(17, lambda g, i: [])
    with importing(outer):
        with importing(inner):
            assert current_import() is inner
        assert current_import() is outer
        with pytest.raises(RuntimeError), importing(inner):  # left by an exception
            raise RuntimeError
        assert current_import() is outer
    with pytest.raises(NoImportInProgressError):
        current_import()


def test_an_import_inside_a_converter_restores_the_outer_import(monkeypatch):
    """A converter that imports another model (opset 13) sees the outer import (opset 17)
    again once the inner one returns; the inner import's If branches convert through
    the inner importer."""
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                               [_vi("t", F, [3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [_vi("e", F, [3])])
    inner_model = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                                           else_branch=else_g)],
                         [_vi("c", B, []), _vi("x", F, [3])], [_vi("y", F, [3])], opset=13)
    seen = []

    def probe(x):
        seen.append(current_import().opset)
        inner, _ = from_onnx(inner_model)
        seen.append(current_import().opset)
        assert _run(inner, np.array(False), np.array([1, -2, 3], "float32")).tolist() == \
            [-1, 2, -3]
        return x

    _install_probe(monkeypatch, probe)
    outer = _model([_probe("x", "y")], [_vi("x", F, [3])], [_vi("y", F, [3])], opset=17)
    from_onnx(outer)
    assert seen == [17, 17]
    with pytest.raises(NoImportInProgressError):
        current_import()


def test_a_failed_import_leaves_no_current_import():
    bad = _model([helper.make_node("Relu", ["nowhere"], ["y"])], [_vi("x", F, [3])],
                 [_vi("y", F, [3])], opset=17)
    with pytest.raises(relayir.Error, match="nowhere"):
        from_onnx(bad)
    with pytest.raises(NoImportInProgressError):
        current_import()


def test_two_threads_import_two_models_at_once(monkeypatch):
    """Both imports are inside a converter at the same moment (a barrier); each sees its
    own opset and its own importer (model B's probe sits in an ``If`` branch, so its
    subgraph conversion runs while model A's import is in progress)."""
    barrier = threading.Barrier(2, timeout=60)
    seen: dict[str, tuple[int, OnnxImport]] = {}

    def probe(x):
        barrier.wait()
        state = current_import()
        seen[threading.current_thread().name] = (state.opset, state)
        barrier.wait()  # neither import leaves before both have looked
        return x

    _install_probe(monkeypatch, probe)
    # A (opset 11): ReduceSum with its axes as an attribute (an input from opset 13 on)
    model_a = _model([_probe("x", "p"),
                      helper.make_node("ReduceSum", ["p"], ["y"], axes=[1], keepdims=0)],
                     [_vi("x", F, [2, 3])], [_vi("y", F, [2])], opset=11)
    # B (opset 17): the probe runs inside an If branch, through convert_subgraph
    then_g = helper.make_graph([_probe("x", "p"), helper.make_node("Relu", ["p"], ["t"])],
                               "then", [], [_vi("t", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [_vi("e", F, [2, 3])])
    model_b = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                                       else_branch=else_g)],
                     [_vi("c", B, []), _vi("x", F, [2, 3])], [_vi("y", F, [2, 3])], opset=17)

    results: dict[str, object] = {}

    def work(name, model):
        try:
            results[name] = from_onnx(model)[0]
        except BaseException as e:  # noqa: BLE001  (reported by the main thread)
            results[name] = e
            barrier.abort()

    threads = [threading.Thread(target=work, args=(n, m), name=n)
               for n, m in (("a", model_a), ("b", model_b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for name, result in results.items():
        if isinstance(result, BaseException):
            raise AssertionError(f"import {name} failed") from result
    assert sorted(results) == ["a", "b"]
    assert seen["a"][0] == 11 and seen["b"][0] == 17
    assert seen["a"][1] is not seen["b"][1]

    x = np.array([[1, -2, 3], [-4, 5, -6]], "float32")
    np.testing.assert_allclose(_run(results["a"], x), x.sum(axis=1))
    np.testing.assert_allclose(_run(results["b"], np.array(True), x), np.maximum(x, 0))
    np.testing.assert_allclose(_run(results["b"], np.array(False), x), -x)
