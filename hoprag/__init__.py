"""hoprag: the retrieval engine -- corpus, rankers, reader, gates, graph, grep and the multi-hop walker.

It imports neither MCP nor ADK: :mod:`mcp_server` is the protocol surface over it and
:mod:`agents.hoprag_agent` the ADK app that calls it through MCP.

    >>> from hoprag import Engine, DEMO_CORPUS
    >>> engine = Engine.load(DEMO_CORPUS)
"""

from .engine import Engine
from .settings import DEMO_CORPUS, Settings, resolve

__all__ = ["DEMO_CORPUS", "Engine", "Settings", "resolve"]
