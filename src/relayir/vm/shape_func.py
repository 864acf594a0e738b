"""Shapes at run time: shape functions of primitive functions, and input dim binding.

A primitive function whose type has ``Any`` / symbolic dims compiles to ONE kernel for
every shape; the VM allocates its outputs from its *shape function*. The
data-independent shape function of a primitive function is its ops' type relations
applied to concrete input ``TensorType``\\ s, in post order: the relations type inference
already runs, so no op's shape logic is written twice. Results are cached per input
shape signature, so a repeated shape costs one dict lookup.

On a cache miss the concrete types are also checked against the assumptions a C kernel
was compiled under: a symbolic dim has one value across the whole function (inputs,
temporaries, results), and a dynamic input dim of a broadcasting op does not broadcast
(the kernel reads such an input at the output's index; numpy kernels broadcast, so
``native=False`` skips both checks).

A ``dyn`` op with a C compute (``te/computes/dynamic.py``: reshape, broadcast_to, tile,
zeros, ones, full) whose shape inputs are the function's parameters (or constants) is
*value-shaped*: its shape function reads those inputs' values and applies the static
twin's relation to the attrs they make (``op/dynamic.py``'s ``DYNAMIC`` table, as the
reference and ``DynamicToStatic`` do), cached per shapes and values; the kernel is C.

*Data-dependent* primitive functions (an op whose result shape depends on input values
otherwise: other ``dyn.*`` ops, or any op named in ``DATA_DEPENDENT_OPS``) have no shape
function: the VM calls them with ``Opcode.InvokeDataDependent``, which returns fresh
arrays (``specialize.py``: C compiled for the call's shape values, or the reference).
"""

from __future__ import annotations

from ..errors import Error
from ..ir.dim_expr import DimExpr, dim_symbols, solve_dim, substitute_dim
from ..ir.expr import Call, Constant, Function, Op, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.op import OpPattern, get_op, make_attrs
from ..ir.types import Any, SymbolicDim, TensorType, TupleType
from ..op.dynamic import DYNAMIC
from ..op.type_rel import ANY_DIM_PREFIX
from ..te.computes.common import COMPUTE
from ..transform.bind import bind

__all__ = ["DATA_DEPENDENT_OPS", "DIM_RANGES", "ShapeError", "ShapeFunction",
           "bind_input_dims", "dim_ranges_text", "is_data_dependent", "is_dynamic",
           "name_any_dims", "parse_dim_ranges"]

# ``@main``'s attribute naming the range each symbolic input dim must lie in (a frontend
# sets it: torch.export derives the ranges), as text: ``"seq=2..512, batch=1.."``
DIM_RANGES = "dim_ranges"

# besides every ``dyn.*`` op and any call whose result has ``Any`` extents although its
# inputs are static (the relation cannot know them: e.g. ``argwhere``, NMS)
DATA_DEPENDENT_OPS: set[str] = {"argwhere", "unique", "vision.non_max_suppression",
                               "sparse_fill_empty_rows"}


class ShapeError(Error):
    """Inputs whose shapes a dynamic kernel (or a function's type) cannot take."""


# broadcasting ops whose inputs do not align with the output at their last axes:
# expand_dims maps its input's axes around the new ones (nothing broadcasts); bias_add
# and prelu lay their 1-D second input along ``attrs.axis``
_NOT_ALIGNED = frozenset({"expand_dims"})
_ALONG_AXIS = frozenset({"nn.bias_add", "nn.prelu"})


def is_data_dependent(func: Function) -> bool:
    params = set(func.params)
    for node in post_order(func.body):
        if type(node) is Call and type(node.op) is Op and not _value_shaped(node, params) and (
                node.op.name.startswith("dyn.") or node.op.name in DATA_DEPENDENT_OPS
                or _unknowable_result(node)):
            return True
    return False


def _value_shaped(call: Call, params: set) -> bool:
    """A ``dyn`` op with a compute whose shape inputs are tensor parameters or constants
    (the shape function reads their values)."""
    spec = DYNAMIC.get(call.op.name)
    return spec is not None and call.op.name in COMPUTE and all(
        type(a) is Constant or (a in params and isinstance(a.checked_type, TensorType))
        for a in (call.args[i] for i in spec.shape_args))


