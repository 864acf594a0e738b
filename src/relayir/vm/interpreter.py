"""``VirtualMachine``: runs an ``Executable``'s bytecode.

The dispatch loop runs over pre-decoded instructions (``(opcode, a, b, c, d)`` tuples
of plain Python objects), with one register list per frame and an explicit frame stack:
a Relay call pushes a frame, ``Ret`` pops it (a call in tail position replaces the
frame instead), so Relay recursion never recurses in Python and a tail-recursive loop
runs in constant memory.

Speed (see ``benchmarks/vm.py``):

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
  executor does (``_Decoder.chain``); a straight run of ``LoadConst`` / ``AllocTensor``
  ending in any other C kernel call is one dispatch too (``_Decoder.fold``);
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

import ctypes
import functools
import time

import numpy as np

from ..errors import Error
from ..executor import check_tensor_arg
from ..ir.types import TensorType, TupleType
from ..runtime.graph_executor import _aligned_empty  # 64-byte aligned, as its storage
from ..runtime.values import ConstructorValue, RefValue
from .bytecode import Opcode
from .liveness import OPERANDS, defs_uses, stable_registers, successors
from .shape_func import bind_input_dims


class VMError(Error):
    """A run-time failure of the VM (a failed match, a failed kernel, a bad input)."""


class VMClosure:
    """A closure: a VM function index and its captured values."""

    __slots__ = ("func", "env")

    def __init__(self, func: int, env: tuple):
        self.func = func
        self.env = env

    def __repr__(self) -> str:
        return f"<vm closure of function {self.func}, {len(self.env)} captured>"


_MOVE, _RET, _INVOKE, _INVOKE_CLOSURE, _INVOKE_PACKED, _ALLOC_TENSOR, _ALLOC_ADT, \
    _ALLOC_CLOSURE, _GET_FIELD, _GET_TAG, _IF, _GOTO, _LOAD_CONST, _LOAD_CONSTI, _FATAL = \
    (int(Opcode[n]) for n in (
        "Move", "Ret", "Invoke", "InvokeClosure", "InvokePacked", "AllocTensor", "AllocADT",
        "AllocClosure", "GetField", "GetTag", "If", "Goto", "LoadConst", "LoadConsti",
        "Fatal"))
_KILL = int(Opcode.KillRegister)
_SHAPE_FUNC, _ALLOC_TENSOR_REG, _RESHAPE_TENSOR, _DATA_DEPENDENT, _SHAPE_OF = (
    int(Opcode.InvokeShapeFunc), int(Opcode.AllocTensorReg), int(Opcode.ReshapeTensor),
    int(Opcode.InvokeDataDependent), int(Opcode.ShapeOf))
_ALLOC_STORAGE = int(Opcode.AllocStorage)
_REF_CREATE, _REF_READ, _REF_WRITE = (
    int(Opcode.RefCreate), int(Opcode.RefRead), int(Opcode.RefWrite))
# decoded-only opcodes (never in bytecode): variants chosen once at decode time
_PACKED_C = 100        # C kernel: pointer array + last-seen arrays
_PACKED_C_DIMS = 101   # C kernel with symbolic dims
_ALLOC_SLOT = 102      # AllocTensor on planned storage: a view the frame's arena holds
_PACKED_RUN = 103      # LoadConst / AllocTensor ... then a C kernel, in one dispatch
_TAIL_INVOKE = 104     # Invoke whose result the function returns: reuses the frame
_TAIL_INVOKE_CLOSURE = 105
_PACKED_CHAIN = 106    # C kernel calls with fixed pointers (and their operands' loads)
_POOL_DEPTH = 4        # buffers kept per (shape, dtype): more are left to the GC
_POOL_KEYS = 256       # shapes kept; past this (many lengths seen) the pool starts over

_addressof = ctypes.addressof
_char_at = ctypes.c_char.from_buffer


def _address(a: np.ndarray) -> int:
    # the buffer protocol is ~5x faster than ``a.ctypes.data`` but needs a writeable,
    # non-empty buffer; inputs and constants may be read-only
    if a.flags.writeable and a.nbytes:
        return _addressof(_char_at(a))
    return a.ctypes.data


class _PackedCall:
    """Per-instruction state of a C kernel call: its pointer array, its dims array, and
    ``seen``: the arrays last passed in the positions whose addresses are reused (kept
    alive while their addresses are in use)."""

    __slots__ = ("name", "call", "ptrs", "seen", "dims", "dim_sources")

    def __init__(self, kernel, n: int):
        function = kernel.function
        self.name = kernel.name
        self.ptrs = (ctypes.c_void_p * n)()
        self.seen = [None] * n
        self.dim_sources = _dim_sources(kernel)
        self.dims = (ctypes.c_int64 * max(len(self.dim_sources), 1))()
        ptrs_arg = ctypes.c_void_p(ctypes.addressof(self.ptrs))
        dims_arg = ctypes.c_void_p(ctypes.addressof(self.dims) if self.dim_sources else None)
        # c_void_p arguments pass through argtypes without conversion; a zero-argument
        # partial is the cheapest ctypes call there is
        self.call = functools.partial(function._cfunc, ptrs_arg, dims_arg)
        self.call.keep = (self.ptrs, self.dims, function)  # the partial may outlive self

    def refresh_dims(self, arrays) -> None:
        dims = self.dims
        for j, (pos, axis) in enumerate(self.dim_sources):
            dims[j] = arrays[pos].shape[axis]


def _dim_sources(kernel) -> tuple:
    """``(operand position, axis)`` giving each of a kernel's symbolic dims, in the
    order of its ``dim_names`` (the order of the C ``dims`` argument)."""
    names = list(getattr(kernel, "dim_names", None) or ())
    if not names:
        return ()
    where: dict = {}
    for pos, t in enumerate(tuple(kernel.input_types) + tuple(kernel.output_types)):
        for axis, d in enumerate(t.shape):
            if not isinstance(d, int):
                where.setdefault(getattr(d, "name", str(d)), (pos, axis))
    missing = [n for n in names if n not in where]
    if missing:
        raise VMError(f"kernel {kernel.name}: symbolic dims {missing} appear in no argument")
    return tuple(where[n] for n in names)


class _Arena:
    """The storage buffers of one activation of a function (``AllocStorage`` slots), and
    a view per planned ``AllocTensor`` (indexed as the decoded instruction says)."""

    __slots__ = ("buffers", "views")

    def __init__(self, storages: list[tuple[int, int]], allocs: list[tuple]):
        self.buffers = [_aligned_buffer(n, align) for n, align in storages]
        self.views = [self.buffers[slot][offset: offset + _nbytes(shape, dtype)]
                      .view(dtype).reshape(shape) for slot, offset, shape, dtype in allocs]

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self.buffers)


class _ViewBinding:
    """The arena whose planned views a function's pointer arrays hold: a call in
    another activation of the function (recursion) points them all at its own arena's."""

    __slots__ = ("arena", "targets")

    def __init__(self):
        self.arena = None
        self.targets: list = []  # (pointer array, ((position, view index), ...))

    def bind(self, arena) -> None:
        views = arena.views
        for ptrs, where in self.targets:
            for i, k in where:
                ptrs[i] = _address(views[k])
        self.arena = arena  # arenas live as long as the VM: the addresses stay valid


