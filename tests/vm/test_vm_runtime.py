"""The VM runtime: liveness (register reuse, planned storage, kills), the fast C kernel
call, serialisation, set_input / benchmark / profile. Results are checked against the
reference interpreter (numpy references) and against the VM with the pass turned off."""

import json
import os
import subprocess
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.values import values_equal
from relayir.testing.models import mlp
from relayir.testing.prelude_text import parse_with_prelude
from relayir.vm import Opcode
from relayir.vm.bytecode import Instruction, VMFunction
from relayir.vm.liveness import Liveness, optimize_function

TARGETS = ["numpy", "cpu"]


module = parse_with_prelude


def reference(mod, *args, params=None):
    return relay.create_executor("debug", mod, params=params).evaluate()(*args)


def compile_vm(mod, target, params=None, disabled=()):
    with relay.transform.PassContext(disabled_pass=list(disabled)):
        return relay.vm.compile(mod, target=target, params=params)


# ---------------------------------------------------------------- liveness

CHAIN_TEXT = """
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) {
  let %a = nn.dense(%x, %w);
  let %b = nn.relu(add(%a, 1f));
  let %c = nn.dense(%b, ones(shape=[5, 4], dtype="float32"));
  let %d = exp(%c);
  let %e = (%d, %a);
  %e.0
}"""

CHAIN_GOLDEN = """\
VM Function[0]: main($r0, $r1)
# reg file size = 5
# instruction count = 15
0: alloc_storage $r4 256 bytes align 64 slot 0
1: alloc_tensor $r2 [2, 4] float32
2: invoke_packed vm_fused_0 in($r0, $r1) out($r2)
3: alloc_tensor $r0 [2, 4] float32 storage $r4 offset 192
4: invoke_packed vm_fused_1 in($r2) out($r0)
5: alloc_tensor $r1 [5, 4] float32 storage $r4 offset 0
6: invoke_packed vm_fused_2 in() out($r1)
7: alloc_tensor $r3 [2, 5] float32 storage $r4 offset 128
8: invoke_packed vm_fused_3 in($r0, $r1) out($r3)
9: alloc_tensor $r0 [2, 5] float32
10: invoke_packed vm_fused_4 in($r3) out($r0)
11: alloc_tuple $r0 ($r0, $r2)
12: kill $r2
13: get_field $r0 $r0[0]
14: ret $r0
"""


def test_liveness_golden_registers_storage_and_kills():
    # %b, the ones and %c only ever reach kernels: views of the one planned storage ($r4,
    # bound on entry; %b and the ones are live together, so they sit at different
    # offsets); %a goes into a tuple and the result is returned: fresh tensors. Dead
    # parameters' registers are reused.
    exe = relay.vm.compile(module(CHAIN_TEXT), target="numpy")
    assert str(exe.bytecode) == CHAIN_GOLDEN, str(exe.bytecode)
    off = compile_vm(module(CHAIN_TEXT), "numpy", disabled=["VMLiveness"])
    assert off.functions[0].num_regs > exe.functions[0].num_regs
    assert "storage" not in str(off.bytecode) and "kill" not in str(off.bytecode)


