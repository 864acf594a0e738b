"""``relayir.graph_executor`` (Relay's module path): the graph executor's ``GraphModule``."""

from .runtime.graph_executor import GraphModule

__all__ = ["GraphModule"]
