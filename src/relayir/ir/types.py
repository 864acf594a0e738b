"""Relay's type language.

Types are immutable values. Tensor shapes hold one entry per dimension: an ``int``,
``Any()`` (unknown until run time), a :class:`SymbolicDim` (a named dimension that
is equal wherever the same name appears, e.g. a sequence length ``n``) or an expression
over named dims (``n - 1``, ``floordiv(n, 4)``: ``dim_expr``, in canonical form).

Type variables and incomplete types compare by identity: two ``TypeVar("A")`` bound by
different functions are different variables. ``structural_equal`` maps bound type
variables the way it maps bound expression variables, and so does ``==`` on a polymorphic
``FuncType`` (the variables it binds are renamed: ``fn[a](a) -> a == fn[b](b) -> b``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from ..errors import Error
from .dim_expr import Any, Dim, DimExpr, DimOp, DimSum, SymbolicDim  # noqa: F401  (re-exported)

NATIVE_DTYPES = (
    "float16", "float32", "float64",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "bool",
)
# ONNX's low-precision element types. numpy spells them only through the optional
# ml_dtypes package (imported on first use, so ``import relayir`` needs numpy alone);
# the names are ml_dtypes'. The C target has none of them (numpy reference only).
LOW_PRECISION_DTYPES = (
    "bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4", "int2", "uint2",
)
DTYPES = NATIVE_DTYPES + LOW_PRECISION_DTYPES


def _ml_dtypes(dtype: str):
    """The ml_dtypes module (importing it registers its dtype names with numpy)."""
    try:
        import ml_dtypes
    except ImportError:
        raise Error(f"dtype {dtype!r} needs the ml_dtypes package (pip install ml_dtypes)"
                    ) from None
    return ml_dtypes


def check_dtype(dtype: str, where: str = "") -> str:
    """Return ``dtype`` as a canonical string or raise a clear error."""
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = np.dtype(dtype).name
    if dtype not in DTYPES:
        place = f"{where}: " if where else ""
        raise Error(f"{place}unsupported dtype {dtype!r}; expected one of {', '.join(DTYPES)}")
    if dtype in LOW_PRECISION_DTYPES:
        _ml_dtypes(dtype)
    return dtype


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a Relay dtype name (ml_dtypes' for the low-precision ones)."""
    return np.dtype(check_dtype(dtype))


def dtype_range(dtype: str) -> tuple:
    """The smallest and largest finite values of a numeric dtype: Python ints for
    integers, floats for floating point (``np.iinfo``/``np.finfo``, or ml_dtypes')."""
    dtype = check_dtype(dtype)
    if dtype == "bool":
        return 0, 1
    lib = _ml_dtypes(dtype) if dtype in LOW_PRECISION_DTYPES else np
    if is_int(dtype):
        info = lib.iinfo(dtype)
        return int(info.min), int(info.max)
    info = lib.finfo(dtype)
    return float(info.min), float(info.max)


def is_float(dtype: str) -> bool:
    return dtype.startswith("float") or dtype == "bfloat16"


def is_int(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def is_low_precision(dtype: str) -> bool:
    """A dtype numpy knows only through ml_dtypes (and C code generation lacks)."""
    return dtype in LOW_PRECISION_DTYPES


class Node:
    """Base of every IR node (expressions, types, patterns)."""

    __slots__ = ()

    def astext(self) -> str:
        from .printer import astext

        return astext(self)

    def __str__(self) -> str:
        return self.astext()


class Type(Node):
    __slots__ = ()

    def __repr__(self) -> str:
        return self.astext()


# ---------------------------------------------------------------- dimensions


def normalize_dim(d: object) -> Dim:
    if isinstance(d, (Any, DimExpr)):
        return d
    if d is None:
        return Any()
    if isinstance(d, str):
        return Any() if d == "?" else SymbolicDim(d)
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        if d < 0:
            raise Error(f"a tensor dimension must be >= 0, found {d}")
        return int(d)
    raise Error(f"a tensor dimension must be an int, Any(), a name or a dim expression, "
                f"found {d!r}")


def is_static(d: Dim) -> bool:
    return isinstance(d, int)


# ---------------------------------------------------------------- types


@dataclass(frozen=True, slots=True, repr=False)
class TensorType(Type):
    shape: tuple
    dtype: str = "float32"

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(normalize_dim(d) for d in self.shape))
        object.__setattr__(self, "dtype", check_dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    @property
    def concrete_shape(self) -> tuple[int, ...]:
        if not self.is_static:
            raise Error(f"{self} has dynamic dimensions")
        return self.shape  # type: ignore[return-value]


def scalar_type(dtype: str) -> TensorType:
    return TensorType((), dtype)


@dataclass(frozen=True, slots=True, repr=False)
class TupleType(Type):
    fields: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))


class Kind(Enum):
    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


_typevar_ids = itertools.count()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TypeVar(Type):
    """A type parameter, bound by a function's or an ADT's ``type_params``."""

    name_hint: str
    kind: Kind = Kind.Type


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GlobalTypeVar(Type):
    """The name of an algebraic data type in a module (``List``)."""

    name_hint: str
    kind: Kind = Kind.AdtHandle

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalTypeVar) and other.name_hint == self.name_hint

    def __hash__(self) -> int:
        return hash(("GlobalTypeVar", self.name_hint))

    def __call__(self, *args: Type) -> TypeCall:
        """``List(a)`` is ``List[a]``, as in Relay."""
        return TypeCall(self, args)


@dataclass(frozen=True, slots=True, repr=False)
class TypeCall(Type):
    """An ADT applied to type arguments: ``List[Tensor[(2), float32]]``."""

    func: Type
    args: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class FuncType(Type):
    """A function type. A polymorphic one (``type_params``) binds its type variables, so
    ``==`` is equality up to renaming them (``fn[a](a) -> a == fn[b](b) -> b``, as
    Relay's structural equality); a monomorphic one compares field by field."""

    arg_types: tuple
    ret_type: Type
    type_params: tuple = ()
    type_constraints: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "arg_types", tuple(self.arg_types))
        object.__setattr__(self, "type_params", tuple(self.type_params))
        object.__setattr__(self, "type_constraints", tuple(self.type_constraints))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not FuncType:
            return NotImplemented
        if not self.type_params and not other.type_params:
            return (self.arg_types == other.arg_types and self.ret_type == other.ret_type
                    and self.type_constraints == other.type_constraints)
        from .structural import structural_equal  # structural imports this module

        return structural_equal(self, other)

    def __hash__(self) -> int:
        if not self.type_params:
            return hash((self.arg_types, self.ret_type, self.type_constraints))
        from .structural import structural_hash

        return structural_hash(self)


@dataclass(frozen=True, slots=True, repr=False)
class RefType(Type):
    value: Type


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IncompleteType(Type):
    """A hole the type solver fills in; compares by identity."""

    kind: Kind = Kind.Type
    id: int = field(default_factory=lambda: next(_typevar_ids))


def unit_type() -> TupleType:
    return TupleType(())
