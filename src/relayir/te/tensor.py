"""Tensors of tensor expressions: placeholders, computes, reduce axes and reducers.

A ``Tensor`` has a shape (``int64`` expressions: constants, or ``Var``s for symbolic
dimensions whose values a kernel reads from its ``dims`` argument), a dtype, a name
and the op that produces it. ``compute(shape, fcompute)`` calls ``fcompute`` with one
index ``Var`` per dimension; the body it returns may read other tensors (``A[i, j]``)
and may contain reductions (``te.sum(A[i, k], axis=k)``) anywhere.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Callable, Sequence

from . import expr as E

_ids = itertools.count()


class PlaceholderOp:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class ComputeOp:
    """``tensor[axis] = body``. ``tag`` names the op for kernel names; ``attrs`` holds
    hints for lowering (``{"materialize": True}`` keeps the tensor out of consumers)."""

    __slots__ = ("name", "axis", "body", "tag", "attrs")

    def __init__(self, name: str, axis: tuple, body: E.Expr, tag: str = "", attrs=None):
        self.name = name
        self.axis = axis
        self.body = body
        self.tag = tag
        self.attrs = dict(attrs or {})


class ExternOp:
    """Tensors computed together by a hand-written C routine (TVM's ``te.extern``), for
    what one loop nest per output cannot say well (a recurrence over time steps with a
    barrier per step, a softmax row kept in cache across its sweeps).

    ``routine`` names the C function in the code generator's routine table
    (``codegen.routines``); lowering calls it with the ``inputs``' buffers, the
    ``outputs``' buffers, the ``scalars`` (expressions: extents and integer attributes as
    ``int64``, a Python float as a ``float64`` constant) and
    last the stage's ``Schedule.parallel_min_work`` (0 when it must not go parallel): the
    routine sizes its thread team to its work with it. Inputs are read whole, so they are
    always materialised."""

    __slots__ = ("name", "routine", "inputs", "scalars", "tag", "outputs")

    def __init__(self, name: str, routine: str, inputs, scalars, tag: str):
        self.name = name
        self.routine = routine
        self.inputs = tuple(inputs)
        self.scalars = tuple(E.const(s, "float64") if isinstance(s, float) else E.as_index(s)
                             for s in scalars)
        self.tag = tag
        self.outputs: tuple = ()


class Tensor:
    """A tensor in a tensor-expression graph; ``t[i, j]`` reads one element.

    Tensors compare by identity. ``shape`` holds ``int64`` expressions.
    """

    __slots__ = ("shape", "dtype", "name", "op", "uid")

    def __init__(self, shape, dtype: str, name: str, op):
        self.shape = tuple(E.as_index(d) for d in shape)
        self.dtype = dtype
        self.name = name
        self.op = op
        self.uid = next(_ids)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_placeholder(self) -> bool:
        return isinstance(self.op, PlaceholderOp)

    @property
    def is_extern(self) -> bool:
        return isinstance(self.op, ExternOp)

    def __getitem__(self, indices) -> E.TensorRead:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return E.TensorRead(self, indices)

    def __call__(self, *indices) -> E.TensorRead:
        return E.TensorRead(self, indices)

    def static_shape(self) -> tuple[int, ...] | None:
        vals = [E.const_value(d) for d in self.shape]
        return None if builtins.any(v is None for v in vals) else tuple(int(v) for v in vals)

    def __repr__(self) -> str:
        dims = ", ".join(repr(d) for d in self.shape)
        return f"Tensor({self.name}, ({dims}), {self.dtype})"


def placeholder(shape: Sequence, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    return Tensor(shape, dtype, name, PlaceholderOp(name))


def compute(shape: Sequence, fcompute: Callable, name: str = "compute", tag: str = "",
            attrs=None, dtype: str | None = None) -> Tensor:
    """A tensor whose element at ``(i0, i1, ...)`` is ``fcompute(i0, i1, ...)``.

    ``dtype`` is needed only when ``fcompute`` returns a plain Python number.
    """
    shape = tuple(E.as_index(d) for d in shape)
    axis = tuple(E.IterVar(E.Var(f"i{k}"), d) for k, d in enumerate(shape))
    body = fcompute(*[a.var for a in axis])
    if not isinstance(body, E.Expr):
        if dtype is None:
            raise E.TEError(f"compute {name}: fcompute returned {body!r}; pass dtype=")
        body = E.const(body, dtype)
    elif dtype is not None and body.dtype != dtype:
        body = E.cast(dtype, body)
    op = ComputeOp(name, axis, body, tag, attrs)
    return Tensor(shape, body.dtype, name, op)


def extern(outs: Sequence, inputs: Sequence[Tensor], routine: str, scalars: Sequence = (),
           name: str = "extern", tag: str = "extern") -> list[Tensor]:
    """The tensors ``outs`` (``(shape, dtype)`` pairs) computed by the C routine
    ``routine`` from ``inputs`` (see ``ExternOp``)."""
    op = ExternOp(name, routine, inputs, scalars, tag)
    op.outputs = tuple(Tensor(shape, dtype, f"{name}{k}" if len(outs) > 1 else name, op)
                       for k, (shape, dtype) in enumerate(outs))
    return list(op.outputs)


def reduce_axis(dom, name: str = "k") -> E.IterVar:
    """A reduction axis over ``[0, n)`` (``dom`` is ``n`` or ``(0, n)``)."""
    if isinstance(dom, (tuple, list)):
        lo, hi = dom
        if E.const_value(lo) != 0:
            raise E.TEError(f"reduce axis {name} must start at 0, found {lo}")
        dom = hi
    return E.IterVar(E.Var(name), dom)


def _axes(axis) -> tuple:
    return tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)


def _reducer(combiner: str):
    def reduce(source: E.Expr, axis, acc_dtype: str | None = None,
               dtype: str | None = None) -> E.Reduce:
        src = source if acc_dtype is None else E.cast(acc_dtype, source)
        return E.Reduce(combiner, src, _axes(axis), dtype or source.dtype, acc_dtype)

    reduce.__name__ = combiner
    reduce.__doc__ = f"The {combiner} of ``source`` over the reduce axes ``axis``."
    return reduce


sum = _reducer("sum")  # noqa: A001  (TVM's names)
prod = _reducer("prod")
max = _reducer("max")  # noqa: A001
min = _reducer("min")  # noqa: A001
all = _reducer("and")  # noqa: A001
any = _reducer("or")  # noqa: A001


def argmax(source: E.Expr, axis, index: E.Expr, last: bool = False) -> E.Reduce:
    """int32 position (``index``) of the first (``last``: final) maximum of ``source``."""
    return E.Reduce("argmax", source, _axes(axis), "int32", index=index, last=last)


def argmin(source: E.Expr, axis, index: E.Expr, last: bool = False) -> E.Reduce:
    return E.Reduce("argmin", source, _axes(axis), "int32", index=index, last=last)
