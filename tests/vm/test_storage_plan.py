"""Planned storage in the VM: ``AllocStorage`` binds one arena buffer per function, and
tensors only kernels see are views at byte offsets packed by
``runtime.memory_plan.pack_offsets``. Checked against a brute-force lifetime walk over
the bytecode, the models' numpy references, and the VM with storage planning off."""

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.memory_plan import pack_offsets
from relayir.testing.models import get_workload, make_inputs
from relayir.vm import Opcode
from relayir.vm.liveness import defs_uses

SMALL = {  # workload -> knobs small enough for the numpy target in a test
    "mlp": {},
    "resnet18": {"image_size": 32, "num_classes": 10},
    "bert": {"seq_len": 8, "num_layers": 2, "hidden": 64, "intermediate": 128,
             "vocab": 100, "max_position": 16},
}


def compile_vm(mod, target, params=None, disabled=()):
    with relay.transform.PassContext(opt_level=3, disabled_pass=list(disabled)):
        return relay.vm.compile(mod, target=target, params=params)


def planned_lifetimes(fn) -> list[tuple[int, int, int, int]]:
    """``(first pc, last pc, offset, nbytes)`` of every view on planned storage, by
    walking a branch-free function: a view lives from its ``AllocTensor`` to the last
    instruction that reads its register before the register is written again. Also
    checks that only kernels (and kills) read such a register."""
    assert not any(i.op in (Opcode.If, Opcode.Goto) for i in fn.instructions), fn.name
    open_views: dict[int, list] = {}  # register -> [first, last, offset, nbytes]
    done = []
    for pc, ins in enumerate(fn.instructions):
        a = ins.args
        written, read = defs_uses(ins)
        if ins.op not in (Opcode.InvokePacked, Opcode.KillRegister):
            assert not set(read) & set(open_views), f"{fn.name} pc {pc}: a view escapes: {ins}"
        for r in read:
            if r in open_views:
                open_views[r][1] = pc
        for r in written:
            if r in open_views:
                done.append(tuple(open_views.pop(r)))
        if ins.op is Opcode.AllocTensor and len(a) > 3:
            nbytes = int(np.prod(a[1], dtype=np.int64)) * np.dtype(a[2]).itemsize
            open_views[a[0]] = [pc, pc, a[4], nbytes]
    return done + [tuple(v) for v in open_views.values()]


def peak_live_bytes(views) -> int:
    """Most bytes of views live at one instruction: no plan can use less."""
    last = max((v[1] for v in views), default=-1)
    return max((sum(n for lo, hi, _, n in views if lo <= pc <= hi)
                for pc in range(last + 1)), default=0)


@pytest.mark.parametrize("model", sorted(SMALL))
def test_views_live_at_the_same_time_never_overlap(model):
    mod, params, _ = get_workload(model, **SMALL[model])
    exe = compile_vm(mod, "numpy", params)
    main = exe.functions[exe.func_index["main"]]
    views = planned_lifetimes(main)
    assert views, "a static model plans its intermediates"
    storage = [i for i in main.instructions if i.op is Opcode.AllocStorage]
    assert len(storage) == 1 and main.instructions[0] is storage[0]  # once, on entry
    size = storage[0].args[1]
    for k, (lo, hi, off, n) in enumerate(views):
        assert off % 64 == 0 and off + n <= size
        for lo2, hi2, off2, n2 in views[k + 1:]:
            if lo <= hi2 and lo2 <= hi:  # live at the same time
                assert off + n <= off2 or off2 + n2 <= off, (views[k], (lo2, hi2, off2, n2))
    # packing reaches the bound up to each view's padding to 64 bytes
    padding = sum(-n % 64 for *_, n in views)
    assert peak_live_bytes(views) <= exe.storage_bytes() <= peak_live_bytes(views) + padding


def test_alloc_storage_in_the_disassembly_of_a_static_model():
    mod, params, _ = get_workload("mlp")
    exe = compile_vm(mod, "numpy", params)
    text = exe.bytecode.function_text("main").splitlines()
    entry = [t for t in text if t.startswith("0: ")][0]
    assert entry.startswith("0: alloc_storage $r") and "align 64 slot 0" in entry, text
    assert f" {exe.storage_bytes()} bytes" in entry
    storage_reg = entry.split()[2]
    assert any(f"storage {storage_reg} offset " in t for t in text), text
    off = compile_vm(mod, "numpy", params, disabled=["VMStorageReuse"])
    assert "alloc_storage" not in str(off.bytecode) and off.storage_bytes() == 0


