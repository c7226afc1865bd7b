"""The ``hoprag`` command line: the front door over the engine, the MCP server, the agent and the benchmarks."""
