"""The TVM names Relay's own tests import: the ones relayir offers work, the ones it does
not offer import fine and raise ``NotInRelayirError`` naming the API when used (never a
deep AttributeError); ``requires_*`` reflect this machine."""

import importlib.util

import numpy as np
import pytest

import relayir.tvm as tvm
from relayir.tvm import relay, rpc, tir
from relayir.tvm.error import NotInRelayirError
from relayir.tvm.testing import features


def test_level1_trig_ops_are_relay_ops():
    x = relay.var("x", shape=(3,), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.atan(relay.sinh(x))))
    data = np.array([-1.0, 0.0, 2.0], "float32")
    out = relay.create_executor("debug", mod=mod).evaluate()(data)
    np.testing.assert_allclose(out.numpy(), np.arctan(np.sinh(data)), rtol=1e-6)


@pytest.mark.parametrize("api", ["register", "register_compute", "register_strategy",
                                 "register_alter_op_layout", "register_pattern"])
def test_op_registration_from_python_is_refused_by_name(api):
    from relayir.tvm.relay.op import op as _op

    with pytest.raises(NotInRelayirError, match=f"tvm.relay.op.{api} is not part of relayir"):
        getattr(_op, api)("custom_log")
    assert relay.op.get("log").name == "log"
    assert relay.op is not _op and relay.op.op is _op  # relay.op stays the package


def test_ir_names_that_are_not_offered():
    with pytest.raises(NotInRelayirError, match=r"make_node\('DictAttrs'"):
        tvm.ir.make_node("DictAttrs", a=1)
    with pytest.raises(NotInRelayirError, match="tvm.ir.register_op_attr"):
        tvm.ir.register_op_attr("exp", "ftest", lambda x: x)
    with pytest.raises(AttributeError, match="tvm.relay.not_a_name is not part of relayir"):
        relay.not_a_name  # noqa: B018


def test_imported_modules_refuse_on_use():
    from relayir.tvm.relay.quantize import qconfig
    from relayir.tvm.script import tir as T

    with pytest.raises(NotInRelayirError, match="tvm.relay.quantize.qconfig"):
        qconfig(skip_conv_layers=[0])
    assert T.int32(1) == 1 and isinstance(T.int64(3), int) and T.float32(2) == 2.0
    with pytest.raises(NotInRelayirError, match="tvm.script.tir.prim_func"):
        T.prim_func(lambda: None)


def test_indexdiv_of_a_named_dim_is_a_dim_expression():
    d = tvm.te.var("d")
    assert tir.indexdiv(9, 4) == 2 and tir.indexmod(9, 4) == 1
    assert str(tir.indexdiv(d, 4)) == "floordiv(d, 4)" and tir.indexmod(d * 4 + 1, 4) == 1
    assert tir.min(d, d + 1) == d and str(tir.max(d - 1, 2)) == "max(2, d - 1)"
    x = relay.var("x", shape=(d, tir.indexdiv(d, 4), d - 1))
    assert x.type_annotation.shape[1] == tir.floordiv(d, 4)


def test_rpc_local_session_loads_an_exported_module(tmp_path, needs_cc):
    x = relay.var("x", shape=(2,), dtype="float32")
    lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], x + x)), target="llvm")
    path = tmp_path / "m.so"
    lib.export_library(str(path))
    session = rpc.LocalSession()
    session.upload(str(path))
    assert session.listdir() == ["m.so"]
    loaded = session.load_module("m.so")
    from relayir.tvm.contrib import graph_executor

    m = graph_executor.GraphModule(loaded["default"](session.cpu()))
    m.set_input("x", np.array([1.0, 2.0], "float32"))
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), [2.0, 4.0])
    with pytest.raises(NotInRelayirError, match="tvm.rpc.connect"):
        rpc.connect("127.0.0.1", 9090)