@pytest.mark.parametrize("target,model", [("numpy", "resnet18"), ("numpy", "bert"),
                                          ("numpy", "mlp"), ("cpu", "mlp")])
def test_results_equal_the_reference_with_storage_planning_on_and_off(target, model):
    mod, params, reference = get_workload(model, **SMALL[model])
    inputs = make_inputs(model, mod)
    want = reference(params, *inputs.values())
    results = {}
    for disabled in ((), ("VMStorageReuse",)):
        vm = relay.vm.VirtualMachine(compile_vm(mod, target, params, disabled))
        first = vm.run(*inputs.values())
        again = vm.run(*inputs.values())  # the arena is reused: same answer
        np.testing.assert_array_equal(first, again)
        np.testing.assert_allclose(first, want, rtol=1e-4, atol=1e-4)
        results[disabled] = first
        assert (vm.arena_bytes > 0) == (not disabled)
    np.testing.assert_allclose(results[()], results[("VMStorageReuse",)], rtol=1e-5,
                               atol=1e-6)


DIAMOND_TEXT = """
def @main(%x: Tensor[(4, 8), float32]) {
  let %a = nn.softmax(%x);
  let %b = nn.softmax(%a);
  let %c = nn.softmax(reshape(%b, newshape=[8, 4]));
  let %d = nn.softmax(add(%a, reshape(%c, newshape=[4, 8])));
  nn.softmax(%d)
}"""


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_save_load_round_trip_keeps_the_storage_plan(tmp_path, target):
    mod = relay.parse(DIAMOND_TEXT)
    x = np.random.default_rng(0).standard_normal((4, 8), "float32")
    exe = compile_vm(mod, target)
    assert "alloc_storage" in str(exe.bytecode)
    path = tmp_path / "model.relayvm"
    exe.save(path)
    loaded = relay.vm.Executable.load(path)
    assert str(loaded.bytecode) == str(exe.bytecode)
    assert loaded.storage_bytes() == exe.storage_bytes() > 0
    want = relay.create_executor("debug", mod).evaluate()(x)
    for e in (exe, loaded):
        np.testing.assert_allclose(relay.vm.VirtualMachine(e).run(x), want, rtol=1e-5,
                                   atol=1e-6)


def test_a_view_outside_its_storage_is_refused():
    from relayir.vm.bytecode import Instruction, VMFunction
    from relayir.vm.executable import Executable

    def run(storage_bytes, offset):
        code = [Instruction(Opcode.AllocStorage, (1, storage_bytes, 64, 0)),
                Instruction(Opcode.AllocTensor, (0, (2, 4), "float32", 1, offset)),
                Instruction(Opcode.Ret, (1,))]
        fn = VMFunction("main", (), (), code, 2)
        return relay.vm.VirtualMachine(Executable([fn], [], [], [], [], [])).run()

    assert run(128, 64).nbytes == 128  # the storage register holds the arena's buffer
    with pytest.raises(relay.Error, match="does not fit storage"):
        run(64, 64)
    with pytest.raises(relay.Error, match="does not fit storage"):
        run(128, 32)  # not aligned


def test_pack_offsets_packs_disjoint_lifetimes_into_the_same_bytes():
    # 0 and 1 are live together; 2 with neither: it reuses the bytes of the larger one
    offsets, total = pack_offsets([100, 300, 250], {0: [1], 1: [0], 2: []}, 64)
    assert offsets[1] == 0 and offsets[0] == 320 and offsets[2] == 0 and total == 448
    # a small tensor fits in the gap its conflicts leave
    sizes = [256, 64, 64, 64]
    conflicts = {0: [], 1: [2, 3], 2: [1, 3], 3: [1, 2]}
    offsets, total = pack_offsets(sizes, conflicts, 64)
    assert total == 256 and len({offsets[1], offsets[2], offsets[3]}) == 3
