"""A target names its CPU (``"cpu -mcpu=haswell"``): the AVX2 path is built and tested on
any x86 host, an AVX-512 one included. The kernels it gives equal the numpy target's, its
C is compiled with ``-march=haswell`` (no AVX-512 instruction in the object), every
per-ISA choice reads the machine table's AVX2 entry, an unknown name is a ``BuildError``,
a CPU this host cannot run is refused (never SIGILL), and the compiled-kernel caches keep
the builds apart."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import relayir as relay
from relayir.backend.target import MCPU_ENV, BuildError, Target
from relayir.codegen import has_compiler
from relayir.runtime.executor import AotError
from relayir.testing.models.mlp import mlp
from relayir.tir.machine import MACHINES, host_machine, missing_features

needs_cc = pytest.mark.skipif(not has_compiler(), reason="needs a C compiler")
x86 = pytest.mark.skipif(host_machine().isa not in ("avx2", "avx512"),
                         reason="needs an x86 CPU with AVX2")
HASWELL = "cpu -mcpu=haswell"


# ------------------------------------------------------------------ the target string


def test_the_target_names_its_cpu(monkeypatch):
    monkeypatch.delenv(MCPU_ENV, raising=False)
    assert Target.parse("cpu").cpu == "native"
    assert Target.parse("llvm -mcpu=znver3").cpu == "znver3"
    assert Target.parse("numpy").cpu == ""
    monkeypatch.setenv(MCPU_ENV, "haswell")  # the default of a string that names none
    assert Target.parse("cpu").cpu == "haswell"
    assert Target.parse("llvm").options == ("-mcpu=haswell",)
    assert Target.parse("llvm -mcpu=native").cpu == "native"  # a named one wins
    assert Target.parse("numpy").options == ()
    with pytest.raises(BuildError, match="not a CPU name"):
        Target.parse("cpu -mcpu=")


@needs_cc
@x86
def test_haswell_is_the_avx2_entry_of_the_machine_table():
    m = Target.parse(HASWELL).machine()
    assert (m.isa, m.lanes, m.vector_registers, m.nchwc_block, m.int8) == (
        "avx2", 8, 16, 8, "avx2")
    assert m.l2_bytes == host_machine().l2_bytes  # caches: this host's
    big = Target.parse("llvm -mcpu=skylake-avx512").machine()
    assert (big.isa, big.lanes, big.vector_registers, big.nchwc_block) == (
        "avx512", 16, 32, 16)
    assert big.int8 == "avx2"  # no VNNI on Skylake: the routines' AVX2 path
    assert Target.parse("cpu -mcpu=x86-64").machine().isa == MACHINES["portable"].isa
    assert "-march=haswell" in Target.parse(HASWELL).cflags()


@needs_cc
def test_an_unknown_cpu_is_a_build_error_listing_valid_ones():
    mod, params = mlp(batch_size=1, in_features=8, hidden=8, num_classes=4)
    with pytest.raises(BuildError, match=r"unknown CPU -mcpu='nosuchcpu'.*valid names "
                                         r"include .*haswell"):
        relay.build(mod, target="llvm -mcpu=nosuchcpu", params=params)
    with pytest.raises(BuildError, match="unknown CPU"):
        relay.vm.compile(mod, target="cpu -mcpu=nosuchcpu", params=params)


# ------------------------------------------------------------------ same answers


def _conv_net():
    x = relay.var("x", shape=(1, 3, 12, 12), dtype="float32")
    w1 = relay.var("w1", shape=(24, 3, 3, 3), dtype="float32")
    w2 = relay.var("w2", shape=(32, 24, 3, 3), dtype="float32")
    w3 = relay.var("w3", shape=(32, 1, 3, 3), dtype="float32")
    h = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1)))
    h = relay.nn.relu(relay.nn.conv2d(h, w2, padding=(1, 1)))
    h = relay.nn.conv2d(h, w3, padding=(1, 1), groups=32)
    out = relay.nn.global_avg_pool2d(relay.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2)))
    rng = np.random.default_rng(0)
    params = {n: rng.standard_normal(s).astype("float32") * 0.3
              for n, s in (("w1", (24, 3, 3, 3)), ("w2", (32, 24, 3, 3)), ("w3", (32, 1, 3, 3)))}
    return relay.IRModule.from_expr(relay.Function([x, w1, w2, w3], out)), params, {
        "x": rng.standard_normal((1, 3, 12, 12)).astype("float32")}


def _mlp():
    mod, params = mlp(batch_size=4, in_features=40, hidden=48, num_classes=10)
    return mod, params, {"data": np.random.default_rng(1).standard_normal((4, 40)).astype(
        "float32")}


def _int8_dense():
    x = relay.var("x", shape=(5, 36), dtype="uint8")
    w = relay.const(np.random.default_rng(2).integers(-128, 128, (20, 36)).astype("int8"))
    out = relay.qnn.dense(x, w, relay.const(3), relay.const(-1), relay.const(0.5),
                          relay.const(0.25))
    mod = relay.IRModule.from_expr(relay.Function([x], out))
    return mod, {}, {"x": np.random.default_rng(3).integers(0, 256, (5, 36)).astype("uint8")}


WORKLOADS = {"conv_net": _conv_net, "mlp": _mlp, "int8_dense": _int8_dense}


def _run_graph(mod, params, inputs, target):
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)
    m = relay.graph_executor.GraphModule(lib)
    for k, v in inputs.items():
        m.set_input(k, v)
    m.run()
    return m.get_output(0), lib


@needs_cc
@x86
@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("target", ["cpu -mcpu=native", HASWELL])
def test_kernels_for_each_cpu_equal_the_numpy_target(workload, target):
    mod, params, inputs = WORKLOADS[workload]()
    expected, _ = _run_graph(mod, params, inputs, "numpy")
    got, lib = _run_graph(mod, params, inputs, target)
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, expected)
    if workload == "conv_net":  # the convolutions run in the machine table's block
        block = Target.parse(target).machine().nchwc_block
        assert f"NCHW{block}c" in lib.ir_mod.astext(show_meta_data=False)


@needs_cc
@x86
def test_vm_and_aot_run_haswell_kernels():
    mod, params, inputs = _mlp()
    expected, _ = _run_graph(mod, params, inputs, "numpy")
    exe = relay.vm.compile(mod, target=HASWELL, params=params)
    got = relay.vm.VirtualMachine(exe).invoke("main", inputs["data"])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-6)
    lib = relay.build(mod, target=HASWELL, params=params, executor="aot")
    assert "-march=haswell" in lib.sources.cflags
    a = relay.runtime.executor.AotModule(lib)
    a.set_input("data", inputs["data"])
    a.run()
    np.testing.assert_allclose(a.get_output(0), expected, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------------ no AVX-512 in the code


def _instructions(lib) -> str:
    if shutil.which("objdump") is None:
        pytest.skip("needs objdump to read the object's instructions")
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib.library.path)],
                          capture_output=True, text=True, check=True).stdout


@needs_cc
@x86
def test_haswell_code_has_no_avx512():
    mod, params, inputs = _conv_net()
    _, lib = _run_graph(mod, params, inputs, HASWELL)
    source = lib.get_lib().get_source()
    assert "vector_size(16 * sizeof(float))" not in source  # 8-float (ymm) tiles
    assert "vector_size(8 * sizeof(float))" in source
    text = _instructions(lib.get_lib())
    assert "%ymm" in text
    assert "%zmm" not in text and "{%k" not in text  # no 512-bit or mask registers


@needs_cc
@x86
def test_haswell_int8_products_take_the_avx2_path():
    mod, params, inputs = _int8_dense()
    _, lib = _run_graph(mod, params, inputs, HASWELL)
    text = _instructions(lib.get_lib())
    assert "vpmaddwd" in text  # Machine.int8 == "avx2": 16-bit products, no VNNI
    assert "vpdpbusd" not in text and "%zmm" not in text


# ------------------------------------------------------------------ a CPU this one lacks


def _foreign_cpu() -> tuple[str, list[str]] | None:
    """A -march name whose instruction sets this host partly lacks, and those sets."""
    from relayir.codegen.march import march_info

    for name in ("sapphirerapids", "alderlake", "icelake-server", "cascadelake",
                 "skylake-avx512", "haswell"):
        info = march_info(name)
        if info.macros is not None and missing_features(info.macros):
            return name, missing_features(info.macros)
    return None


@needs_cc
@x86
def test_a_cpu_this_host_cannot_run_is_refused_not_sigill():
    found = _foreign_cpu()
    if found is None:
        pytest.skip("this CPU runs every -march the test knows")
    name, lacking = found
    mod, params, inputs = _mlp()
    target = f"cpu -mcpu={name}"
    with pytest.raises(BuildError, match=f"uses {lacking[0]}.*which this CPU lacks"):
        relay.build(mod, target=target, params=params)
    with pytest.raises(BuildError, match="which this CPU lacks"):
        relay.vm.compile(mod, target=target, params=params)
    # an AOT library may be built for another CPU; its entry point refuses to run here
    a = relay.runtime.executor.AotModule(relay.build(mod, target=target, params=params,
                                                     executor="aot"))
    a.set_input("data", inputs["data"])
    with pytest.raises(AotError, match=rf"compiled \(-march={name}\) for a CPU with "
                                       rf"{lacking[0]}, which this CPU lacks"):
        a.run()


# ------------------------------------------------------------------ caches


@needs_cc
@x86
def test_the_caches_keep_haswell_and_native_builds_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("RELAYIR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(MCPU_ENV, raising=False)
    mod, params, inputs = _mlp()
    _, native = _run_graph(mod, params, inputs, "cpu")
    monkeypatch.setenv(MCPU_ENV, "haswell")  # the same string, another CPU
    _, haswell = _run_graph(mod, params, inputs, "cpu")
    _, again = _run_graph(mod, params, inputs, "cpu")
    paths = {lib.get_lib().library.path for lib in (native, haswell, again)}
    assert len(paths) == 2 and again.get_lib().library.path == haswell.get_lib().library.path
    assert "vector_size(8 * sizeof(float))" in haswell.get_lib().get_source()
    assert len(list((tmp_path / "lib").glob("model-*.so"))) == 2
    assert len(list((tmp_path / "lowered").glob("*.json"))) == 2


# ------------------------------------------------------------------ assembly


@needs_cc
@x86
def test_the_assembly_of_a_haswell_build_uses_its_instructions():
    """``get_source("asm")``: what the compiler makes of the library's C with its flags
    (AVX2 ``ymm`` registers for haswell, never AVX-512's ``zmm``)."""
    mod, params, inputs = _mlp()
    _, lib = _run_graph(mod, params, inputs, HASWELL)
    kernels = lib.get_lib()
    asm = kernels.get_source("asm")
    assert "ymm" in asm and "zmm" not in asm
    assert kernels.get_source() == kernels.get_source("c") and "#pragma" in kernels.get_source()
    with pytest.raises(relay.Error, match="fmt must be 'c' or 'asm'"):
        kernels.get_source("ll")