@pytest.mark.parametrize("target", TARGETS)
def test_liveness_results_equal_reference_and_pass_off(target):
    mod = module(CHAIN_TEXT)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3), "float32"), rng.standard_normal((4, 3), "float32")
    want = reference(mod, x, w)
    for disabled in ((), ("VMStorageReuse",), ("VMLiveness",)):
        vm = relay.vm.VirtualMachine(compile_vm(mod, target, disabled=disabled))
        first = vm.run(x, w)
        second = vm.run(2 * x, w)  # arenas are reused: the first result must survive
        np.testing.assert_allclose(first, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(second, reference(mod, 2 * x, w), rtol=1e-5, atol=1e-6)


def _fn(code, nparams, nregs):
    return VMFunction("f", tuple(f"p{i}" for i in range(nparams)), (None,) * nparams,
                      [Instruction(op, tuple(a)) for op, *a in code], nregs)


def test_dataflow_liveness_over_branches():
    # r2 is defined before the branch and read only on the false path: it is live out of
    # the `if`, live into the false block, dead in the true block.
    fn = _fn([(Opcode.LoadConsti, 1, 1),          # 0
              (Opcode.LoadConsti, 2, 7),          # 1
              (Opcode.If, 0, 1, 1, 3),            # 2: true -> 3, false -> 5
              (Opcode.Move, 3, 0),                # 3
              (Opcode.Goto, 2),                   # 4 -> 6
              (Opcode.Move, 3, 2),                # 5
              (Opcode.Ret, 3)], 1, 4)             # 6
    live = Liveness(fn)
    assert live.live_out[2] == {0, 2}
    assert live.live_in[3] == {0} and live.live_in[5] == {2}
    assert live.live_in[6] == {3} and live.live_out[6] == set()
    out = optimize_function(fn)
    assert out.num_regs < fn.num_regs
    # `move $r3 $r0` is coalesced away; the branch offsets are re-aimed: true -> the goto
    # (-> ret), false -> the remaining move
    code = out.instructions
    ops = [ins.op for ins in code]
    i_if = ops.index(Opcode.If)
    true, false = (i_if + code[i_if].args[k] for k in (2, 3))
    assert ops[true] is Opcode.Goto and ops[true + code[true].args[0]] is Opcode.Ret
    assert ops[false] is Opcode.Move and false + 1 == len(code) - 1


@pytest.mark.slow
def test_liveness_of_a_100000_instruction_chain_is_iterative():
    n = 100_000
    code = [(Opcode.LoadConsti, 0, 1)] + [(Opcode.Move, i + 1, i) for i in range(n)]
    fn = _fn(code + [(Opcode.Ret, n)], 0, n + 1)
    out = optimize_function(fn)  # every move coalesces into one register
    assert out.num_regs == 1 and [i.op for i in out.instructions] == [Opcode.LoadConsti,
                                                                       Opcode.Ret]


RECURSIVE_TEXT = """
def @f(%n: int32, %x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  if (less_equal(%n, 0)) { %x } else {
    let %s = nn.softmax(multiply(%x, %x));
    let %r = @f(subtract(%n, 1), add(%x, 1f));
    add(multiply(%s, 3f), %r)
  }
}
def @main(%n: int32, %x: Tensor[(3), float32]) -> Tensor[(3), float32] { @f(%n, %x) }"""


@pytest.mark.parametrize("target", TARGETS)
def test_recursion_gets_one_arena_per_active_frame(target):
    # %s lives in planned storage across the recursive call: every active frame needs its
    # own copy of that storage, and frames returned are reused by the next run.
    mod = module(RECURSIVE_TEXT)
    exe = relay.vm.compile(mod, target=target)
    assert "alloc_storage" in exe.bytecode.function_text("f"), exe.bytecode.function_text("f")
    vm = relay.vm.VirtualMachine(exe)
    x = np.array([0.5, -1.0, 2.0], "float32")
    for n in (0, 1, 4, 7):
        want = reference(mod, np.array(n, "int32"), x)
        got = vm.run(np.array(n, "int32"), x)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_storage_reuse_lowers_peak_memory_and_allocates_nothing_after_the_first_run():
    x = relay.var("x", shape=(256, 256), dtype="float32")
    y = x
    for _ in range(8):  # a chain of non-fusable ops: 8 intermediate tensors
        y = relay.nn.softmax(y)
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    data = np.random.default_rng(1).standard_normal((256, 256), "float32")
    tensor = data.nbytes
    peaks = {}
    for disabled in ((), ("VMLiveness",)):
        vm = relay.vm.VirtualMachine(compile_vm(mod, "cpu", disabled=disabled))
        vm.set_input("main", data)
        tracemalloc.start()
        first = vm.invoke("main")
        peaks[disabled] = tracemalloc.get_traced_memory()[1]
        held = tracemalloc.get_traced_memory()[0]  # the arenas and the first result
        tracemalloc.reset_peak()
        second = vm.invoke("main")
        again = tracemalloc.get_traced_memory()[1] - held
        tracemalloc.stop()
        np.testing.assert_array_equal(first, second)
        if not disabled:
            assert again < 1.5 * tensor, again  # only the result is new
        else:  # no slots: the fast call keeps no intermediate alive after the run
            assert held < 1.5 * tensor, held  # the first result only
    assert peaks[()] < 4 * tensor < 7 * tensor < peaks[("VMLiveness",)], peaks


@pytest.mark.parametrize("target", TARGETS)
def test_dynamic_shapes_reuse_dead_private_tensors_from_the_pool(target):
    from relayir.ir.types import SymbolicDim, TensorType

    x = relay.var("x", TensorType((SymbolicDim("n"), 64), "float32"))
    y = x
    for _ in range(6):  # softmax does not fuse: 5 private intermediates, then the result
        y = relay.nn.softmax(y)
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], y)), target=target)
    assert "to pool" in str(exe.bytecode), str(exe.bytecode)
    vm = relay.vm.VirtualMachine(exe)
    for run, n in enumerate((300, 7, 300)):
        a = np.random.default_rng(n).standard_normal((n, 64)).astype("float32")
        want = a
        for _ in range(6):
            e = np.exp(want - want.max(axis=1, keepdims=True))
            want = e / e.sum(axis=1, keepdims=True)
        tracemalloc.start()
        got = vm.run(a)
        new = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if run == 2 and target == "cpu":  # the second run at 300: only the result is new
            assert new < 1.5 * a.nbytes, new  # (numpy kernels allocate temporaries)