class _Decoder:
    """Turns one function's instructions into dispatch tuples (and its arena layout)."""

    def __init__(self, exe, constants):
        self.exe = exe
        self.constants = constants

    def function(self, fn) -> tuple[list, list, list]:
        code, storages, allocs = [], [], []
        stable = stable_registers(fn)
        bound = _storage_bindings(fn)  # storage register -> (slot, nbytes, alignment)
        for slot, nbytes, align in sorted(bound.values()):
            storages.extend([(0, 1)] * (slot + 1 - len(storages)))
            storages[slot] = (nbytes, align)
        targets = _jump_targets(fn)
        self.binding = _ViewBinding()
        known: dict = {}  # register -> ("const", index) / ("view", index), this block only
        for pc, ins in enumerate(fn.instructions):
            op, a = ins.op, ins.args
            if pc in targets:
                known.clear()
            if op is Opcode.InvokePacked:
                code.append(self.invoke_packed(ins, 0 if stable is None else stable[pc],
                                               known))
            elif op is Opcode.AllocTensor and len(a) > 3:
                code.append((_ALLOC_SLOT, a[0], len(allocs), None, None))
                allocs.append(_planned_view(fn, pc, bound))
            elif op is Opcode.AllocStorage:
                code.append((_ALLOC_STORAGE, a[0], a[3], None, None))
            else:
                code.append(self.instruction(ins))
            if op not in OPERANDS or successors(pc, ins) != (pc + 1,):
                known.clear()
                continue
            for r in defs_uses(ins)[0] if op is not Opcode.KillRegister else a[0]:
                known.pop(r, None)
            if op is Opcode.LoadConst:
                known[a[0]] = ("const", a[1])
            elif code[-1][0] == _ALLOC_SLOT:
                known[a[0]] = ("view", code[-1][2])
        return code, storages, allocs

    @staticmethod
    def chain(fn, code: list) -> list:
        """Fold each straight run of ``LoadConst`` / planned ``AllocTensor`` / C kernel
        calls whose every pointer is fixed (``invoke_packed``) into one dispatch: it sets
        the registers as the run leaves them, then makes the calls back to back, as the
        graph executor does (the run's instructions stay, reachable by no jump)."""
        targets = _jump_targets(fn)
        out = list(code)
        i, n = 0, len(code)
        while i < n:
            j, end = i, None
            while j < n and (j == i or j not in targets):
                op = code[j][0]
                if op == _PACKED_C and not code[j][2] and not code[j][4]:
                    end = j + 1
                elif op not in (_LOAD_CONST, _ALLOC_SLOT):
                    break
                j += 1
            if end is None:
                i = max(j, i + 1)
                continue
            final: dict = {}  # register -> the run's last (opcode, value) for it
            calls, binding = [], None
            for ins in code[i:end]:
                if ins[0] == _PACKED_C:
                    calls.append(ins[1])
                    if ins[3][2]:
                        binding = ins[3][3]
                else:
                    final[ins[1]] = (ins[0], ins[2])
            consts = tuple((r, v) for r, (op, v) in final.items() if op == _LOAD_CONST)
            slots = tuple((r, v) for r, (op, v) in final.items() if op == _ALLOC_SLOT)
            out[i] = (_PACKED_CHAIN, tuple(calls), consts, slots, (binding, end - i))
            i = end
        return out

    @staticmethod
    def fold(fn, code: list) -> list:
        """Fold each straight run of ``LoadConst`` / ``AllocTensor`` ending in a C
        kernel call into one dispatch that sets the same registers, then calls (the
        run's later instructions stay, reachable only by a jump, and no jump lands
        inside a folded run)."""
        targets = _jump_targets(fn)
        out = list(code)
        i, n = 0, len(code)
        while i < n:
            j = i
            while j < n and code[j][0] in (_LOAD_CONST, _ALLOC_SLOT, _ALLOC_TENSOR) and (
                    j == i or j not in targets):
                j += 1
            defined = [c[1] for c in code[i:j]]
            if j == i or j >= n or code[j][0] != _PACKED_C or j in targets or \
                    len(set(defined)) < len(defined):  # the fold sets them out of order
                i = max(j, i + 1)
                continue
            consts = tuple((c[1], c[2]) for c in code[i:j] if c[0] == _LOAD_CONST)
            slots = tuple((c[1], c[2]) for c in code[i:j] if c[0] == _ALLOC_SLOT)
            fresh = tuple((c[1], c[2], c[3]) for c in code[i:j] if c[0] == _ALLOC_TENSOR)
            _, call, kept, arrays, changing = code[j]
            out[i] = (_PACKED_RUN, call, kept, arrays,
                      (consts, slots, fresh, changing, j + 1 - i))
            i = j + 1
        return out

    def invoke_packed(self, ins, stable: int, known: dict) -> tuple:
        """A C kernel call's pointer array is filled at decode time for the operands
        that are surely a given constant here (``known``), and once per arena for those
        surely a given planned view; of the others, it keeps the arrays of the operands in
        ``stable`` (a bitset of registers holding constants, planned views or parameters:
        the same objects every run) to skip their address when unchanged; the rest's
        addresses are taken on every call, and their arrays are not kept alive."""
        a = ins.args
        kernel = self.exe.kernels[a[0]]
        operands = tuple(a[1]) + tuple(a[2])
        if not (hasattr(kernel, "function") and hasattr(kernel.function, "_cfunc")):
            # arrays come from typed AllocTensor and checked inputs
            return (_INVOKE_PACKED, kernel.call_unchecked, operands,
                    self.exe.kernel_names[a[0]], None)
        packed = _PackedCall(kernel, len(operands))
        if packed.dim_sources:
            return (_PACKED_C_DIMS, packed, operands, None, None)
        kept, changing, views = [], [], []
        for i, r in enumerate(operands):
            kind, index = known.get(r, (None, None))
            if kind == "const":
                packed.seen[i] = self.constants[index]  # kept alive with the call
                packed.ptrs[i] = _address(packed.seen[i])
            elif kind == "view":
                views.append((i, index))
            elif stable >> r & 1:
                kept.append((i, r))
            else:
                changing.append((i, r))
        if views:
            self.binding.targets.append((packed.ptrs, tuple(views)))
        state = (packed.seen, packed.ptrs, tuple(views), self.binding)
        return (_PACKED_C, packed.call, tuple(kept), state, tuple(changing))

    def instruction(self, ins) -> tuple:
        op, a = ins.op, ins.args
        exe = self.exe
        if op is Opcode.AllocTensor:
            return (_ALLOC_TENSOR, a[0], tuple(a[1]), np.dtype(a[2]), None)
        if op is Opcode.AllocADT:
            ctor = exe.constructors[a[1]] if a[1] >= 0 else None
            return (_ALLOC_ADT, a[0], ctor, tuple(a[2]), None)
        if op is Opcode.LoadConst:
            return (_LOAD_CONST, a[0], self.constants[a[1]], None, None)
        if op is Opcode.Fatal:
            return (_FATAL, exe.messages[a[0]], None, None, None)
        if op is Opcode.KillRegister:
            return (_KILL, tuple(a[0]), tuple(a[1]) if len(a) > 1 else (), None, None)
        if op is Opcode.InvokeShapeFunc:  # shape_func.py: output shapes, cached
            return (_SHAPE_FUNC, exe.shape_funcs[a[0]], tuple(a[1]), a[2], None)
        if op is Opcode.AllocTensorReg:
            return (_ALLOC_TENSOR_REG, a[0], a[1], np.dtype(a[2]), None)
        if op is Opcode.ShapeOf:
            return (_SHAPE_OF, a[0], a[1], np.dtype(a[2]), None)
        if op is Opcode.InvokeDataDependent:  # the kernel returns fresh outputs
            return (_DATA_DEPENDENT, exe.kernels[a[0]].evaluate, tuple(a[1]), a[2], None)
        args = tuple(tuple(x) if isinstance(x, list) else x for x in a)
        return (int(op),) + args + (None,) * (4 - len(args))


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
        decoder = _Decoder(exe, constants)
        decoded = [decoder.function(f) for f in exe.functions]
        # plain: one dispatch per instruction (the profiler's view); code: runs folded
        self._plain_code = [c for c, _, _ in decoded]
        self.code = [_tail_calls(decoder.fold(f, decoder.chain(f, c)))
                     for f, c in zip(exe.functions, self._plain_code)]
        self._arena_layout = [(s, a) for _, s, a in decoded]
        self._arenas: list[list] = [[] for _ in exe.functions]  # free arenas per function
        self.num_regs = [f.num_regs for f in exe.functions]
        self._inputs: dict[str, list] = {}
        # dead private tensors by (shape, dtype), reused by AllocTensor(Reg): a dynamic
        # model allocates nothing new at a shape it has run before
        self._pool: dict[tuple, list] = {}
        self._profile = None  # {id(decoded instruction): [seconds, count]}: profiler.py

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
        bind_input_dims(f"@{name}", fn.param_names, fn.param_types, checked)
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
                        ptrs[i] = _address(x)
                for i, r in changing:
                    ptrs[i] = _address(regs[r])
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
                        ptrs[i] = _address(x)
                for i, r in d:
                    ptrs[i] = _address(regs[r])
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
            elif op == _ALLOC_STORAGE:
                regs[a] = arena.buffers[b]
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
                ptrs = a.ptrs
                for i, x in enumerate(arrays):
                    ptrs[i] = _address(x)
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
                regs[c] = tuple(a(*[regs[r] for r in b]))
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
            else:
                raise VMError(f"unknown opcode {op}")

    def _take_arena(self, func: int):
        free = self._arenas[func]
        if free:
            return free.pop()
        storages, allocs = self._arena_layout[func]
        return _Arena(storages, allocs) if storages else None

    def _kernel_failed(self, call) -> None:
        raise VMError(f"kernel {call.keep[2].name} returned an error status")

    @property
    def arena_bytes(self) -> int:
        """Bytes held by the storage arenas made so far (reused by every later run)."""
        return sum(a.nbytes for free in self._arenas for a in free)


