"""The MCP surface of hoprag: typed tools, transports and auth over the :mod:`hoprag` engine.

``tools`` holds the six tools as plain functions with their limits and result models, ``auth``
who a call runs as, ``server`` registers the tools on an MCP server (and its HTTP app), ``run``
is ``hoprag serve``: stdio or stateless Streamable HTTP. Retrieval itself lives in the engine library.
"""
