"""``compile``: a Relay module → an ``Executable`` of VM bytecode.

Pipeline: bind params, type-check, ``build``'s ``optimize`` (``transform.pipeline``
with any tuned convolution algorithms; FuseOps makes the primitive functions),
``ToANormalForm``, ``LambdaLift``, type-check again; then every global reachable from
``@main`` is compiled to bytecode and every primitive function it calls is lowered to
one kernel by ``backend.lowering.lower``, as ``build`` does.

Dynamic shapes: a primitive function whose type has ``Any`` / symbolic dims gets its
``Any`` dims named (``shape_func.name_any_dims``) and compiles to ONE kernel for every
shape (loop bounds in the kernel's ``dims``). Its call is ``InvokeShapeFunc`` (the output
shapes from the input shapes, ``shape_func.py``), ``AllocTensorReg`` per dynamic output,
then ``InvokePacked``; a function that only reshapes its input is ``ReshapeTensor`` (a
view), one that is ``shape_of`` its input is ``ShapeOf``. A data-dependent function
(``dyn.*`` ops) is ``InvokeDataDependent``: it returns fresh outputs; on the cpu target
from a C kernel compiled at run time for the call's shape values (``specialize.py``),
else (no static form, or the numpy target) from its numpy reference. On the cpu target
a dynamic function the C backend cannot lower runs through its numpy reference.

References: ``RefCreate`` / ``RefRead`` / ``RefWrite`` on ``runtime.values.RefValue``
cells, the reference interpreter's values; a write's result is ``()`` (which liveness
drops when nothing reads it).

Registers: one per let-bound value / temporary, no reuse yet. Parameters occupy the
first registers; a closure's function takes its captured values first, then its own
parameters (Relay's convention).
"""

from __future__ import annotations

import numpy as np

from ..backend import lowering
from ..backend.build_module import bind_param_arrays, optimize
from ..backend.target import Target
from ..errors import Error
from ..ir.adt import (
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
    short_text,
)
from ..ir.module import IRModule
from ..ir.types import TensorType, TupleType
from ..transform.lambda_lift import LambdaLift
from ..transform.to_a_normal_form import ToANormalForm
from ..typing.infer import infer_module
from .bytecode import Instruction, Opcode, VMFunction
from .executable import Executable
from .liveness import optimize_functions
from .shape_func import (
    DIM_RANGES,
    ShapeFunction,
    is_data_dependent,
    is_dynamic,
    name_any_dims,
    parse_dim_ranges,
)
from .specialize import why_not_specialisable


class VMCompileError(Error):
    """The VM compiler cannot compile this module (yet)."""


# kinds of primitive functions; RESHAPE and SHAPE_OF need no kernel
STATIC, DYNAMIC, DATA_DEPENDENT = "static", "dynamic", "data-dependent"
RESHAPE, SHAPE_OF = "reshape", "shape_of"
_RESHAPES = frozenset(("reshape", "squeeze", "expand_dims", "nn.batch_flatten"))


def _only_op_of_param(fn: Function, names) -> bool:
    """Is the body one call of an op in ``names`` on the one tensor parameter?"""
    body = fn.body
    return (len(fn.params) == 1 and isinstance(fn.params[0].checked_type, TensorType)
            and type(body) is Call and type(body.op) is Op and body.op.name in names
            and len(body.args) == 1 and body.args[0] is fn.params[0])


def _ins(op, *args) -> Instruction:
    return Instruction(op, tuple(args))


