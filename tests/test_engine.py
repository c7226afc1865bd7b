"""Engine behaviour beyond the chapter's printouts: BM25, permission-first ranking, gate policy, grep."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from conftest import CORPUS, ENG, FIN
from hoprag.cache import Lru
from hoprag.corpus import Corpus, Doc
from hoprag.engine import Engine
from hoprag.verdict import assess_all, resolve
from hoprag.graph import local_search
from hoprag.lexicon import load_lexicon
from hoprag.questions import score
from benchmarks.chapter.loops import agentic


@pytest.fixture(scope="module")
def bm25() -> Engine:
    return Engine.load(CORPUS, ranker="bm25")


def test_agentic_loop_answers_every_question_under_bm25(bm25, questions):
    results = {q.id: agentic(bm25, q.text, q.groups, q.start, q.goal) for q in questions}
    assert all(score(results[q.id].answer, q.expected) for q in questions)
    assert {q: (r.searches, r.docs_read) for q, r in results.items()} == {
        "q1": (1, 2), "q2": (1, 2), "q3": (3, 6), "q4": (1, 2), "q5": (2, 4), "q6": (3, 6)}


@pytest.mark.parametrize("ranker", ["overlap", "bm25"])
def test_unauthorized_documents_never_take_a_slot(ranker):
    """Nine finance documents outrank the one engineering match; engineering still gets it."""
    docs = [Doc(f"f{i}", "Falcon budget Falcon budget Falcon", frozenset({"finance"})) for i in range(9)]
    docs.append(Doc("e1", "Falcon is mentioned once here.", frozenset({"engineering"})))
    engine = Engine(Corpus(tuple(docs), load_lexicon(CORPUS / "relations.yaml")), ranker)
    assert [d.id for d in engine.search_docs("Falcon budget", ENG, 1)] == ["e1"]
    assert len(engine.search_docs("Falcon budget", FIN, 20)) == 9
    assert engine.search_docs("Falcon", frozenset(), 5) == ()


def test_bm25_statistics_ignore_unauthorized_documents(bm25):
    """The engineering view's scores are identical with or without the finance document in the corpus."""
    without = Engine(Corpus(tuple(d for d in bm25.docs if d.id != "d09"), bm25.lexicon), "bm25")
    a = [(h.doc.id, h.score) for h in bm25.search("Falcon annual budget region", ENG, 10)]
    b = [(h.doc.id, h.score) for h in without.search("Falcon annual budget region", ENG, 10)]
    assert a == b


def test_fetch_is_the_same_for_unknown_and_unauthorized(engine):
    assert engine.fetch("d09", ENG) is None and engine.fetch("nope", ENG) is None
    assert engine.fetch("d09", FIN).id == "d09"


def test_grep_only_sees_authorized_documents(engine):
    assert engine.grep("budget", ENG) == []
    assert engine.grep("budget", FIN) == [("d09", "Falcon has an annual budget of twelve million dollars.")]
    assert engine.grep("Falcon", ENG, k=2) == [("d01", engine.corpus.by_id()["d01"].text),
                                                ("d04", "The Falcon release gate is SLO review.")]


def _conflict_docs(second_date: dt.date) -> list[Doc]:
    eng = frozenset({"engineering"})
    return [Doc("a", "Aurora runs in region us-east-2.", eng, updated=dt.date(2026, 1, 5)),
            Doc("b", "Aurora runs in region eu-central-1.", eng, updated=second_date)]


@pytest.mark.parametrize("order", [1, -1])
def test_conflict_newest_wins_whatever_the_order(engine, order):
    docs = _conflict_docs(dt.date(2026, 3, 1))[::order]
    facts = {d.id: engine.facts(d) for d in docs}
    verdicts = assess_all(docs, "What region does Aurora run in?", "Aurora", "region", facts)
    assert [v.action for v in verdicts] == ["conflict", "conflict"]
    res = resolve(verdicts, {d.id: d.updated for d in docs})
    assert (res.answer, res.cited, res.status, res.superseded) == ("eu-central-1", ("b",), "newest", ("a",))


@pytest.mark.parametrize("order", [1, -1])
def test_conflict_with_equal_dates_is_unresolved(engine, order):
    docs = _conflict_docs(dt.date(2026, 1, 5))[::order]
    facts = {d.id: engine.facts(d) for d in docs}
    res = resolve(assess_all(docs, "Aurora region", "Aurora", "region", facts), {d.id: d.updated for d in docs})
    assert res.answer is None and res.status == "unresolved" and sorted(res.cited) == ["a", "b"]


def test_agreeing_sources_are_cited_together(engine):
    eng = frozenset({"engineering"})
    docs = [Doc("a", "Aurora runs in region us-east-2.", eng, updated=dt.date(2026, 1, 1)),
            Doc("b", "Aurora runs in region us-east-2.", eng, updated=dt.date(2025, 1, 1))]
    res = resolve(assess_all(docs, "q", "Aurora", "region", {d.id: engine.facts(d) for d in docs}),
                  {d.id: d.updated for d in docs})
    assert (res.answer, res.cited, res.status) == ("us-east-2", ("a", "b"), "agreed")


def test_graph_walk_respects_max_hops(engine):
    graph = engine.graph(ENG)
    assert local_search(graph, "Falcon", "region", max_hops=2).answer is None
    assert local_search(graph, "Falcon", "region", max_hops=3).answer == "us-east-2"
    assert local_search(graph, "Nobody", "region").answer is None


def test_search_cli_runs_as_a_principal_and_gates_facts():
    import json

    from typer.testing import CliRunner

    from hoprag_cli.main import app

    done = CliRunner().invoke(app, ["search", "What region does Aurora run in?", "--as", "engineering", "-k", "3",
                                    "--corpus", str(CORPUS), "--json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.output)["results"]
    assert [(r["id"], r["trusted"], r["facts"]) for r in rows] == [
        ("d03", True, [["Aurora", "region", "us-east-2"]]), ("d10", False, []),
        ("d02", True, [["Atlas", "telemetry_store", "Aurora"]])]
    denied = CliRunner().invoke(app, ["search", "Falcon", "--as", "nobody", "--corpus", str(CORPUS)])
    assert denied.exit_code == 1 and "unknown user 'nobody'" in denied.output


def test_callers_racing_for_one_structure_build_it_once():
    """A request arriving while the start-up warm-up builds its view waits for that build."""
    cache: Lru[str, object] = Lru(4)
    building, release, calls, got = threading.Event(), threading.Event(), [], []

    def build() -> object:
        calls.append(1)
        building.set()
        release.wait(30)
        return object()

    first = threading.Thread(target=lambda: got.append(cache.get("k", build)))
    first.start()
    assert building.wait(30)
    second = threading.Thread(target=lambda: got.append(cache.get("k", build)))
    second.start()
    release.set()
    first.join(30), second.join(30)
    assert len(calls) == 1 and len(got) == 2 and got[0] is got[1]


def test_a_failed_build_reaches_every_waiter_and_the_next_caller_retries():
    cache: Lru[str, int] = Lru(4)
    building, release, errors = threading.Event(), threading.Event(), []

    def broken() -> int:
        building.set()
        release.wait(30)
        raise RuntimeError("store unavailable")

    def call() -> None:
        try:
            cache.get("k", broken)
        except RuntimeError as exc:
            errors.append(str(exc))

    first = threading.Thread(target=call)
    first.start()
    assert building.wait(30)
    second = threading.Thread(target=call)
    second.start()
    release.set()
    first.join(30), second.join(30)
    assert errors == ["store unavailable"] * 2
    assert cache.get("k", lambda: 7) == 7  # nothing cached from the failure
