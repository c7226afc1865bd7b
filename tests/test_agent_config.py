"""Model selection and limits come from configuration; nothing is contacted to decide them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from google.adk.models import LLMRegistry

from agents.hoprag_agent.offline_model import HopragPolicyLlm
from agents.hoprag_agent.config import SettingsError, resolve, unused_keys_note
from agents.hoprag_agent.models import model_for
from conftest import ROOT


@pytest.mark.parametrize("env, model", [
    ({}, "hoprag-offline"),
    ({"GOOGLE_API_KEY": "not-a-real-key"}, "hoprag-offline"),  # a key in the environment never switches models
    ({"GOOGLE_GENAI_USE_VERTEXAI": "true"}, "hoprag-offline"),
    ({"GOOGLE_API_KEY": "not-a-real-key", "HOPRAG_MODEL": "gemini-2.5-flash"}, "gemini-2.5-flash"),
    ({"HOPRAG_MODEL": "gemini-2.5-pro"}, "gemini-2.5-pro"),
    ({"HOPRAG_MODEL": " openai/qwen2.5 "}, "openai/qwen2.5"),
])
def test_model_choice(monkeypatch, env, model):
    for key in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "HOPRAG_MODEL"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert resolve().model == model


def test_a_flag_beats_the_environment():
    assert resolve(env={"HOPRAG_MODEL": "gemini-2.5-pro"}, model="hoprag-offline").model == "hoprag-offline"
    chosen = resolve(env={"HOPRAG_MODEL_BASE_URL": "http://127.0.0.1:1/v1"}, model_base_url="http://127.0.0.1:2/v1")
    assert chosen.model_base_url == "http://127.0.0.1:2/v1"


@pytest.mark.parametrize("env, says", [
    ({}, None),
    ({"HOPRAG_MODEL": "gemini-2.5-flash", "GOOGLE_API_KEY": "k"}, None),  # used, so nothing to say
    ({"GOOGLE_API_KEY": "k"}, "GOOGLE_API_KEY is set but unused"),
    ({"GEMINI_API_KEY": "k", "OPENAI_API_KEY": "k"}, "GEMINI_API_KEY, OPENAI_API_KEY are set but unused"),
])
def test_an_unused_key_is_said_not_silently_used(env, says):
    note = unused_keys_note(resolve(env=env), env)
    assert (note is None) if says is None else (says in note and "HOPRAG_MODEL" in note)


def test_a_model_name_adk_does_not_know_is_a_settings_error():
    with pytest.raises(SettingsError, match="model 'no-such-model' .HOPRAG_MODEL / --model. is not one ADK knows"):
        model_for(resolve(env={}, model="no-such-model"))


@pytest.mark.slow  # builds model clients in a subprocess: 2.5 s or more
def test_a_base_url_binds_gemini_and_litellm_clients():
    gemini = model_for(resolve(env={}, model="gemini-2.5-flash", model_base_url="http://127.0.0.1:9"))
    assert type(gemini).__name__ == "Gemini" and gemini.base_url == "http://127.0.0.1:9"
    local = model_for(resolve(env={}, model="openai/qwen2.5", model_base_url="http://127.0.0.1:9/v1"))
    assert type(local).__name__ == "LiteLlm" and local._additional_args["api_base"] == "http://127.0.0.1:9/v1"
    assert model_for(resolve(env={}, model="gemini-2.5-flash")) == "gemini-2.5-flash"  # ADK builds it by name
    with pytest.raises(SettingsError, match="HOPRAG_MODEL_BASE_URL is for Gemini and LiteLLM"):
        model_for(resolve(env={}, model="hoprag-offline", model_base_url="http://127.0.0.1:9"))


def test_offline_model_is_registered_under_its_documented_names():
    assert LLMRegistry.resolve("hoprag-offline") is HopragPolicyLlm
    assert LLMRegistry.resolve("hoprag-offline-v2") is HopragPolicyLlm


@pytest.mark.parametrize("name, value", [("HOPRAG_MAX_ITERATIONS", "0"), ("HOPRAG_SEARCH_BUDGET", "-1")])
def test_limits_must_be_positive(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=name):
        resolve()


@pytest.mark.slow  # builds model clients in a subprocess: 2.5 s or more
def test_a_litellm_model_without_litellm_says_which_extra_to_install():
    done = subprocess.run([sys.executable, "-c", "import sys; sys.modules['litellm'] = None\n"
                           "from agents.hoprag_agent.models import model_for\nfrom agents.hoprag_agent.config import resolve\n"
                           "model_for(resolve(env={}, model='ollama_chat/llama3.1'))"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "runs through LiteLLM, which is not installed: pip install 'hoprag[local]'" in done.stderr


def test_building_the_app_is_lazy_and_says_when_a_key_goes_unused():
    """``adk web`` / ``adk run`` load ``root_agent``: importing builds nothing, loading it says what runs."""
    code = ("import agents.hoprag_agent.agent as a\nassert 'root_agent' not in vars(a)\n"
            "print(a.root_agent.sub_agents[0].model)")
    env = {k: v for k, v in os.environ.items() if k not in ("HOPRAG_MODEL", "GEMINI_API_KEY", "OPENAI_API_KEY")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**env, "GOOGLE_API_KEY": "k"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hoprag-offline"
    assert "GOOGLE_API_KEY is set but unused: the model is hoprag-offline" in done.stderr
