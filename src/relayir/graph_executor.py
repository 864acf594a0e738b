"""``relayir.graph_executor`` (Relay's module path): the graph executor's ``GraphModule``."""

from .runtime.graph_executor import GraphExecutor, GraphModule

__all__ = ["GraphExecutor", "GraphModule"]
