"""Negative controls for the eval sets, loaded only with ``PYTHONPATH=tests/controls``.

``HOPRAG_CONTROL_USELESS_RANKER=1`` replaces every view's ranking with a ranker that returns
nothing useful: the same first passages by id, whatever the query (for a server process).

``HOPRAG_CONTROL_NO_EVIDENCE=1`` makes every search hit say it answers nothing (coverage 0, no
highlights): a server that gives no evidence of sufficiency, so the agent walks until its budget
is spent, then abstains. ``HOPRAG_CONTROL_ALL_EVIDENCE=1`` is the opposite: every hit says it
covers the whole question with its first sentence, so the agent never abstains.

Both reach a server process started with this environment (an HTTP server; ``adk eval``'s own
stdio servers do not inherit it).
"""

import os

if os.environ.get("HOPRAG_CONTROL_USELESS_RANKER") == "1":
    from hoprag import search

    def _useless(self: "search.View", query: str, k: int) -> list["search.Hit"]:
        return [search.Hit(d, 1.0) for d in sorted(self.docs, key=lambda d: d.id)[:max(k, 0)]]

    search.View.search = _useless

if os.environ.get("HOPRAG_CONTROL_NO_EVIDENCE") == "1":
    from hoprag import assess

    assess.assess = lambda question, text, context="": assess.Assessment(0.0, ())

if os.environ.get("HOPRAG_CONTROL_ALL_EVIDENCE") == "1":
    from hoprag import assess

    def _everything(question, text, context=""):
        first = text.split(". ")[0]
        return assess.Assessment(1.0, (assess.Highlight(first, 0, len(first)),), (), 1.0)

    assess.assess = _everything
