"""Relay's expression nodes.

Nodes are immutable (frozen, slotted dataclasses). Python ``==`` and ``hash`` are by
identity, which is what memo tables keyed by node need; ``structural_equal`` and
``structural_hash`` give equality up to renaming of bound variables.

Each expression also has two non-structural slots: ``span`` (where the parser found
it) and a checked-type cache that ``InferType`` fills in. The cache is a fact about the
node: a node's type cannot change because its inputs cannot change.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import Error, OpError, TypeNotInferredError
from .types import NATIVE_DTYPES, Node, TensorType, Type, check_dtype


@dataclass(frozen=True, slots=True)
class Span:
    source: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.source + ':' if self.source else ''}{self.line}:{self.column}"


class Expr(Node):
    """Base of all expressions; adds operator overloading and the type cache."""

    __slots__ = ("_checked_type", "_span")
    __array_ufunc__ = None  # let numpy scalars defer to our reflected operators

    @property
    def checked_type(self) -> Type:
        try:
            return self._checked_type
        except AttributeError:
            raise TypeNotInferredError(
                f"the type of {short_text(self)} is not known yet: run relayir.transform.InferType"
            ) from None

    @property
    def has_type(self) -> bool:
        return hasattr(self, "_checked_type")

    def set_checked_type(self, ty: Type) -> None:
        object.__setattr__(self, "_checked_type", ty)

    @property
    def span(self) -> Span | None:
        return getattr(self, "_span", None)

    def with_span(self, span: Span | None):
        object.__setattr__(self, "_span", span)
        return self

    # Relay-style operator overloading: x + y, x * 2.0, -x, x[0]
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", other, self)

    def __sub__(self, other):
        return _binary("subtract", self, other)

    def __rsub__(self, other):
        return _binary("subtract", other, self)

    def __mul__(self, other):
        return _binary("multiply", self, other)

    def __rmul__(self, other):
        return _binary("multiply", other, self)

    def __truediv__(self, other):
        return _binary("divide", self, other)

    def __rtruediv__(self, other):
        return _binary("divide", other, self)

    def __neg__(self):
        return Call(Op.get("negative"), (self,))

    # comparisons build calls, as in Relay; ``==`` stays identity (nodes are dict keys)
    def __lt__(self, other):
        return _binary("less", self, other)

    def __gt__(self, other):
        return _binary("greater", self, other)

    def __le__(self, other):
        return _binary("less_equal", self, other)

    def __ge__(self, other):
        return _binary("greater_equal", self, other)

    def __getitem__(self, index: int):
        if not isinstance(index, int):
            raise Error(
                f"an expression can only be indexed by an int (tuple field), found {index!r}"
            )
        return TupleGetItem(self, index)

    def __iter__(self):
        raise TypeError("a Relay expression is not iterable; index tuple fields with expr[i]")

    def __call__(self, *args):
        """``f(x)`` calls the function value ``f`` (a variable, a field, ...), as in Relay."""
        return Call(self, tuple(as_expr(a) for a in args))

    def astype(self, dtype: str):
        cast = Op.get("cast")
        return Call(cast, (self,), cast.attrs_type(dtype=dtype))


def _binary(name: str, a, b):
    # the sugar builds calls of binary ops directly: they take no attributes
    return Call(Op.get(name), (as_expr(a), as_expr(b)))


def as_expr(value, dtype: str | None = None) -> Expr:
    """Wrap Python numbers and numpy arrays as constants; leave expressions alone."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, Expr) for v in value):
        return Tuple(value)
    return const(value, dtype)


# ---------------------------------------------------------------- leaves


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Var(Expr):
    """A local variable; identity is the variable, ``name_hint`` is only for printing."""

    name_hint: str
    type_annotation: Type | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GlobalVar(Expr):
    """The name of a function in an ``IRModule``; equal by name."""

    name_hint: str

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalVar) and other.name_hint == self.name_hint

    def __hash__(self) -> int:
        return hash(("GlobalVar", self.name_hint))

    def __call__(self, *args):
        return Call(self, tuple(as_expr(a) for a in args))


