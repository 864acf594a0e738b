"""``tvm.ir.save_json`` / ``load_json`` for relayir's nodes: an expression or a module as
its Relay text (constants in the text's metadata section) inside a small JSON object,
read back with relayir's parser. TVM's own node-graph JSON (``root``/``nodes``, as TVM
wrote it) is not read: it is refused by name."""

from __future__ import annotations

import json

from ...ir.expr import Expr
from ...ir.module import IRModule
from ...ir.parser import parse, parse_expr
from ...ir.printer import astext
from ...version import __version__
from ..error import NotInRelayirError

FORMAT = "relayir.node_json"


def save_json(node) -> str:
    """``node`` (an expression or an ``IRModule``) as a JSON string."""
    if isinstance(node, IRModule):
        kind = "module"
    elif isinstance(node, Expr):
        kind = "expr"
    else:
        raise NotInRelayirError(f"tvm.ir.save_json of a {type(node).__name__} is not part "
                                "of relayir: it saves expressions and modules (as Relay text)")
    return json.dumps({"format": FORMAT, "relayir_version": __version__, "kind": kind,
                       "text": astext(node)})


def load_json(text: str):
    """The expression or module ``save_json`` wrote."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = "TVM's node-graph JSON (root, nodes)" if isinstance(data, dict) and \
            "nodes" in data else f"JSON without format {FORMAT!r}"
        raise NotInRelayirError(f"tvm.ir.load_json of {found} is not part of relayir: it "
                                "reads what relayir.tvm's save_json wrote (Relay text)")
    if data.get("kind") == "module":
        return parse(data["text"])
    return parse_expr(data["text"])


__all__ = ["load_json", "save_json"]
