"""A compact, readable text form of scalar expressions (for errors and debugging)."""

from __future__ import annotations

from . import expr as E


def expr_text(e) -> str:
    if isinstance(e, E.IntImm):
        return str(e.value) if e.dtype in (E.INDEX, "bool") else f"{e.value}:{e.dtype}"
    if isinstance(e, E.FloatImm):
        return repr(e.value) if e.dtype == "float32" else f"{e.value!r}:{e.dtype}"
    if isinstance(e, E.Var):
        return e.name
    if isinstance(e, (E.Min, E.Max)):
        return f"{e.symbol}({expr_text(e.a)}, {expr_text(e.b)})"
    if isinstance(e, E.BinaryOp):
        return f"({expr_text(e.a)} {e.symbol} {expr_text(e.b)})"
    if isinstance(e, E.Not):
        return f"!{expr_text(e.a)}"
    if isinstance(e, E.Select):
        return f"select({expr_text(e.cond)}, {expr_text(e.t)}, {expr_text(e.f)})"
    if isinstance(e, E.Cast):
        return f"{e.dtype}({expr_text(e.value)})"
    if isinstance(e, E.Call):
        return f"{e.name}({', '.join(expr_text(a) for a in e.args)})"
    if isinstance(e, E.TensorRead):
        return f"{e.tensor.name}[{', '.join(expr_text(i) for i in e.indices)}]"
    if isinstance(e, E.Reduce):
        axes = ", ".join(f"{a.var.name}<{expr_text(a.extent)}" for a in e.axes)
        return f"{e.combiner}({expr_text(e.source)}, [{axes}])"
    text = getattr(e, "text", None)
    return text() if text is not None else type(e).__name__
