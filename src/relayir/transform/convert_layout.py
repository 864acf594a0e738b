"""``ConvertLayout(desired_layouts)``: run convolutions (and what surrounds them) in
another data layout, transforming tensors only at the edges of the converted region.

``desired_layouts`` has TVM's form, ``{"nn.conv2d": ["NHWC", "default"]}``: per op,
the data layout and optionally the kernel layout (``"default"`` = the data layout's
usual partner: ``NHWC`` → ``HWIO``, ``NCHW`` → ``OIHW``). Pools may be listed too, and
the int8 convolutions ``CanonicalizeQNN`` writes (``qnn.contrib_conv2d_packed`` /
``qnn.contrib_depthwise_conv2d``: data and output in one ``layout``, ``NCHW`` or
``NHWC``; their weights do not depend on it); from opt level 2 (the default) the cpu
pipeline runs them NHWC (``INT8_LAYOUTS``, ``transform/pipeline.py``).

Every tensor node has a *current* layout in the rewritten graph and an *original* one
(the layout the unrewritten program computes it in). A node whose op is listed is
rebuilt in the desired layout; the other ops pass layouts on through small per-op
rules (TVM's "infer correct layout"):

- unary elementwise ops (``nn.relu``, ``exp``, ``cast``, ...) keep their input's layout;
- broadcasting binary ops (``add``, ``multiply``, ...) follow a converted full-shape
  input; the other input is moved into that layout (a per-channel ``(C, 1, 1)``
  constant becomes ``(1, 1, C)``: its ``CHW`` → ``HWC``);
- ``nn.bias_add``, ``nn.prelu``, ``nn.batch_norm``, ``concatenate`` and reductions keep
  the layout and renumber their axis;
- pools follow their input's layout (or the desired one when listed);
- anything else (``nn.batch_flatten``, ``reshape``, ``nn.dense``, calls of functions, a
  function's result ...) gets its inputs back in their original layout.

So a ``layout_transform`` appears where a converted region reads an unconverted tensor
and where an unconverted consumer reads a converted tensor, once per tensor and layout.
Weights get a ``layout_transform`` too, which ``FoldConstant`` folds once they are bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from ..errors import Error
from ..ir.expr import Call, Expr, Function, Op, Tuple, TupleGetItem
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.op import OpPattern, call, get_op
from ..ir.types import TensorType
from ..op.layout import layout_transform, parse_layout
from ..op.qnn.packed import PACKED_LAYOUTS
from ..op.reduce import reduce_axes
from .analysis import calls_any_op, typed_module
from .fold_scale_axis import reinfer
from .pass_infra import Pass, module_pass

_CONVS = {"nn.conv2d": "NCHW", "nn.conv1d": "NCW"}
_POOLS = ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d",
          "nn.adaptive_avg_pool2d")
_PACKED = ("qnn.contrib_conv2d_packed", "qnn.contrib_depthwise_conv2d")  # attr `layout`
_AXIS_OPS = ("nn.bias_add", "nn.prelu", "nn.batch_norm")
# the int8 convolutions with a pixel's channels contiguous (what their routines read)
INT8_LAYOUTS = {name: ("NHWC",) for name in _PACKED}
_REDUCES = ("sum", "prod", "mean", "max", "min", "all", "any", "logsumexp", "variance", "std")

# A tensor's state: (current layout, original layout), different; None = unconverted.
# A tuple's state: a tuple of field states.


def _is_plain(layout: str) -> bool:
    return layout.isalpha() and layout.isupper() and len(set(layout)) == len(layout)


def _rank(layout: str) -> int:
    """How many axes a tensor in ``layout`` has (``NCHW16c``: 5)."""
    return len(parse_layout(layout))


def _primal_rank(layout: str) -> int:
    """How many axes the same tensor has unblocked (``NCHW16c``: 4)."""
    return len(parse_layout(layout).primal)


def fits_layout(shape, src: str, dst: str) -> bool:
    """Whether a tensor of ``shape`` in ``src`` can move to ``dst``: every primal axis
    that ``dst`` splits into blocks has a static extent the block divides (a transform
    never pads)."""
    s, d = parse_layout(src), parse_layout(dst)
    if len(shape) != len(s) or sorted(s.primal) != sorted(d.primal):
        return False
    for letter in d.primal:
        block = d.factor(letter)
        if block is None:
            continue
        extent = shape[s.index(letter)]
        if not isinstance(extent, int):
            return False
        if extent * (s.factor(letter) or 1) % block:
            return False
    return True


def _without(layout: str, letters) -> str:
    """``layout`` with the primal ``letters`` (and their blocks) left out."""
    return "".join(a if f is None else f"{f}{a}" for a, f in parse_layout(layout).axes
                   if a.upper() not in letters)


def tensor_type(e: Expr) -> TensorType | None:
    t = e.checked_type if e.has_type else None
    return t if isinstance(t, TensorType) else None


def _converted(state) -> bool:
    if not state:  # None, or an empty tuple's ()
        return False
    if isinstance(state[0], str):
        return True
    return any(_converted(s) for s in state)


class LayoutConverter(ExprMutator):
    """``visit`` gives each node's value in its original layout (as ExprMutator does);
    ``self.converted[node]`` holds ``(expr, state)`` for nodes also available converted."""

    def __init__(self, desired: dict[str, tuple[str, ...]]):
        super().__init__()
        self.desired = desired
        self.converted: dict[Expr, tuple[Expr, object]] = {}
        self.moved: dict[tuple, Expr] = {}

    # ------------------------------------------------------------ helpers

    def state(self, node: Expr):
        entry = self.converted.get(node)
        return entry[1] if entry else None

    def in_layout(self, node: Expr, layout: str, orig: str) -> Expr:
        """``node``'s value in ``layout``; ``orig`` is its original layout."""
        entry = self.converted.get(node)
        if entry is not None and isinstance(entry[1], tuple) and isinstance(entry[1][0], str):
            expr, (cur, orig) = entry
        else:
            expr, cur = self.visit(node), orig
        if cur == layout:
            return expr
        if layout == orig:
            return self.visit(node)
        key = (node, cur, layout)
        if key not in self.moved:
            self.moved[key] = layout_transform(expr, cur, layout)
        return self.moved[key]

    def restore(self, expr: Expr, state) -> Expr:
        """``expr`` (in ``state``'s layouts) back in the original layouts."""
        if not _converted(state):
            return expr
        if isinstance(state[0], str):
            return layout_transform(expr, state[0], state[1])
        fields = expr.fields if type(expr) is Tuple else [
            TupleGetItem(expr, i) for i in range(len(state))]
        return Tuple([self.restore(f, s) for f, s in zip(fields, state)])

    # ------------------------------------------------------------ dispatch

    def visit_call(self, c):
        if type(c.op) is Op:
            result = self.convert_call(c)
            if result is not None:
                expr, state = result
                if not _converted(state):
                    return expr
                self.converted[c] = (expr, state)
                return self.restore(expr, state)
        return super().visit_call(c)

    def visit_tuple(self, t):
        states = tuple(self.state(f) for f in t.fields)
        if _converted(states):
            fields = [self.converted[f][0] if s else self.visit(f)
                      for f, s in zip(t.fields, states)]
            self.converted[t] = (Tuple(fields).with_span(t.span), states)
        return super().visit_tuple(t)

    def visit_tuple_getitem(self, g):
        state = self.state(g.tuple_value)
        if state is None:
            return super().visit_tuple_getitem(g)
        field_state = state[g.index]
        tup = self.converted[g.tuple_value][0]
        expr = (tup.fields[g.index] if type(tup) is Tuple
                else TupleGetItem(tup, g.index).with_span(g.span))
        if not _converted(field_state):
            return expr  # an unconverted field of a converted tuple: read it directly
        self.converted[g] = (expr, field_state)
        return self.restore(expr, field_state)

    def convert_call(self, c: Call):
        name = c.op.name
        if name in _CONVS and name in self.desired:
            return self.conv(c)
        if name in _PACKED and name in self.desired:
            return self.packed(c)
        if name in _POOLS:
            return self.pool(c)
        if not any(self.state(a) for a in c.args):
            return None
        if name in _AXIS_OPS:
            return self.axis_op(c)
        if name == "concatenate":
            return self.concatenate(c)
        if name in _REDUCES:
            return self.reduce(c)
        op = c.op
        if op.pattern == OpPattern.ELEMWISE and len(c.args) == 1:
            return self.unary(c)
        if op.pattern == OpPattern.BROADCAST and len(c.args) == 2 and op.attrs_type is None:
            return self.binary(c)
        return None

    # ------------------------------------------------------------ rules

    def conv(self, c: Call):
        want = self.desired[c.op.name]
        a = c.attrs
        data_layout = want[0]
        kernel_layout = want[1] if len(want) > 1 and want[1] != "default" else ""
        try:
            attrs = dataclasses.replace(a, data_layout=data_layout,
                                        kernel_layout=kernel_layout, out_layout="")
        except (ValueError, Error) as exc:
            raise Error(f"ConvertLayout: desired layouts {list(want)} do not suit "
                        f"{c.op.name}: {exc}") from None
        if attrs == a:
            return None
        data = self.in_layout(c.args[0], attrs.data_layout, a.data_layout)
        weight = self.in_layout(c.args[1], attrs.kernel_layout, a.kernel_layout)
        orig = a.out_layout or a.data_layout
        expr = Call(c.op, (data, weight), attrs, c.type_args).with_span(c.span)
        return expr, _pair(attrs.data_layout, orig)

    def packed(self, c: Call):
        """An int8 convolution: data and output move together, the weight stays."""
        want, a = self.desired[c.op.name][0], c.attrs
        if want not in PACKED_LAYOUTS:
            raise Error(f"ConvertLayout: {c.op.name} computes in {' or '.join(PACKED_LAYOUTS)}"
                        f", found the desired layout {want!r}")
        if want == a.layout:
            return None
        data = self.in_layout(c.args[0], want, a.layout)
        attrs = dataclasses.replace(a, layout=want)
        expr = Call(c.op, (data, self.visit(c.args[1])), attrs, c.type_args).with_span(c.span)
        return expr, _pair(want, a.layout)

    def pool(self, c: Call):
        a = c.attrs
        state = self.state(c.args[0])
        listed = c.op.name in self.desired
        if listed:
            target = self.desired[c.op.name][0]
        elif state is not None and isinstance(state[0], str) and state[1] == a.layout:
            # follow the input (a blocked one where the pool takes it) only where the
            # pool reads the axes as the input's producer meant them: an NHWC pool of an
            # NCHW tensor pools over its C and H, which no layout change may alter
            target = state[0]
        else:
            return None
        try:
            attrs = dataclasses.replace(a, layout=target, out_layout="")
        except (ValueError, Error) as exc:
            if not listed:
                return None
            raise Error(f"ConvertLayout: layout {target!r} does not suit {c.op.name}: "
                        f"{exc}") from None
        if attrs == a:
            return None
        data = self.in_layout(c.args[0], target, a.layout)
        expr = Call(c.op, (data,), attrs, c.type_args).with_span(c.span)
        return expr, _pair(target, a.out_layout or a.layout)

    def unary(self, c: Call):
        state = self.state(c.args[0])
        t_in, t_out = tensor_type(c.args[0]), tensor_type(c)
        if not isinstance(state[0], str) or t_in is None or t_out is None or (
                t_in.shape != t_out.shape):
            return None
        expr = Call(c.op, (self.converted[c.args[0]][0],), c.attrs, c.type_args)
        return expr.with_span(c.span), state

    def _tensor_state(self, e: Expr):
        s = self.state(e)
        return s if s is not None and isinstance(s[0], str) else None

    def axis_op(self, c: Call):
        """Ops with a channel ``axis`` attribute: the data keeps its layout."""
        state = self._tensor_state(c.args[0])
        if state is None or any(self.state(a) for a in c.args[1:]):
            return None
        cur, orig = state
        letter = orig[c.attrs.axis % len(orig)]
        if not _is_plain(cur):
            return None
        attrs = dataclasses.replace(c.attrs, axis=cur.index(letter))
        args = (self.converted[c.args[0]][0], *(self.visit(a) for a in c.args[1:]))
        expr = Call(c.op, args, attrs, c.type_args).with_span(c.span)
        if c.op.name == "nn.batch_norm":
            return expr, (state, None, None)
        return expr, state

    def reduce(self, c: Call):
        state = self._tensor_state(c.args[0])
        if state is None:
            return None
        cur, orig = state
        layout = parse_layout(cur)
        reduced = {orig[i] for i in reduce_axes(len(orig), c.attrs)}
        if any(layout.factor(letter) for letter in reduced):
            return None  # a reduction over a blocked axis would need its blocks too
        axes = sorted(layout.index(letter) for letter in reduced)
        attrs = dataclasses.replace(c.attrs, axis=tuple(axes), exclude=False)
        expr = Call(c.op, (self.converted[c.args[0]][0],), attrs, c.type_args)
        if c.attrs.keepdims:
            out = state if len(reduced) < len(orig) else None
        else:
            out = _pair(_without(cur, reduced), "".join(x for x in orig if x not in reduced))
        return expr.with_span(c.span), out

    def binary(self, c: Call):
        out_t = tensor_type(c)
        if out_t is None:
            return None
        n = out_t.ndim
        states = [self._tensor_state(a) for a in c.args]
        lead = next((s for s, a in zip(states, c.args)
                     if s is not None and tensor_type(a) is not None
                     and tensor_type(a).shape == out_t.shape), None)
        if lead is None or _primal_rank(lead[0]) != n:
            return None
        target, orig = lead
        args = []
        for a, s in zip(c.args, states):
            t = tensor_type(a)
            if t is None:
                return None
            if s is not None:
                if s[1] != orig:
                    return None
                args.append(self.in_layout(a, target, orig))
            else:
                if not self._can_broadcast(t, target, orig):
                    return None
                args.append(self._broadcast_operand(a, t, target, orig))
        expr = Call(c.op, tuple(args), c.attrs, c.type_args).with_span(c.span)
        return expr, lead

    @staticmethod
    def _can_broadcast(t: TensorType, target: str, orig: str) -> bool:
        """Whether ``_broadcast_operand`` can move an operand of type ``t``: into a
        blocked layout only when the blocks divide its (expanded) shape."""
        if all(d == 1 for d in t.shape) or _is_plain(target):
            return True
        full = (1,) * (len(orig) - t.ndim) + tuple(t.shape)
        return fits_layout(full, orig, target)

    def _broadcast_operand(self, a: Expr, t: TensorType, target: str, orig: str) -> Expr:
        """An unconverted operand that broadcasts against a tensor in ``orig``, moved so
        that it broadcasts the same way against that tensor in ``target``."""
        n, r = len(orig), t.ndim
        if all(d == 1 for d in t.shape):
            return self.visit(a)
        if r == n:
            return self.in_layout(a, target, orig)
        src, dst = orig[n - r:], target[n - r:]
        if _is_plain(target) and sorted(src) == sorted(dst):
            return self.in_layout(a, dst, src)
        key = (a, orig, target)
        if key not in self.moved:
            full = call("expand_dims", [self.visit(a)], axis=0, num_newaxis=n - r)
            self.moved[key] = layout_transform(full, orig, target)
        return self.moved[key]

    def concatenate(self, c: Call):
        tup = c.args[0]
        if type(tup) is not Tuple:
            return None
        states = [self._tensor_state(f) for f in tup.fields]
        lead = next((s for s in states if s is not None), None)
        if lead is None or any(s is not None and s[1] != lead[1] for s in states):
            return None
        orig = lead[1]
        shapes = [t.shape if t is not None else None for t in map(tensor_type, tup.fields)]
        if None in shapes:
            return None
        # the first of the inputs' layouts that every input fits (blocks of 16 and 8
        # channels meet in blocks of 8)
        cur = next((s[0] for s in states if s is not None
                    and all(fits_layout(shape, orig, s[0]) for shape in shapes)), None)
        if cur is None:
            return None
        lead = (cur, orig)
        letter = orig[c.attrs.axis % len(orig)]
        fields = [self.in_layout(f, cur, orig) for f in tup.fields]
        attrs = dataclasses.replace(c.attrs, axis=parse_layout(cur).index(letter))
        expr = Call(c.op, (Tuple(fields).with_span(tup.span),), attrs, c.type_args)
        return expr.with_span(c.span), lead