# ---------------------------------------------------------------- the C kernel call


def test_fast_call_follows_new_input_arrays_and_odd_layouts():
    mod, params = mlp(batch_size=2, in_features=32, hidden=16)
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params))
    rng = np.random.default_rng(2)
    base = rng.standard_normal((32, 2), "float32")
    ro = np.ascontiguousarray(base.T)
    ro.flags.writeable = False
    for x in (base.T,                       # a transposed view: copied on entry
              ro,                           # read-only
              rng.standard_normal((2, 32), "float32"),
              rng.standard_normal((2, 32), "float32")):
        want = reference(mod, np.ascontiguousarray(x), params=params)
        np.testing.assert_allclose(vm.run(x), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- API


def test_set_input_invoke_benchmark_and_profile():
    mod, params = mlp(batch_size=2, in_features=32, hidden=16)
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params))
    x = np.random.default_rng(3).standard_normal((2, 32), "float32")
    want = reference(mod, x, params=params)
    with pytest.raises(relay.Error, match="set_input"):
        vm.invoke("main")
    vm.set_input("main", data=x)
    np.testing.assert_allclose(vm.invoke("main"), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(relay.Error, match="no inputs named nope"):
        vm.set_input("main", x, nope=x)
    with pytest.raises(relay.Error, match="input data of @main"):
        vm.set_input("main", x.astype("float64"))
    res = vm.benchmark("main", number=2, repeat=3)
    assert len(res.results) == 3 and res.min <= res.median <= res.max
    report = vm.profile(x, number=2)
    text = str(report)
    for name in vm.exe.kernel_names:
        assert name in text
    assert "InvokePacked" in text and "AllocTensor" in text
    packed = next(r for r in report.opcodes.rows if r.name == "InvokePacked")
    assert packed.calls == 2 * len(vm.exe.kernel_names)
    assert report.instructions == 2 * len(vm.exe.functions[0].instructions)


# ---------------------------------------------------------------- serialisation

LIST_TEXT = """
def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  %0 = Cons(%a, Cons(%b, Cons(%a, Nil)));
  %1 = @map(fn (%x: Tensor[(2), float32]) { multiply(%x, %b) }, %0);
  (@foldl(fn (%acc: Tensor[(2), float32], %x: Tensor[(2), float32]) { add(%acc, %x) },
          zeros(shape=[2], dtype="float32"), %1), %1)
}"""

_CHILD = """
import sys, time, numpy as np, relayir as relay
t = time.perf_counter()
exe = relay.vm.Executable.load(sys.argv[1])
load_ms = (time.perf_counter() - t) * 1e3
inputs = np.load(sys.argv[2], allow_pickle=False)
out = relay.vm.VirtualMachine(exe).run(*[inputs[k] for k in sorted(inputs.files)])
flat = []
stack = [out]
while stack:  # tuples and ADT values, flattened in order
    v = stack.pop()
    if isinstance(v, np.ndarray):
        flat.append(v)
    else:
        stack.extend(reversed(v if isinstance(v, tuple) else v.fields))
np.savez(sys.argv[3], *flat)
print(load_ms)
"""


def _flat(value) -> list:
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, np.ndarray):
            out.append(v)
        else:
            stack.extend(reversed(v if isinstance(v, tuple) else v.fields))
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("program", ["mlp", "list"])
def test_save_then_load_in_a_fresh_process_gives_identical_outputs(tmp_path, target, program):
    rng = np.random.default_rng(4)
    if program == "mlp":
        mod, params = mlp(batch_size=2, in_features=32, hidden=16)
        args = [rng.standard_normal((2, 32), "float32")]
    else:
        mod, params = module(LIST_TEXT), None
        args = [rng.standard_normal(2, "float32") for _ in range(2)]
    exe = relay.vm.compile(mod, target=target, params=params)
    want = _flat(relay.vm.VirtualMachine(exe).run(*args))
    path = tmp_path / "model.relayvm"
    exe.save(path)
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        assert not any(n.endswith((".pkl", ".pickle")) for n in names)
        assert ("lib.so" in names) == (target == "cpu")
    np.savez(tmp_path / "in.npz", **{f"a{i}": a for i, a in enumerate(args)})
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(tmp_path / "in.npz"),
                           str(tmp_path / "out.npz")], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONHASHSEED": "0"})
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "out.npz", allow_pickle=False) as got:
        got = [got[f"arr_{i}"] for i in range(len(got.files))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    loaded = relay.vm.Executable.load(path)
    assert str(loaded.bytecode) == str(exe.bytecode)


@pytest.mark.parametrize("target", TARGETS)
def test_save_then_load_a_dynamic_shape_executable(tmp_path, target):
    # shape functions and reshape-only kernels are saved as Relay text / null entries
    from relayir.ir.types import SymbolicDim, TensorType

    x = relay.var("x", TensorType((SymbolicDim("n"), 4), "float32"))
    y = relay.exp(x)
    body = relay.Tuple([relay.reshape(y, (-1,)), relay.sum(y, axis=0), relay.nn.relu(y)])
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], body)), target=target)
    assert exe.shape_funcs and any(k is None for k in exe.kernels)
    exe.save(tmp_path / "dyn.relayvm")
    loaded = relay.vm.Executable.load(tmp_path / "dyn.relayvm")
    assert str(loaded.bytecode) == str(exe.bytecode)
    for n in (1, 5):
        a = np.random.default_rng(n).standard_normal((n, 4)).astype("float32")
        want = relay.vm.VirtualMachine(exe).run(a)
        got = relay.vm.VirtualMachine(loaded).run(a)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def _rewrite(src, dst, edit_meta=None, drop=(), replace=None):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            if name in drop:
                continue
            data = zin.read(name)
            if name == "meta.json" and edit_meta is not None:
                meta = json.loads(data)
                edit_meta(meta)
                data = json.dumps(meta)
            if replace and name in replace:
                data = replace[name]
            zout.writestr(name, data)


