"""Import PyTorch models through ``torch.export``.

``from_pytorch`` exports the model (pre-dispatch ATen: linear, conv2d, layer_norm, sdpa
stay single ops), lists every aten op it cannot convert before converting anything, then
walks the FX graph once: placeholders become ``@main`` parameters (user inputs first,
then weights named after the module's parameters and buffers), each ``call_function``
goes through the converter table in ``pytorch_ops``, and dynamic dimensions become
``SymbolicDim``s named as the user named them (a size torch derives from them, such as
``2*s0``, a dim expression over those names).

Dynamic dimensions. A dim given by name (``("ids", ((1, "seq"), "int64"))``) is exported
as ``Dim.DYNAMIC``: torch derives the range the model supports from its guards (a BERT's
position table of 512 rows gives ``seq <= 512``) instead of failing on a range we would
have to guess. The derived ranges are ``@main``'s ``dim_ranges`` attribute, printed in
the Relay text (``dim_ranges="seq=1..512"``) and checked when the VM binds its inputs
(``vm.shape_func.bind_input_dims``: a length outside the range is a clear error). Sizes
computed from those dims (``x.shape[1]``, ``table[:seq]``, ``arange(seq)``) stay
symbolic: they become expressions over ``shape_of`` the input (``pytorch_ops.base.
sym_expr``) and ``dyn`` ops, never the example's value.
"""

from __future__ import annotations

import operator

import numpy as np
import torch

from ..ir.expr import Expr, Function, Tuple, TupleGetItem, Var, const
from ..ir.module import IRModule
from ..ir.types import Any, SymbolicDim, TensorType
from ..vm.shape_func import DIM_RANGES, dim_ranges_text
from .common import ConversionError, UnsupportedOperatorError, sanitize_name
from .pytorch_ops import TABLE
from .pytorch_ops.base import TorchImport, dim, importing, is_symbolic, relay_dtype, sym_dim

_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
                 "int64": torch.int64, "int32": torch.int32, "int8": torch.int8,
                 "uint8": torch.uint8, "bool": torch.bool}

# graph nodes that only compute or check Python scalars (symbolic sizes)
_SCALAR_OPS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.truediv,
               operator.mod, operator.neg, operator.pow}
# higher-order ops that run a submodule under a mode (no_grad, autocast): the submodule
# is inlined; the value is the position of the submodule among the node's arguments
_WRAPPERS = {"wrap_with_set_grad_enabled": 1, "wrap_with_autocast": 4}
_CHECKS = {"aten._assert_scalar.default", "aten.sym_constrain_range_for_size.default",
           "aten.sym_constrain_range.default", "aten._assert_async.msg",
           "aten._assert_tensor_metadata.default"}


def _op_name(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return f"aten.{target._schema.name.split('::')[1]}.{target._overloadname}" \
            if target.namespace == "aten" else str(target)
    if isinstance(target, torch._ops.OpOverloadPacket):
        return str(target)
    return getattr(target, "__name__", str(target))


def _parse_info(info, default_dtype):
    name, spec = info
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], (str, torch.dtype)):
        shape, dt = spec
    else:
        shape, dt = spec, default_dtype
    if isinstance(dt, torch.dtype):
        dt = relay_dtype(dt)
    return str(name), tuple(shape), dt


def _example_and_dynamic(infos):
    """Example inputs and torch.export dynamic shapes. Every dynamic dim is
    ``Dim.DYNAMIC`` (torch derives its range); a dim name used by several inputs has one
    example size, and the importer gives all torch symbols of one name that name."""
    args, dynamic, shared = [], [], {}
    for name, shape, dt in infos:
        dims, example = {}, []
        for i, d in enumerate(shape):
            if d is None or (isinstance(d, int) and d < 0) or isinstance(d, str):
                sym = d if isinstance(d, str) else f"{name}_dim{i}"
                size = shared.setdefault(sym, 7 + len(shared))  # neither 0 nor 1
                dims[i] = torch.export.Dim.DYNAMIC
                example.append(size)
            else:
                example.append(int(d))
        tdt = _TORCH_DTYPES[dt]
        if tdt.is_floating_point:
            args.append(torch.randn(example, dtype=tdt))
        else:
            args.append(torch.zeros(example, dtype=tdt))
        dynamic.append(dims or None)
    return tuple(args), dynamic


def _export(model, infos):
    if isinstance(model, torch.export.ExportedProgram):
        return model
    if not isinstance(model, torch.nn.Module):
        raise ConversionError(f"from_pytorch takes an nn.Module or an ExportedProgram, "
                              f"found {type(model).__name__}")
    args, dynamic = _example_and_dynamic(infos)
    dyn = tuple(dynamic) if any(d is not None for d in dynamic) else None
    try:
        return torch.export.export(model.eval(), args, dynamic_shapes=dyn)
    except Exception as e:  # noqa: BLE001  (torch.export raises many kinds)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        given = ", ".join(f"{n} {tuple(s)}" for n, s, _ in infos)
        raise ConversionError(f"torch.export failed for inputs {given}: {type(e).__name__}: "
                              f"{first}") from e


