"""Matmul-like stages lowered to micro-kernel tiles (tir/matmul.py) match numpy: tiles
sized for each machine, ragged edges, symbolic extents, fused epilogues, NaN, cache
blocking, the direct (pre-packed weight) form and more reduce axes than a call runs."""

from __future__ import annotations

import math
import re
import shutil

import numpy as np
import pytest

import relayir as relay
from relayir import SymbolicDim, TensorType
from relayir.codegen.c_printer import render
from relayir.codegen.native import compile_kernels
from relayir.op.layout import transform_array
from relayir.tir import default_schedule, lower_primitive
from relayir.tir.machine import AVX2, AVX512, NEON, PORTABLE, machine_from_flags

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="needs a C compiler")
MACHINES = {"avx512": AVX512, "avx2": AVX2, "neon": NEON, "portable": PORTABLE}
_TILE = re.compile(r"rl_gemm_f(32|64)_(\d+)x(\d+)(?:_k(\d+))?\(")


def _prim(params, body):
    fn = relay.Function(params, body).with_attr("Primitive", 1)
    relay.transform.infer_type(fn)
    return fn


def _v(name, shape, dtype="float32"):
    return relay.var(name, TensorType(shape, dtype))


def _rand(shape, seed, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _schedules(machine, **knobs):
    return {tag: default_schedule(tag, machine).replace(**knobs) if tag in ("dense", "conv")
            else default_schedule(tag, machine) for tag in ("dense", "conv", "injective")}


def _run(fn, args, schedule=None, dims=None, name="k"):
    prim = lower_primitive(fn, name, schedule)
    out = compile_kernels([prim])[name](*args, dims=dims)
    return out[0], render(prim)


def _tiles(source: str) -> list:
    return [(int(mr), int(nr), int(ku or 1)) for _, mr, nr, ku in _TILE.findall(source)]


def _dense_bias_relu(m, n, k):
    x, w, b = _v("x", (m, k)), _v("w", (n, k)), _v("b", (n,))
    fn = _prim([x, w, b], relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b)))
    args = [_rand((m, k), 1), _rand((n, k), 2), _rand((n,), 3)]
    return fn, args, np.maximum(args[0] @ args[1].T + args[2], 0)


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (37, 45, 70), (5, 48, 7), (100, 33, 1),
                                   (29, 130, 19)])
def test_tiles_sized_for_each_machine(machine, m, n, k):
    mach = MACHINES[machine]
    fn, args, want = _dense_bias_relu(m, n, k)
    got, src = _run(fn, args, _schedules(mach))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    tiles = _tiles(src)
    assert tiles, "the stage is tiled"
    for mr, nr, ku in tiles:
        nv = nr // mach.lanes
        assert nr % mach.lanes == 0 and mr <= m
        assert ku * mr * nv + nv + 1 <= mach.vector_registers  # accumulators + B + broadcast


def test_avx512_dense_takes_a_register_filling_tile():
    fn, args, want = _dense_bias_relu(128, 256, 256)
    got, src = _run(fn, args, _schedules(AVX512))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    (mr, nr, ku), = set(_tiles(src))
    assert nr == 32 and mr * nr // 16 >= 24  # >= 24 of the 32 zmm registers accumulate


