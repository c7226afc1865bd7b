"""``python -m mcp_server``: the same as ``hoprag serve``."""

import gc

gc.disable()  # before the imports too (the MCP SDK's and pydantic's objects): see serve()

from .run import main  # noqa: E402

main()