def _ranges(exported, sym_dims: dict, ours: bool) -> dict[str, tuple[int, int | None]]:
    """``{relay dim name: (lo, hi)}`` from torch's derived ``range_constraints`` (hi None:
    unbounded); torch symbols given one name intersect their ranges. ``ours``: we
    exported it with ``Dim.DYNAMIC`` (not the user, whose own minimum stands)."""
    by_symbol = {str(k): v for k, v in exported.range_constraints.items()}
    out: dict[str, tuple[int, int | None]] = {}
    for key, relay_dim in sym_dims.items():
        if not isinstance(relay_dim, SymbolicDim) or key not in by_symbol:
            continue
        vr = by_symbol[key]
        lo = int(vr.lower) if vr.lower.is_integer else 0
        # torch traces a dynamic dim assuming it is not 0 or 1 (its "0/1 specialisation":
        # a lower bound of 2), yet the module it exports runs a size of 1; so do we
        lo = 1 if lo == 2 and ours else lo
        hi = int(vr.upper) if vr.upper.is_integer and "oo" not in str(vr.upper) else None
        old_lo, old_hi = out.get(relay_dim.name, (lo, hi))
        highs = [h for h in (hi, old_hi) if h is not None]  # None: unbounded
        out[relay_dim.name] = (max(lo, old_lo), min(highs) if highs else None)
    return out


def missing_ops(graph, graph_module=None) -> dict[str, int]:
    """Unconverted ops of ``graph`` and of the submodules its wrappers run."""
    graphs = [graph] + ([m.graph for _, m in graph_module.named_modules()
                         if isinstance(m, torch.fx.GraphModule) and m is not graph_module]
                        if graph_module is not None else [])
    names = [_op_name(n.target) for g in graphs for n in g.nodes if n.op == "call_function"
             and n.target not in _SCALAR_OPS and n.target is not operator.getitem
             and _op_name(n.target) not in _CHECKS and _op_name(n.target) not in _WRAPPERS]
    return TABLE.missing(names)


def from_pytorch(model, input_infos, default_dtype="float32", keep_params_as_inputs=True):
    """Import ``model`` (``nn.Module`` or ``torch.export.ExportedProgram``).

    ``input_infos``: ``[(name, shape)]`` or ``[(name, (shape, dtype))]``; a dimension
    given as ``None``, ``-1`` or a name is dynamic. Returns ``(mod, params)``: ``@main``
    takes the user inputs, then the weights (when ``keep_params_as_inputs``), named
    after the module's parameters and buffers; ``params`` maps those names to arrays.
    Raises ``UnsupportedOperatorError`` naming every unconverted op with its count.
    """
    infos = [_parse_info(i, default_dtype) for i in input_infos]
    exported = _export(model, infos)
    here = not isinstance(model, torch.export.ExportedProgram)
    missing = missing_ops(exported.graph, exported.graph_module)
    if missing:
        raise UnsupportedOperatorError(missing, "PyTorch")
    return _Importer(exported, infos, keep_params_as_inputs, here).run()