class _ModuleCompiler:
    def __init__(self, mod: IRModule):
        self.mod = mod
        self.func_index: dict[str, int] = {}
        self.functions: list = []  # VMFunction, filled in order of func_index
        self.pending: list[GlobalVar] = []
        self.constants: list = []
        self.const_index: dict = {}
        self.kernel_index: dict = {}  # primitive Function (by id) -> index
        self.primitives: list = []  # (name, Function)
        self.kinds: list = []  # per kernel: STATIC, DYNAMIC, DATA_DEPENDENT, RESHAPE, SHAPE_OF
        self.shape_funcs: list = []  # ShapeFunction per dynamic kernel
        self.shape_func_index: dict = {}  # kernel index -> shape function index
        self.constructors: list = []
        self.ctor_index: dict = {}
        self.messages: list[str] = []

    # -- tables
    def global_index(self, gv: GlobalVar) -> int:
        name = gv.name_hint
        if name not in self.func_index:
            if name not in self.mod:
                raise VMCompileError(f"unknown global @{name}")
            self.func_index[name] = len(self.func_index)
            self.functions.append(None)
            self.pending.append(self.mod.get_global_var(name))
        return self.func_index[name]

    def is_closure_global(self, gv: GlobalVar) -> bool:
        body = self.mod[gv.name_hint].body
        return type(body) is Function and bool(body.attrs.get("Closure"))

    def constant(self, c: Constant) -> int:
        key = id(c)
        if key not in self.const_index:
            self.const_index[key] = len(self.constants)
            self.constants.append(c.data)
        return self.const_index[key]

    def kernel(self, fn: Function) -> int:
        key = id(fn)
        if key not in self.kernel_index:
            k = self.kernel_index[key] = len(self.primitives)
            name = f"vm_fused_{k}"
            if _only_op_of_param(fn, ("shape_of",)):
                kind = SHAPE_OF
            elif is_data_dependent(fn):
                kind = DATA_DEPENDENT
            elif is_dynamic(fn):
                kind = RESHAPE if _only_op_of_param(fn, _RESHAPES) else DYNAMIC
                fn = name_any_dims(fn)
                self.shape_func_index[k] = len(self.shape_funcs)
                self.shape_funcs.append(ShapeFunction(name, fn))
            else:
                kind = STATIC
            self.primitives.append((name, fn))
            self.kinds.append(kind)
        return self.kernel_index[key]

    def constructor(self, c: Constructor) -> int:
        key = (c.belong_to.name_hint, c.name_hint)
        if key not in self.ctor_index:
            self.ctor_index[key] = len(self.constructors)
            self.constructors.append(c)
        return self.ctor_index[key]

    def message(self, text: str) -> int:
        self.messages.append(text)
        return len(self.messages) - 1

    # -- driver
    def run(self, entry: str = "main") -> None:
        self.global_index(self.mod.get_global_var(entry))
        while self.pending:
            gv = self.pending.pop()
            fn = self.mod[gv.name_hint]
            idx = self.func_index[gv.name_hint]
            self.functions[idx] = _FunctionCompiler(self, gv.name_hint, fn).compile()


