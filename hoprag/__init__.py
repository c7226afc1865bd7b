"""hoprag: agentic, permission-aware, cited retrieval over MCP and Google ADK."""

__version__ = "0.1.0"
