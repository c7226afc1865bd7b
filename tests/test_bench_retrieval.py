"""The retrieval benchmark harness on a CI-sized MuSiQue slice (10 questions, their 20 candidates each)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks import musique
from benchmarks.cli import bench_app
from benchmarks.retrieval import KS, Bench, evaluate, load_corpus, load_questions, recall_at, run
from benchmarks.strategies import STRATEGIES, BudgetExceeded, Strategy, Tools, agentic, bm25
from hoprag.corpus import Corpus, Doc
from hoprag.lexicon import Lexicon

SOURCE = musique.DEFAULT_SOURCE


@pytest.fixture(scope="module")
def slice_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("musique")
    musique.convert(SOURCE, out / "triples", limit=10)
    musique.convert(SOURCE, out / "plain", limit=10, triples=False)
    return out


@pytest.fixture(scope="module")
def bench(slice_dir) -> Bench:
    return Bench(load_corpus(slice_dir / "triples" / "corpus.jsonl"))


@pytest.fixture(scope="module")
def questions(slice_dir):
    return load_questions(slice_dir / "triples" / "questions.jsonl")


def test_converter_maps_supporting_paragraphs_and_hides_decompositions(slice_dir, bench, questions):
    raw = json.loads((SOURCE / "questions.json").read_text(encoding="utf-8"))[:10]
    records = [json.loads(line) for line in (slice_dir / "triples" / "questions.jsonl").read_text().splitlines()]
    assert all(set(r) == {"id", "question", "answer", "supporting_ids"} for r in records)
    docs = {d.id: d for d in bench.corpus.docs}
    for q, r in zip(raw, records):
        gold = {(p["title"], p["paragraph_text"]) for p in q["paragraphs"] if p["is_supporting"]}
        assert {(docs[i].title, docs[i].text) for i in r["supporting_ids"]} == gold
    assert len(docs) <= 10 * 20 and all(d.triples is not None for d in docs.values())


def test_json_report_has_the_documented_shape(slice_dir):
    d = slice_dir / "triples"
    result = CliRunner().invoke(bench_app, ["retrieval", "--corpus", str(d / "corpus.jsonl"),
                                            "--questions", str(d / "questions.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert list(report) == ["strategies"] and list(report["strategies"]) == list(STRATEGIES)
    for score in report["strategies"].values():
        assert set(score) == {"recall@2", "recall@5", "recall@10", "searches_per_question", "ms_per_question"}
        assert all(0 <= score[f"recall@{k}"] <= 1 for k in KS)
        assert score["recall@2"] <= score["recall@5"] <= score["recall@10"]


def test_offset_and_limit_select_a_question_range(slice_dir):
    """Develop on one range and hold another out: ``--offset`` skips, ``--limit`` caps what is left."""
    d = slice_dir / "triples"
    args = ["retrieval", "--corpus", str(d / "corpus.jsonl"), "--questions", str(d / "questions.jsonl"),
            "--strategies", "bm25"]
    tail = CliRunner().invoke(bench_app, [*args, "--offset", "7", "--limit", "5"])
    assert tail.exit_code == 0 and tail.stdout.startswith("3 questions"), tail.output
    past = CliRunner().invoke(bench_app, [*args, "--offset", "10"])
    assert past.exit_code == 1 and "--offset 10 leaves no question" in past.output and "Traceback" not in past.output


def test_a_corpus_without_triples_still_works(slice_dir):
    plain = slice_dir / "plain"
    bench = Bench(load_corpus(plain / "corpus.jsonl"))
    assert all(d.triples is None for d in bench.corpus.docs)
    scores = run(bench, load_questions(plain / "questions.jsonl"), STRATEGIES)
    assert all(0 < s.recall[10] <= 1 for s in scores.values())


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_strategies_respect_the_search_budget(bench, questions, budget):
    for name, strategy in STRATEGIES.items():
        for q in questions:
            tools = Tools(bench.view(strategy.ranker), budget)
            strategy.run(q.question, tools)
            assert 1 <= tools.searches <= budget, name


def test_the_search_tool_refuses_to_exceed_the_budget(bench):
    tools = Tools(bench.view("bm25"), 1)
    tools.search("river")
    with pytest.raises(BudgetExceeded):
        tools.search("river")


def test_negative_controls_score_lower(bench, questions):
    rng = random.Random(0)
    ids = [d.id for d in bench.corpus.docs]
    controls = {"empty": Strategy("bm25", lambda q, tools: []),
                "random": Strategy("bm25", lambda q, tools: rng.sample(ids, 10)), "bm25": STRATEGIES["bm25"]}
    scores = run(bench, questions, controls)
    assert all(v == 0 for v in scores["empty"].recall.values())
    assert scores["random"].recall[5] < scores["bm25"].recall[5]
    assert scores["empty"].searches_per_question == 0


def test_recall_counts_gold_passages_in_the_top_k():
    assert recall_at(["a", "x", "b"], ["a", "b"], 2) == 0.5
    assert recall_at(["a", "x", "b"], ["a", "b"], 3) == 1.0
    assert recall_at([], ["a"], 10) == 0.0


def test_the_loop_follows_a_bridge_one_shot_cannot_see():
    """No triples: the bridge "Acme Corp" comes from a capitalised span of the passage just read."""
    texts = {"w": "Widget Nine is made by Acme Corp in Ohio.", "a": "Acme Corp was founded by Jane Roe in 1950.",
             **{f"d{i}": f"The maker of Widget {i} was founded in Ohio; who founded it is unknown." for i in range(6)}}
    docs = tuple(Doc(i, t, frozenset({"public"}), title=f"Page {i}") for i, t in texts.items())
    bench = Bench(Corpus(docs, Lexicon(())))
    question = "Who founded the maker of Widget Nine?"
    assert "a" not in bm25(question, Tools(bench.view("bm25"), 1), k=2)
    tools = Tools(bench.view("bm25-titles"), 3)
    assert set(agentic(question, tools)[:2]) == {"w", "a"} and tools.searches >= 2
    assert evaluate(bench, [], STRATEGIES["bm25"]).recall == {k: 0.0 for k in KS}


@pytest.mark.slow  # every dense strategy over the slice: about 30 s
def test_dense_and_hybrid_strategies_embed_once_into_the_cache(slice_dir, questions, tmp_path):
    """Passage vectors are embedded once per corpus and embedder, then read from the cache folder;
    every dense strategy runs within the budget, and a store written for the agent serves them hybrid."""
    from benchmarks.strategies import DENSE_STRATEGIES, write_store
    from fake_models import HashEmbedder
    from hoprag.engine import Engine
    from hoprag.store import open_store

    corpus = load_corpus(slice_dir / "triples" / "corpus.jsonl")
    first = Bench(corpus, HashEmbedder(), tmp_path / "vectors")
    scores = run(first, questions, DENSE_STRATEGIES, budget=3)
    assert first.embed_seconds > 0 and len(list((tmp_path / "vectors").glob("*.npy"))) == 1
    assert all(0 < s.recall[10] <= 1 and s.searches_per_question <= 3 for s in scores.values())
    again = Bench(corpus, HashEmbedder(), tmp_path / "vectors")
    assert again.vectors.matrix.shape == (len(corpus.docs), 48) and again.embed_seconds == 0  # read, not embedded
    write_store(corpus, again.vectors, tmp_path / "bench.db", "corpus.jsonl")
    snapshot = open_store(tmp_path / "bench.db").snapshot()
    assert snapshot.vectors.missing == 0 and sorted(snapshot.docs.ids) == sorted(d.id for d in corpus.docs)
    with pytest.raises(ValueError, match="dense and hybrid strategies need an embedder"):
        run(Bench(corpus), questions, {"dense": DENSE_STRATEGIES["dense"]})
    assert Engine.from_snapshot(snapshot, embedder="none").vectors is None
