"""Which model every role runs on, and what a failing model looks like to the person who asked.

``HOPRAG_MODEL`` names the model exactly as ADK's ``LLMRegistry`` does: ``hoprag-offline`` (the
default), ``gemini-*`` (Google's API: ``GOOGLE_API_KEY``), or ``<provider>/<name>`` for any
LiteLLM provider -- ``openai/<name>`` for an OpenAI-compatible server (vLLM, llama.cpp, LM
Studio, Ollama's ``/v1``) and ``ollama_chat/<name>`` for Ollama's own API. ``HOPRAG_MODEL_BASE_URL``
points either family at another endpoint (a local server, a proxy, a test double).
"""

from __future__ import annotations

import os
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LLMRegistry
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest

from .config import OFFLINE_MODEL, AgentSettings, SettingsError


#: LiteLLM otherwise downloads its model price list on import: a local-model run stays local.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
#: OpenAI's client refuses to start without a key; a local OpenAI-compatible server ignores it.
LOCAL_KEY = "unused-by-local-servers"


class ModelError(RuntimeError):
    """The model could not be reached or refused the request; the message is one line with the fix."""


def _family(name: str) -> type[BaseLlm]:
    try:
        return LLMRegistry.resolve(name)
    except ValueError as exc:
        if "/" in name and "require the litellm package" in str(exc):
            raise SettingsError(f"model {name!r} runs through LiteLLM, which is not installed: "
                                "pip install 'hoprag[local]'") from None
        raise SettingsError(
            f"model {name!r} (HOPRAG_MODEL / --model) is not one ADK knows: use {OFFLINE_MODEL}, gemini-<version>, or "
            "<provider>/<name> for LiteLLM (openai/<name> with HOPRAG_MODEL_BASE_URL, ollama_chat/<name>)") from None


def model_for(settings: AgentSettings) -> str | BaseLlm:
    """The model of these settings: a registry name, or a client bound to ``model_base_url``."""
    family = _family(settings.model)
    if family.__name__ == "LiteLlm":
        import litellm

        litellm.suppress_debug_info = True  # else it prints "Give Feedback" banners to stdout, into --json
    if not settings.model_base_url:
        return settings.model
    from google.adk.models.google_llm import Gemini

    if issubclass(family, Gemini):
        return Gemini(model=settings.model, base_url=settings.model_base_url)
    from google.adk.models.lite_llm import LiteLlm

    if issubclass(family, LiteLlm):
        local = settings.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY")
        key = {"api_key": LOCAL_KEY} if local else {}
        return LiteLlm(model=settings.model, api_base=settings.model_base_url, **key)
    raise SettingsError(f"HOPRAG_MODEL_BASE_URL is for Gemini and LiteLLM models; {settings.model!r} takes none: "
                        "unset HOPRAG_MODEL_BASE_URL")


def on_model_error(settings: AgentSettings):
    """An ``on_model_error_callback``: any failure of the model call becomes one :class:`ModelError` line.

    Only the model call is wrapped, so a bug in the agent's own code still shows its traceback.
    """
    where = f" at {settings.model_base_url}" if settings.model_base_url else ""

    def callback(callback_context: CallbackContext, llm_request: LlmRequest, error: Exception) -> Any:
        cause = " ".join(str(error).split())[:300] or "no message"
        raise ModelError(f"model {settings.model!r}{where} failed in {callback_context.agent_name}: "
                         f"{type(error).__name__}: {cause} -- check HOPRAG_MODEL, HOPRAG_MODEL_BASE_URL, the "
                         f"provider's key and the network, or unset HOPRAG_MODEL to run {OFFLINE_MODEL} offline")

    return callback
