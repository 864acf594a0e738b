"""Control flow: If → Relay ``if``; Loop and Scan → a recursive Relay function.

Subgraphs (``then_branch``, ``body``) are converted by the importer in a child scope,
so they read the names of every enclosing graph. A loop becomes::

    let %loop = fn (%i, %cond, %carried..., %scan_acc...) {
      if (%i < %trip_count && %cond) {
        <body>; %loop(%i + 1, %cond_out, %carried_out..., concat(%scan_acc, [%scan_out])...)
      } else { (%carried..., %scan_acc...) }
    };
    %loop(0, %cond_init, %carried_init..., <empty>...)

Scan outputs accumulate along a new leading axis whose extent is ``Any`` (known once
the loop has run). A loop-carried value whose shape changes between iterations gets
``Any`` extents on the dims that change (its rank must stay).
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import Call, Function, If, Let, Tuple, TupleGetItem, Var, const
from ...ir.types import Any, FuncType, TensorType, TupleType
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, constant_value, convert_subgraph, ttype, value
from .sequence import EMPTY

TABLE = OnnxTable()


def _scalar(x, dtype):
    x = T.reshape(x, ())
    return x if ttype(x).dtype == dtype else T.cast(x, dtype)


def _like_declared(x, vi):
    """``x`` reshaped to the rank a subgraph input declares ([] or [1] for counters)."""
    dims = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else None
    if dims is not None and len(dims) == 1 and ttype(x).ndim == 0:
        return T.reshape(x, (1,))
    return x


@TABLE.register("If")
def if_(cond, then_branch, else_branch, _outputs=1):
    picked = constant_value(cond)
    if picked is not None:  # a constant condition: only the branch taken is converted
        outs = convert_subgraph(then_branch if bool(np.asarray(picked).reshape(-1)[0])
                                else else_branch, {})
        return outs[0] if len(outs) == 1 else tuple(outs)
    # a sequence output (a list) is a tuple inside the if, a list again after it
    then_outs = [Tuple(o) if isinstance(o, list) else o for o in convert_subgraph(then_branch, {})]
    else_outs = [Tuple(o) if isinstance(o, list) else o for o in convert_subgraph(else_branch, {})]
    for k, (t, e) in enumerate(zip(then_outs, else_outs)):
        if t is EMPTY or e is EMPTY:
            raise ConversionError(f"If output {k} is an empty optional in one branch only "
                                  "(Relay's if needs one type)")
        if ttype(t) != ttype(e):
            raise ConversionError(f"If output {k} has type {ttype(t)} in then_branch but "
                                  f"{ttype(e)} in else_branch (Relay's if needs one type)")
    result = If(_scalar(cond, "bool"), Tuple(then_outs), Tuple(else_outs))
    outs = []
    for k, t in enumerate(then_outs):
        out = TupleGetItem(result, k)
        outs.append([TupleGetItem(out, j) for j in range(len(t.fields))]
                    if isinstance(t, Tuple) else out)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _relaxed(declared: TensorType, produced: TensorType, what: str) -> TensorType:
    if declared.dtype != produced.dtype or declared.ndim != produced.ndim:
        raise ConversionError(f"{what} changes from {declared} to {produced} in the loop "
                              "body (the dtype and rank must stay)")
    dims = tuple(a if a == b else Any() for a, b in zip(declared.shape, produced.shape))
    return TensorType(dims, declared.dtype)


def recursive_loop(trip_count, cond, carried, step):
    """Build the loop; ``step(i, cond, carried_vars)`` converts the body once and returns
    ``(cond_out | None, carried_out, scan_outs)``. Returns ``(finals, stacked scans)``."""
    i = Var("i", TensorType((), "int64"))
    c = Var("cond", TensorType((), "bool"))
    types = [ttype(v) for v in carried]
    for _ in range(len(types) + 1):  # relax changing shapes until the body agrees
        vs = [Var(f"v{k}", t) for k, t in enumerate(types)]
        cond_out, outs, scans = step(i, c, vs)
        produced = [ttype(o) for o in outs]
        new = [_relaxed(t, p, f"loop-carried value {k}") if t != p else t
               for k, (t, p) in enumerate(zip(types, produced))]
        if new == types:
            break
        types = new
    else:
        raise ConversionError("loop-carried types do not settle")
    elems = [ttype(s) for s in scans]
    for k, e in enumerate(elems):
        if not e.is_static:
            raise ConversionError(f"scan output {k} has a dynamic shape {e} (not supported)")
    accs = [Var(f"scan{k}", TensorType((Any(), *e.shape), e.dtype)) for k, e in enumerate(elems)]
    ret = TupleType(tuple(types) + tuple(a.type_annotation for a in accs))
    params = [i, c, *vs, *accs]
    loop = Var("loop", FuncType(tuple(p.type_annotation for p in params), ret))

    go = c
    if trip_count is not None:
        go = E.logical_and(E.less(i, _scalar(trip_count, "int64")), c)
    nxt = [E.add(i, const(np.asarray(1, "int64"))),
           _scalar(cond_out, "bool") if cond_out is not None else c, *outs,
           *[T.concatenate([a, T.expand_dims(s, 0)], 0) for a, s in zip(accs, scans)]]
    body = If(go, Call(loop, nxt), Tuple([*vs, *accs]))
    fn = Function(params, body, ret_type=ret)
    start = [const(np.asarray(0, "int64")),
             _scalar(cond, "bool") if cond is not None else const(np.asarray(True)),
             *carried, *[const(np.zeros((0, *e.shape), e.dtype)) for e in elems]]
    result = Let(loop, fn, Call(loop, start))
    n = len(carried)
    return ([TupleGetItem(result, k) for k in range(n)],
            [TupleGetItem(result, n + k) for k in range(len(elems))])


@TABLE.register("Loop")
def loop(trip_count=None, cond=None, *initial, body, _outputs=1):
    formal = list(body.input)

    def step(i, c, vs):
        bound = {formal[0].name: _like_declared(i, formal[0]),
                 formal[1].name: _like_declared(c, formal[1])}
        bound.update({f.name: v for f, v in zip(formal[2:], vs)})
        outs = convert_subgraph(body, bound)
        return outs[0], outs[1:1 + len(vs)], outs[1 + len(vs):]

    if any(isinstance(v, list) for v in initial):
        finals, scans = _unrolled(trip_count, cond, list(initial), step)
    else:
        finals, scans = recursive_loop(trip_count, cond, list(initial), step)
    outs = finals + scans
    return outs[0] if len(outs) == 1 else tuple(outs)


def _unrolled(trip_count, cond, carried, step, limit=4096):
    """A loop carrying a sequence (whose length changes per iteration, so no Relay type
    fits it) is unrolled when the trip count and every condition are known."""
    n = constant_value(trip_count) if trip_count is not None else None
    go = True if cond is None else constant_value(cond)
    if (trip_count is not None and n is None) or go is None:
        raise ConversionError("a loop-carried sequence needs a trip count and condition "
                              "known when importing (the loop is unrolled)")
    n = limit if n is None else int(np.asarray(n).reshape(()))
    scans: list = []
    for k in range(n):
        if not bool(np.asarray(go).reshape(())):
            break
        i = const(np.asarray(k, "int64"))
        cond_out, carried, outs = step(i, const(np.asarray(True)), carried)
        go = constant_value(cond_out)
        if go is None:
            raise ConversionError("a loop-carried sequence needs a condition known when "
                                  "importing (the loop is unrolled)")
        scans.append(outs)
    else:
        if trip_count is None:
            raise ConversionError(f"loop still running after {limit} unrolled iterations")
    if not scans:
        raise ConversionError("an unrolled loop that never runs has no scan output shapes")
    stacked = [T.stack([s[k] for s in scans], 0) for k in range(len(scans[0]))]
    return list(carried), stacked


def _axes(values, n, default=0):
    return [int(a) for a in values] if values is not None else [default] * n


@TABLE.register("Scan", since=9)
def scan(*inputs, body, num_scan_inputs, scan_input_axes=None, scan_input_directions=None,
         scan_output_axes=None, scan_output_directions=None, _outputs=1):
    n_state = len(inputs) - num_scan_inputs
    states, xs = list(inputs[:n_state]), list(inputs[n_state:])
    in_axes = [a + ttype(x).ndim if a < 0 else a
               for a, x in zip(_axes(scan_input_axes, len(xs)), xs)]
    in_dirs = _axes(scan_input_directions, len(xs))
    lengths = {ttype(x).shape[a] for x, a in zip(xs, in_axes)}
    if len(lengths) != 1 or not isinstance(next(iter(lengths)), int):
        raise ConversionError(f"Scan inputs need one static sequence length, found {lengths}")
    steps = next(iter(lengths))
    formal = list(body.input)

    def step(i, c, vs):
        last = const(np.asarray(steps - 1, "int64"))
        bound = {f.name: v for f, v in zip(formal, vs)}
        for f, x, a, d in zip(formal[n_state:], xs, in_axes, in_dirs):
            bound[f.name] = T.take(x, E.subtract(last, i) if d else i, axis=a)
        outs = convert_subgraph(body, bound)
        return None, outs[:n_state], outs[n_state:]

    finals, stacked = recursive_loop(const(np.asarray(steps, "int64")), None, states, step)
    out_axes = _axes(scan_output_axes, len(stacked))
    out_dirs = _axes(scan_output_directions, len(stacked))
    results = []
    for s, a, d in zip(stacked, out_axes, out_dirs):
        if d:
            s = T.reverse(s, 0)
        n = ttype(s).ndim
        a = a + n if a < 0 else a
        if a != 0:  # the stacking axis moves to position a
            perm = list(range(1, n))
            perm.insert(a, 0)
            s = T.transpose(s, perm)
        results.append(s)
    outs = finals + results
    return outs[0] if len(outs) == 1 else tuple(outs)


@TABLE.register("Scan", since=8)
def scan_v8(sequence_lens, *inputs, body, num_scan_inputs, directions=None, _outputs=1):
    """Opset 8: every input has a leading batch axis (the sequence axis is 1); each batch
    entry is the opset-9 scan of its slices, and the results are stacked again."""
    if sequence_lens is not None:
        lens = np.asarray(value(sequence_lens, "sequence_lens")).reshape(-1)
        full = ttype(inputs[-1]).shape[1]
        if np.any(lens != full):
            raise ConversionError("Scan with sequence_lens shorter than the sequence is "
                                  "not supported")
    batch = ttype(inputs[0]).shape[0]
    if not isinstance(batch, int):
        raise ConversionError(f"Scan (opset 8) needs a static batch size, found {batch}")
    per_batch = []
    for b in range(batch):
        sliced = [T.take(x, const(np.int64(b)), axis=0) for x in inputs]
        out = scan(*sliced, body=body, num_scan_inputs=num_scan_inputs,
                   scan_input_directions=directions)
        per_batch.append(out if isinstance(out, tuple) else (out,))
    outs = tuple(T.stack([o[k] for o in per_batch], 0) for k in range(len(per_batch[0])))
    return outs[0] if len(outs) == 1 else outs
