"""``python -m mcp_server``: the same as ``hoprag serve``."""

from .serve import main

main()
