"""The VM's opcode table (``vm/opcodes.py``): every opcode has an entry, every reader
(disassembler, liveness, decoder, load-time validation) covers every opcode and role,
bad operands in a saved file are refused, and an operand added to an entry reaches
every reader without another edit."""

import inspect
import json
import re
import zipfile

import numpy as np
import pytest

import relayir as relay
from relayir.ir.types import GlobalTypeVar
from relayir.runtime.module import ModuleFormatError
from relayir.testing.prelude_text import parse_with_prelude
from relayir.vm import bytecode, decode, interpreter, serialize
from relayir.vm.bytecode import Instruction, VMFunction, format_instruction
from relayir.vm.executable import Executable
from relayir.vm.liveness import defs_uses, optimize_function, successors
from relayir.vm.opcodes import (
    DST,
    IMM,
    JUMP,
    ROLES,
    SRC,
    SRCS,
    Opcode,
    OpcodeSpec,
)

# one valid instruction of every opcode, in a function of 10 registers that the
# decoder and the load-time validation accept (jumps land inside it)
SAMPLES = [
    (Opcode.AllocStorage, (5, 1024, 64, 0)),
    (Opcode.AllocTensor, (0, (2, 3), "float32", 5, 0)),
    (Opcode.AllocTensor, (1, (4,), "int64")),
    (Opcode.Move, (2, 1)),
    (Opcode.Invoke, (0, (2, 3), 4)),
    (Opcode.InvokeClosure, (4, (1,), 2)),
    (Opcode.InvokePacked, (0, (1, 2), (3,))),
    (Opcode.AllocADT, (0, -1, (1, 2))),
    (Opcode.AllocADT, (2, 1, (0, 1))),
    (Opcode.AllocClosure, (0, 0, (3, 4))),
    (Opcode.GetField, (0, 1, 2)),
    (Opcode.GetTag, (0, 1)),
    (Opcode.If, (0, 1, 1, 2)),
    (Opcode.Goto, (1,)),
    (Opcode.LoadConst, (0, 0)),
    (Opcode.LoadConsti, (0, -7)),
    (Opcode.KillRegister, ((1, 2), (2,))),
    (Opcode.KillRegister, ((3,),)),
    (Opcode.InvokeShapeFunc, (0, (1, 2), 3)),
    (Opcode.AllocTensorReg, (0, 1, "float32")),
    (Opcode.ReshapeTensor, (0, 1, 2)),
    (Opcode.InvokeDataDependent, (0, (0,), 2)),
    (Opcode.ShapeOf, (0, 1, "int64")),
    (Opcode.RefCreate, (0, 1)),
    (Opcode.RefRead, (0, 1)),
    (Opcode.RefWrite, (0, 1)),
    (Opcode.RefWrite, (0, 1, 6)),
    (Opcode.Fatal, (0,)),
    (Opcode.Ret, (3,)),
]


class _Named:
    def __init__(self, name: str, tag: int = 0):
        self.name = self.name_hint = name
        self.tag = tag
        self.belong_to = GlobalTypeVar("List")


class _Kernel:
    name = "k0"

    def call_unchecked(self, *arrays):
        return 0

    def evaluate(self, *arrays):
        return ()


def _sample_executable() -> Executable:
    fn = VMFunction("main", (), (), [Instruction(op, a) for op, a in SAMPLES], 10)
    return Executable([fn], [np.zeros(2, "float32")], [_Kernel()], ["k0"],
                      [_Named("Nil", 0), _Named("Cons", 1)], ["no match"],
                      shape_funcs=[_Named("sf0")])


def test_every_opcode_has_a_well_formed_entry():
    assert sorted(int(op) for op in Opcode) == list(range(len(Opcode)))
    for op in Opcode:
        spec = op.spec
        assert isinstance(spec, OpcodeSpec), op.name
        assert all(o.role in ROLES for o in spec.operands), op.name
        assert 0 < spec.required <= len(spec.operands) or not spec.operands, op.name
        assert bool(spec.optional_text) == (spec.required < len(spec.operands)), op.name
    assert {op for op, _ in SAMPLES} == set(Opcode)  # the samples cover every opcode


def test_every_reader_covers_every_role():
    exe = _sample_executable()
    assert set(bytecode._TEXT) == set(ROLES)
    assert set(decode._operand_decoders(exe, exe.constants)) == set(ROLES)
    fn = exe.functions[0]
    for op, args in SAMPLES:  # the validation knows each role (an unknown one raises)
        for operand, value in zip(op.spec.operands, args):
            assert serialize._operand_problem(operand.role, value, 0, fn, exe) is None, \
                (op.name, operand.name)