def _unknowable_result(call: Call) -> bool:
    """Static inputs but a result with ``Any`` extents: only the values can tell."""
    try:
        ins = [a.checked_type for a in call.args]
        out = call.checked_type
    except Error:
        return False
    return all(_static(t) for t in ins) and not _static(out)


def _static(ty) -> bool:
    if isinstance(ty, TupleType):
        return all(_static(f) for f in ty.fields)
    return isinstance(ty, TensorType) and all(isinstance(d, int) for d in ty.shape)


def is_dynamic(func: Function) -> bool:
    """Does the primitive function's type have a dim known only at run time?"""
    return not (all(_static(p.checked_type) for p in func.params)
                and _static(func.body.checked_type))


def _starts(flat_types: list) -> list[int]:
    """The flat input index where each parameter's tensors start."""
    out, k = [], 0
    for f in flat_types:
        out.append(k)
        k += len(f)
    return out


def _map_dims(ty, fn):
    if isinstance(ty, TupleType):
        return TupleType(tuple(_map_dims(f, fn) for f in ty.fields))
    if isinstance(ty, TensorType):
        return TensorType(tuple(fn(d) for d in ty.shape), ty.dtype)
    return ty


def name_any_dims(func: Function, prefix: str = ANY_DIM_PREFIX) -> Function:
    """``func`` with every ``Any`` of its parameter types replaced by a symbolic dim,
    re-typed: relations then carry those names to temporaries and results (a reshape of
    ``(anydim0, 32)`` to ``(1, -1, 4, 8)`` is ``(1, anydim0, 4, 8)``), so the kernel's
    loop bounds are dims its arguments hold. Two such dims that a broadcasting op
    combines get one name: the C kernel assumes they are equal (it reads both at the
    output's index), which the shape function checks at run time. Unchanged without
    ``Any``."""
    taken = {d.name for p in func.params for d in _dims(p.checked_type)
             if isinstance(d, SymbolicDim)}
    names: list[str] = []
    k = 0
    for p in func.params:
        for d in _dims(p.checked_type):
            if isinstance(d, Any):
                while f"{prefix}{k}" in taken:
                    k += 1
                names.append(f"{prefix}{k}")
                k += 1
    if not names:
        return func
    alias = {n: n for n in names}

    def canonical(n: str) -> str:
        while alias[n] != n:
            n = alias[n]
        return n

    for _ in range(len(names)):
        typed = _with_dim_names(func, [canonical(n) for n in names])
        merges = _broadcast_merges(typed, set(names))
        if not merges:
            break
        for a, b in merges:
            a, b = canonical(a), canonical(b)
            if a != b:
                alias[max(a, b)] = min(a, b)
    return typed


def _with_dim_names(func: Function, names: list) -> Function:
    """``func`` re-typed with its parameters' ``Any`` dims named ``names`` (in order)."""
    from ..typing.infer import infer_expr

    it = iter(names)
    mapping = {}
    for p in func.params:
        if any(isinstance(d, Any) for d in _dims(p.checked_type)):
            ty = _map_dims(p.checked_type,
                           lambda d: SymbolicDim(next(it)) if isinstance(d, Any) else d)
            mapping[p] = Var(p.name_hint, ty)
    # nodes the substitution rebuilds are untyped; nodes shared with ``func`` keep types
    new = Function([mapping.get(p, p) for p in func.params], bind(func.body, mapping), None,
                   (), func.attrs)
    infer_expr(new)
    return new


def _broadcast_merges(func: Function, ours: set) -> list:
    """Pairs of our dim names that a broadcasting op aligns, giving an ``Any`` result."""
    merges = []
    for node in post_order(func.body):
        if type(node) is not Call or type(node.op) is not Op or (
                node.op.pattern > OpPattern.BROADCAST):
            continue
        out = node.checked_type
        if not isinstance(out, TensorType):
            continue
        for j, d in enumerate(out.shape):
            if not isinstance(d, Any):
                continue
            seen = []
            for arg in node.args:
                t = arg.checked_type
                i = j - (len(out.shape) - len(t.shape)) if isinstance(t, TensorType) else -1
                if i >= 0 and isinstance(t.shape[i], SymbolicDim) and t.shape[i].name in ours:
                    seen.append(t.shape[i].name)
            merges.extend((seen[0], other) for other in seen[1:] if other != seen[0])
    return merges


