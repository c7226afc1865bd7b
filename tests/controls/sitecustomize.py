"""A negative control for the eval sets, loaded only with ``PYTHONPATH=tests/controls``.

``HOPRAG_CONTROL_USELESS_RANKER=1`` replaces every view's ranking with a ranker that returns
nothing useful: the same first passages by id, whatever the query. It reaches the MCP server
subprocesses ``adk eval`` starts, since they inherit the environment.
"""

import os

if os.environ.get("HOPRAG_CONTROL_USELESS_RANKER") == "1":
    from hoprag import search

    def _useless(self: "search.View", query: str, k: int) -> list["search.Hit"]:
        return [search.Hit(d, 1.0) for d in sorted(self.docs, key=lambda d: d.id)[:max(k, 0)]]

    search.View.search = _useless