def test_disassembler_decoder_and_validation_cover_every_opcode():
    exe = _sample_executable()
    fn = exe.functions[0]
    text = str(exe.bytecode)
    assert len(text.splitlines()) == 3 + len(SAMPLES)
    for ins in fn.instructions:
        assert format_instruction(ins)  # without names too
    program = decode.decode(exe, exe.constants)
    assert len(program.plain[0]) == len(SAMPLES)
    assert all(len(t) == 5 and isinstance(t[0], int) for t in program.plain[0])
    serialize._validate("sample", exe)  # every sample is valid
    # the JSON form keeps every instruction as it was
    again = serialize._json_function(serialize._function_json(fn))
    assert again.instructions == fn.instructions


def test_the_interpreter_dispatches_every_opcode_and_variant():
    # the loop compares against module-level ints (speed): each code has one, used there
    loop = inspect.getsource(interpreter.VirtualMachine._run)
    names = {v: k for k, v in vars(interpreter).items()
             if re.fullmatch(r"_[A-Z_]+", k) and type(v) is int and "POOL" not in k}
    for code in [*Opcode, *decode.Variant]:
        assert int(code) in names, code.name
        assert re.search(rf"\b{names[int(code)]}\b", loop), code.name


def test_defs_uses_and_successors_follow_the_roles():
    for op, args in SAMPLES:
        ins = Instruction(op, args)
        defs, uses = defs_uses(ins)
        want_defs, want_uses = [], []
        for operand, value in zip(op.spec.operands, args):
            regs = list(value) if operand.role.many else [value]
            if operand.role.register == "def":
                want_defs += regs
            elif operand.role.register is not None:
                want_uses += regs
        assert (defs, uses) == (want_defs, want_uses), op.name
    assert successors(4, Instruction(Opcode.If, (0, 1, 1, 3))) == (5, 7)
    assert successors(4, Instruction(Opcode.Goto, (-2,))) == (2,)
    assert successors(4, Instruction(Opcode.Ret, (0,))) == ()
    assert successors(4, Instruction(Opcode.Fatal, (0,))) == ()
    assert successors(4, Instruction(Opcode.Move, (0, 1))) == (5,)


def test_a_synthetic_opcodes_roles_drive_defs_uses_renaming_and_successors():
    spec = OpcodeSpec.of("frob {out} {ins} {n} +{skip}", DST("out"), SRCS("ins"),
                         IMM("n"), JUMP("skip"), optional=(DST("extra"),),
                         optional_text=" extra {extra}")
    assert spec.defs_uses((3, (1, 2), 7, 2)) == ([3], [1, 2])
    assert spec.defs_uses((3, (1, 2), 7, 2, 9)) == ([3, 9], [1, 2])
    assert spec.clobbered((3, (1, 2), 7, 2, 9)) == [3, 9]
    rename = {1: 10, 2: 20, 3: 30, 9: 90}
    assert spec.renamed((3, (1, 2), 7, 2, 9), rename) == (30, (10, 20), 7, 2, 90)
    assert spec.renamed((3, (1, 2), 7, 2), rename) == (30, (10, 20), 7, 2)
    assert spec.successors(5, (3, (1,), 7, 2)) == (7, 6)  # its jump, then fall through
    assert spec.arities == (4, 5)
    with pytest.raises(ValueError, match="must name each"):
        OpcodeSpec.of("frob {out}", DST("out"), SRC("x"))  # x is not in the text
    with pytest.raises(ValueError, match="repeat"):
        OpcodeSpec.of("frob {x}", DST("x"), SRC("x"))