def test_requirements_reflect_this_machine():
    flags = features.cpu_flags()
    avx512 = features.is_x86() and {"avx512f", "avx512bw", "avx512cd", "avx512dq",
                                    "avx512vl"} <= flags
    assert bool(tvm.testing.requires_x86_avx512) == avx512
    assert bool(tvm.testing.requires_x86) == features.is_x86()
    assert not tvm.testing.requires_cuda and tvm.testing.requires_llvm
    assert bool(tvm.testing.requires_package("numpy"))
    assert not tvm.testing.requires_package("numpy", "not_a_package_relayir_knows")
    marks = tvm.testing.requires_package("not_a_package_relayir_knows").marks()
    assert "not_a_package_relayir_knows" in marks[0].kwargs["reason"]
    assert bool(tvm.testing.requires_package("scipy")) == \
        (importlib.util.find_spec("scipy") is not None)


def test_topi_references_and_missing_workloads():
    import relayir.tvm.topi.testing as ref
    from relayir.tvm.relay.testing import vgg

    seq = np.array([[1, 3, 5], [2, 4, 6]], "float32")
    vals = np.array([[3, 6], [1, 7]], "float32")
    np.testing.assert_array_equal(ref.searchsorted_ref(seq, vals, False, "int32"),
                                  [[1, 3], [0, 3]])
    np.testing.assert_array_equal(ref.searchsorted_ref(seq, vals, True, "int64"),
                                  [[2, 3], [0, 3]])
    a = np.arange(4, dtype="float32").reshape(2, 2)
    np.testing.assert_array_equal(ref.dilate_python(a, (2, 1)),
                                  [[0, 1], [0, 0], [2, 3]])
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype("float32")
    w = np.ones((3, 2, 3, 3), "float32")
    out = ref.conv2d_nchw_python(x, w, 1, 1)
    assert out.shape == (1, 3, 5, 5)
    np.testing.assert_allclose(out[0, 0, 2, 2], x[0, :, 1:4, 1:4].sum(), rtol=1e-5)
    with pytest.raises(NotInRelayirError, match="tvm.topi.testing.roi_pool_nchw_python"):
        ref.roi_pool_nchw_python(x)
    with pytest.raises(NotInRelayirError, match="relay.testing.vgg.get_workload"):
        vgg.get_workload()
    assert tvm.get_global_func("relay.ext.dnnl", True) is None
    with pytest.raises(NotInRelayirError, match="get_global_func"):
        tvm.get_global_func("relay.ext.dnnl")
    from relayir.tvm.relay.prelude import StaticTensorArrayOps

    with pytest.raises(NotInRelayirError, match="StaticTensorArrayOps"):
        StaticTensorArrayOps(None, "float32")


def test_resize_references_match_relayir_ops():
    import relayir.tvm.topi.testing as ref

    x = np.arange(2 * 3 * 4 * 4, dtype="float32").reshape(2, 3, 4, 4)
    out = ref.resize2d_python(x, (2, 2), "NCHW", "nearest_neighbor", "asymmetric")
    np.testing.assert_array_equal(out, x.repeat(2, axis=2).repeat(2, axis=3))
    nhwc = ref.resize2d_python(x.transpose(0, 2, 3, 1), (0.5, 0.5), "NHWC", "linear",
                               "align_corners")
    assert nhwc.shape == (2, 2, 2, 3)
    assert ref.resize1d_python(x[:, :, 0], (1.5,), "NCW", "cubic", "half_pixel").shape == \
        (2, 3, 6)


def test_ops_relayir_lacks_are_named():
    with pytest.raises(AttributeError, match="tvm.relay.op.image.affine_grid is not part of"):
        relay.image.affine_grid  # noqa: B018
    with pytest.raises(AttributeError, match="tvm.relay.op.vision.multibox_prior is not part"):
        relay.vision.multibox_prior  # noqa: B018
    assert relay.image.resize2d is not None and relay.vision.non_max_suppression is not None