@pytest.mark.parametrize("m", [1, 2, 13, 14, 15, 27, 28, 29])
def test_every_row_count_with_ragged_columns(m):
    fn, args, want = _dense_bias_relu(m, 50, 23)
    got, _ = _run(fn, args, _schedules(AVX512, tile_min_m=1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_symbolic_rows_columns_and_reduction():
    s = SymbolicDim("seq")
    q, kk, p, v = _v("q", (2, s, 16)), _v("kk", (2, s, 16)), _v("p", (2, s, s)), _v("v", (2, s, 24))
    scores = _prim([q, kk], relay.nn.batch_matmul(q, kk, transpose_b=True))  # n = seq
    mix = _prim([p, v], relay.nn.batch_matmul(p, v, transpose_b=False))  # reduce over seq
    x, w = _v("x", (s, 40)), _v("w", (24, 40))
    dense = _prim([x, w], relay.nn.dense(x, w))  # m = seq
    for fn in (scores, mix, dense):
        assert _tiles(render(lower_primitive(fn, "k", _schedules(AVX512)))), "tiled"
    for n in (1, 3, 13, 29, 64):
        a, b = _rand((2, n, 16), n), _rand((2, n, 16), n + 1)
        got, _ = _run(scores, [a, b], _schedules(AVX512), dims=[n])
        np.testing.assert_allclose(got, a @ b.transpose(0, 2, 1), rtol=1e-4, atol=1e-4)
        p, vv = _rand((2, n, n), n + 2), _rand((2, n, 24), n + 3)
        got, _ = _run(mix, [p, vv], _schedules(AVX512), dims=[n])
        np.testing.assert_allclose(got, p @ vv, rtol=1e-4, atol=1e-4)
        xx, ww = _rand((n, 40), n + 4), _rand((24, 40), n + 5)
        got, _ = _run(dense, [xx, ww], _schedules(AVX512), dims=[n])
        np.testing.assert_allclose(got, xx @ ww.T, rtol=1e-4, atol=1e-4)


def test_fused_epilogues():
    x, w, b, r = _v("x", (40, 64)), _v("w", (48, 64)), _v("b", (48,)), _v("r", (40, 48))
    y = relay.nn.bias_add(relay.nn.dense(x, w), b)
    gelu = y * relay.const(0.5) * (relay.const(1.0) + relay.erf(y * relay.const(0.7071)))
    fn = _prim([x, w, b, r], relay.nn.relu(relay.add(gelu, r)))
    args = [_rand((40, 64), 1), _rand((48, 64), 2), _rand((48,), 3), _rand((40, 48), 4)]
    got, src = _run(fn, args, _schedules(AVX512))
    yy = args[0] @ args[1].T + args[2]
    g = yy * 0.5 * (1 + np.vectorize(math.erf)(yy * 0.7071))
    np.testing.assert_allclose(got, np.maximum(g + args[3], 0), rtol=1e-4, atol=1e-4)
    assert _tiles(src) and src.count("out0[") == 1  # one store: the epilogue is fused
    # a convolution with bias, residual add and relu
    img, k, cb = _v("img", (1, 8, 10, 10)), _v("k", (32, 8, 3, 3)), _v("cb", (32, 1, 1))
    res = _v("res", (1, 32, 10, 10))
    conv = relay.nn.conv2d(img, k, padding=1)
    fn = _prim([img, k, cb, res], relay.nn.relu(relay.add(relay.add(conv, cb), res)))
    args = [_rand((1, 8, 10, 10), 5), _rand((32, 8, 3, 3), 6), _rand((32, 1, 1), 7),
            _rand((1, 32, 10, 10), 8)]
    got, src = _run(fn, args, _schedules(AVX512))
    pad = np.pad(args[0], ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 32, 10, 10))
    for dh in range(3):
        for dw in range(3):
            ref += np.einsum("oc,nchw->nohw", args[1][:, :, dh, dw],
                             pad[:, :, dh:dh + 10, dw:dw + 10])
    np.testing.assert_allclose(got, np.maximum(ref + args[2] + args[3], 0), rtol=1e-4,
                               atol=1e-4)
    assert _tiles(src)


def test_nan_propagates_through_the_tile_and_its_epilogue():
    fn, args, _ = _dense_bias_relu(30, 40, 20)
    x, w, b = args
    x[4, 7] = np.nan
    x[9, 3] = np.inf
    w[:, 7] = 0.0  # 0 * NaN = NaN in every column of row 4
    w[:, 3] = 0.0  # 0 * inf = NaN in every column of row 9
    b[5] = np.nan
    got, src = _run(fn, [x, w, b], _schedules(AVX512))
    with np.errstate(invalid="ignore"):
        want = np.maximum(x @ w.T + b, 0)  # np.maximum propagates NaN
    assert _tiles(src)
    assert np.isnan(got[4]).all() and np.isnan(got[9]).all() and np.isnan(got[:, 5]).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("knobs", [{"kc": 64}, {"kc": 64, "mc": 28, "nc": 64},
                                   {"mc": 28, "nc": 32}, {"kc": 100, "tile_form": "packed"}])
def test_cache_blocking_knobs(knobs):
    fn, args, want = _dense_bias_relu(100, 90, 300)
    got, src = _run(fn, args, _schedules(AVX512, **knobs))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    if "kc" in knobs:
        assert "cblock" in src  # reduction passes accumulate in a block of tiles
    if "mc" in knobs:  # tiles visited block by block
        assert re.search(r"int64_t ic = 0", src) and re.search(r"int64_t jc = 0", src)


def test_direct_form_reads_weights_in_place():
    # matmul's right operand is contiguous along the columns
    a, b = _v("a", (33, 20)), _v("b", (20, 64))
    fn = _prim([a, b], relay.nn.matmul(a, b))
    args = [_rand((33, 20), 1), _rand((20, 64), 2)]
    got, src = _run(fn, args, _schedules(AVX512, tile_form="direct"))
    np.testing.assert_allclose(got, args[0] @ args[1], rtol=1e-4, atol=1e-4)
    assert "packed" not in src and _tiles(src)


@pytest.mark.parametrize("m,block", [(1, 32), (1, 16), (7, 16), (64, 32), (130, 16)])
def test_pre_packed_dense_weight(m, block):
    x, wp, b = _v("x", (m, 50)), _v("wp", (96 // block, 50, block)), _v("b", (96,))
    fn = _prim([x, wp, b], relay.nn.relu(relay.nn.bias_add(
        relay.nn.contrib_dense_pack(x, wp, weight_layout=f"NC{block}n"), b)))
    xx, w, bb = _rand((m, 50), 1), _rand((96, 50), 2), _rand((96,), 3)
    packed = np.ascontiguousarray(transform_array(w, "NC", f"NC{block}n"))
    got, src = _run(fn, [xx, packed, bb], _schedules(AVX512))
    np.testing.assert_allclose(got, np.maximum(xx @ w.T + bb, 0), rtol=1e-4, atol=1e-4)
    tiles = _tiles(src)
    assert "packed" not in src and tiles  # read in place, also for one row
    assert all(nr == block for _, nr, _ in tiles)
    if m == 1:
        assert all(ku > 1 for _, _, ku in tiles)  # several accumulator sets for one row


def test_more_reduce_axes_than_one_call_runs():
    x, w = _v("x", (1, 3, 5, 6, 7)), _v("w", (20, 3, 2, 3, 2))
    fn = _prim([x, w], relay.nn.conv3d(x, w, padding=1))
    args = [_rand((1, 3, 5, 6, 7), 1), _rand((20, 3, 2, 3, 2), 2)]
    got, src = _run(fn, args, _schedules(AVX512))
    want = relay.create_executor("debug", relay.IRModule.from_expr(
        relay.Function(list(fn.params), fn.body))).evaluate()(*args)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-4)
    assert _tiles(src)


def test_float64_stage():
    x, w = _v("x", (20, 30), "float64"), _v("w", (17, 30), "float64")
    fn = _prim([x, w], relay.nn.dense(x, w))
    args = [_rand((20, 30), 1, "float64"), _rand((17, 30), 2, "float64")]
    got, src = _run(fn, args, _schedules(AVX512))
    np.testing.assert_allclose(got, args[0] @ args[1].T, rtol=1e-12)
    assert "rl_gemm_f64_" in src


def test_machine_from_cpu_flags():
    assert machine_from_flags({"fma", "avx2", "avx512f"}, "x86_64").lanes == 16
    assert machine_from_flags({"fma", "avx2"}, "x86_64") == AVX2
    assert machine_from_flags({"__AVX2__", "__FMA__"}, "x86_64") == AVX2  # compiler macros
    assert machine_from_flags(set(), "aarch64") == NEON
    assert machine_from_flags({"sse2"}, "x86_64") == PORTABLE
