"""Fused primitive functions lower to ONE kernel that matches the reference interpreter.

Also checks the lowering decisions (which tensors get memory) and that every primitive
function FuseOps makes for the built-in workloads lowers and runs.
"""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

import relayir as relay
from relayir.codegen.c_printer import render
from relayir.ir.expr import Function
from relayir.ir.functor import post_order
from relayir.ir.module import IRModule
from relayir.ir.types import TensorType
from relayir.runtime.interpreter import Interpreter
from relayir.testing.op_check import rand
from relayir.tir.lower import lower_primitive
from relayir.tir.names import C_RESERVED, c_identifier
from relayir.transform import InferType
from relayir.transform.fuse_ops import FuseOps

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")


def _prim(params, body) -> Function:
    f = relay.Function(params, body).with_attr("Primitive", 1)
    return InferType()(IRModule.from_expr(f))["main"]


def _interpret(fn: Function, args):
    mod = IRModule.from_expr(fn)
    interp = Interpreter(mod)
    out = interp.call_closure(interp.global_closure(mod.get_global_var("main")), args)
    return list(out) if isinstance(out, tuple) else [out]


def _inputs(fn: Function, seed=0):
    out = []
    for k, p in enumerate(fn.params):
        t = p.checked_type
        if t.dtype.startswith("int"):
            out.append(rand(t.concrete_shape, t.dtype, seed + k, low=0, high=2))
        else:
            out.append(rand(t.concrete_shape, t.dtype, seed + k))
    return out


def _v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def _programs():
    """(name, primitive function, number of stages expected or None)."""
    p0, p1 = _v("p0", (4, 33)), _v("p1", (4, 33))
    yield "add-exp-sum", _prim([p0, p1], relay.sum(relay.exp(p0 + p1), axis=[1])), 1
    a, b = _v("a", (2, 3, 4)), _v("b", (4, 6))
    chain = relay.transpose(relay.reshape(a, (6, 4)), (1, 0))
    yield "reshape-transpose-add", _prim([a, b], relay.reshape(chain, (4, 6)) + b), 1
    x, y = _v("x", (3, 37)), _v("y", (37,))
    # the add is materialised for the softmax routine (te.extern): two stages
    yield "add-softmax", _prim([x, y], relay.nn.softmax(x + y)), 2
    d, w, bias = _v("d", (5, 19)), _v("w", (7, 19)), _v("bias", (7,))
    yield "dense-bias-relu", _prim(
        [d, w, bias], relay.nn.relu(relay.nn.bias_add(relay.nn.dense(d, w), bias))), 1
    img, k, cb = _v("img", (1, 3, 8, 9)), _v("k", (4, 3, 3, 3)), _v("cb", (4, 1, 1))
    conv = relay.nn.conv2d(img, k, padding=1)
    yield "conv-add-relu", _prim([img, k, cb], relay.nn.relu(conv + cb)), 2
    m = _v("m", (6, 10))
    yield "square-minus-mean", _prim([m], relay.multiply(m, m) - relay.mean(m)), 2
    t = _v("t", (4, 5))
    yield "tuple-outputs", _prim([t], relay.Tuple([t + relay.const(1.0),
                                                   relay.sum(t + relay.const(1.0), axis=0)])), 2
    c = _v("c", (3, 2))
    cst = relay.const(np.arange(6, dtype="float32").reshape(3, 2))
    yield "embedded-constant", _prim([c], c * cst + relay.const(0.5)), 1
    q = _v("q", (4, 6))
    yield "reduce-epilogue-twice", _prim([q], relay.sqrt(relay.sum(q * q, axis=1)) * 2.0), 1
    s = _v("s", (2, 3, 4, 4))
    yield "maxpool-flatten", _prim([s], relay.nn.batch_flatten(
        relay.nn.max_pool2d(s, pool_size=2, strides=2))), 1
    z = _v("z", (3, 4))
    parts = relay.split(z, 2, axis=1)
    yield "split-concat", _prim([z], relay.concatenate([parts[1], parts[0]], axis=1)), 1
    i = _v("i", (5,), "int32")
    yield "int-chain", _prim([i], relay.cast(relay.mod(i * relay.const(7), relay.const(3)),
                                             "float32")), 1


