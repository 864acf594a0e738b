"""``VirtualMachine``: runs an ``Executable``'s bytecode.

The dispatch loop runs over pre-decoded instructions (``(opcode, a, b, c, d)`` tuples
of plain Python objects), with one register list per frame and an explicit frame stack:
a Relay call pushes a frame, ``Ret`` pops it (a call in tail position replaces the
frame instead), so Relay recursion never recurses in Python and a tail-recursive loop
runs in constant memory.

Speed (see ``benchmarks/vm.py``; the instruction variants are chosen in ``decode.py``):

- inputs are checked (dtype, shape, C-contiguous) once, when a function is entered
  from Python; every other tensor a kernel sees was allocated by the VM from the static
  type it was compiled against, so kernels are called without checks;
- a C kernel's ``InvokePacked`` owns a ctypes pointer array. An operand that is
  surely a given constant there (set earlier in its basic block) has its address
  written once, at decode time; one that is surely a given planned view, once per arena
  (``_ViewBinding``: only recursion, which gives each activation its own arena, rewrites
  them). For other operands that hold the same objects run after run (parameters:
  ``liveness.stable_registers``) it remembers the array it last passed and rewrites only
  an address that changed; the rest's addresses are taken per call and their arrays not
  kept, so nothing outlives its last use (kernels with symbolic dims also get their
  dims array refreshed from the shapes);
- a straight run of ``LoadConst`` / planned ``AllocTensor`` / C kernel calls whose
  pointers are all fixed is one dispatch making the calls back to back, as the graph
  executor does (``decode._chain``); a straight run of ``LoadConst`` / ``AllocTensor``
  ending in any other C kernel call is one dispatch too (``decode._fold``);
- a private tensor (``liveness.private_tensors``) without planned storage, e.g. of a
  dynamic shape, goes back to a pool keyed by (shape, dtype) when ``KillRegister`` names
  it pooled, and ``AllocTensor`` / ``AllocTensorReg`` take from that pool first;
- ``AllocStorage`` binds its register to a buffer of the frame's *arena* (kept per
  function and reused by every later call), and ``AllocTensor`` on a storage register
  and offset (``liveness.py`` plans them for tensors that only kernels ever see)
  returns a view the arena made once: a static model allocates nothing but its result
  after the first run, and the pointer arrays never change. The decoder resolves each
  storage register to the one ``AllocStorage`` that binds it (a function where one is
  bound twice is refused).
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np

from ..ir.types import TensorType, TupleType
from ..runtime.tensors import aligned_array, check_tensor_input
from ..runtime.values import ConstructorValue, RefValue
from .decode import Variant, VMError, address, decode
from .opcodes import Opcode
from .shape_func import bind_input_dims
from .trace import TRACE, TraceRecorder, VMTrace, traced_code

# dispatch codes as plain ints in module globals: what the loop compares ``op`` against
# fastest (an enum member, or an attribute lookup, costs more on every check)
_MOVE = int(Opcode.Move)
_RET = int(Opcode.Ret)
_INVOKE = int(Opcode.Invoke)
_INVOKE_CLOSURE = int(Opcode.InvokeClosure)
_INVOKE_PACKED = int(Opcode.InvokePacked)
_ALLOC_TENSOR = int(Opcode.AllocTensor)
_ALLOC_ADT = int(Opcode.AllocADT)
_ALLOC_CLOSURE = int(Opcode.AllocClosure)
_GET_FIELD = int(Opcode.GetField)
_GET_TAG = int(Opcode.GetTag)
_IF = int(Opcode.If)
_GOTO = int(Opcode.Goto)
_LOAD_CONST = int(Opcode.LoadConst)
_LOAD_CONSTI = int(Opcode.LoadConsti)
_FATAL = int(Opcode.Fatal)
_KILL = int(Opcode.KillRegister)
_SHAPE_FUNC = int(Opcode.InvokeShapeFunc)
_ALLOC_TENSOR_REG = int(Opcode.AllocTensorReg)
_RESHAPE_TENSOR = int(Opcode.ReshapeTensor)
_DATA_DEPENDENT = int(Opcode.InvokeDataDependent)
_SHAPE_OF = int(Opcode.ShapeOf)
_ALLOC_STORAGE = int(Opcode.AllocStorage)
_REF_CREATE = int(Opcode.RefCreate)
_REF_READ = int(Opcode.RefRead)
_REF_WRITE = int(Opcode.RefWrite)
_PACKED_C = int(Variant.PackedC)
_PACKED_C_DIMS = int(Variant.PackedCDims)
_ALLOC_SLOT = int(Variant.AllocSlot)
_PACKED_RUN = int(Variant.PackedRun)
_TAIL_INVOKE = int(Variant.TailInvoke)
_TAIL_INVOKE_CLOSURE = int(Variant.TailInvokeClosure)
_PACKED_CHAIN = int(Variant.PackedChain)
_TRACE = TRACE  # a traced run's marker (trace.py); never in the code a normal run runs
_POOL_DEPTH = 4   # buffers kept per (shape, dtype): more are left to the GC
_POOL_KEYS = 256  # shapes kept; past this (many lengths seen) the pool starts over


class VMClosure:
    """A closure: a VM function index and its captured values."""

    __slots__ = ("func", "env")

    def __init__(self, func: int, env: tuple):
        self.func = func
        self.env = env

    def __repr__(self) -> str:
        return f"<vm closure of function {self.func}, {len(self.env)} captured>"


class VirtualMachine:
    """Runs an ``Executable``: ``invoke(name, *args)``, ``run(*args)``,
    ``set_input(name, *args, **kwargs)`` then ``invoke(name)``, ``benchmark(...)``,
    ``profile(...)``."""

    def __init__(self, exe, device=None):
        self.exe = exe
        # kernels read constants through raw pointers: C-contiguous and 64-byte aligned
        # (as the graph executor's params are: vector loads stay within cache lines)
        constants = [_aligned(c) if isinstance(c, np.ndarray) else c
                     for c in exe.constants]
        program = decode(exe, constants)
        # plain: one dispatch per instruction (the profiler's view); code: runs folded
        self._plain_code = program.plain
        self.code = program.code
        self._arena_factories = program.arena_factories
        self._arenas: list[list] = [[] for _ in exe.functions]  # free arenas per function
        self.num_regs = [f.num_regs for f in exe.functions]
        self._inputs: dict[str, list] = {}
        # dead private tensors by (shape, dtype), reused by AllocTensor(Reg): a dynamic
        # model allocates nothing new at a shape it has run before
        self._pool: dict[tuple, list] = {}
        self._profile = None  # {id(decoded instruction): [seconds, count]}: profiler.py
        # calls of a C kernel that ran the function's numpy reference instead (a dynamic
        # dim of 1 the kernel would read as the equal dim), by kernel name: reported,
        # never silent (``KernelLibrary.references`` lists the static ones)
        self.reference_runs: Counter = Counter()

    # -- entry points
    def _function(self, name: str):
        exe = self.exe
        if name not in exe.func_index:
            raise VMError(f"the executable has no function @{name}")
        idx = exe.func_index[name]
        fn = exe.functions[idx]
        if fn.closure:
            raise VMError(f"@{name} is a closure's body; it cannot be invoked by name")
        return idx, fn

    def set_input(self, func_name: str = "main", *args, **kwargs) -> None:
        """Check and keep the inputs of ``func_name`` (positional, then by parameter
        name); ``invoke(func_name)`` without arguments then runs on them."""
        _, fn = self._function(func_name)
        names = list(fn.param_names)
        values = list(args)
        if len(values) > len(names):
            raise VMError(f"@{func_name} takes {len(names)} inputs, found {len(values)}")
        for n in names[len(values):]:
            if n not in kwargs:
                raise VMError(f"@{func_name}: missing input {n}")
            values.append(kwargs.pop(n))
        if kwargs:
            raise VMError(f"@{func_name} has no inputs named {', '.join(kwargs)}; its inputs "
                          f"are {', '.join(names)}")
        self._inputs[func_name] = self._checked(func_name, fn, values)

    def invoke(self, name: str = "main", *args):
        idx, fn = self._function(name)
        if not args and fn.param_names:
            if name not in self._inputs:
                raise VMError(f"@{name} takes {len(fn.param_names)} inputs, found 0 (call "
                              f"set_input({name!r}, ...) first or pass them)")
            return self._run(idx, list(self._inputs[name]))
        return self._run(idx, self._checked(name, fn, args))

    def run(self, *args):
        return self.invoke("main", *args)

    @staticmethod
    def _checked(name: str, fn, args) -> list:
        if len(args) != len(fn.param_names):
            raise VMError(f"@{name} takes {len(fn.param_names)} inputs, found {len(args)}")
        checked = [_check_arg(f"{n} of @{name}", t, a)
                   for n, t, a in zip(fn.param_names, fn.param_types, args)]
        bind_input_dims(f"@{name}", fn.param_names, fn.param_types, checked, fn.dim_ranges)
        return checked

    # -- measuring
    def benchmark(self, func_name: str = "main", *args, number: int = 10, repeat: int = 3,
                  min_repeat_ms: float = 0.0, warmup: int = 1, **kwargs):
        """Time ``invoke(func_name)`` like ``GraphModule.benchmark`` (milliseconds; a
        ``BenchmarkResult`` with median / min / max). Inputs: as ``set_input`` takes
        them, or those already set."""
        from ..runtime.graph_executor import time_runs

        if number < 1 or repeat < 1:
            raise VMError(f"number and repeat must be >= 1, found {number}, {repeat}")
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        idx, _ = self._function(func_name)
        inputs = self._inputs.get(func_name, [])
        for _ in range(max(warmup, 1)):
            self.invoke(func_name)
        run = self._run
        return time_runs(lambda: run(idx, list(inputs)), number, repeat, min_repeat_ms)

    def profile(self, *args, func_name: str = "main", number: int = 1, **kwargs):
        """Run ``func_name`` ``number`` times, timing every instruction; returns a
        ``VMProfileReport`` (time per kernel and per opcode; ``print`` it)."""
        from .profiler import profile

        return profile(self, func_name, args, kwargs, number)

    def trace(self, *args, func_name: str = "main", limit: int = 100_000,
              **kwargs) -> VMTrace:
        """Run ``func_name`` once (inputs as ``set_input`` takes them, or those already
        set), recording each instruction it executes with the registers it wrote, their
        values summarised (``trace.py``): a ``VMTrace`` of the first ``limit`` steps,
        with the run's result. The run dispatches one instruction at a time, as the
        profiler's does; untraced runs are not slowed."""
        idx, fn = self._function(func_name)
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        elif fn.param_names and func_name not in self._inputs:
            raise VMError(f"@{func_name} takes {len(fn.param_names)} inputs, found 0")
        recorder = TraceRecorder(self.exe, limit, VMClosure)
        normal, self.code = self.code, traced_code(self._plain_code, recorder)
        try:
            result = self._run(idx, list(self._inputs.get(func_name, [])))
        finally:
            self.code = normal
        return recorder.finish(result)

    # -- the dispatch loop
    def _run(self, func: int, args: list):
        codes = self.code
        nregs = self.num_regs
        arenas = self._arenas
        pool = self._pool
        code = codes[func]
        regs = args + [None] * (nregs[func] - len(args))
        free = arenas[func]
        arena = free.pop() if free else self._take_arena(func)
        pc = 0
        stack: list = []  # (code, regs, arena, func, pc to resume at, destination register)
        prof = self._profile
        if prof is not None:
            clock = time.perf_counter
            last, t_last = None, clock()
        while True:
            ins = code[pc]
            if prof is not None:
                now = clock()
                if last is not None:
                    _tick(prof, last, now - t_last)
                last, t_last = id(ins), now
            op, a, b, c, d = ins
            if op == _PACKED_CHAIN:  # the hot opcodes first: an if/elif chain
                binding, skip = d
                if binding is not None and arena is not binding.arena:
                    binding.bind(arena)
                for r, x in b:
                    regs[r] = x
                if c:
                    views = arena.views
                    for r, k in c:
                        regs[r] = views[k]
                for f in a:
                    if f():
                        self._kernel_failed(f)
                pc += skip
            elif op == _PACKED_RUN:
                consts, slots, fresh, changing, skip = d
                for r, x in consts:
                    regs[r] = x
                if slots:
                    views = arena.views
                    for r, k in slots:
                        regs[r] = views[k]
                for r, shape, dtype in fresh:
                    free = pool.get((shape, dtype))
                    regs[r] = free.pop() if free else np.empty(shape, dtype)
                seen, ptrs, views, binding = c
                if views and arena is not binding.arena:
                    binding.bind(arena)
                for i, r in b:
                    x = regs[r]
                    if x is not seen[i]:
                        seen[i] = x
                        ptrs[i] = address(x)
                for i, r in changing:
                    ptrs[i] = address(regs[r])
                if a():
                    self._kernel_failed(a)
                pc += skip
            elif op == _PACKED_C:
                seen, ptrs, views, binding = c
                if views and arena is not binding.arena:
                    binding.bind(arena)
                for i, r in b:
                    x = regs[r]
                    if x is not seen[i]:
                        seen[i] = x
                        ptrs[i] = address(x)
                for i, r in d:
                    ptrs[i] = address(regs[r])
                if a():
                    self._kernel_failed(a)
                pc += 1
            elif op == _RET:
                value = regs[a]
                if arena is not None:
                    arenas[func].append(arena)
                if not stack:
                    if prof is not None:
                        _tick(prof, last, clock() - t_last)
                    return value
                code, regs, arena, func, pc, dst = stack.pop()
                regs[dst] = value
            elif op == _ALLOC_STORAGE:  # dst, nbytes, alignment, slot
                regs[a] = arena.buffers[d]
                pc += 1
            elif op == _ALLOC_SLOT:
                regs[a] = arena.views[b]
                pc += 1
            elif op == _ALLOC_TENSOR:
                free = pool.get((b, c))
                regs[a] = free.pop() if free else np.empty(b, c)
                pc += 1
            elif op == _KILL:
                for r in b:  # dead private tensors: their buffers serve later allocations
                    x = regs[r]
                    free = pool.get((x.shape, x.dtype))
                    if free is None:
                        if len(pool) >= _POOL_KEYS:
                            pool.clear()
                        pool[(x.shape, x.dtype)] = [x]
                    elif len(free) < _POOL_DEPTH:
                        free.append(x)
                for r in a:
                    regs[r] = None
                pc += 1
            elif op == _MOVE:
                regs[a] = regs[b]
                pc += 1
            elif op == _GET_FIELD:
                obj = regs[b]
                regs[a] = obj[c] if type(obj) is tuple else obj.fields[c]
                pc += 1
            elif op == _GET_TAG:
                regs[a] = regs[b].tag
                pc += 1
            elif op == _LOAD_CONSTI:
                regs[a] = b
                pc += 1
            elif op == _IF:
                pc += c if bool(regs[a] == regs[b]) else d
            elif op == _GOTO:
                pc += a
            elif op == _LOAD_CONST:
                regs[a] = b
                pc += 1
            elif op == _ALLOC_ADT:
                fields = tuple([regs[r] for r in c])
                regs[a] = fields if b is None else ConstructorValue(b.tag, fields, b)
                pc += 1
            elif op == _ALLOC_CLOSURE:
                regs[a] = VMClosure(b, tuple([regs[r] for r in c]))
                pc += 1
            elif op == _INVOKE:
                new = [regs[r] for r in b]
                new.extend([None] * (nregs[a] - len(new)))
                stack.append((code, regs, arena, func, pc + 1, c))
                func, code, regs, pc = a, codes[a], new, 0
                arena = self._take_arena(a)
            elif op == _INVOKE_CLOSURE:
                clo = regs[a]
                callee = clo.func
                new = list(clo.env)
                new.extend([regs[r] for r in b])
                new.extend([None] * (nregs[callee] - len(new)))
                stack.append((code, regs, arena, func, pc + 1, c))
                func, code, regs, pc = callee, codes[callee], new, 0
                arena = self._take_arena(callee)
            elif op in (_TAIL_INVOKE, _TAIL_INVOKE_CLOSURE):
                # the callee's result is this frame's: replace the frame instead of
                # stacking one, so a tail-recursive loop runs in constant memory
                if op == _TAIL_INVOKE:
                    callee, new = a, [regs[r] for r in b]
                else:
                    clo = regs[a]
                    callee, new = clo.func, list(clo.env)
                    new.extend([regs[r] for r in b])
                new.extend([None] * (nregs[callee] - len(new)))
                if arena is not None:  # its planned tensors are private: none is an argument
                    arenas[func].append(arena)
                func, code, regs, pc = callee, codes[callee], new, 0
                arena = self._take_arena(callee)
            elif op == _INVOKE_PACKED:
                status = a(*[regs[r] for r in b])
                if status:
                    raise VMError(f"kernel {c} failed with status {status}")
                pc += 1
            elif op == _PACKED_C_DIMS:
                arrays = [regs[r] for r in b]
                if a.shape_func is not None and a.shape_func.reference_next:
                    # a dim of 1 the kernel reads as equal dims: compiled for these
                    # shapes, or the reference where that fails (counted)
                    if a.run_reference(arrays):
                        self.reference_runs[a.name] += 1
                    pc += 1
                    continue
                ptrs = a.ptrs
                for i, x in enumerate(arrays):
                    ptrs[i] = address(x)
                a.refresh_dims(arrays)
                if a.call():
                    self._kernel_failed(a.call)
                pc += 1
            elif op == _SHAPE_FUNC:
                regs[c] = a(*[regs[r] for r in b])
                pc += 1
            elif op == _ALLOC_TENSOR_REG:
                shape = regs[b]
                free = pool.get((shape, c))
                regs[a] = free.pop() if free else np.empty(shape, c)
                pc += 1
            elif op == _RESHAPE_TENSOR:
                regs[a] = regs[b].reshape(regs[c])
                pc += 1
            elif op == _DATA_DEPENDENT:
                regs[c] = tuple(a.evaluate(*[regs[r] for r in b]))
                pc += 1
            elif op == _SHAPE_OF:
                regs[a] = np.array(regs[b].shape, c)
                pc += 1
            elif op == _REF_CREATE:  # the reference interpreter's cells: values compare
                regs[a] = RefValue(regs[b])
                pc += 1
            elif op == _REF_READ:
                regs[a] = regs[b].value
                pc += 1
            elif op == _REF_WRITE:
                regs[a].value = regs[b]
                if c is not None:
                    regs[c] = ()
                pc += 1
            elif op == _FATAL:
                raise VMError(a)
            elif op == _TRACE:  # last: only a traced run's code has markers
                a(b, c, regs)
                pc += 1
            else:
                raise VMError(f"unknown opcode {op}")

    def _take_arena(self, func: int):
        free = self._arenas[func]
        if free:
            return free.pop()
        make = self._arena_factories[func]
        return make() if make is not None else None

    def _kernel_failed(self, call) -> None:
        raise VMError(f"kernel {call.keep[2].name} returned an error status")

    @property
    def arena_bytes(self) -> int:
        """Bytes held by the storage arenas made so far (reused by every later run)."""
        return sum(a.nbytes for free in self._arenas for a in free)