_NUMPY_DTYPES = frozenset(np.dtype(d) for d in NATIVE_DTYPES)  # others: check_dtype


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Constant(Expr):
    data: np.ndarray

    def __post_init__(self) -> None:
        data = np.asarray(self.data)
        if data.dtype not in _NUMPY_DTYPES:  # np.dtype.name is slow; this is a set lookup
            check_dtype(data.dtype.name, "constant")
        if data.flags.writeable:
            data = data.copy()
            data.flags.writeable = False
        object.__setattr__(self, "data", data)

    @property
    def tensor_type(self) -> TensorType:
        return TensorType(self.data.shape, self.data.dtype.name)


def const(value, dtype: str | None = None) -> Constant:
    """A constant. Python floats default to float32 and ints to int32, as in Relay."""
    if isinstance(value, np.ndarray) and dtype is None:
        return Constant(value)
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32"
        elif isinstance(value, float):
            dtype = "float32"
        elif isinstance(value, np.generic):
            dtype = value.dtype.name
        else:
            arr = np.asarray(value)
            dtype = {"float64": "float32", "int64": "int32"}.get(arr.dtype.name, arr.dtype.name)
    return Constant(np.asarray(value, dtype=check_dtype(dtype)))


# ---------------------------------------------------------------- compound


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Call(Expr):
    """``op(args, attrs)``. The callee is an ``Op``, a function, a variable or a constructor."""

    op: Expr
    args: tuple
    attrs: object = None
    type_args: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.args, tuple):
            object.__setattr__(self, "args", tuple(self.args))
        if type(self.type_args) is not tuple:  # None or a list: no type arguments / a tuple
            object.__setattr__(self, "type_args", tuple(self.type_args or ()))
        if self.attrs is None and type(self.op) is Op and self.op.attrs_type is not None:
            object.__setattr__(self, "attrs", self.op.attrs_type())  # the op's defaults
        for i, a in enumerate(self.args):
            if not isinstance(a, Expr):
                raise Error(
                    f"argument {i} of {short_text(self.op)} is not a Relay expression: {a!r}"
                )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Tuple(Expr):
    fields: tuple

    def __post_init__(self) -> None:
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))

    def __getitem__(self, index: int):
        return self.fields[index]

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self):
        """Its fields, as Relay's ``Tuple`` unpacks (``a, b = tup``): a tuple node's arity
        is its own, which other expressions' is not."""
        return iter(self.fields)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TupleGetItem(Expr):
    tuple_value: Expr
    index: int


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Let(Expr):
    """``let var = value; body``. A function value may refer to ``var`` (recursion)."""

    var: Var
    value: Expr
    body: Expr


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class If(Expr):
    cond: Expr
    true_branch: Expr
    false_branch: Expr


class _FrozenAttrs(Mapping):
    """A read-only, hashable dict for function attributes."""

    __slots__ = ("_d",)

    def __init__(self, d=None):
        self._d = dict(d or {})

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __hash__(self):
        return hash(tuple(sorted((k, repr(v)) for k, v in self._d.items())))

    def __eq__(self, other):
        return isinstance(other, Mapping) and dict(self) == dict(other)

    def __repr__(self):
        return repr(self._d)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Function(Expr):
    """``fn [type_params] (params) -> ret_type { body }`` with attributes (``Primitive=1``)."""

    params: tuple
    body: Expr
    ret_type: Type | None = None
    type_params: tuple = ()
    attrs: Mapping | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "type_params", tuple(self.type_params))
        if type(self.attrs) is not _FrozenAttrs:  # isinstance on a Mapping ABC is slow
            object.__setattr__(self, "attrs", _FrozenAttrs(self.attrs))
        for p in self.params:
            if not isinstance(p, Var):
                raise Error(f"function parameters must be Vars, found {short_text(p)}")

    def with_attr(self, key: str, value) -> Function:
        attrs = dict(self.attrs)
        attrs[key] = value
        return Function(self.params, self.body, self.ret_type, self.type_params, attrs)

    @property
    def is_primitive(self) -> bool:
        return bool(self.attrs.get("Primitive", 0))

    def __call__(self, *args):
        return Call(self, tuple(as_expr(a) for a in args))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefCreate(Expr):
    value: Expr


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefRead(Expr):
    ref: Expr


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefWrite(Expr):
    ref: Expr
    value: Expr