def test_bad_files_are_clear_errors(tmp_path):
    mod, params = mlp(batch_size=2, in_features=32, hidden=16)
    exe = relay.vm.compile(mod, target="cpu", params=params)
    good = tmp_path / "good.relayvm"
    exe.save(good)
    load = relay.vm.Executable.load

    bad = tmp_path / "junk.relayvm"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(relay.Error, match="not a relayir VM executable archive"):
        load(bad)
    truncated = tmp_path / "truncated.relayvm"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(relay.Error, match="truncated or damaged relayir VM executable archive"):
        load(truncated)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="cpu", params=params)
    graph = tmp_path / "graph.relayir"
    lib.export_library(graph)
    with pytest.raises(relay.Error, match="expected 'relayir.vm_executable'"):
        load(graph)
    cases = {
        "newer": (lambda m: m.update(format_version=99), "version 99; this relayir reads"),
        "opcode": (lambda m: m["functions"][0]["instructions"][0].__setitem__(0, "Jump"),
                   "unknown opcode 'Jump'"),
        "kernel": (lambda m: m["functions"][0]["instructions"].__setitem__(
            1, ["InvokePacked", 7, [0], [1]]), "kernels index 7 out of range"),
        "register": (lambda m: m["functions"][0].update(num_regs=1), "out of range"),
    }
    for name, (edit, message) in cases.items():
        path = tmp_path / f"{name}.relayvm"
        _rewrite(good, path, edit_meta=edit)
        with pytest.raises(relay.Error, match=message):
            load(path)
    other_cpu = tmp_path / "cpu.relayvm"
    _rewrite(good, other_cpu, replace={"cpu.txt": b"some other machine"})
    with pytest.raises(relay.Error, match="another CPU"):
        load(other_cpu)
    no_consts = tmp_path / "noconst.relayvm"
    _rewrite(good, no_consts, drop=("constants.npz",))
    with pytest.raises(relay.Error, match="lacks constants.npz"):
        load(no_consts)


