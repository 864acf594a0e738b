"""The numpy target's kernels: a primitive function evaluated with the ops' numpy
references, written into the caller's output arrays (destination passing, as C kernels).

They serve the ``numpy`` target, and the ``cpu`` target for primitive functions C cannot
express (reference-only ops, low-precision dtypes, data-dependent shapes on the VM). A
saved numpy kernel is its primitive function as Relay text, parsed back on load.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import Error
from ..ir.expr import Call, Constant, Function, Op, Tuple, TupleGetItem, Var, short_text
from ..ir.functor import post_order
from ..ir.parser import parse_expr
from ..ir.printer import astext
from ..ir.types import TensorType, TupleType
from ..typing.infer import infer_expr
from .kernels import Kernel, KernelError, KernelLibrary, flatten_type, json_shape

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

    def __init__(self, name: str, func: Function, reason: str = ""):
        """``reason``: why a compiled (``cpu``) library runs this kernel as a reference
        ("" on the numpy target, where every kernel is one)."""
        if not func.has_type:
            infer_expr(func)
        self.name = name
        self.func = func
        self.reason = reason
        self.input_types = tuple(t for p in func.params for t in flatten_type(p.checked_type))
        self.output_types = tuple(flatten_type(func.checked_type.ret_type))
        self._evaluate, self._single = _compile(func)
        # the body is one op call on the params in order returning one tensor (not a
        # 1-tuple, whose reference returns a sequence): call its reference directly
        body = func.body
        self._single_ref = (body.op.reference, body.attrs) \
            if self._single and isinstance(func.checked_type.ret_type, TensorType) else None

    def source(self) -> str:
        """The primitive function as Relay text (without type comments: parseable)."""
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
        """The outputs as fresh C-contiguous arrays (flat): for primitive functions whose
        output shapes depend on input values, which no caller can allocate in advance.
        A reference may return a strided view (``argwhere(...).T``); the C kernels that
        read these outputs next take raw pointers, so such a view is copied."""
        flat: list = []
        _flatten_value(self._evaluate(inputs), flat)
        out = [np.asarray(r) for r in flat]
        return [r if r.flags.c_contiguous else r.copy(order="C") for r in out]

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


class NumpyKernelLibrary(KernelLibrary):
    kind = "numpy"

    def kernel_table(self) -> list[dict]:
        table = super().kernel_table()
        for entry in table:
            entry["source"] = self.kernels[entry["name"]].source()
        return table


def load_numpy_library(table: list[dict], files: dict[str, bytes],
                       target: str) -> NumpyKernelLibrary:
    """Rebuild saved numpy kernels from their Relay text (checked against the saved
    types)."""
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
        k = NumpyKernel(name, fn, entry.get("reason", ""))
        for what, types in (("inputs", k.input_types), ("outputs", k.output_types)):
            saved = [[json_shape(t), t.dtype] for t in types]
            if saved != entry[what]:
                raise KernelError(
                    f"kernel {name}: rebuilt {what} {saved} differ from the saved {entry[what]}")
        kernels[name] = k
    return NumpyKernelLibrary(kernels, target)


__all__ = ["NumpyKernel", "NumpyKernelLibrary", "load_numpy_library"]
