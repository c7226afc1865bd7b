"""The agent's settings: the engine's (:mod:`hoprag.settings`) plus what only the agent reads.

| setting | flag (``hoprag ask``) | environment | default |
|---|---|---|---|
| read budget | -- | ``HOPRAG_SEARCH_BUDGET`` | 4 reads (searches + fetches) per question |
| loop rounds | -- | ``HOPRAG_MAX_ITERATIONS`` | 4 grader/researcher rounds |
| model | ``--model`` | ``HOPRAG_MODEL`` | ``hoprag-offline``, whatever keys the environment holds |
| model endpoint | ``--model-base-url`` | ``HOPRAG_MODEL_BASE_URL`` | the provider's own (or its SDK's variable) |
| MCP server | -- | ``HOPRAG_MCP_URL`` | none: a stdio subprocess per principal |

Flags win over the environment, the environment over the defaults, as for the engine's settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Mapping

from hoprag import settings
from hoprag.walk import DEFAULT_BUDGET

DEFAULT_ITERATIONS = 4
OFFLINE_MODEL = "hoprag-offline"
GEMINI_MODEL = "gemini-2.5-flash"
#: Variables that select a hosted model in other tools; here only ``HOPRAG_MODEL`` does, so a
#: key that happens to be exported never turns an offline run into a networked one.
MODEL_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "OPENAI_API_KEY")


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the variable or flag."""


@dataclass(frozen=True)
class AgentSettings(settings.Settings):
    search_budget: int = DEFAULT_BUDGET
    max_iterations: int = DEFAULT_ITERATIONS
    model: str = OFFLINE_MODEL
    mcp_url: str | None = None
    model_base_url: str | None = None


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise SettingsError(f"{name} must be a positive integer, got {raw!r}")
    return value


def resolve(env: Mapping[str, str] | None = None, **flags: object) -> AgentSettings:
    """Resolve every setting, the engine's and the agent's: a flag that is not ``None`` wins, then ``env``
    (``os.environ``), then the default."""
    env = os.environ if env is None else env
    engine = settings.resolve(env)
    base = AgentSettings(
        **{f.name: getattr(engine, f.name) for f in fields(engine)},
        search_budget=_positive(env, "HOPRAG_SEARCH_BUDGET", DEFAULT_BUDGET),
        max_iterations=_positive(env, "HOPRAG_MAX_ITERATIONS", DEFAULT_ITERATIONS),
        model=env.get("HOPRAG_MODEL", "").strip() or OFFLINE_MODEL,
        mcp_url=env.get("HOPRAG_MCP_URL") or None,
        model_base_url=env.get("HOPRAG_MODEL_BASE_URL", "").strip() or None,
    )
    return base.with_flags(**flags)  # type: ignore[return-value]  # replace() keeps the class


def unused_keys_note(resolved: AgentSettings, env: Mapping[str, str] | None = None) -> str | None:
    """A one-line note when model keys are exported but the offline model runs (never a silent switch)."""
    env = os.environ if env is None else env
    present = [k for k in MODEL_KEYS if env.get(k, "").strip().lower() not in ("", "0", "false")]
    if not present or resolved.model != OFFLINE_MODEL:
        return None
    return (f"note: {', '.join(present)} {'is' if len(present) == 1 else 'are'} set but unused: the model is "
            f"{OFFLINE_MODEL}; set HOPRAG_MODEL (e.g. {GEMINI_MODEL}) to use a hosted model")
