"""Agent settings from the environment (``.env`` files work too, as ``adk`` loads them).

| variable | default | meaning |
|---|---|---|
| ``HOPRAG_MODEL`` | ``hoprag-offline`` (or ``gemini-2.5-flash`` when ``GOOGLE_API_KEY`` is set) | model for every role |
| ``HOPRAG_MAX_ITERATIONS`` | 4 | grader/researcher rounds (``LoopAgent.max_iterations``) |
| ``HOPRAG_SEARCH_BUDGET`` | 4 | hard cap on ``search`` calls per question |
| ``HOPRAG_MCP_URL`` | unset | use a running stateless HTTP server instead of stdio subprocesses |
| ``HOPRAG_CORPUS`` / ``HOPRAG_ACCESS`` / ``HOPRAG_RANKER`` | the Falcon corpus | what the stdio server serves |
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

OFFLINE_MODEL = "hoprag-offline"
GEMINI_MODEL = "gemini-2.5-flash"


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    value = int(raw)
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


@dataclass(frozen=True)
class Settings:
    model: str
    max_iterations: int
    search_budget: int
    mcp_url: str | None
    corpus: Path
    access: Path | None
    ranker: str | None


def load() -> Settings:
    from mcp_server import settings as server_settings

    uses_gemini = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")
    model = os.environ.get("HOPRAG_MODEL") or (GEMINI_MODEL if uses_gemini else OFFLINE_MODEL)
    access = os.environ.get("HOPRAG_ACCESS")
    return Settings(
        model=model,
        max_iterations=_int("HOPRAG_MAX_ITERATIONS", 4),
        search_budget=_int("HOPRAG_SEARCH_BUDGET", 4),
        mcp_url=os.environ.get("HOPRAG_MCP_URL") or None,
        corpus=server_settings.corpus_path(),
        access=Path(access) if access else None,
        ranker=os.environ.get("HOPRAG_RANKER") or None,
    )
