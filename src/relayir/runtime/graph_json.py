"""The structure of a graph JSON, checked before the graph executor reads it.

A built graph is always well formed; a loaded one comes from a file, which may be
damaged or hand-edited. ``check_graph`` checks every field the executor reads (node
list, row pointers, per-entry shapes and dtypes, storage ids and offsets, node inputs
and heads pointing at earlier entries), so a bad file is one clear error naming the
field, never a raw ``KeyError`` / ``IndexError`` / ``TypeError`` from deep inside
set-up, and never a kernel bound to a buffer smaller than its shape says.
"""

from __future__ import annotations

from ..errors import Error
from ..ir.types import DTYPES, numpy_dtype

MAX_BYTES = 2**63 - 1  # byte offsets are int64 in the kernels and in numpy


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _ints(value, n: int | None = None) -> bool:
    return (isinstance(value, list) and all(_is_int(v) and v >= 0 for v in value)
            and (n is None or len(value) == n))


def check_graph(graph, error: type = Error) -> None:
    """Raise ``error`` naming the first malformed field of ``graph``, or return."""

    def bad(msg: str):
        raise error(f"the graph JSON is malformed: {msg}")

    if not isinstance(graph, dict):
        bad(f"expected an object, found {type(graph).__name__}")
    for key, kind in (("nodes", list), ("node_row_ptr", list), ("heads", list),
                      ("attrs", dict)):
        if not isinstance(graph.get(key), kind):
            bad(f"{key!r} must be a {kind.__name__}, found {type(graph.get(key)).__name__}")
    nodes, row_ptr, attrs = graph["nodes"], graph["node_row_ptr"], graph["attrs"]
    if not _ints(row_ptr, len(nodes) + 1) or row_ptr[0] != 0 or any(
            b < a for a, b in zip(row_ptr, row_ptr[1:])):
        bad(f"node_row_ptr must be {len(nodes) + 1} non-decreasing ints from 0")
    n = row_ptr[-1]
    shapes, dtypes = _attr(attrs, "shape", n, bad), _attr(attrs, "dltype", n, bad)
    for key in ("storage_id", "storage_offset"):
        if key in attrs and not _ints(_attr(attrs, key, n, bad)):
            bad(f"attrs.{key} must hold non-negative ints")
    for eid, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        if not _ints(shape):
            bad(f"entry {eid}: shape {shape!r} is not a list of non-negative ints")
        if dtype not in DTYPES:
            bad(f"entry {eid}: dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        nbytes = numpy_dtype(dtype).itemsize
        for d in shape:
            nbytes *= d
        if nbytes > MAX_BYTES:
            bad(f"entry {eid}: shape {shape} of {dtype} holds {nbytes} bytes, more than "
                f"2**63 - 1")
    for nid, node in enumerate(nodes):
        _check_node(nid, node, row_ptr, bad)
    for head in graph["heads"]:
        _check_ref(f"head {head!r}", head, len(nodes), row_ptr, bad)
    names = graph.get("output_names")
    if names is not None and not (isinstance(names, list) and len(names) == len(graph["heads"])
                                  and all(isinstance(n, str) for n in names)):
        bad(f"output_names must be one string per head ({len(graph['heads'])})")


def _attr(attrs: dict, key: str, n: int, bad) -> list:
    value = attrs.get(key)
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], list)
            and len(value[1]) == n):
        bad(f"attrs.{key} must be [type tag, list of {n} entries], found {str(value)[:60]}")
    return value[1]


def _check_node(nid: int, node, row_ptr: list, bad) -> None:
    if not (isinstance(node, dict) and isinstance(node.get("op"), str)
            and isinstance(node.get("name"), str) and isinstance(node.get("inputs"), list)):
        bad(f"node {nid} must be an object with op, name and inputs, found {str(node)[:60]}")
    outputs = row_ptr[nid + 1] - row_ptr[nid]
    if node["op"] == "null":
        if outputs != 1 or node["inputs"]:
            bad(f"node {nid} ({node['name']}): an input has one entry and no inputs")
        return
    attrs = node.get("attrs")
    if not (isinstance(attrs, dict) and isinstance(attrs.get("func_name"), str)):
        bad(f"node {nid} ({node['name']}): a kernel call needs attrs.func_name")
    for ref in node["inputs"]:
        _check_ref(f"node {nid} ({node['name']}) input {ref!r}", ref, nid, row_ptr, bad)


def _check_ref(what: str, ref, limit: int, row_ptr: list, bad) -> None:
    """``[node id, output index, version]``: an earlier node (below ``limit``) and one
    of its outputs."""
    if not (isinstance(ref, list) and len(ref) >= 2 and _is_int(ref[0]) and _is_int(ref[1])):
        bad(f"{what}: expected [node id, output index, version]")
    src, index = ref[0], ref[1]
    if not 0 <= src < limit:
        bad(f"{what}: node {src} is not an earlier node (0 <= id < {limit})")
    if not 0 <= index < row_ptr[src + 1] - row_ptr[src]:
        bad(f"{what}: node {src} has {row_ptr[src + 1] - row_ptr[src]} outputs")


__all__ = ["MAX_BYTES", "check_graph"]