def test_a_device_target_is_a_description_never_built_for():
    from relayir.backend.target import BuildError

    t = tvm.target.Target("opencl -device=mali")
    assert t.kind.name == "opencl" and "gpu" in t.keys and t.attrs["device"] == "mali"
    with tvm.target.Target("cuda"):
        assert tvm.target.Target.current().kind.name == "cuda"
    x = relay.var("x", shape=(2,), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], x + x))
    with pytest.raises(BuildError, match="not for cuda"):
        relay.build(mod, target="cuda")
    with pytest.raises(BuildError, match="not for metal"):
        relay.create_executor("graph", mod=mod, target=tvm.target.Target("metal"))


def test_more_names_that_import_and_refuse():
    from relayir.tvm.autotvm import apply_history_best
    from relayir.tvm.relay.testing import _np_randn_from_type

    for fn, api in ((apply_history_best, "tvm.autotvm.apply_history_best"),
                    (relay.annotation.stop_fusion, "tvm.relay.annotation.stop_fusion")):
        with pytest.raises(NotInRelayirError, match=api):
            fn("x")
    assert _np_randn_from_type(relay.TensorType((2, 3), "float32")).shape == (2, 3)
    assert relay.TypeVar("t", relay.TypeKind.ShapeVar).kind == relay.TypeKind.ShapeVar
    x = relay.var("x", shape=(2,))
    assert tvm.ir.structural_hash(x + x, True) == tvm.ir.structural_hash(x + x, True)
    assert tvm.ir.structural_hash(x + x) == tvm.ir.structural_hash(x + x)  # the same free x
    with pytest.raises(AttributeError, match="tvm.relay.transform.NotAPass is not part"):
        relay.transform.NotAPass  # noqa: B018


def test_relay_passes_and_analyses_relayir_lacks_import_and_refuse():
    from relayir.ir.functor import ExprMutator as RelayirMutator
    from relayir.tvm.relay.analysis import search_fc_transpose
    from relayir.tvm.relay.expr_functor import ExprMutator
    from relayir.tvm.relay.transform import PartialEvaluate

    assert ExprMutator is RelayirMutator is relay.ExprMutator  # relayir's own stay
    for fn, api in ((search_fc_transpose, "tvm.relay.analysis.search_fc_transpose"),
                    (PartialEvaluate, "tvm.relay.transform.PartialEvaluate")):
        with pytest.raises(NotInRelayirError, match=api):
            fn()
    assert relay.transform.FoldConstant is not None  # relayir's own passes stay


def test_absent_tvm_modules_import_and_refuse_by_name():
    import sys

    import relayir.tvm

    relayir.tvm.install_alias()
    try:
        from tvm.relay.op.contrib.register import get_pattern_table
        from tvm.target.codegen import llvm_version_major
        from tvm.target.target import Target
    finally:
        relayir.tvm.uninstall_alias()
    assert llvm_version_major() == 0  # no LLVM: version-gated features are unavailable
    with pytest.raises(NotInRelayirError, match="tvm.relay.op.contrib.register"):
        get_pattern_table("dnnl")
    assert Target is tvm.target.Target
    assert sys.modules["relayir.tvm.topi.nn"].__doc__.startswith("tvm.topi.nn: not part")


def test_testing_utils_generate_ref_data(needs_cc):
    from relayir.tvm.testing.utils import IS_IN_CI, generate_ref_data

    x = relay.var("input", shape=(3,), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.atan(x)))
    data = np.array([0.0, 1.0, -2.0], "float32")
    out = generate_ref_data(mod, {"input": data})
    np.testing.assert_allclose(out["output"], np.arctan(data), rtol=1e-6)
    assert IS_IN_CI in (True, False)