def _pair(cur: str, orig: str):
    return None if cur == orig else (cur, orig)


def _check_desired(desired: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    if not isinstance(desired, Mapping):
        raise Error(f"ConvertLayout takes a dict such as {{'nn.conv2d': ['NHWC', 'default']}}, "
                    f"found {desired!r}")
    out = {}
    for name, layouts in desired.items():
        get_op(name)  # a typo fails here, with suggestions
        if name not in _CONVS and name not in _POOLS and name not in _PACKED:
            raise Error(f"ConvertLayout: cannot choose the layout of {name}; ops that take "
                        f"a desired layout: {', '.join([*_CONVS, *_POOLS, *_PACKED])}")
        layouts = (layouts,) if isinstance(layouts, str) else tuple(layouts)
        if not layouts or not all(isinstance(x, str) for x in layouts):
            raise Error(f"ConvertLayout: {name} needs a list of layout strings such as "
                        f"['NHWC', 'default'], found {layouts!r}")
        if not _is_plain(layouts[0]):
            raise Error(f"ConvertLayout: {name}'s data layout must be a plain layout such "
                        f"as 'NHWC', found {layouts[0]!r}")
        out[name] = layouts
    return out


def convert_function(func: Function, desired: dict, mod: IRModule) -> Function:
    """``func`` (typed) with the desired layouts."""
    new = LayoutConverter(desired).visit(func)
    return new if new is func else reinfer(new, mod)


def ConvertLayout(desired_layouts: Mapping[str, Sequence[str]],  # noqa: N802
                  opt_level: int = 3) -> Pass:
    """TVM's ``ConvertLayout``: ``ConvertLayout({"nn.conv2d": ["NHWC", "default"]})``
    (``opt_level``: the level the pass runs from, 3 as in TVM)."""
    desired = _check_desired(desired_layouts)

    @module_pass(opt_level=opt_level, name="ConvertLayout")
    def convert_layout(mod: IRModule, ctx) -> IRModule:
        if not calls_any_op(mod, desired):  # nothing to convert (the pipeline's int8 pass
            return mod                    # on a float model): not one node rebuilt
        mod = typed_module(mod)
        functions = {gv: f if f.is_primitive else convert_function(f, desired, mod)
                     for gv, f in mod.functions.items()}
        if all(functions[gv] is f for gv, f in mod.functions.items()):
            return mod
        return mod.with_functions(functions)

    return convert_layout


__all__ = ["INT8_LAYOUTS", "ConvertLayout", "LayoutConverter", "fits_layout", "tensor_type"]