def _dims(ty) -> list:
    if isinstance(ty, TupleType):
        return [d for f in ty.fields for d in _dims(f)]
    return list(ty.shape) if isinstance(ty, TensorType) else []


def _flat(ty) -> list:
    if isinstance(ty, TupleType):
        return [t for f in ty.fields for t in _flat(f)]
    return [ty]


class ShapeFunction:
    """``sf(*inputs) -> output shapes`` (flat, one tuple per tensor result) of one
    primitive function; ``inputs`` are its flat input arrays (or anything with
    ``.shape``)."""

    def __init__(self, name: str, func: Function, native: bool = True):
        self.name = name
        self.func = func
        self.native = native  # check the C kernel's assumptions
        self.nodes = post_order(func.body)
        self.param_types = [_flat(p.checked_type) for p in func.params]
        # flat input index of each parameter a value-shaped dyn op reads the values of
        params = set(func.params)
        starts = dict(zip(func.params, _starts(self.param_types)))
        self.value_inputs = {starts[a]: a for n in self.nodes
                             if type(n) is Call and type(n.op) is Op and n.op.name in DYNAMIC
                             and _value_shaped(n, params)
                             for a in (n.args[i] for i in DYNAMIC[n.op.name].shape_args)
                             if type(a) is Var}
        self.cache: dict = {}
        self.by_reference: set = set()  # input shapes the C kernel cannot take
        # whether the call these shapes are for must run the function's reference:
        # two inputs share a dim name the C kernel reads once, and at run time one of
        # them is 1 and broadcasts (the VM reads this right after calling)
        self.reference_next = False

    def __call__(self, *inputs) -> tuple:
        key = tuple([a.shape for a in inputs])
        if self.value_inputs:
            key += tuple(inputs[k].tobytes() for k in self.value_inputs)
        out = self.cache.get(key)
        if out is None:
            values = {p: inputs[k] for k, p in self.value_inputs.items()}
            out = self.cache[key] = self._compute(key[:len(inputs)], key, values)
        self.reference_next = key in self.by_reference
        return out

    def _compute(self, shapes: tuple, key: tuple | None = None,
                 values: dict | None = None) -> tuple:
        """``values``: the arrays of the parameters value-shaped dyn ops read."""
        func = self.func
        types: dict = {}
        by_reference = False
        k = 0
        for p, flat in zip(func.params, self.param_types):
            concrete = [TensorType(shapes[k + i], t.dtype) for i, t in enumerate(flat)]
            k += len(flat)
            ty = p.checked_type
            types[p] = concrete[0] if isinstance(ty, TensorType) else _rebuild(ty, iter(concrete))
        for node in self.nodes:
            t = type(node)
            if node in types or t is Op:
                continue
            if t is Constant:
                types[node] = TensorType(node.data.shape, node.data.dtype.name)
            elif t is Call:
                args = [types[a] for a in node.args]
                try:
                    types[node] = (self._value_shaped_type(node, args, values or {})
                                   if node.op.name in DYNAMIC else
                                   node.op.type_rel(args, node.attrs))
                except Error as exc:
                    raise ShapeError(f"kernel {self.name}: {node.op.name} cannot take input "
                                     f"shapes {[a.shape for a in args]}: {exc}") from None
                if self.native and not self._check_broadcast(node, args, types[node]):
                    by_reference = True
            elif t is Tuple:
                types[node] = TupleType(tuple(types[f] for f in node.fields))
            elif t is TupleGetItem:
                types[node] = types[node.tuple_value].fields[node.index]
            elif t is Var:
                raise ShapeError(f"kernel {self.name}: free variable %{node.name_hint}")
        if by_reference:
            self.by_reference.add(shapes if key is None else key)
        elif self.native:
            self._check_symbolic(types)
        result = _flat(types[func.body])
        if not all(isinstance(d, int) for t in result for d in t.shape):
            raise ShapeError(f"kernel {self.name}: output shapes {result} are not known from "
                             f"the input shapes (a data-dependent op without a dyn. name?)")
        return tuple(tuple(t.shape) for t in result)

    def _value_shaped_type(self, node: Call, args: list, arrays: dict):
        """A value-shaped ``dyn`` op's result: its static twin's relation on the attrs
        its shape inputs' values (``arrays``: parameter -> array) make."""
        spec = DYNAMIC[node.op.name]
        values = [a.data if type(a) is Constant else arrays.get(a)
                  for a in (node.args[i] for i in spec.shape_args)]
        if any(v is None for v in values):  # not value-shaped: the op's own relation
            return node.op.type_rel(args, node.attrs)
        data = [t for i, t in enumerate(args) if i not in spec.shape_args]
        extra = {"data_shapes": [t.shape for t in data]} if spec.data_shapes else {}
        try:
            attrs = make_attrs(get_op(spec.static), spec.static_attrs(node.attrs, *values,
                                                                      **extra))
        except (ValueError, TypeError) as exc:
            raise ShapeError(f"kernel {self.name}: {node.op.name}: {exc}") from None
        return get_op(spec.static).type_rel(data, attrs)

    def _check_broadcast(self, node: Call, args: list, out) -> bool:
        """Whether the C kernel can take this call's shapes (False: a dim it reads at the
        output's index is 1 here and broadcasts; the reference runs instead)."""
        if node.op.pattern > OpPattern.BROADCAST or not isinstance(out, TensorType) or (
                node.op.name in _NOT_ALIGNED):
            return True
        per_axis = node.op.name in _ALONG_AXIS
        for k, (arg, concrete) in enumerate(zip(node.args, args)):
            declared = arg.checked_type
            if not isinstance(declared, TensorType):
                continue
            if per_axis and k == 1:  # the vector lies along attrs.axis, not the last axis
                lead = node.attrs.axis % len(out.shape)
            else:  # numpy's rule: shapes align at their last axes
                lead = len(out.shape) - len(concrete.shape)
            out_dims = node.checked_type.shape
            for axis, (d, n) in enumerate(zip(declared.shape, concrete.shape)):
                # a dynamic dim of 1 broadcasts when it is not the output's own dim: the
                # kernel tests it then (te broadcast_read); one named like the output's
                # is read at the output's index
                tested = n == 1 and not per_axis and d != out_dims[lead + axis]
                if (not isinstance(d, int) and lead + axis >= 0 and not tested
                        and n != out.shape[lead + axis]):
                    if n == 1 and not per_axis:
                        return False
                    raise ShapeError(
                        f"kernel {self.name}: {node.op.name} broadcasts dynamic dim {d} "
                        f"(= {n}) to {out.shape[lead + axis]}; the kernel was compiled for "
                        f"equal dims (give the dim a static 1 to broadcast it)")
        return True

    def _check_symbolic(self, types: dict) -> None:
        """One value per named dim and per dim expression across the function, and each
        expression's value what its names' values give (``n - 1`` is 4 when ``n`` is 5)."""
        seen: dict = {}
        for node, concrete in types.items():
            if type(node) is Op:
                continue
            declared = _flat(node.checked_type)
            for dt, ct in zip(declared, _flat(concrete)):
                if not isinstance(dt, TensorType):
                    continue
                for d, n in zip(dt.shape, ct.shape):
                    if isinstance(d, DimExpr) and seen.setdefault(d, n) != n:
                        raise ShapeError(
                            f"kernel {self.name}: dim {d} is {seen[d]} in one "
                            f"place and {n} in another")
        env = {d.name: n for d, n in seen.items() if isinstance(d, SymbolicDim)}
        for d, n in seen.items():
            value = substitute_dim(d, env)
            if isinstance(value, int) and value != n:
                raise ShapeError(f"kernel {self.name}: dim {d} is {n}, but its names "
                                 f"give {value} ({_env_text(env, d)})")

    def __repr__(self) -> str:
        return f"<shape function of {self.name}, {len(self.cache)} shapes cached>"


