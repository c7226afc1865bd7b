"""Negative controls for the eval sets, loaded only with ``PYTHONPATH=tests/controls``.

``HOPRAG_CONTROL_USELESS_RANKER=1`` replaces every view's ranking with a ranker that returns
nothing useful: the same first passages by id, whatever the query (for a server process).

``HOPRAG_CONTROL_NEVER_SUFFICES=1`` makes the offline policy judge no passage sufficient (for the
``adk eval`` process itself): it walks until the budget is spent, then abstains.
"""

import os

if os.environ.get("HOPRAG_CONTROL_USELESS_RANKER") == "1":
    from hoprag import search

    def _useless(self: "search.View", query: str, k: int) -> list["search.Hit"]:
        return [search.Hit(d, 1.0) for d in sorted(self.docs, key=lambda d: d.id)[:max(k, 0)]]

    search.View.search = _useless

if os.environ.get("HOPRAG_CONTROL_NEVER_SUFFICES") == "1":
    from agents.hoprag_agent import policy

    policy.COVERS = policy.ANSWERS = 2.0  # coverage never exceeds 1
