"""``ToMixedPrecision``: run what is safe of a float32 program in float16 (or bfloat16, or
float64), as Relay's pass of that name does.

Bottom-up over each function, every op call gets a category (``mixed_precision_ops``):
``ALWAYS`` ops take their floating inputs cast to the mixed type and, when they have an
``out_dtype``, produce it (``nn.conv2d(cast(x), cast(w), out_dtype="float16")``);
``FOLLOW`` ops do the same when every floating input already has the mixed type or is
a variable or constant (free to cast), else they run in float32 like ``NEVER`` ops,
whose floating inputs are cast back to float32. ``clip`` whose bounds the mixed type
cannot hold (``128000`` in float16) runs in float32.

Casts are shared: casting a node twice to one type gives one ``cast``, and casting a
``cast`` back to its input's type gives the input (``conv -> cast(fp16)`` and back is
``conv``, never a cast pair). A ``let`` whose value changed type binds a new variable of
the new type. ``if`` branches and ``match`` clauses are cast back to their original
type, so a program stays well typed whatever the branches compute in. With
``keep_orig_output_dtype`` (``PassContext`` config
``relay.ToMixedPrecision.keep_orig_output_dtype``) each function's result is cast back
to its original dtypes.

Only float32 tensors (and the mixed type) are cast; integer and other float tensors are
left alone. A call the mixed type would make ill-typed keeps float32.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..errors import Error, TypeInferenceError
from ..ir.adt import Match
from ..ir.expr import Call, Constant, Function, If, Let, Op, Tuple, TupleGetItem, Var
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.op import call as make_call
from ..ir.types import FuncType, TensorType, TupleType, dtype_range, is_float
from .mixed_precision_ops import ALWAYS, FOLLOW, NEVER, category
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .type_check import InferType

KEEP_OUTPUT_KEY = "relay.ToMixedPrecision.keep_orig_output_dtype"


class _Mixed(ExprMutator):
    def __init__(self, mixed: str, missing_op_mode: int):
        super().__init__()
        self.mixed = mixed
        self.missing_op_mode = missing_op_mode
        self.types: dict[int, tuple] = {}  # id(new node) -> (node, type): keeps it alive
        self.casts: dict[tuple, tuple] = {}  # (id(expr), dtype) -> (expr, cast)
        self.cast_of: dict[int, tuple] = {}  # id(cast) -> (its input, the input's dtype)
        self.warned: set[str] = set()

    # ------------------------------------------------------------ types

    def type_of(self, e):
        known = self.types.get(id(e))
        if known is not None:
            return known[1]
        if isinstance(e, Constant):
            return TensorType(e.data.shape, e.data.dtype.name)
        if isinstance(e, Var) and e.type_annotation is not None:
            return e.type_annotation
        return e.checked_type

    def typed(self, e, t):
        self.types[id(e)] = (e, t)
        return e

    # ------------------------------------------------------------ casts

    def cast(self, e, dtype: str):
        """``e`` with its float32 / mixed tensors as ``dtype`` (tuples field by field)."""
        t = self.type_of(e)
        if isinstance(t, TupleType):
            fields = e.fields if isinstance(e, Tuple) else [
                self.typed(TupleGetItem(e, i), f) for i, f in enumerate(t.fields)]
            new = [self.cast(f, dtype) for f in fields]
            if isinstance(e, Tuple) and all(a is b for a, b in zip(new, e.fields)):
                return e
            return self.typed(Tuple(new), TupleType([self.type_of(f) for f in new]))
        if not isinstance(t, TensorType) or t.dtype == dtype or \
                t.dtype not in ("float32", self.mixed):
            return e
        back = self.cast_of.get(id(e))
        if back is not None and back[1] == dtype:
            return back[0]
        key = (id(e), dtype)
        if key not in self.casts:
            c = self.typed(make_call("cast", [e], dtype=dtype), TensorType(t.shape, dtype))
            self.casts[key] = (e, c)
            self.cast_of[id(c)] = (e, t.dtype)
        return self.casts[key][1]

    def cast_like(self, e, original):
        """``e`` cast back to the dtypes of ``original`` (a branch, a function's result)."""
        return self._cast_to(e, self.type_of(e), self.type_of(original))

    def _cast_to(self, e, have, want):
        """``e`` (of type ``have``) with every tensor field cast to ``want``'s dtype, into
        nested tuples too (an LSTM cell's ``(h, (h, c))``); the depth is the type's."""
        if isinstance(want, TensorType) and isinstance(have, TensorType):
            return self.cast(e, want.dtype) if want.dtype != have.dtype else e
        if isinstance(want, TupleType) and isinstance(have, TupleType) and want != have:
            fields = [self.typed(TupleGetItem(e, i), f) for i, f in enumerate(have.fields)]
            new = [self._cast_to(f, h, w)
                   for f, h, w in zip(fields, have.fields, want.fields)]
            return self.typed(Tuple(new), TupleType([self.type_of(f) for f in new]))
        return e

    # ------------------------------------------------------------ categories

    def _mixed_ok(self, arg) -> bool:
        t = self.type_of(arg)
        if isinstance(t, TupleType):
            return isinstance(arg, Tuple) and all(self._mixed_ok(f) for f in arg.fields) \
                or all(_is_mixed_or_not_float(f, self.mixed) for f in t.fields)
        if isinstance(arg, (Var, Constant)) and isinstance(t, TensorType) and \
                t.dtype == "float32":
            return True  # free to cast
        return _is_mixed_or_not_float(t, self.mixed)

    def category(self, call: Call, args) -> int:
        cat = category(call.op.name)
        if cat is None:
            if self.missing_op_mode == 0:
                raise Error(f"ToMixedPrecision: {call.op.name} has no mixed-precision "
                            f"category (missing_op_mode=0 refuses such ops)")
            if self.missing_op_mode == 1 and call.op.name not in self.warned:
                self.warned.add(call.op.name)
                warnings.warn(f"ToMixedPrecision: {call.op.name} has no mixed-precision "
                              f"category; it stays in float32", stacklevel=2)
            return NEVER
        if cat == FOLLOW:
            cat = ALWAYS if all(self._mixed_ok(a) for a in args) else NEVER
        if cat == ALWAYS and call.op.name == "clip":
            lo, hi = dtype_range(self.mixed)
            bounds = (call.attrs.a_min, call.attrs.a_max)
            if any(np.isfinite(b) and not lo <= b <= hi for b in bounds):
                cat = NEVER
        return cat

    # ------------------------------------------------------------ nodes

    def visit_call(self, call: Call):
        if not isinstance(call.op, Op):
            new = super().visit_call(call)
            # a function's parameters keep their dtypes: its arguments are cast back
            args = [self.cast_like(a, old) for a, old in zip(new.args, call.args)]
            if any(a is not b for a, b in zip(args, new.args)):
                new = Call(new.op, tuple(args), new.attrs, new.type_args).with_span(call.span)
            callee = self.type_of(new.op)
            return self.typed(new, callee.ret_type if isinstance(callee, FuncType)
                              else call.checked_type)
        args = [self.visit(a) for a in call.args]
        if self.category(call, args) == ALWAYS:
            new = self._op_call(call, args, self.mixed)
            if new is not None:
                return new
        return self._op_call(call, args, "float32") or self._keep(call, args)

    def _op_call(self, call: Call, args, dtype: str):
        args = [self.cast(a, dtype) for a in args]
        attrs = call.attrs
        if dtype == self.mixed and attrs is not None and hasattr(attrs, "out_dtype"):
            attrs = dataclasses.replace(attrs, out_dtype=dtype)
        try:
            out = call.op.type_rel([self.type_of(a) for a in args], attrs)
        except (TypeInferenceError, Error):
            return None
        if all(a is b for a, b in zip(args, call.args)) and attrs is call.attrs:
            return self.typed(call, out)
        return self.typed(Call(call.op, tuple(args), attrs, call.type_args).with_span(call.span),
                          out)

    def _keep(self, call: Call, args):
        args = [self.cast_like(a, old) for a, old in zip(args, call.args)]
        return self.typed(Call(call.op, tuple(args), call.attrs, call.type_args), call.checked_type)

    def visit_let(self, let: Let):
        chain = []
        e = let
        while isinstance(e, Let) and e not in self.memo:
            value = self.visit(e.value)
            var = e.var
            t = self.type_of(value)
            if t != self.type_of(var):
                var = self.typed(Var(var.name_hint, t), t)
            self.memo[e.var] = var
            chain.append((e, var, value))
            e = e.body
        body = self.visit(e)
        out = self.rebuild_lets(chain, body)
        return self.typed(out, self.type_of(body))

    def visit_tuple(self, t):
        new = self.visit_children(t)
        return self.typed(new, TupleType([self.type_of(f) for f in new.fields]))

    def visit_tuple_getitem(self, t):
        new = self.visit_children(t)
        tt = self.type_of(new.tuple_value)
        return self.typed(new, tt.fields[new.index] if isinstance(tt, TupleType)
                          else t.checked_type)

    def visit_if(self, e: If):
        cond = self.visit(e.cond)
        then = self.cast_like(self.visit(e.true_branch), e.true_branch)
        other = self.cast_like(self.visit(e.false_branch), e.false_branch)
        return self.typed(If(cond, then, other).with_span(e.span), e.checked_type)

    def visit_match(self, e: Match):
        new = self.visit_children(e)
        return self.typed(new, e.checked_type)

    def visit_function(self, fn: Function):
        new = self.visit_children(fn)
        body = self.cast_like(new.body, fn.body) if new.body is not fn.body else fn.body
        if body is not new.body:
            new = Function(new.params, body, None, new.type_params, new.attrs)
        return self.typed(new, FuncType([self.type_of(p) for p in new.params],
                                        self.type_of(body)))


def _is_mixed_or_not_float(t, mixed: str) -> bool:
    if isinstance(t, TupleType):
        return all(_is_mixed_or_not_float(f, mixed) for f in t.fields)
    return not isinstance(t, TensorType) or not is_float(t.dtype) or t.dtype == mixed


def to_mixed_precision(mod: IRModule, mixed: str = "float16", missing_op_mode: int = 1,
                       keep_orig_output_dtype: bool = False) -> IRModule:
    mod = InferType()(mod)
    functions = {}
    for gv, fn in mod.functions.items():
        if fn.is_primitive:
            functions[gv] = fn
            continue
        m = _Mixed(mixed, missing_op_mode)
        body = m.visit(fn.body)
        if keep_orig_output_dtype:
            body = m.cast_like(body, fn.body)
        functions[gv] = fn if body is fn.body else Function(
            fn.params, body, None, fn.type_params, fn.attrs).with_span(fn.span)
    return InferType()(mod.with_functions(functions))


def ToMixedPrecision(mixed_precision_type: str = "float16",  # noqa: N802 (Relay's name)
                     missing_op_mode: int = 1) -> Pass:
    """Rewrite float32 computation into ``mixed_precision_type`` where it is safe.
    ``missing_op_mode``: 0 refuses ops without a category, 1 warns, 2 is silent."""
    if missing_op_mode not in (0, 1, 2):
        raise Error(f"ToMixedPrecision: missing_op_mode is 0, 1 or 2, found {missing_op_mode}")
    if mixed_precision_type not in ("float16", "bfloat16", "float64"):
        raise Error(f"ToMixedPrecision: mixed_precision_type must be float16, bfloat16 or "
                    f"float64, found {mixed_precision_type!r}")

    @module_pass(opt_level=0, name="ToMixedPrecision")
    def _pass(mod: IRModule, ctx: PassContext) -> IRModule:
        return to_mixed_precision(mod, mixed_precision_type, missing_op_mode,
                                  bool(ctx.config.get(KEEP_OUTPUT_KEY, False)))

    return _pass


register_pass("ToMixedPrecision", ToMixedPrecision)