def var(name_hint: str, type_annotation: Type | None = None, shape=None, dtype="float32") -> Var:
    """Relay's ``var``: ``var("x", shape=(2, 2))`` or ``var("x", TensorType(...))``."""
    if isinstance(type_annotation, str):  # var("x", "float32") as in Relay
        dtype, type_annotation = type_annotation, None
    if type_annotation is None and shape is not None:
        type_annotation = TensorType(tuple(shape), dtype)
    elif type_annotation is None and dtype != "float32":
        type_annotation = TensorType((), dtype)
    return Var(name_hint, type_annotation)


def bind_callee_name(expr: Expr) -> str:
    from .adt import Constructor

    if isinstance(expr, Op):
        return expr.name
    if isinstance(expr, (Var, GlobalVar, Constructor)):
        prefix = "@" if isinstance(expr, GlobalVar) else ("%" if isinstance(expr, Var) else "")
        return prefix + expr.name_hint
    return type(expr).__name__


def short_text(expr: Expr | None) -> str:
    """A one-line description of a node for error messages (never the whole graph)."""
    from .adt import Constructor

    if expr is None:
        return "None"
    if isinstance(expr, Op):
        return expr.name
    if isinstance(expr, Var):
        return f"%{expr.name_hint}"
    if isinstance(expr, GlobalVar):
        return f"@{expr.name_hint}"
    if isinstance(expr, Constructor):
        return expr.name_hint
    if isinstance(expr, Constant):
        d = expr.data
        return repr(d.item()) if d.ndim == 0 else f"constant Tensor[{d.shape}, {d.dtype}]"
    if isinstance(expr, Call):
        args = ", ".join(_atom_text(a) for a in expr.args)
        text = f"{bind_callee_name(expr.op)}({args})"
    elif isinstance(expr, Tuple):
        text = "(" + ", ".join(_atom_text(a) for a in expr.fields) + ")"
    elif isinstance(expr, TupleGetItem):
        text = f"{_atom_text(expr.tuple_value)}.{expr.index}"
    else:
        text = type(expr).__name__
    span = getattr(expr, "span", None)
    return f"{text} at {span}" if span is not None else text


def _atom_text(e: Expr) -> str:
    from .adt import Constructor

    if isinstance(e, (Var, GlobalVar, Op, Constructor, Constant)):
        return short_text(e)
    if isinstance(e, Call):
        return f"{bind_callee_name(e.op)}(...)"
    return "..."


class Op(Expr):
    """A primitive operator. One instance per name, created by ``ir.op.register_op``.

    It carries the op's one definition: attrs class, type relation, fusion pattern and
    numpy reference. Later layers keep their own tables keyed by ``name``. The
    name → instance table lives here, with the class (``Op.get``), so that the
    expression sugar (``x + y``) and the registration machinery of ``ir/op.py`` read
    one table.
    """

    __slots__ = (
        "name", "num_inputs", "arg_names", "attrs_type", "type_rel", "pattern",
        "reference", "description",
    )
    REGISTRY: dict[str, Op] = {}  # name -> the one instance (filled by ir.op.register_op)

    def __init__(self, name, num_inputs, arg_names, attrs_type, type_rel, pattern, reference,
                 description=""):
        values = (name, num_inputs, arg_names, attrs_type, type_rel, pattern, reference,
                  description)
        for key, value in zip(Op.__slots__, values):
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        raise AttributeError("Op is immutable")

    def __repr__(self) -> str:
        return f"Op({self.name})"

    def __reduce__(self):
        return (Op.get, (self.name,))

    @staticmethod
    def get(name: str) -> Op:
        """The registered op ``name`` (``OpError`` with close matches if unknown)."""
        try:
            return Op.REGISTRY[name]
        except KeyError:
            close = difflib.get_close_matches(name, Op.REGISTRY, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise OpError(f"unknown operator {name!r}{hint}") from None
