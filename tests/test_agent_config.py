"""Model selection and limits come from configuration; nothing is contacted to decide them."""

from __future__ import annotations

import pytest
from google.adk.models import LLMRegistry

from agents.hoprag_agent.offline_model import HopragPolicyLlm
from hoprag.settings import SettingsError, resolve


@pytest.mark.parametrize("env, model", [
    ({}, "hoprag-offline"),
    ({"GOOGLE_API_KEY": "not-a-real-key"}, "gemini-2.5-flash"),
    ({"GOOGLE_API_KEY": "not-a-real-key", "HOPRAG_MODEL": "hoprag-offline"}, "hoprag-offline"),
    ({"HOPRAG_MODEL": "gemini-2.5-pro"}, "gemini-2.5-pro"),
])
def test_model_choice(monkeypatch, env, model):
    for key in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "HOPRAG_MODEL"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert resolve().model == model


def test_offline_model_is_registered_under_its_documented_names():
    assert LLMRegistry.resolve("hoprag-offline") is HopragPolicyLlm
    assert LLMRegistry.resolve("hoprag-offline-v2") is HopragPolicyLlm


@pytest.mark.parametrize("name, value", [("HOPRAG_MAX_ITERATIONS", "0"), ("HOPRAG_SEARCH_BUDGET", "-1")])
def test_limits_must_be_positive(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=name):
        resolve()
