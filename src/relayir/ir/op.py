"""The operator registry: one definition per op, plus tables that later layers own.

An op is registered once, in the module of its family (``op/tensor.py``,
``op/nn/``, ...), with everything the IR layer needs to know about it:

- ``attrs``: a frozen dataclass of its attributes (``Conv2DAttrs``), or ``None``;
- ``rel``: its type relation ``rel(arg_types, attrs) -> out_type``;
- ``pattern``: its fusion pattern (``OpPattern``);
- ``ref``: its numpy reference ``ref(*inputs, attrs) -> array | tuple``, which is both
  the interpreter's implementation and the oracle every backend is tested against.

Layers added later (C compute, gradients, shape functions, frontend converters) never
edit op files: they fill an ``OpTable`` keyed by op name, and ``OpTable.missing()``
tells which registered ops a table does not cover.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import IntEnum

from ..errors import Error, OpError
from .expr import Call, Expr, Op, as_expr, short_text


class OpPattern(IntEnum):
    """How an op may be fused (the values of TVM's ``OpPatternKind``)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


@dataclasses.dataclass(frozen=True)
class Attrs:
    """Base of op attribute classes. Subclasses are frozen dataclasses with defaults."""

    def non_default_items(self) -> list[tuple[str, object]]:
        out = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else None
            )
            required = f.default is dataclasses.MISSING and (
                f.default_factory is dataclasses.MISSING)
            if required or value != default:
                out.append((f.name, value))
        return out

    def items(self) -> list[tuple[str, object]]:
        return [(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)]


def register_op(
    name: str,
    *,
    rel: Callable,
    ref: Callable,
    pattern: OpPattern,
    num_inputs: int,
    arg_names: tuple[str, ...] | None = None,
    attrs: type | None = None,
    description: str = "",
) -> Op:
    if name in Op.REGISTRY:
        raise OpError(f"operator {name} is registered twice")
    if arg_names is None:
        arg_names = ("data",) if num_inputs == 1 else tuple(f"arg{i}" for i in range(num_inputs))
    op = Op(name, num_inputs, tuple(arg_names), attrs, rel, OpPattern(pattern), ref, description)
    Op.REGISTRY[name] = op
    return op


get_op = Op.get


def has_op(name: str) -> bool:
    return name in Op.REGISTRY


def list_ops() -> list[str]:
    return sorted(Op.REGISTRY)


def make_attrs(op: Op, kwargs: dict):
    """Build ``op``'s attrs from keyword arguments, naming the op on any mistake."""
    if op.attrs_type is None:
        if kwargs:
            raise OpError(f"{op.name} takes no attributes, found {', '.join(kwargs)}")
        return None
    names = {f.name for f in dataclasses.fields(op.attrs_type)}
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        raise OpError(
            f"{op.name}: unknown attribute {', '.join(unknown)}; "
            f"expected some of {', '.join(sorted(names))}"
        )
    try:
        return op.attrs_type(**kwargs)
    except OpError:
        raise
    except (Error, TypeError, ValueError) as exc:
        raise OpError(f"{op.name}: bad attributes {kwargs}: {exc}") from None


def call(name: str | Op, args, attrs=None, **kwargs) -> Call:
    """``call("nn.dense", [x, w], units=4)``: a checked call of a registered op."""
    op = name if isinstance(name, Op) else get_op(name)
    args = tuple(as_expr(a) for a in args)
    if op.num_inputs >= 0 and len(args) != op.num_inputs:
        raise OpError(
            f"{op.name} takes {op.num_inputs} inputs ({', '.join(op.arg_names)}), "
            f"found {len(args)}"
        )
    if attrs is None:
        attrs = make_attrs(op, kwargs)
    elif kwargs:
        raise OpError(f"{op.name}: pass attrs or keyword attributes, not both")
    return Call(op, args, attrs)


class OpTable:
    """A per-layer table keyed by op name (C compute, gradient, shape function, ...)."""

    def __init__(self, name: str):
        self.name = name
        self._entries: dict[str, object] = {}

    def register(self, *op_names: str):
        def decorator(fn):
            for n in op_names:
                get_op(n)  # fail early on a typo
                if n in self._entries:
                    raise OpError(f"{self.name}: {n} registered twice")
                self._entries[n] = fn
            return fn

        return decorator

    def __contains__(self, op_name: str) -> bool:
        return op_name in self._entries

    def get(self, op_name: str):
        try:
            return self._entries[op_name]
        except KeyError:
            raise OpError(f"{self.name}: no entry for operator {op_name}") from None

    def covered(self) -> list[str]:
        return sorted(self._entries)

    def missing(self) -> list[str]:
        return [n for n in list_ops() if n not in self._entries]


def callee_name(expr: Expr) -> str:
    return expr.name if isinstance(expr, Op) else short_text(expr)