def test_save_is_atomic_and_leaves_no_temporary_files(tmp_path):
    exe = relay.vm.compile(module(LIST_TEXT), target="numpy")
    path = tmp_path / "a.relayvm"
    exe.save(path)
    exe.save(path)  # overwriting goes through a rename too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.relayvm"]
    a, b = np.ones(2, "float32"), np.arange(2, dtype="float32")
    assert values_equal(relay.vm.VirtualMachine(relay.vm.Executable.load(path)).run(a, b),
                        relay.vm.VirtualMachine(exe).run(a, b))


def test_kernel_calls_with_fixed_pointers_run_back_to_back():
    from relayir.vm.interpreter import _PACKED_CHAIN

    x = relay.var("x", shape=(4,), dtype="float32")
    y = relay.add(x, relay.const(1.0))
    for k in range(5):
        y = relay.multiply(relay.add(y, relay.const(float(k))), relay.const(0.5))
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    with relay.transform.PassContext(opt_level=0):  # one kernel per op
        vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu"))
    chains = [ins for ins in vm.code[0] if ins[0] == _PACKED_CHAIN]
    assert chains and max(len(ins[1]) for ins in chains) >= 5, vm.code[0]
    for seed in range(3):  # a new input array each run: the first call's pointer changes
        data = np.random.default_rng(seed).standard_normal(4).astype("float32")
        want = data + 1
        for k in range(5):
            want = (want + k) * 0.5
        np.testing.assert_allclose(vm.run(data), want, rtol=1e-6)


RECURSIVE_ARENAS = """
def @f(%x: Tensor[(3), float32], %n: int32) -> Tensor[(3), float32] {
  if (equal(%n, 0)) {
    %x
  } else {
    let %t = multiply(%x, 2f);
    let %z = @f(add(%x, 1f), subtract(%n, 1));
    add(%z, %t)
  }
}
def @main(%x: Tensor[(3), float32]) { @f(%x, 4) }
"""


def test_planned_views_follow_each_recursive_activation():
    """Each activation of @f has its own arena, and %t's planned view lives across the
    recursive call: the kernel after it must read the caller's arena, not the callee's."""
    mod = module(RECURSIVE_ARENAS)
    x = np.array([0.5, -1.0, 2.0], "float32")
    with relay.transform.PassContext(opt_level=0):  # %t stays a separate kernel's output
        exe = relay.vm.compile(mod, target="cpu")
    assert exe.storage_bytes() > 0
    vm = relay.vm.VirtualMachine(exe)
    want = reference(mod, x)
    for _ in range(2):
        np.testing.assert_allclose(vm.run(x), want, rtol=1e-6)
    assert len(vm._arenas[exe.func_index["f"]]) >= 4  # one per live activation