def _env_text(env: dict, d) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items() if k in dim_symbols(d))


def _rebuild(ty, flat):
    if isinstance(ty, TupleType):
        return TupleType(tuple(_rebuild(f, flat) for f in ty.fields))
    return next(flat)


_SYMBOLIC_INPUTS: dict = {}  # id(types) -> (types, positions of inputs with symbolic dims)


def _symbolic_positions(types) -> tuple:
    hit = _SYMBOLIC_INPUTS.get(id(types))
    if hit is None or hit[0] is not types:
        positions = tuple(i for i, t in enumerate(types)
                          if any(isinstance(d, DimExpr) for d in _dims(t)))
        hit = _SYMBOLIC_INPUTS[id(types)] = (types, positions)
    return hit[1]


def dim_ranges_text(ranges: dict) -> str:
    """``{"seq": (2, 512), "b": (1, None)}`` as ``"seq=2..512, b=1.."``."""
    return ", ".join(f"{k}={lo}..{'' if hi is None else hi}" for k, (lo, hi) in ranges.items())


def parse_dim_ranges(text) -> dict:
    """The inverse of ``dim_ranges_text``; ``None`` or ``""`` is no ranges."""
    out = {}
    for item in filter(None, (t.strip() for t in str(text or "").split(","))):
        try:
            name, span = item.split("=")
            lo, hi = span.split("..")
            out[name.strip()] = (int(lo), int(hi) if hi.strip() else None)
        except ValueError:
            raise ShapeError(f"malformed {DIM_RANGES} entry {item!r}: expected "
                             "name=lo..hi (hi may be empty: unbounded)") from None
    return out


