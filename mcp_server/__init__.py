"""The MCP surface of hoprag: typed tools, transports and auth over the :mod:`hoprag` engine.

``server`` builds the tools (each call made as the transport's verified caller), ``serve`` runs
them over stdio or stateless Streamable HTTP. Retrieval itself lives in the engine library.
"""