class _FunctionCompiler:
    def __init__(self, mc: _ModuleCompiler, name: str, fn: Function):
        self.mc = mc
        self.name = name
        self.fn = fn
        self.code: list = []
        self.num_regs = 0
        self.env: dict = {}  # Var -> register
        self.prim_vars: dict = {}  # Var -> primitive Function

    def new_reg(self) -> int:
        self.num_regs += 1
        return self.num_regs - 1

    def emit(self, op, *args) -> int:
        self.code.append(_ins(op, *args))
        return len(self.code) - 1

    def compile(self) -> VMFunction:
        fn = self.fn
        closure = type(fn.body) is Function and bool(fn.body.attrs.get("Closure"))
        params = list(fn.params) + (list(fn.body.params) if closure else [])
        for p in params:
            self.env[p] = self.new_reg()
        body = fn.body.body if closure else fn.body
        result = self.expr(body)
        self.emit(Opcode.Ret, result)
        types = tuple(p.checked_type if p.has_type else p.type_annotation for p in params)
        return VMFunction(self.name, tuple(p.name_hint for p in params), types, self.code,
                          self.num_regs, closure, parse_dim_ranges(fn.attrs.get(DIM_RANGES)))

    # -- expressions: each returns the register holding its value
    def expr(self, e) -> int:
        t = type(e)
        if t is Let:
            while type(e) is Let:
                v = e.value
                if type(v) is Function and v.is_primitive:
                    self.prim_vars[e.var] = v
                else:
                    self.env[e.var] = self.expr(v)
                e = e.body
            return self.expr(e)
        if t is Var:
            try:
                return self.env[e]
            except KeyError:
                raise VMCompileError(f"@{self.name}: unbound variable %{e.name_hint}") from None
        if t is Constant:
            r = self.new_reg()
            self.emit(Opcode.LoadConst, r, self.mc.constant(e))
            return r
        if t is Tuple:
            fields = tuple(self.expr(f) for f in e.fields)
            r = self.new_reg()
            self.emit(Opcode.AllocADT, r, -1, fields)
            return r
        if t is TupleGetItem:
            obj = self.expr(e.tuple_value)
            r = self.new_reg()
            self.emit(Opcode.GetField, r, obj, e.index)
            return r
        if t is GlobalVar:
            if self.mc.is_closure_global(e):
                raise VMCompileError(f"@{e.name_hint} allocates a closure; call it")
            r = self.new_reg()
            self.emit(Opcode.AllocClosure, r, self.mc.global_index(e), ())
            return r
        if t is Constructor:
            if e.inputs:
                raise VMCompileError(f"constructor {e.name_hint} used as a function value")
            r = self.new_reg()
            self.emit(Opcode.AllocADT, r, self.mc.constructor(e), ())
            return r
        if t is Call:
            return self.call(e)
        if t is If:
            return self.if_(e)
        if t is Match:
            return self.match(e)
        if t is RefCreate or t is RefRead:
            src = self.expr(e.value if t is RefCreate else e.ref)
            r = self.new_reg()
            self.emit(Opcode.RefCreate if t is RefCreate else Opcode.RefRead, r, src)
            return r
        if t is RefWrite:
            ref, src = self.expr(e.ref), self.expr(e.value)
            r = self.new_reg()  # gets Relay's unit, (), as the interpreter's
            self.emit(Opcode.RefWrite, ref, src, r)
            return r
        if t is Function:
            raise VMCompileError(
                f"@{self.name}: a local function survived LambdaLift: {short_text(e)}")
        raise VMCompileError(f"the VM does not support {t.__name__} yet: {short_text(e)}")

    def call(self, e: Call) -> int:
        op = e.op
        if type(op) is Function and op.is_primitive:
            return self.invoke_packed(op, e)
        if type(op) is Var and op in self.prim_vars:
            return self.invoke_packed(self.prim_vars[op], e)
        if type(op) is Op:
            raise VMCompileError(f"operator {op.name} outside a primitive function (run FuseOps)")
        args = tuple(self.expr(a) for a in e.args)
        r = self.new_reg()
        if type(op) is Constructor:
            self.emit(Opcode.AllocADT, r, self.mc.constructor(op), args)
        elif type(op) is GlobalVar:
            idx = self.mc.global_index(op)
            if self.mc.is_closure_global(op):
                self.emit(Opcode.AllocClosure, r, idx, args)
            else:
                self.emit(Opcode.Invoke, idx, args, r)
        else:
            clo = self.expr(op)
            self.emit(Opcode.InvokeClosure, clo, args, r)
        return r

    def flat_inputs(self, reg: int, ty, out: list) -> None:
        if isinstance(ty, TupleType):
            for i, f in enumerate(ty.fields):
                r = self.new_reg()
                self.emit(Opcode.GetField, r, reg, i)
                self.flat_inputs(r, f, out)
        else:
            out.append(reg)

    def alloc_outputs(self, ty, outs: list, shapes: int | None = None) -> int:
        """Allocate a kernel's (flat) outputs, in ``outs``; returns the register of the
        value of type ``ty``. A dynamic output takes its shape from field ``len(outs)``
        of the register ``shapes`` (``InvokeShapeFunc``'s result)."""
        if isinstance(ty, TupleType):
            fields = tuple(self.alloc_outputs(f, outs, shapes) for f in ty.fields)
            r = self.new_reg()
            self.emit(Opcode.AllocADT, r, -1, fields)
            return r
        if not isinstance(ty, TensorType):
            raise VMCompileError(f"a kernel output must be a tensor, found {ty}")
        r = self.new_reg()
        if all(isinstance(d, (int, np.integer)) for d in ty.shape):
            self.emit(Opcode.AllocTensor, r, tuple(int(d) for d in ty.shape), ty.dtype)
        else:
            shape = self.new_reg()
            self.emit(Opcode.GetField, shape, shapes, len(outs))
            self.emit(Opcode.AllocTensorReg, r, shape, ty.dtype)
        outs.append(r)
        return r

    def fields_of(self, ty, reg: int, flat: list) -> int:
        """The value of type ``ty`` from a tuple of flat tensors (``InvokeDataDependent``)."""
        if isinstance(ty, TupleType):
            fields = tuple(self.fields_of(f, reg, flat) for f in ty.fields)
            r = self.new_reg()
            self.emit(Opcode.AllocADT, r, -1, fields)
            return r
        r = self.new_reg()
        self.emit(Opcode.GetField, r, reg, len(flat))
        flat.append(r)
        return r

    def invoke_packed(self, fn: Function, e: Call) -> int:
        ins: list = []
        for a in e.args:
            self.flat_inputs(self.expr(a), a.checked_type, ins)
        ins = tuple(ins)
        mc = self.mc
        k = mc.kernel(fn)
        kind = mc.kinds[k]
        if kind == SHAPE_OF:
            r = self.new_reg()
            self.emit(Opcode.ShapeOf, r, ins[0], fn.body.attrs.dtype)
            return r
        if kind == DATA_DEPENDENT:
            values = self.new_reg()
            self.emit(Opcode.InvokeDataDependent, k, ins, values)
            return self.fields_of(fn.body.checked_type, values, [])
        shapes = None
        if kind in (DYNAMIC, RESHAPE):
            shapes = self.new_reg()
            self.emit(Opcode.InvokeShapeFunc, mc.shape_func_index[k], ins, shapes)
            if kind == RESHAPE:
                shape, r = self.new_reg(), self.new_reg()
                self.emit(Opcode.GetField, shape, shapes, 0)
                self.emit(Opcode.ReshapeTensor, r, ins[0], shape)
                return r
        outs: list = []
        result = self.alloc_outputs(fn.body.checked_type, outs, shapes)
        self.emit(Opcode.InvokePacked, k, ins, tuple(outs))
        return result

    def if_(self, e: If) -> int:
        cond = self.expr(e.cond)
        one = self.new_reg()
        self.emit(Opcode.LoadConsti, one, 1)
        result = self.new_reg()
        at_if = self.emit(Opcode.If, cond, one, 1, 0)
        self.emit(Opcode.Move, result, self.expr(e.true_branch))
        at_goto = self.emit(Opcode.Goto, 0)
        false_start = len(self.code)
        self.emit(Opcode.Move, result, self.expr(e.false_branch))
        end = len(self.code)
        self.code[at_if] = _ins(Opcode.If, cond, one, 1, false_start - at_if)
        self.code[at_goto] = _ins(Opcode.Goto, end - at_goto)
        return result

    # -- match: clauses tried in order; each pattern is a GetTag / If decision sequence
    def match(self, e: Match) -> int:
        data = self.expr(e.data)
        result = self.new_reg()
        end_jumps = []
        for clause in e.clauses:
            fails: list[int] = []
            self.pattern(clause.lhs, data, fails)
            self.emit(Opcode.Move, result, self.expr(clause.rhs))
            end_jumps.append(self.emit(Opcode.Goto, 0))
            nxt = len(self.code)
            for at in fails:  # a failed test jumps to the next clause
                test, target, _, _ = self.code[at].args
                self.code[at] = _ins(Opcode.If, test, target, 1, nxt - at)
        self.emit(Opcode.Fatal, self.mc.message(
            f"@{self.name}: no clause matches in {short_text(e)}"))
        end = len(self.code)
        for at in end_jumps:
            self.code[at] = _ins(Opcode.Goto, end - at)
        return result

    def pattern(self, p, reg: int, fails: list) -> None:
        t = type(p)
        if t is PatternWildcard:
            return
        if t is PatternVar:
            self.env[p.var] = reg
            return
        if t is PatternConstructor:
            tag = self.new_reg()
            self.emit(Opcode.GetTag, tag, reg)
            want = self.new_reg()
            self.emit(Opcode.LoadConsti, want, p.constructor.tag)
            fails.append(self.emit(Opcode.If, tag, want, 1, 0))
        elif t is not PatternTuple:
            raise VMCompileError(f"unknown pattern {t.__name__}")
        for i, sub in enumerate(p.patterns):
            if type(sub) is PatternWildcard:
                continue
            field = self.new_reg()
            self.emit(Opcode.GetField, field, reg, i)
            self.pattern(sub, field, fails)