class _Importer:
    def __init__(self, exported, infos, keep_params, exported_here=True):
        self.ep = exported
        self.infos = infos
        self.exported_here = exported_here
        self.keep_params = keep_params
        self.state = TorchImport()
        self.env: dict = {}
        self.user_vars: list[Var] = []
        self.weight_vars: list[Var] = []
        self.params: dict[str, np.ndarray] = {}
        self.sym_dims: dict[str, object] = {}

    # ------------------------------------------------------------ placeholders
    def _state(self, target):
        ep = self.ep
        if target in ep.state_dict:
            return ep.state_dict[target]
        if target in ep.constants:
            return ep.constants[target]
        raise ConversionError(f"no value for the exported input {target}")

    def _relay_dim(self, d):
        """A torch size as a Relay dim: an int, a named dim (``seq``), a dim expression
        over named dims (``2 * seq``: torch relates one input's size to another's), or
        ``Any()`` where a symbol has no name."""
        key = dim(d)
        if isinstance(key, int):
            return key
        if key not in self.sym_dims:
            self.sym_dims[key] = sym_dim(d.node.expr, self._user_symbol) \
                if is_symbolic(d) else Any()
        return self.sym_dims[key]

    def _tensor_type(self, val) -> TensorType:
        return TensorType(tuple(self._relay_dim(d) for d in val.shape), relay_dtype(val.dtype))

    def _collect_user_symbols(self, user_nodes):
        self._user_symbol = {}
        for node, (_name, shape, _) in zip(user_nodes, self.infos):
            for d, given in zip(node.meta["val"].shape, shape):
                if isinstance(dim(d), str):
                    user = given if isinstance(given, str) else None
                    self._user_symbol.setdefault(dim(d), sanitize_name(user) if user else None)

    def _placeholders(self):
        sig = self.ep.graph_signature
        kinds = {s.arg.name: s for s in sig.input_specs}
        placeholders = [n for n in self.ep.graph.nodes if n.op == "placeholder"]
        user = [n for n in placeholders if kinds[n.name].kind.name == "USER_INPUT"]
        if len(user) != len(self.infos):
            raise ConversionError(f"the model takes {len(user)} inputs, input_infos names "
                                  f"{len(self.infos)}")
        self._collect_user_symbols(user)
        for node, (name, _, _) in zip(user, self.infos):
            v = Var(sanitize_name(name), self._tensor_type(node.meta["val"]))
            self.user_vars.append(v)
            self._bind(node, v)
            for axis_, d in enumerate(node.meta["val"].shape):  # where each symbol is read
                if isinstance(dim(d), str):
                    self.state.sym_source.setdefault(dim(d), (v, axis_))
        for node in placeholders:
            spec = kinds[node.name]
            if spec.kind.name == "USER_INPUT" or not node.users:
                continue
            value = self._state(spec.target)
            array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) \
                else np.asarray(value)
            if spec.kind.name in ("PARAMETER", "BUFFER") and self.keep_params:
                name = sanitize_name(spec.target)
                v = Var(name, self._tensor_type(node.meta["val"]))
                self.weight_vars.append(v)
                self.params[name] = array
                self._bind(node, v)
            else:
                self._bind(node, const(array))

    def _bind(self, node, value):
        self.env[node] = value
        self.state.record(value, node.meta.get("val"))
        if isinstance(value, (list, tuple)) and isinstance(node.meta.get("val"), (list, tuple)):
            for v, m in zip(value, node.meta["val"]):
                self.state.record(v, m)

    # ------------------------------------------------------------ nodes
    def _arg(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self._arg(x) for x in a)
        if isinstance(a, dict):
            return {k: self._arg(v) for k, v in a.items()}
        return a

    def _call(self, node):
        val = node.meta.get("val")
        if node.target in _SCALAR_OPS:
            return val
        if node.target is operator.getitem:
            seq, i = self._arg(node.args[0]), node.args[1]
            if isinstance(seq, Expr):
                return TupleGetItem(seq, i)
            return seq[i]
        name = _op_name(node.target)
        if name in _CHECKS:
            return None
        if name in _WRAPPERS:  # no_grad / autocast around a submodule: the same ops
            at = _WRAPPERS[name]
            return self._walk(self._arg(node.args[at]).graph, self._arg(node.args[at + 1:]))
        args, kwargs = self._arg(node.args), self._arg(node.kwargs)
        if name == "aten.sym_size.int":
            self.state.sym_source.setdefault(str(val), (args[0], int(args[1])))
        self.state.node_val = val
        try:
            return TABLE[name](*args, **kwargs)
        except ConversionError as e:
            raise ConversionError(f"{name} (node {node.name}): {e}") from None

    def _walk(self, graph, inputs=None):
        """Convert ``graph``'s nodes; returns its output. ``inputs``: the values of a
        submodule's placeholders (the exported graph's are bound by ``_placeholders``)."""
        if inputs is not None:
            for node, value in zip([n for n in graph.nodes if n.op == "placeholder"], inputs):
                self._bind(node, value)
        out = None
        for node in graph.nodes:
            if node.op == "call_function":
                self._bind(node, self._call(node))
            elif node.op == "get_attr":
                value = getattr(self.ep.graph_module, node.target)
                if isinstance(value, torch.fx.GraphModule):  # a wrapper's submodule
                    self.env[node] = value
                else:
                    self._bind(node, const(value.detach().cpu().numpy()))
            elif node.op == "output":
                out = self._arg(node.args[0])
        return out

    def run(self):
        with importing(self.state):
            self._placeholders()
            out = self._walk(self.ep.graph)
        outs = [o for o in (out if isinstance(out, (list, tuple)) else [out])]
        if any(not isinstance(o, Expr) for o in outs):
            raise ConversionError("the model returns a non-tensor value")
        body = outs[0] if len(outs) == 1 else Tuple(outs)
        fn = Function(self.user_vars + self.weight_vars, body)
        ranges = _ranges(self.ep, self.sym_dims, self.exported_here)
        if ranges:
            fn = fn.with_attr(DIM_RANGES, dim_ranges_text(ranges))
        return IRModule.from_expr(fn), self.params
