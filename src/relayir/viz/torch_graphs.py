"""PyTorch's side of two comparisons, as graphs in ``dataflow.Graph``'s form.

- ``export_graph``: the FX graph of a ``torch.export`` program (placeholders,
  ``call_function`` nodes named as FX names them, the output), beside the Relay graph
  the frontend made of it;
- ``autograd_graph``: the tape PyTorch records while a loss is computed, walked from
  ``loss.grad_fn`` through ``next_functions`` (each ``AccumulateGrad`` leaf named as the
  parameter it fills), drawn from the leaves to the loss.

torch is optional: callers import it; this module only reads the objects it is given.
"""

from __future__ import annotations

from .graph import Graph, make_graph


def _meta_type(value) -> str:
    """``1×784 float32`` of a (fake) tensor, ``(…)`` of a tuple of them, else ""."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        dims = "×".join(str(d) for d in shape)
        name = str(dtype).replace("torch.", "")
        return f"{dims} {name}" if dims else name
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_meta_type(v) for v in value) + ")"
    return ""


def _target_name(target) -> str:
    """``aten.convolution.default`` → ``convolution``; a Python callable → its name."""
    text = str(target)
    if text.startswith("aten."):
        text = text[len("aten."):]
        return text[: -len(".default")] if text.endswith(".default") else text
    return getattr(target, "__name__", text)


def export_graph(program) -> Graph:
    """The FX graph of an ``ExportedProgram`` (``torch.export``)."""
    fx_nodes = list(program.graph.nodes)
    index = {n: i for i, n in enumerate(fx_nodes)}
    nodes, edges = [], []
    for i, n in enumerate(fx_nodes):
        ty = _meta_type(n.meta.get("val"))
        if n.op == "placeholder":
            label, kind = n.name, "input"
        elif n.op == "output":
            label, kind = "output", "output"
        elif n.op == "get_attr":
            label, kind = n.name, "input"
        else:
            label, kind = _target_name(n.target), "op"
        nodes.append({"l": label, "k": kind, "t": ty, "c": -1, "n": f"{label} {n.name}",
                      "h": "\n".join(x for x in (f"{n.name} = {n.op}[{label}]", ty) if x)})
        for a in n.all_input_nodes:
            edges.append((index[a], i))
    out = [i for i, n in enumerate(fx_nodes) if n.op == "output"]
    if out:
        nodes[out[-1]]["o"] = 1
    return make_graph(nodes, edges)


def autograd_graph(loss, names: dict[int, str] | None = None) -> Graph:
    """The autograd graph behind ``loss`` (a tensor with ``grad_fn``); ``names`` maps
    ``id(parameter)`` to a name for the ``AccumulateGrad`` leaves."""
    names = names or {}
    order: list = []
    index: dict[int, int] = {}
    stack = [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in index:
            continue
        index[id(fn)] = len(order)
        order.append(fn)
        stack.extend(nxt for nxt, _ in fn.next_functions if nxt is not None)
    nodes, edges = [], []
    for i, fn in enumerate(order):
        label = type(fn).__name__
        variable = getattr(fn, "variable", None)
        ty = _meta_type(variable) if variable is not None else ""
        name = names.get(id(variable), "") if variable is not None else ""
        nodes.append({"l": f"{label} {name}".strip(), "k": "input" if variable is not None
                      else "op", "t": ty, "c": -1, "n": f"{label} {name}".strip(),
                      "h": "\n".join(x for x in (label, name, ty) if x)})
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                edges.append((index[id(nxt)], i))  # drawn forward: from the leaves
    if nodes:
        nodes[0]["o"] = 1
    return make_graph(nodes, edges)


__all__ = ["autograd_graph", "export_graph"]
