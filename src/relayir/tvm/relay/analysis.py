"""``relay.analysis``: variable and well-formedness analyses, and a few counters."""

from __future__ import annotations

from collections import Counter
from math import prod

from ...errors import WellFormedError
from ...ir.analysis import (
    all_vars,
    bound_vars,
    check_well_formed,
    free_type_vars,
    free_vars,
)
from ...ir.expr import Call, Function, Op
from ...ir.functor import expr_children, post_order
from ...ir.match_exhaustion import unmatched_cases
from ...ir.structural import structural_hash
from ...ir.types import Kind, TypeVar
from ...transform import FuseOps, InferType
from ...transform.fake_quantization_inputs import fake_quantized_ops
from ...transform.to_basic_block_normal_form import check_basic_block_normal_form
from ..error import missing_attribute, not_in_relayir
from ._call_graph import CallGraph
from ._feature import Feature, detect_feature


def all_type_vars(expr_or_type, mod=None) -> list:
    """Free type variables of a type, or of a function's signature and type params."""
    if isinstance(expr_or_type, Function):
        out = list(expr_or_type.type_params)
        for v in free_type_vars(expr_or_type):
            if v not in out:
                out.append(v)
        return out
    return free_type_vars(expr_or_type)


def bound_type_vars(expr, mod=None) -> list:
    return list(expr.type_params) if isinstance(expr, Function) else []


def check_kind(t, mod=None) -> Kind:
    """The kind of a type: ``Kind.Type`` for every type relayir builds (a type variable
    has its declared kind)."""
    return t.kind if isinstance(t, TypeVar) else Kind.Type


def count_ops(expr) -> Counter:
    """How many times each op is called in ``expr``."""
    return Counter(n.op.name for n in post_order(expr)
                   if isinstance(n, Call) and isinstance(n.op, Op))


def count_layers(expr, valid_ops, mod=None) -> int:
    """The most calls of ``valid_ops`` on one dataflow path of ``expr`` (a module's
    ``main``): a network's depth in those layers, parallel branches not added up."""
    if hasattr(expr, "functions"):
        expr = expr["main"]
    wanted, depth = set(valid_ops), {}
    for n in post_order(expr):
        here = int(isinstance(n, Call) and isinstance(n.op, Op) and n.op.name in wanted)
        depth[id(n)] = here + max((depth[id(c)] for c in expr_children(n)), default=0)
    return depth[id(expr)]


def _shape(e) -> tuple:
    return tuple(int(d) for d in e.checked_type.shape)


def _conv_macs(call) -> int:
    """Output elements × kernel taps × input channels per group (the data's ``C`` and,
    blocked, ``c`` axes)."""
    layout, data = call.attrs.data_layout, _shape(call.args[0])
    channels = prod(data[i] for i, axis in enumerate(layout) if axis in "Cc")
    weight, kernel_layout = _shape(call.args[1]), call.attrs.kernel_layout
    taps = prod(weight[i] for i, axis in enumerate(kernel_layout) if axis in "DHW")
    return prod(_shape(call)) * taps * channels // call.attrs.groups


def _matmul_macs(call) -> int:
    """Output elements × the reduced length."""
    a = _shape(call.args[0])
    k = a[-2] if getattr(call.attrs, "transpose_a", False) else a[-1]
    return prod(_shape(call)) * k


_MACS = {
    "nn.conv2d": _conv_macs,
    "nn.conv2d_transpose": _conv_macs,
    "nn.dense": _matmul_macs,
    "nn.matmul": _matmul_macs,
    "nn.batch_matmul": _matmul_macs,
}


def get_total_mac_number(expr) -> int:
    """Multiply-accumulates of the convolutions, dense and batch_matmul calls of a
    type-checked ``expr`` (as Relay counts them; other ops count 0)."""
    return sum(_MACS[n.op.name](n) for n in post_order(expr)
               if isinstance(n, Call) and isinstance(n.op, Op) and n.op.name in _MACS)


def well_formed(expr) -> bool:
    """Relay's: every variable is bound at most once and used in its scope; a free
    variable is fine (relayir's own ``well_formed`` refuses it)."""
    try:
        check_well_formed(expr, allow_free=True)
    except WellFormedError:
        return False
    return True


def extract_fused_functions(mod) -> dict:
    """``{structural hash: primitive function}`` of the fused module (FuseOps at the
    current opt level)."""
    fused = FuseOps()(InferType()(mod))
    out = {}
    for fn in fused.functions.values():
        for n in post_order(fn):
            if isinstance(n, Function) and n.is_primitive:
                out[structural_hash(n)] = n
    return out


def post_order_visit(expr, fvisit) -> None:
    """``fvisit(node)`` on every node of ``expr``, each once, children first (Relay's
    visit, which also calls it on each call's op)."""
    for node in post_order(expr):
        if isinstance(node, Call) and isinstance(node.op, Op):
            fvisit(node.op)
        fvisit(node)


def list_op_freqs(mod) -> dict:
    """Op name → its calls over every function of ``mod``, inside fused (primitive)
    functions too."""
    counts: Counter = Counter()
    for fn in mod.functions.values():
        counts.update(count_ops(fn))
    return dict(counts)


def list_fake_quantized_op_freqs(mod) -> dict:
    """Op name → its calls inside fake-quantized regions (between a ``qnn.quantize`` and
    the ``qnn.dequantize`` calls it reads), over every function of ``mod``."""
    counts: Counter = Counter()
    for fn in mod.functions.values():
        counts.update(fake_quantized_ops(fn))
    return dict(counts)


__all__ = ["CallGraph", "Feature", "all_type_vars", "all_vars", "bound_type_vars", "bound_vars",
           "check_basic_block_normal_form", "check_kind", "check_well_formed", "count_layers",
           "count_ops", "detect_feature",
           "extract_fused_functions", "free_type_vars", "free_vars", "get_total_mac_number",
           "list_fake_quantized_op_freqs", "list_op_freqs", "post_order_visit",
           "unmatched_cases", "well_formed"]


# Relay analyses relayir does not have: the names import, a call says so
_NOT_OFFERED = ("get_calibration_data", "extract_intermediate_expr", "search_fc_transpose",
                "get_pad_tuple", "check_constant", "all_dtypes")
for _name in _NOT_OFFERED:
    globals()[_name] = not_in_relayir(f"tvm.relay.analysis.{_name}",
                                      "relayir has no such analysis")


def __getattr__(name: str):
    if name == "_ffi_api":  # Relay's handle on its type solver (relay/_type_solver.py)
        from ._type_solver import ffi_api

        return ffi_api
    raise missing_attribute(__name__, name)
