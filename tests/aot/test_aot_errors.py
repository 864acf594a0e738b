"""Bad use of the AOT executor gets clear errors: dynamic shapes (use the VM), kernels that
only have a numpy reference, the numpy target, a null input pointer, a library built for
another CPU, a file that is not an AOT library."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import relayir as relay
from relayir.backend.aot_codegen import AotBuildError
from relayir.op import algorithm as A
from relayir.runtime.executor import AotError, AotLibrary, read_aot_meta


def _build(mod, **kw):
    with relay.transform.PassContext(opt_level=3):
        return relay.build(mod, executor="aot", **{"target": "cpu", **kw})


def _add_module(shape=(4,)):
    x = relay.var("x", shape=shape, dtype="float32")
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(1.0))))


def test_dynamic_shape_points_to_the_vm():
    x = relay.var("x", shape=(relay.Any(), 4), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with pytest.raises(AotBuildError, match=r"static shapes only, but input %x has type .* "
                                            r"dimension 0 .*relayir\.vm\.compile"):
        _build(mod)


def test_control_flow_points_to_the_vm():
    x = relay.var("x", shape=(4,), dtype="float32")
    c = relay.var("c", shape=(), dtype="bool")
    body = relay.If(c, relay.nn.relu(x), relay.negative(x))
    with pytest.raises(AotBuildError, match=r"executor=\"aot\" compiles the graph executor's "
                                            r"static schedule: .*If.*VM"):
        _build(relay.IRModule.from_expr(relay.Function([x, c], body)))


def test_reference_only_kernel_is_named():
    x = relay.var("x", shape=(3, 6), dtype="float32")
    body = relay.nn.relu(A.topk(x, k=2, axis=1, ret_type="values"))
    with pytest.raises(AotBuildError, match=r"can only run their numpy reference: "
                                            r"fused_topk\w* \(ops: topk"):
        _build(relay.IRModule.from_expr(relay.Function([x], body)))


def test_numpy_target_and_bad_names_are_refused():
    with pytest.raises(AotBuildError, match="needs target \"cpu\".*found 'numpy'"):
        _build(_add_module(), target="numpy")
    with pytest.raises(AotBuildError, match="mod_name 'my model'"):
        _build(_add_module(), mod_name="my model")
    with pytest.raises(relay.backend.BuildError, match="executor='tvm'"):
        relay.build(_add_module(), target="cpu", executor="tvm")


def test_null_input_pointer_names_the_input():
    library = _build(_add_module()).get_lib()
    out = np.zeros(4, "float32")
    outs = (ctypes.c_void_p * 1)(out.ctypes.data)
    assert library.run((ctypes.c_void_p * 1)(None), outs) != 0
    assert library.last_error() == 'relayir_run: input 0 ("x") is NULL'
    assert library.run(None, outs) != 0
    assert "inputs is NULL" in library.last_error()


def test_library_for_another_cpu_is_refused_before_loading(tmp_path):
    lib = _build(_add_module(), mod_name="other")
    lib.export_library(tmp_path / "model.so")
    cpu = read_aot_meta(tmp_path / "model.so")["cpu"]
    data = (tmp_path / "model.so").read_bytes()
    assert data.count(f'"cpu": "{cpu}"'.encode()) == 1
    (tmp_path / "model.so").write_bytes(data.replace(cpu.encode(), b"0" * len(cpu)))
    with pytest.raises(AotError, match="compiled \\(-march=native\\) for another CPU"):
        relay.runtime.load_module(tmp_path / "model.so")


def test_files_that_are_not_aot_libraries(tmp_path):
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/libm.so.6")
                 if os.path.exists(p)), None)
    if libm is not None:
        with pytest.raises(AotError, match="no relayir_aot section"):
            AotLibrary(libm)
    (tmp_path / "short.so").write_bytes(b"\x7fELF\x02\x01")
    with pytest.raises(AotError, match="not a readable ELF shared library"):
        relay.runtime.load_module(tmp_path / "short.so")
    with pytest.raises(AotError, match="a source archive \\('model.tar'\\)"):
        _build(_add_module()).export_library(tmp_path / "model.zip")


def _cpu_flags() -> set:
    """The CPU's feature flags in ``__builtin_cpu_supports``' spelling (``/proc/cpuinfo``
    writes ``avx512_fp16``, ``avx_vnni``, ``sse4_1``, ``pni``, ``bmi1``)."""
    cpuinfo = Path("/proc/cpuinfo").read_text() if os.path.exists("/proc/cpuinfo") else ""
    line = next((x for x in cpuinfo.splitlines() if x.startswith("flags")), "")
    names = {"pni": "sse3", "sse4_1": "sse4.1", "sse4_2": "sse4.2", "bmi1": "bmi"}
    return {names.get(f, f.replace("_", "")) for f in line.partition(":")[2].split()}


def test_missing_instruction_set_is_an_error_not_sigill(tmp_path):
    """The sources compiled for a CPU feature this one lacks: the entry point refuses
    to run (before any kernel) and names a feature this CPU lacks — the first it checks,
    which on an AVX2 machine is avx512f for a build with -mavx512fp16."""
    from relayir.backend.aot_codegen import ISAS

    flags = _cpu_flags()
    lacking = [name for _, name in ISAS if name not in flags]
    if not flags or not lacking or shutil.which("make") is None:
        pytest.skip("needs make and a CPU that lacks an instruction set the check knows")
    lib = _build(_add_module())
    lib.export_library(f"{tmp_path / 'src'}/")
    cflags = " ".join(lib.sources.cflags) + f" -m{lacking[-1]}"
    done = subprocess.run(["make", "-C", str(tmp_path / "src"), f"CFLAGS={cflags}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"the compiler does not take -m{lacking[-1]}: {done.stderr[-300:]}")
    m = relay.runtime.executor.AotModule(AotLibrary(tmp_path / "src" / "model.so"))
    with pytest.raises(AotError, match="compiled \\(-march=[a-z0-9.-]+\\) for a CPU with "
                                       "([a-z0-9.]+), which this CPU lacks") as err:
        m.run(x=np.ones(4, "float32"))
    named = str(err.value).split("for a CPU with ")[1].split(",")[0]
    assert named in lacking, (named, lacking)


def test_get_output_before_a_run_is_an_error_and_outputs_have_names():
    from relayir.runtime.executor import AotModule

    m = AotModule(_build(_add_module()))
    with pytest.raises(AotError, match=r"no run has completed"):
        m.get_output(0)
    m.run(x=np.arange(4, dtype="float32"))
    name = m.library.outputs[0].name
    np.testing.assert_array_equal(m.get_output(name), np.arange(4) + 1)
    with pytest.raises(AotError, match="no output named 'nope'"):
        m.get_output("nope")