def _lower(mc: _ModuleCompiler, target: Target) -> tuple[list, object]:
    """``(kernels by index, their library or None)``, through the one lowering path
    (``backend.lowering.lower``, as ``build`` uses). Reshape-only and ``shape_of``
    functions get no kernel (``None``); data-dependent ones are compiled at run time for
    the shape values each call brings (``specialize.py``: C), or run their numpy
    reference where no static form exists (an op whose result shape is its data's)."""
    kernels: list = [None] * len(mc.primitives)
    wanted = [k for k, kind in enumerate(mc.kinds) if kind in (DATA_DEPENDENT, STATIC, DYNAMIC)]
    if not wanted:
        return kernels, None
    reference = [mc.primitives[k][0] for k in wanted if mc.kinds[k] == DATA_DEPENDENT]
    lib = lowering.lower([mc.primitives[k] for k in wanted], target, reference=reference,
                         dynamic=True)
    for k in wanted:
        name, fn = mc.primitives[k]
        kernels[k] = lib[name]
        if target.kind != "cpu":
            continue
        # reason "": no reference, C compiled per call signature at run time
        if mc.kinds[k] == DATA_DEPENDENT:
            why = why_not_specialisable(fn)
            kernels[k].reason = f"{why} (the VM runs its reference)" if why else ""
        elif mc.kinds[k] == DYNAMIC and getattr(kernels[k], "reason", "").startswith(
                lowering.CANNOT_LOWER) and not why_not_specialisable(fn):
            kernels[k].reason = ""  # C at each call's static shapes
    return kernels, lib


