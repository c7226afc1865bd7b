"""The layers' contracts, read from the source: what the agent may take from the engine.

The agent reaches the engine through MCP; what it imports from :mod:`hoprag` directly is a short list
of public names (settings and identity, the policy's text rules, the walker it replays). A new name
must be added here on purpose -- a private one never.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

#: Every ``hoprag`` name the agent imports, as ``module.name`` (a module imported whole is its own name).
AGENT_USES_FROM_ENGINE = frozenset({
    "hoprag.settings",
    "hoprag.access.Access", "hoprag.access.AccessError", "hoprag.access.Principal", "hoprag.access.load_access",
    "hoprag.corpus.Doc", "hoprag.corpus.load_corpus",
    "hoprag.assess.ASKING", "hoprag.assess.INLINE_CODE", "hoprag.assess.ITEM", "hoprag.assess.Question", "hoprag.assess.gives_default",
    "hoprag.assess.names_code", "hoprag.assess.release_notes", "hoprag.assess.states_default",
    "hoprag.assess.states_number", "hoprag.assess.states_place", "hoprag.assess.states_version", "hoprag.assess.stems",
    "hoprag.entities.norm",
    "hoprag.lexicon.Lexicon", "hoprag.lexicon.Relation",
    "hoprag.settings.NOTED",
    "hoprag.text.is_entity", "hoprag.text.is_name",
    "hoprag.tokens.content", "hoprag.tokens.identifiers", "hoprag.tokens.token_count", "hoprag.tokens.tokenize",
    "hoprag.verdict.Resolution", "hoprag.verdict.assess_all", "hoprag.verdict.resolve",
    "hoprag.walk.DEFAULT_BUDGET", "hoprag.walk.BridgeWalker", "hoprag.walk.Budget", "hoprag.walk.Hop",
    "hoprag.walk.edges_of", "hoprag.walk.fuse", "hoprag.walk.reach", "hoprag.walk.relation_graph", "hoprag.walk.specific",
})


def engine_names(folder: Path) -> set[str]:
    """Every ``hoprag`` name the Python files under ``folder`` import (any nesting: lazy imports too)."""
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "hoprag"}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "hoprag":
                found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_the_agent_imports_only_the_pinned_public_names_of_the_engine():
    used = engine_names(ROOT / "agents")
    assert used == AGENT_USES_FROM_ENGINE, (f"new: {sorted(used - AGENT_USES_FROM_ENGINE)}; "
                                            f"no longer used: {sorted(AGENT_USES_FROM_ENGINE - used)}")
    assert not [n for n in used if any(part.startswith("_") for part in n.split("."))]


def test_the_check_sees_lazy_and_aliased_imports(tmp_path: Path):
    (tmp_path / "a.py").write_text("from hoprag import settings as s\n\ndef f():\n    from hoprag.walk import _x\n"
                                   "    import hoprag.tokens\n", encoding="utf-8")
    assert engine_names(tmp_path) == {"hoprag.settings", "hoprag.walk._x", "hoprag.tokens"}