def bind_input_dims(where: str, names, types, values, ranges=None) -> None:
    """Raise unless one symbolic dim has one value across all ``values`` (already checked
    one by one for rank, dtype and static dims against ``types``), and that value lies in
    the dim's range (``ranges``: name -> (lo, hi or None), e.g. torch's derived range)."""
    positions = _symbolic_positions(types)  # usually none: nothing to do
    bound: dict = {}
    exprs: list = []  # (input name, axis, dim expression, value): checked once names bind
    stack = [(names[i], types[i], values[i]) for i in positions][::-1]  # in argument order
    while stack:
        name, ty, value = stack.pop()
        if isinstance(ty, TupleType):
            stack.extend(list((f"{name}[{i}]", t, v)
                              for i, (t, v) in enumerate(zip(ty.fields, value)))[::-1])
            continue
        if not isinstance(ty, TensorType):
            continue
        for axis, (d, n) in enumerate(zip(ty.shape, value.shape)):
            if isinstance(d, DimExpr) and not isinstance(d, SymbolicDim):
                exprs.append((name, axis, d, n))
            elif isinstance(d, SymbolicDim):
                _bind_dim(where, bound, ranges, d.name, n, name, axis)
    _bind_expressions(where, bound, ranges, exprs)


def _bind_dim(where, bound: dict, ranges, dim: str, n: int, name: str, axis: int) -> None:
    first = bound.setdefault(dim, (n, name, axis))
    if ranges and dim in ranges:
        lo, hi = ranges[dim]
        if n < lo or (hi is not None and n > hi):
            raise ShapeError(
                f"input {name} of {where}: dim {dim} (axis {axis}) is {n}, outside "
                f"the range {lo} <= {dim} <= {'inf' if hi is None else hi} the "
                "model was compiled for")
    if first[0] != n:
        raise ShapeError(
            f"input {name} of {where}: dim {dim} (axis {axis}) is {n}, but input "
            f"{first[1]} has {dim} = {first[0]} (axis {first[2]})")


def _bind_expressions(where, bound: dict, ranges, exprs: list) -> None:
    """Check input dims that are expressions (``n - 1``) against the names bound so far;
    an expression linear in one unbound name binds it (``2 * n`` of 8: ``n = 4``)."""
    progress = True
    while exprs and progress:
        progress, rest = False, []
        for name, axis, d, n in exprs:
            env = {k: v[0] for k, v in bound.items()}
            value = substitute_dim(d, env)
            if isinstance(value, int):
                if value != n:
                    raise ShapeError(
                        f"input {name} of {where}: dim {d} (axis {axis}) is {n}, but the "
                        f"other inputs give {value} ({_env_text(env, d)})")
                progress = True
                continue
            solved = solve_dim(value, n)
            if solved is False:
                raise ShapeError(f"input {name} of {where}: dim {d} (axis {axis}) cannot be "
                                 f"{n} for any value of its names")
            if solved is None:
                rest.append((name, axis, d, n))
                continue
            _bind_dim(where, bound, ranges, solved[0], solved[1], name, axis)
            progress = True
        exprs = rest