def _jump_targets(fn) -> set[int]:
    targets = set()
    for i, ins in enumerate(fn.instructions):
        if ins.op is Opcode.If:
            targets.update((i + ins.args[2], i + ins.args[3]))
        elif ins.op is Opcode.Goto:
            targets.add(i + ins.args[0])
    return targets


def _tail_calls(code: list) -> list:
    """Mark each ``Invoke`` / ``InvokeClosure`` whose result the function returns as a
    tail call: from it, only ``KillRegister`` (the frame's end frees everything), ``Move``
    of the result (an ``if``'s join register) and ``Goto`` lead to ``Ret`` of it."""
    out = list(code)
    for i, ins in enumerate(code):
        if ins[0] not in (_INVOKE, _INVOKE_CLOSURE):
            continue
        value, j = ins[3], i + 1
        for _ in range(len(code)):  # each step moves forward; bounded anyway
            op = code[j][0] if j < len(code) else None
            if op == _KILL and value not in code[j][1]:
                j += 1
            elif op == _MOVE and code[j][2] == value:
                value, j = code[j][1], j + 1
            elif op == _GOTO and code[j][1] > 0:
                j += code[j][1]
            else:
                break
        if j < len(code) and code[j][0] == _RET and code[j][1] == value:
            out[i] = (_TAIL_INVOKE if ins[0] == _INVOKE else _TAIL_INVOKE_CLOSURE,) + ins[1:]
    return out