PROGRAMS = list(_programs())


@pytest.fixture(scope="module")
def compiled():
    from relayir.codegen.native import compile_kernels

    kernels = [lower_primitive(fn, f"prog_{name.replace('-', '_')}")
               for name, fn, _ in PROGRAMS]
    return kernels, compile_kernels(kernels)


@needs_cc
@pytest.mark.parametrize("n", range(len(PROGRAMS)), ids=[p[0] for p in PROGRAMS])
def test_fused_function_is_one_kernel_matching_the_interpreter(compiled, n):
    kernels, fns = compiled
    name, fn, stages = PROGRAMS[n]
    kernel = kernels[n]
    assert render(kernel).count("int32_t prog_") == 1  # one C function
    if stages is not None:
        assert len(kernel.info["stages"]) == stages, kernel.info
    args = _inputs(fn)
    got = fns[kernel.name](*args)
    want = _interpret(fn, args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@needs_cc
def test_symbolic_dimensions_come_from_dims():
    from relayir.codegen.native import compile_kernels

    x = relay.var("x", TensorType(("n", 5), "float32"))
    y = relay.var("y", TensorType((5,), "float32"))
    fn = _prim([x, y], relay.sum(relay.nn.relu(x + y), axis=0))
    kernel = lower_primitive(fn, "sym")
    assert kernel.dim_names == ["n"]
    assert "dims[0]" in render(kernel)
    f = compile_kernels([kernel])["sym"]
    for n in (1, 7, 300):
        a, b = rand((n, 5), "float32", n), rand((5,), "float32", 1)
        (out,) = f(a, b, dims=[n])
        np.testing.assert_allclose(out, np.maximum(a + b, 0).sum(0), rtol=1e-5, atol=1e-5)


@needs_cc
def test_dense_with_a_symbolic_row_count_is_tiled_for_many_rows():
    from relayir.codegen.native import compile_kernels

    x = relay.var("x", TensorType(("m", 32), "float32"))
    w, b = _v("w", (48, 32)), _v("b", (48,))
    fn = _prim([x, w, b], relay.nn.relu(relay.nn.dense(x, w) + b))
    kernel = lower_primitive(fn, "dyn_dense")
    assert "acc[" in render(kernel) and "} else {" in render(kernel)  # tiles; few rows: not
    f = compile_kernels([kernel])["dyn_dense"]
    for m in (1, 3, 4, 9, 37):  # below, at and past the tiling threshold; ragged tiles
        a, wv, bv = rand((m, 32), "float32", m), rand((48, 32), "float32", 1), rand((48,),
                                                                                   "float32", 2)
        (out,) = f(a, wv, bv, dims=[m])
        np.testing.assert_allclose(out, np.maximum(a @ wv.T + bv, 0), rtol=1e-5, atol=1e-5)


def test_any_dimensions_become_named_dims():
    x = relay.var("x", TensorType((relay.Any(), 4), "float32"))
    fn = _prim([x], relay.exp(x))
    kernel = lower_primitive(fn, "dyn")
    # the input's ? and the result's ? are separate dims, each named in the types
    assert kernel.dim_names == ["anydim0", "anydim1"]
    assert kernel.input_types[0].shape == (relay.SymbolicDim("anydim0"), 4)
    assert kernel.output_types[0].shape == (relay.SymbolicDim("anydim1"), 4)
    assert "dims[1]" in render(kernel)


def test_a_fused_chain_of_5000_ops_lowers_under_the_default_recursion_limit():
    # inlined, the chain is one expression 5,000 levels deep: the lowering (te.visit,
    # the inliner) and the C printer walk it with explicit stacks
    x = _v("x", (4,))
    e = x
    for k in range(5000):
        e = relay.negative(e) if k % 2 else relay.nn.relu(e)
    fn = _prim([x], e)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # CPython's default
    try:
        kernel = lower_primitive(fn, "deep_chain")
        src = render(kernel)
    finally:
        sys.setrecursionlimit(old)
    assert len(kernel.info["stages"]) == 1 and not kernel.info["temporaries"]
    assert src.count("rl_max_f32(") == 2500 and src.count(" * -1.0f") == 2500


@pytest.mark.parametrize("name,ident", [
    ("fused_add_relu", "fused_add_relu"), ("tanh", "k_tanh"), ("memcpy", "k_memcpy"),
    ("dims", "k_dims"), ("rl_workspace", "k_rl_workspace"), ("omp_x", "k_omp_x"),
    ("3x", "k_3x"), ("", "kernel"), ("a-b.c", "a_b_c"), ("é", "_"), ("x" * 90, "x" * 80),
])
def test_c_identifier(name, ident):
    assert c_identifier(name) == ident


def test_every_reserved_name_is_prefixed():
    assert all(c_identifier(n) == "k_" + n for n in C_RESERVED)


def test_kernel_names_are_sanitised():
    x = _v("x", (3,))
    kernel = lower_primitive(_prim([x], relay.exp(x)), "9 bad-name; system(\"rm\")")
    assert kernel.name.isidentifier() and kernel.name.startswith("k_9")
    assert 'system("rm")' not in render(kernel)


def _primitive_functions(mod) -> list:
    seen, out = set(), []
    for fn in mod.functions.values():
        for node in post_order(fn):
            if isinstance(node, Function) and node.is_primitive and id(node) not in seen:
                seen.add(id(node))
                out.append(node)
    return out


@needs_cc
@pytest.mark.parametrize("workload,knobs", [
    ("mlp", {"batch_size": 3}),
    ("resnet18", {"image_size": 32}),
    ("mobilenet_v2", {"image_size": 32}),
    ("bert", {}),
])
def test_every_fused_group_of_a_workload_lowers_and_matches(workload, knobs):
    from relayir.codegen.native import compile_kernels
    from relayir.testing.models import get_workload
    from relayir.transform.simplify_inference import SimplifyInference

    if workload == "bert":
        knobs = {"num_layers": 1, "hidden": 32, "heads": 2, "seq_len": 8, "intermediate": 64,
                 "vocab": 50, "max_position": 16}
    mod, _, _ = get_workload(workload, **knobs)
    mod = InferType()(mod)
    mod = SimplifyInference()(mod)
    with relay.transform.PassContext(opt_level=2):
        mod = FuseOps()(mod)
    funcs = _primitive_functions(mod)
    kernels = [lower_primitive(fn, f"{workload}_{k}") for k, fn in enumerate(funcs)]
    fns = compile_kernels(kernels)
    for k, (fn, kernel) in enumerate(zip(funcs, kernels)):
        args = _inputs(fn, k)
        got = fns[kernel.name](*args)
        want = _interpret(fn, args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=kernel.name)


def test_dense_and_conv_use_the_register_tiled_nest():
    d, w = _v("d", (64, 48)), _v("w", (40, 48))
    dense = lower_primitive(_prim([d, w], relay.nn.relu(relay.nn.dense(d, w))), "dense_tiled")
    assert "packed" in render(dense) and "rl_gemm_f32_" in render(dense)  # micro-kernel
    img, k = _v("img", (1, 8, 10, 10)), _v("k", (32, 8, 3, 3))
    conv = lower_primitive(_prim([img, k], relay.nn.conv2d(img, k, padding=1)), "conv_tiled")
    assert "packed" in render(conv)
    v, w2 = _v("v", (1, 48)), _v("w2", (40, 48))
    gemv = lower_primitive(_prim([v, w2], relay.nn.dense(v, w2)), "gemv")
    assert "packed" not in render(gemv)  # one row reads the weight once: no packing