def test_an_operand_added_to_one_entry_reaches_every_reader(monkeypatch):
    # GetTag grows a register it reads: one edit to its table entry, and the
    # disassembler, liveness, renaming, decoder and load-time validation follow
    monkeypatch.setattr(Opcode.GetTag, "spec", OpcodeSpec.of(
        "get_tag {dst} {obj} via {via}", DST("dst"), SRC("obj"), SRC("via")))
    ins = Instruction(Opcode.GetTag, (0, 1, 4))
    assert format_instruction(ins) == "get_tag $r0 $r1 via $r4"
    assert defs_uses(ins) == ([0], [1, 4])
    assert ins.operand("via") == 4
    # r2 is read only by get_tag's new operand: liveness keeps it alive up to there
    code = [Instruction(Opcode.LoadConsti, (2, 5)), Instruction(Opcode.LoadConsti, (3, 1)),
            Instruction(Opcode.GetTag, (4, 0, 2)), Instruction(Opcode.Ret, (4,))]
    fn = optimize_function(VMFunction("f", ("p",), (None,), code, 5))
    tag = next(i for i in fn.instructions if i.op is Opcode.GetTag)
    first = fn.instructions[0]
    assert first.op is Opcode.LoadConsti and tag.operand("via") == first.operand("dst")
    exe = Executable([VMFunction("f", ("p",), (None,), [ins, Instruction(Opcode.Ret, (0,))],
                                 5)], [], [], [], [], [])
    program = decode.decode(exe, [])
    assert program.plain[0][0] == (int(Opcode.GetTag), 0, 1, 4, None)
    serialize._validate("f", exe)
    bad = Executable([VMFunction("f", ("p",), (None,), [Instruction(Opcode.GetTag, (0, 1, 9)),
                                                        Instruction(Opcode.Ret, (0,))], 5)],
                     [], [], [], [], [])
    with pytest.raises(ModuleFormatError, match="operand via: registers \\[9\\] out of range"):
        serialize._validate("f", bad)


# ---------------------------------------------------------------- saved files

PROGRAM = """
def @main(%c: bool, %x: Tensor[(2), float32]) {
  let %r = if (%c) { add(%x, 1f) } else {
    match (Cons(%x, Nil)) { Cons(%h, _) => %h, Nil => %x }
  };
  (%r, 2f)
}"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    exe = relay.vm.compile(parse_with_prelude(PROGRAM), target="numpy")
    path = tmp_path_factory.mktemp("opcodes") / "good.relayvm"
    exe.save(path)
    return path


def _with_operand(src, dst, opcode: str, operand: str | None, value):
    """A copy of ``src`` whose first ``opcode`` instruction has ``operand`` set to
    ``value`` (``None``: one extra operand appended)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "meta.json":
                meta = json.loads(data)
                row = next(r for f in meta["functions"] for r in f["instructions"]
                           if r[0] == opcode)
                if operand is None:
                    row.append(value)
                else:
                    row[1 + Opcode[opcode].spec.index[operand]] = value
                data = json.dumps(meta).encode()
            zout.writestr(name, data)


BAD_OPERANDS = {
    "register": ("Move", "src", 99, "operand src: registers \\[99\\] out of range"),
    "register list": ("AllocADT", "fields", [1, 99], "registers \\[99\\] out of range"),
    "not a list": ("AllocADT", "fields", 3, "expected a tuple of registers"),
    "kernel": ("InvokePacked", "kernel", 7, "kernels index 7 out of range"),
    "constant": ("LoadConst", "const", 5, "constants index 5 out of range"),
    "constructor": ("AllocADT", "ctor", -2, "constructors index -2 out of range"),
    "message": ("Fatal", "message", 3, "messages index 3 out of range"),
    "jump": ("Goto", "offset", 1000, "jump offset 1000 leaves the function"),
    "backward jump": ("If", "false", -1000, "jump offset -1000 leaves the function"),
    "immediate": ("GetField", "index", "x", "operand index: expected an int"),
    "dtype": ("AllocTensor", "dtype", "float77", "expected a dtype name"),
    "shape": ("AllocTensor", "shape", [2, -1], "expected a shape"),
    "arity": ("Move", None, 3, "3 operands, expected 2"),
}


@pytest.mark.parametrize("case", sorted(BAD_OPERANDS))
def test_a_bad_operand_in_a_saved_file_is_refused_at_load(saved, tmp_path, case):
    opcode, operand, value, message = BAD_OPERANDS[case]
    path = tmp_path / "bad.relayvm"
    _with_operand(saved, path, opcode, operand, value)
    with pytest.raises(ModuleFormatError, match=f"\\({opcode}\\): .*{message}"):
        Executable.load(path)


def test_the_saved_program_loads_and_runs(saved):
    exe = Executable.load(saved)
    x = np.array([1.0, 2.0], "float32")
    vm = relay.vm.VirtualMachine(exe)
    for c, want in ((True, x + 1), (False, x)):
        r, two = vm.run(np.array(c), x)
        np.testing.assert_array_equal(r, want)
        assert two == 2.0
