"""hoprag retrieval engine and its MCP surface.

The engine modules (corpus, lexicon, index, reader, gate, graph, grep, loop, costs,
injection, access) import nothing from MCP, so they can be used and tested as a plain
library; only ``server`` speaks the protocol.
"""