def _tick(prof: dict, key: int, seconds: float) -> None:
    cell = prof.get(key)
    if cell is None:
        prof[key] = [seconds, 1]
    else:
        cell[0] += seconds
        cell[1] += 1










def _aligned(a: np.ndarray) -> np.ndarray:
    """``a`` itself when C-contiguous and 64-byte aligned, else such a copy."""
    if a.flags.c_contiguous and a.ctypes.data % 64 == 0:
        return a
    out = aligned_array(a.shape, a.dtype)
    np.copyto(out, a)
    return out


def _contiguous(a: np.ndarray) -> np.ndarray:
    """Kernels take raw pointers: a strided or misaligned array is copied once, on entry
    (``np.ascontiguousarray`` would turn a 0-d array into a 1-d one)."""
    if a.flags.c_contiguous and a.flags.aligned:
        return a
    return a.copy(order="C")


def _check_arg(name: str, ty, value):
    if isinstance(ty, TensorType):
        value = check_tensor_input(name, value, ty)
        return _contiguous(value)
    if isinstance(ty, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(ty.fields):
            raise VMError(f"input {name}: expected a tuple of {len(ty.fields)} fields, "
                          f"found {type(value).__name__}")
        return tuple(_check_arg(f"{name}[{i}]", t, v)
                     for i, (t, v) in enumerate(zip(ty.fields, value)))
    return value


__all__ = ["VMClosure", "VMError", "VirtualMachine"]