def compile(mod, target: str = "numpy", params: dict | None = None) -> Executable:  # noqa: A001
    """Relay's ``vm.compile``: compile every global reachable from ``@main``."""
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise VMCompileError(f"vm.compile takes an IRModule, found {type(mod).__name__}")
    target = Target.parse(target)
    target.check_runs_here()  # an unknown -mcpu, or one this CPU cannot run: before any work
    if params:
        mod = bind_param_arrays(mod, params)
    mod = mod.copy()
    infer_module(mod)
    mod = optimize(mod, target=target)  # build's pipeline, tuned conv algorithms included
    mod = ToANormalForm()(mod)
    mod = LambdaLift()(mod)
    mod = mod.copy()
    infer_module(mod)
    mc = _ModuleCompiler(mod)
    mc.run("main")
    mc.functions = optimize_functions(mc.functions)  # liveness.py: register/storage reuse
    kernels, lib = _lower(mc, target)
    for k, i in mc.shape_func_index.items():  # numpy kernels broadcast at run time
        mc.shape_funcs[i].native = kernels[k] is not None and bool(kernels[k].dim_names)
    names = [name for name, _ in mc.primitives]
    return Executable(mc.functions, mc.constants, kernels, names, mc.constructors,
                      mc.messages, lib, str(target), mc.shape_funcs)


__all__ = ["VMCompileError", "compile"]
