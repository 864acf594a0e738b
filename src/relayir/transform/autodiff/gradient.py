"""Reverse-mode differentiation of a Relay function (Relay's ``relay.transform.gradient``).

``higher_order`` (control flow, closures, recursion, ADTs) lives in ``higher_order.py``.

``first_order``: the function is put in A-normal form and type-checked; its let chain
is the forward pass, kept as is. The backward pass walks the bindings in reverse,
accumulating an adjoint per let variable (a tensor expression, ``None`` for zero, or a
list for tuple-typed variables) and calling each op's rule from ``GRADIENT``:
``rule(call, out, grad) -> [input grads]``. Every adjoint term is let-bound, so the
result is again an ordinary typed Relay function in ANF that the usual passes
optimise. Nothing recurses in Python over the dataflow chain.
"""

from __future__ import annotations

from ...errors import Error
from ...ir.expr import Call, Constant, Function, Let, Op, Tuple, TupleGetItem, Var, var
from ...ir.types import TensorType, TupleType, is_float
from ...op.transform import ones_like, zeros
from ...typing.infer import infer_expr
from ..to_a_normal_form import to_a_normal_form_expr
from .grads import GRADIENT, NON_DIFFERENTIABLE, no_rule_message


class _Builder:
    """The backward pass's bindings, emitted in order."""

    def __init__(self):
        self.bindings: list[tuple[Var, object]] = []
        self.count = 0

    def emit(self, value, hint="g"):
        if isinstance(value, (Var, Constant)):
            return value
        self.count += 1
        v = var(f"{hint}{self.count}")
        self.bindings.append((v, value))
        return v


def _zero_of(ty):
    if isinstance(ty, TupleType):
        return Tuple([_zero_of(f) for f in ty.fields])
    return zeros(tuple(ty.shape), ty.dtype)


def _differentiable(ty) -> bool:
    if isinstance(ty, TupleType):
        return any(_differentiable(f) for f in ty.fields)
    return isinstance(ty, TensorType) and is_float(ty.dtype)


def _is_zero(adj) -> bool:
    if adj is None:
        return True
    if isinstance(adj, list):
        return all(_is_zero(a) for a in adj)
    return False


def _as_adj(grad, ty):
    """A rule's gradient for a tuple-typed input (Tuple expr, list or expr) → list."""
    if not isinstance(ty, TupleType) or grad is None or isinstance(grad, list):
        return grad
    if isinstance(grad, Tuple):
        return [_as_adj(f, t) for f, t in zip(grad.fields, ty.fields)]
    return [_as_adj(TupleGetItem(grad, i), t) for i, t in enumerate(ty.fields)]


def _materialise(adj, ty, b: _Builder):
    """An adjoint as one expression (zeros where it is ``None``)."""
    if isinstance(ty, TupleType):
        parts = adj if isinstance(adj, list) else [None] * len(ty.fields)
        return Tuple([_materialise(a, t, b) for a, t in zip(parts, ty.fields)])
    return _zero_of(ty) if adj is None else adj


class _Adjoints:
    def __init__(self, builder: _Builder):
        self.table: dict[Var, object] = {}
        self.b = builder

    def add(self, v, grad, ty) -> None:
        if not isinstance(v, Var) or grad is None or not _differentiable(ty):
            return
        grad = _as_adj(grad, ty)
        self.table[v] = self._sum(self.table.get(v), grad)

    def _sum(self, a, g):
        if g is None:
            return a
        if a is None:
            return self.b.emit(g) if not isinstance(g, list) else g
        if isinstance(a, list):
            return [self._sum(x, y) for x, y in zip(a, g)]
        return self.b.emit(Call(_ADD, (a, g)))


_ADD = None


def _add_op():
    global _ADD
    if _ADD is None:
        from ...ir.op import get_op

        _ADD = get_op("add")
    return _ADD


def _flatten_lets(body):
    bindings = []
    while isinstance(body, Let):
        bindings.append((body.var, body.value))
        body = body.body
    return bindings, body


