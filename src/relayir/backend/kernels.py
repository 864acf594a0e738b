"""The kernel interface between ``build`` and the executors, and the numpy kernels.

A *kernel* is one compiled primitive function (one ``Primitive=1`` group of
``FuseOps``) in destination-passing style: it reads its input arrays and writes its
output arrays, which the caller allocated. It has

- ``name``: the symbol the graph JSON refers to (``func_name``), a C identifier;
- ``input_types`` / ``output_types``: flat tuples of static ``TensorType``\\ s (tuple
  parameters and tuple results are flattened, as in TVM's graph JSON);
- ``bind(arrays) -> callable``: checks ``arrays`` (inputs then outputs) once against the
  types and returns a zero-argument callable that runs the kernel on exactly those
  arrays. The graph executor binds every node at set-up, so its run loop is a loop
  over these callables. A kernel reports a failure by raising, or by returning a
  non-zero int (the C ABI's status code); ``None`` or ``0`` is success;
- ``__call__(*arrays)``: one checked call (tests, debugging).

A C kernel (ABI ``int32_t name(void* const* args, const int64_t* dims)``) plugs in by
implementing ``bind`` as "build the pointer and dims arrays once, return
``functools.partial(cfunc, args, dims)``": nothing in the executor changes.

Dynamic shapes (the VM only): a kernel whose ``dim_names`` is non-empty serves every
shape; its ``input_types`` / ``output_types`` hold ``SymbolicDim``\\ s named as in
``dim_names``, and the value of each dim (the C ``dims`` array, in ``dim_names`` order) is
the extent of the first argument (inputs then outputs) that has that name on that axis.
``call_dims_unchecked(dims, *arrays)`` makes one such call; ``bind`` / ``check`` compare
exact shapes and so serve static kernels only.

Kernels come in a *kernel library* (``get_lib()`` of a built module): a name → kernel
map plus what ``export_library`` needs to save it (``kernel_table()``: JSON entries,
``files()``: extra archive members such as ``lib.so``). ``load_library`` rebuilds a
library from those through the loader registered for its ``kind``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import Error
from ..ir.expr import Call, Constant, Function, Op, Tuple, TupleGetItem, Var, short_text
from ..ir.functor import post_order
from ..ir.types import TensorType, TupleType, Type


class KernelError(Error):
    """A kernel was called with arrays that do not match its types, or failed."""


def flatten_type(ty: Type) -> list[TensorType]:
    """The tensor types of a (nested) tuple type, in order (TVM's ``FlattenTupleType``)."""
    out: list[TensorType] = []
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
        elif isinstance(t, TensorType):
            out.append(t)
        else:
            raise KernelError(f"a kernel argument must be a tensor or a tuple of them, found {t}")
    return out


def type_text(t: TensorType) -> str:
    return f"{tuple(t.shape)} {t.dtype}"


def check_arrays(name: str, types: Sequence[TensorType], arrays: Sequence, what: str) -> None:
    """Raise a clear error unless every array has its type's exact shape and dtype."""
    if len(arrays) != len(types):
        raise KernelError(
            f"kernel {name}: expected {len(types)} {what} arrays, found {len(arrays)}")
    for i, (t, a) in enumerate(zip(types, arrays)):
        if not isinstance(a, np.ndarray):
            raise KernelError(f"kernel {name}: {what} {i} is a {type(a).__name__}, not an ndarray")
        if a.dtype.name != t.dtype or a.shape != tuple(t.shape):
            raise KernelError(
                f"kernel {name}: {what} {i} expected {type_text(t)}, "
                f"found {a.shape} {a.dtype.name}")
        if what == "output" and not a.flags.writeable:
            raise KernelError(f"kernel {name}: output {i} is read-only")


class Kernel:
    """Base of kernels; subclasses implement ``bind``. See the module docstring."""

    name: str
    input_types: tuple[TensorType, ...]
    output_types: tuple[TensorType, ...]
    dim_names: tuple[str, ...] = ()  # symbolic dims, in the order of the C ``dims`` array

    def check(self, arrays: Sequence[np.ndarray]) -> None:
        n = len(self.input_types)
        if len(arrays) != n + len(self.output_types):
            raise KernelError(
                f"kernel {self.name} takes {n} inputs and {len(self.output_types)} outputs, "
                f"found {len(arrays)} arrays")
        check_arrays(self.name, self.input_types, arrays[:n], "input")
        check_arrays(self.name, self.output_types, arrays[n:], "output")

    def bind(self, arrays: Sequence[np.ndarray]) -> Callable[[], int | None]:
        raise NotImplementedError

    def __call__(self, *arrays: np.ndarray) -> None:
        status = self.bind(arrays)()
        if status:
            raise KernelError(f"kernel {self.name} failed with status {status}")

    def call_unchecked(self, *arrays: np.ndarray) -> int | None:
        """One call on arrays whose types the caller guarantees (the VM allocates them
        from the static types it compiled against); returns the status like a bound
        call. Subclasses make it cheaper than ``bind`` + call."""
        return self.bind(arrays)()

    def call_dims_unchecked(self, dims, *arrays: np.ndarray) -> int | None:
        """``call_unchecked`` of a kernel with symbolic dims: ``dims`` holds their values
        in ``dim_names`` order (a kernel that computes from the arrays ignores them)."""
        return self.call_unchecked(*arrays)

    def __repr__(self) -> str:
        ins = ", ".join(map(type_text, self.input_types))
        outs = ", ".join(map(type_text, self.output_types))
        return f"<{type(self).__name__} {self.name}({ins}) -> ({outs})>"


# ---------------------------------------------------------------- numpy kernels

_CALL, _TUPLE, _GETITEM = range(3)


def _compile(func: Function) -> tuple[Callable, bool]:
    """Straight-line evaluation of a primitive function's body over flat inputs.

    Returns ``(evaluate, single)``: ``evaluate(inputs) -> value`` runs the op references
    in a precomputed order (no re-typing, no graph walk per call); ``single`` says the
    body is one op call reading the parameters in order, which ``evaluate`` then is not
    needed for.
    """
    slot: dict = {}  # node -> index into the value list: inputs, constants, step results
    n_flat = 0
    tuple_params = []  # (param, its flat input slots): rebuilt as a tuple first
    for p in func.params:
        ty = p.checked_type
        if isinstance(ty, TensorType):
            slot[p] = n_flat
            n_flat += 1
        else:
            k = len(flatten_type(ty))
            tuple_params.append((p, _tuple_slots(ty, n_flat)))
            n_flat += k
    nodes = post_order(func.body)
    consts = [n.data for n in nodes if type(n) is Constant]
    n_slots = n_flat
    steps: list[tuple] = []

    def add(node, step) -> None:
        nonlocal n_slots
        steps.append(step)
        slot[node] = n_slots
        n_slots += 1

    for node in nodes:
        if type(node) is Constant:
            slot[node] = n_slots
            n_slots += 1
    for p, slots in tuple_params:
        add(p, (_TUPLE, None, None, slots))
    for node in nodes:
        t = type(node)
        if t is Var:
            if node not in slot:
                raise KernelError(f"primitive function uses a free variable {short_text(node)}")
        elif t is Constant or t is Op:
            continue
        elif t is Call and type(node.op) is Op:
            add(node, (_CALL, node.op.reference, node.attrs, [slot[a] for a in node.args]))
        elif t is Tuple:
            add(node, (_TUPLE, None, None, [slot[f] for f in node.fields]))
        elif t is TupleGetItem:
            add(node, (_GETITEM, None, node.index, [slot[node.tuple_value]]))
        else:
            raise KernelError(
                f"a primitive function may hold only op calls, tuples and projections; "
                f"found {short_text(node)}")
    result = slot[func.body]
    consts_t = tuple(consts)
    body = func.body
    single = (type(body) is Call and type(body.op) is Op and not tuple_params and not consts
              and [slot.get(a) for a in body.args] == list(range(n_flat)))

    def evaluate(inputs):
        vals = [*inputs, *consts_t]
        push = vals.append
        for code, fn, attrs, args in steps:
            if code == _CALL:
                push(fn(*[vals[i] for i in args], attrs))
            elif code == _TUPLE:
                push(tuple([vals[i] for i in args]))
            else:
                push(vals[args[0]][attrs])
        return vals[result]

    return evaluate, single


def _tuple_slots(ty: TupleType, first: int):
    """Flat input slots of a tuple parameter (one level: what fusion produces)."""
    if all(isinstance(f, TensorType) for f in ty.fields):
        return list(range(first, first + len(ty.fields)))
    raise KernelError(f"nested tuple parameters are not supported by numpy kernels: {ty}")


def _flatten_value(value, out: list) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(reversed(v))
        else:
            out.append(v)


class NumpyKernel(Kernel):
    """A primitive function run with the ops' numpy references (target ``numpy``).

    The result is written into the preallocated outputs, whose shape and dtype are the
    function's type: a reference returning another shape is an error, not a broadcast.
    """

    def __init__(self, name: str, func: Function):
        if not func.has_type:
            from ..typing.infer import infer_expr

            infer_expr(func)
        self.name = name
        self.func = func
        self.input_types = tuple(t for p in func.params for t in flatten_type(p.checked_type))
        self.output_types = tuple(flatten_type(func.checked_type.ret_type))
        self._evaluate, self._single = _compile(func)
        # the body is one op call on the params in order: call its reference directly
        body = func.body
        self._single_ref = (body.op.reference, body.attrs) \
            if self._single and len(self.output_types) == 1 else None

    def source(self) -> str:
        """The primitive function as Relay text (without type comments: parseable)."""
        from ..ir.printer import astext

        return astext(self.func, show_types=False)

    def bind(self, arrays: Sequence[np.ndarray]) -> Callable[[], None]:
        arrays = tuple(arrays)
        self.check(arrays)
        return self._runner(arrays)

    def call_unchecked(self, *arrays: np.ndarray) -> None:
        # no type check and no per-call closure: the VM checked its inputs at entry and
        # allocated every other array from the types (or shape functions) it compiled
        # against. Only the reference's result shape is compared with the output's, so a
        # wrong reference is an error, never a silent broadcast.
        n = len(self.input_types)
        if self._single_ref is not None:
            ref, attrs = self._single_ref
            _store(self.name, 0, ref(*arrays[:n], attrs), arrays[n])
            return None
        flat: list = []
        _flatten_value(self._evaluate(arrays[:n]), flat)
        for i, (r, o) in enumerate(zip(flat, arrays[n:])):
            _store(self.name, i, r, o)
        return None

    def evaluate(self, *inputs: np.ndarray) -> list[np.ndarray]:
        """The outputs as fresh arrays (flat): for primitive functions whose output shapes
        depend on input values, which no caller can allocate in advance."""
        flat: list = []
        _flatten_value(self._evaluate(inputs), flat)
        return [np.asarray(r) for r in flat]

    def _runner(self, arrays: tuple) -> Callable[[], None]:
        n = len(self.input_types)
        ins, outs = arrays[:n], arrays[n:]
        name = self.name
        ndarray, asarray = np.ndarray, np.asarray
        if self._single_ref is not None:
            (ref, attrs), out = self._single_ref, outs[0]
            shape = out.shape

            def run_single():  # _store inlined: the graph executor's per-kernel path
                r = ref(*ins, attrs)
                if type(r) is not ndarray:
                    r = asarray(r)
                if r.shape != shape:
                    _bad_shape(name, 0, r, out)
                out[...] = r  # assignment casts like casting='unsafe', and is faster

            return run_single

        evaluate = self._evaluate

        def run():
            value = evaluate(ins)
            flat: list = []
            _flatten_value(value, flat)
            for i, (r, o) in enumerate(zip(flat, outs)):
                _store(name, i, r, o)

        return run


def _store(name: str, i: int, result, out: np.ndarray) -> None:
    """Write a reference's ``result`` into output ``i``, whose shape it must have."""
    if type(result) is not np.ndarray:
        result = np.asarray(result)
    if result.shape != out.shape:
        _bad_shape(name, i, result, out)
    out[...] = result  # assignment casts like casting='unsafe', and is faster


def _bad_shape(name: str, i: int, result: np.ndarray, out: np.ndarray):
    raise KernelError(
        f"kernel {name}: output {i} computed shape {result.shape}, but its type says "
        f"{out.shape}")


# ---------------------------------------------------------------- libraries


class KernelLibrary:
    """The kernels of one built module, by name, and how to save them."""

    kind = "abstract"

    def __init__(self, kernels: dict[str, Kernel], target: str):
        self.kernels = dict(kernels)
        self.target = target

    def __getitem__(self, name: str) -> Kernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise KernelError(f"the {self.kind} kernel library has no kernel {name!r}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.kernels

    def __len__(self) -> int:
        return len(self.kernels)

    def __iter__(self):
        return iter(self.kernels)

    def kernel_table(self) -> list[dict]:
        """JSON-able entries saved in ``meta.json`` (one per kernel); a symbolic dim is
        saved as its name (``"?"`` for ``Any``), and a dynamic kernel adds ``dims``."""
        table = []
        for k in self.kernels.values():
            entry = {"name": k.name, "kind": self.kind,
                     "inputs": [[_json_shape(t), t.dtype] for t in k.input_types],
                     "outputs": [[_json_shape(t), t.dtype] for t in k.output_types]}
            if k.dim_names:
                entry["dims"] = list(k.dim_names)
            table.append(entry)
        return table

    def files(self) -> dict[str, bytes]:
        """Extra archive members (a C library adds ``lib.so``)."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self)} kernels, target {self.target}>"


def _json_shape(t: TensorType) -> list:
    return [d if isinstance(d, int) else str(d) for d in t.shape]


class NumpyKernelLibrary(KernelLibrary):
    kind = "numpy"

    def kernel_table(self) -> list[dict]:
        table = super().kernel_table()
        for entry in table:
            entry["source"] = self.kernels[entry["name"]].source()
        return table


def lower_numpy(functions: Sequence[tuple[str, Function]], target: str = "numpy"
                ) -> NumpyKernelLibrary:
    """The numpy target's lowering: one ``NumpyKernel`` per primitive function."""
    return NumpyKernelLibrary({name: NumpyKernel(name, fn) for name, fn in functions}, target)


def _load_numpy(table: list[dict], files: dict[str, bytes], target: str) -> NumpyKernelLibrary:
    from ..ir.parser import parse_expr

    kernels = {}
    for entry in table:
        name = entry["name"]
        try:
            fn = parse_expr(entry["source"], source_name=f"kernel {name}")
        except Error as exc:
            raise KernelError(
                f"kernel {name}: its saved Relay text does not parse: {exc}") from None
        if not isinstance(fn, Function):
            raise KernelError(f"kernel {name}: the saved text is not a function")
        k = NumpyKernel(name, fn)
        for what, types in (("inputs", k.input_types), ("outputs", k.output_types)):
            saved = [[_json_shape(t), t.dtype] for t in types]
            if saved != entry[what]:
                raise KernelError(
                    f"kernel {name}: rebuilt {what} {saved} differ from the saved {entry[what]}")
        kernels[name] = k
    return NumpyKernelLibrary(kernels, target)


_LOADERS: dict[str, Callable[[list, dict, str], KernelLibrary]] = {"numpy": _load_numpy}


def register_library_loader(kind: str, loader: Callable[[list, dict, str], KernelLibrary]):
    """``loader(kernel_table, files, target) -> KernelLibrary`` for libraries of ``kind``."""
    _LOADERS[kind] = loader


def load_library(kind: str, table: list[dict], files: dict[str, bytes],
                 target: str) -> KernelLibrary:
    if kind == "c" and kind not in _LOADERS:
        import relayir.codegen  # noqa: F401  (registers the C library loader)
    try:
        loader = _LOADERS[kind]
    except KeyError:
        raise KernelError(
            f"no loader for {kind!r} kernel libraries; known: {', '.join(sorted(_LOADERS))}"
        ) from None
    return loader(table, files, target)


# ---------------------------------------------------------------- naming


def kernel_base_name(func: Function, limit: int = 64) -> str:
    """TVM-style ``fused_nn_conv2d_add_nn_relu``: the ops of the body in order."""
    names = []
    for node in post_order(func.body):
        if type(node) is Call and type(node.op) is Op:
            names.append(node.op.name.replace(".", "_"))
    base = "fused_" + "_".join(names) if names else "fused_copy"
    if len(base) > limit:  # long fused groups (BERT's attention) keep a readable prefix
        digest = f"{zlib.crc32(base.encode()):08x}"
        base = base[: limit - 9].rstrip("_") + "_" + digest
    return base


__all__ = [
    "Kernel", "KernelError", "KernelLibrary", "NumpyKernel", "NumpyKernelLibrary",
    "check_arrays", "flatten_type", "kernel_base_name", "load_library", "lower_numpy",
    "register_library_loader",
]