def test_refused_classes_can_be_subclassed_and_star_imported():
    namespace = {}
    exec("from relayir.tvm.relay.testing.vgg import *\n"  # noqa: S102
         "from relayir.tvm.relay.op.op import OpStrategy\n"
         "class Strategy(OpStrategy):\n    pass\n", namespace)
    with pytest.raises(NotInRelayirError, match="OpStrategy is not part of relayir"):
        namespace["Strategy"]()
    t = tvm.target.Target("cuda").with_host(tvm.target.Target("llvm"))
    assert t.kind.name == "cuda" and t.host.kind.name == "llvm"


def test_a_missing_attribute_of_target_or_virtual_device_names_the_api():
    import copy

    from relayir.tvm.target import Target, VirtualDevice

    with pytest.raises(AttributeError, match=r"tvm\.target\.Target\.vtcm_capacity is "
                                             r"not part of relayir"):
        Target("llvm").vtcm_capacity  # noqa: B018
    with pytest.raises(AttributeError, match=r"VirtualDevice\.device_type_int is not part"):
        VirtualDevice().device_type_int  # noqa: B018
    assert copy.copy(Target("llvm")) == Target("llvm")  # dunder look-ups stay plain


def test_run_as_python_returns_tvm_values():
    from relayir.tvm.relay.backend.interpreter import RefValue
    from relayir.tvm.relay.testing import run_as_python
    from relayir.tvm.runtime.container import ADT

    tup = run_as_python(relay.Tuple([relay.const(1), relay.Tuple([])]))
    assert isinstance(tup, ADT) and len(tup) == 2 and tup[0].numpy() == 1
    ref = run_as_python(relay.RefCreate(relay.Tuple([])))
    assert isinstance(ref, RefValue) and isinstance(ref.value, ADT)
    parts = run_as_python(relay.split(relay.const(np.arange(4.0)), 2))  # a TupleWrapper
    assert [p.numpy().tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0]]


def test_tempdir_joins_paths_as_tvms_does():
    from relayir.tvm.contrib import utils

    tmp = utils.tempdir()
    (tmp / "lib.so").write_bytes(b"x")
    assert tmp.relpath("lib.so") == str(tmp / "lib.so") and tmp.listdir() == ["lib.so"]
    with pytest.raises(TypeError, match="str or path"):
        tmp / 3
    tmp.remove()


def test_save_json_round_trips_expressions_and_modules():
    x = relay.var("x", shape=(2, 3))
    fn = relay.Function([x], relay.nn.relu(x) + relay.const(np.ones((2, 3), "float32")))
    fn = fn.with_attr("test_attribute", "value")
    back = tvm.ir.load_json(tvm.ir.save_json(fn))
    assert tvm.ir.structural_equal(back, fn, map_free_vars=True)
    assert back.attrs["test_attribute"] == "value"
    mod = tvm.IRModule.from_expr(fn)
    assert tvm.ir.structural_equal(tvm.ir.load_json(tvm.ir.save_json(mod)), mod)


def test_load_json_refuses_tvms_node_graph_by_name():
    data = '{"root": 1, "nodes": [{"type_key": ""}], "attrs": {"tvm_version": "0.6.0"}}'
    with pytest.raises(NotInRelayirError, match="TVM's node-graph JSON"):
        tvm.ir.load_json(data)


def test_tir_expr_exports_the_expression_classes_only():
    import relayir.tvm.tir.expr as expr

    assert set(expr.__all__) == {"Any", "FloatImm", "IntImm", "SizeVar", "Var"}
    assert expr.IntImm("int32", 3) == 3 and isinstance(3, expr.IntImm)


def test_convert_makes_a_list_an_immutable_array():
    fields = tvm.runtime.convert([])
    assert relay.Tuple(fields).fields == fields
    assert tvm.runtime.convert([1, [2]]) == (1, (2,))


def test_max_function_args_is_tvms_no_limit_unless_set():
    assert tvm.target.Target("llvm").max_function_args == 0
    assert tvm.target.Target("llvm -max_function_args=8").max_function_args == 8