def _backprop_call(call: Call, out: Var, adj, adjoints: _Adjoints) -> None:
    op = call.op
    if not isinstance(op, Op):
        raise Error(f"first_order gradient: cannot differentiate a call of {op!r}; "
                    "only operator calls are supported (use mode='higher_order')")
    if op.name in NON_DIFFERENTIABLE:
        return  # zero gradient for every input
    if op.name not in GRADIENT:
        raise Error(no_rule_message(op.name))
    ty = out.checked_type
    if isinstance(ty, TupleType):
        grad = [_materialise(a, t, adjoints.b)
                for a, t in zip(adj if isinstance(adj, list) else [None] * len(ty.fields),
                                ty.fields)]
    else:
        grad = adj
    grads = GRADIENT.get(op.name)(call, out, grad)
    if len(grads) != len(call.args):
        raise Error(f"gradient of {op.name}: the rule gave {len(grads)} gradients for "
                    f"{len(call.args)} inputs")
    for arg, g in zip(call.args, grads):
        if isinstance(arg, Var):
            adjoints.add(arg, g, arg.checked_type)


def gradient(func: Function, mod=None, mode: str = "first_order") -> Function:
    """``fn(x1..xn) -> y`` → ``fn(x1..xn) -> (y, (dx1..dxn))``, the gradient of sum(y).

    ``higher_order`` also differentiates ``if``, closures, references, ADTs and calls of
    ``mod``'s globals: each global reached gets a transformed copy ``@name_grad`` added
    to ``mod`` (as Relay does), which the result calls.
    """
    if mode not in ("first_order", "higher_order"):
        raise Error(f"gradient: mode must be 'first_order' or 'higher_order', found {mode!r}")
    if not isinstance(func, Function):
        raise Error(f"gradient takes a Function, found {type(func).__name__}")
    if mode == "higher_order":
        from .higher_order import higher_order_gradient  # it imports this module's helpers

        return higher_order_gradient(func, mod)
    _add_op()
    anf = to_a_normal_form_expr(func)
    infer_expr(anf, mod)
    bindings, result = _flatten_lets(anf.body)
    b = _Builder()
    if not isinstance(result, Var):
        out = var("out")
        out.set_checked_type(result.checked_type)
        bindings.append((out, result))
        result = out
    for v, value in bindings:
        if not isinstance(value, (Call, Tuple, TupleGetItem, Var, Constant)):
            raise Error(f"first_order gradient cannot differentiate {type(value).__name__} "
                        f"(bound to %{v.name_hint}); only let/tuple/call dataflow is "
                        "supported (use mode='higher_order')")
    adjoints = _Adjoints(b)
    rty = result.checked_type
    adjoints.add(result, _seed(result, rty), rty)
    for v, value in reversed(bindings):
        adj = adjoints.table.get(v)
        if _is_zero(adj):
            continue
        if isinstance(value, Var):
            adjoints.add(value, adj, value.checked_type)
        elif isinstance(value, Tuple):
            for f, a in zip(value.fields, adj):
                adjoints.add(f, a, f.checked_type)
        elif isinstance(value, TupleGetItem):
            t = value.tuple_value
            n = len(t.checked_type.fields)
            parts = [None] * n
            parts[value.index] = adj
            adjoints.add(t, parts, t.checked_type)
        elif isinstance(value, Call):
            _backprop_call(value, v, adj, adjoints)
    grads = Tuple([_materialise(adjoints.table.get(p), p.checked_type, b)
                   for p in anf.params])
    body = Tuple([result, grads])
    for v, value in reversed(bindings + b.bindings):
        body = Let(v, value, body)
    out_fn = Function(anf.params, body, None, anf.type_params, anf.attrs)
    infer_expr(out_fn, mod)
    return out_fn


def _seed(result, ty):
    if isinstance(ty, TupleType):
        return [_seed(TupleGetItem(result, i), t) for i, t in enumerate(ty.fields)]
    return ones_like(result)