def _tick(prof: dict, key: int, seconds: float) -> None:
    cell = prof.get(key)
    if cell is None:
        prof[key] = [seconds, 1]
    else:
        cell[0] += seconds
        cell[1] += 1


def _storage_bindings(fn) -> dict[int, tuple[int, int, int]]:
    """Storage register → ``(slot, nbytes, alignment)`` of the ``AllocStorage`` that
    binds it; each register and slot must be bound once."""
    bound: dict[int, tuple[int, int, int]] = {}
    for ins in fn.instructions:
        if ins.op is Opcode.AllocStorage:
            dst, nbytes, align, slot = ins.args
            if dst in bound or slot in {s for s, _, _ in bound.values()} or slot < 0 \
                    or nbytes < 0 or align < 1 or align & (align - 1):
                raise VMError(f"@{fn.name}: alloc_storage $r{dst} (slot {slot}, {nbytes} "
                              f"bytes, align {align}): each storage register and slot is "
                              f"bound once, with a power-of-two alignment")
            bound[dst] = (slot, nbytes, align)
    return bound


def _planned_view(fn, pc: int, bound: dict) -> tuple:
    """``(slot, offset, shape, dtype)`` of the ``AllocTensor`` at ``pc`` on planned
    storage, checked to lie inside its buffer at an aligned offset."""
    dst, shape, dtype, storage, offset = fn.instructions[pc].args
    shape, dtype = tuple(shape), np.dtype(dtype)
    if storage not in bound:
        raise VMError(f"@{fn.name} instruction {pc}: alloc_tensor $r{dst} reads storage "
                      f"$r{storage}, which no alloc_storage binds")
    slot, nbytes, align = bound[storage]
    need = _nbytes(shape, dtype)
    if offset < 0 or offset % align or offset % dtype.itemsize or offset + need > nbytes:
        raise VMError(f"@{fn.name} instruction {pc}: alloc_tensor $r{dst} of {need} bytes "
                      f"at offset {offset} does not fit storage $r{storage} of {nbytes} "
                      f"bytes (alignment {align})")
    return slot, offset, shape, dtype


def _nbytes(shape: tuple, dtype: np.dtype) -> int:
    return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


def _aligned_buffer(nbytes: int, align: int) -> np.ndarray:
    """``nbytes`` (at least 1) of uint8 starting at a multiple of ``align``."""
    raw = np.empty(max(nbytes, 1) + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start: start + max(nbytes, 1)]


def _aligned(a: np.ndarray) -> np.ndarray:
    """``a`` itself when C-contiguous and 64-byte aligned, else such a copy."""
    if a.flags.c_contiguous and a.ctypes.data % 64 == 0:
        return a
    out = _aligned_empty(a.nbytes)[: a.nbytes].view(a.dtype).reshape(a.shape)
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
        value = check_tensor_arg(name, ty, value)
        return _contiguous(value)
    if isinstance(ty, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(ty.fields):
            raise VMError(f"input {name}: expected a tuple of {len(ty.fields)} fields, "
                          f"found {type(value).__name__}")
        return tuple(_check_arg(f"{name}[{i}]", t, v)
                     for i, (t, v) in enumerate(zip(ty.fields, value)))
    return value


__all__ = ["VMClosure", "VMError", "VirtualMachine"]
