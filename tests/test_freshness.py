"""Freshness that does not depend on retrieval luck (issue 11), through every front door.

The freshness corpus (``eval_sets/corpora/freshness``) is built so that the stale document ranks
first and the newer one below every distractor, under both shipped rankers and at every k from 1
to 5: an agent that resolved conflicts only among what it retrieved would cite the stale value.
Checked through ``adk eval`` (with negative controls), the raw MCP tools over HTTP, ``hoprag ask
--json`` and the agent in-process at every k.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agents.hoprag_agent import policy
from agents.hoprag_agent.run import report
from conftest import ROOT, ServerProcess
from eval_sets.redteam import run_all
from test_agent import ENV
from test_agent_eval import adk_eval, summary

CORPUS = ROOT / "eval_sets/corpora/freshness"
EVALSET = ROOT / "eval_sets/freshness.evalset.json"
RANKERS = ("overlap", "bm25-titles")
TOKENS = {"engineering": "demo-fresh-engineering-token", "lead": "demo-fresh-lead-token", "ops": "demo-fresh-ops-token"}
HERON, JAY = "What region does Heron run in?", "What region does Jay run in?"
#: question -> (engineering's answer line, the documents it must fetch, in order)
EXPECTED = {
    HERON: ("ap-southeast-2", ["h09"]),
    "What region does Ibis run in?": ("I cannot answer: conflicting sources: i01, i09 disagree and are equally recent.", ["i09"]),
    "What region does Egret run in?": ("I cannot answer: conflicting sources: e08, e09 disagree and are equally recent.",
                                       ["e08", "e09"]),
    JAY: ("eu-central-1", []),
    "What region does Kite run in?": ("ap-northeast-1", []),
    "What region does Lark run in?": ("eu-north-1", []),
}
#: the older (or only readable, or only trusted) document each question's search ranks first
RANKED_FIRST = dict(zip(EXPECTED, ("h01", "i01", "e01", "j01", "t01", "l01")))


# --- adk eval ------------------------------------------------------------------------------------

@pytest.mark.slow  # adk eval
@pytest.mark.parametrize("ranker", RANKERS)
def test_freshness_eval_set_passes_under_both_rankers(ranker):
    done = adk_eval(str(EVALSET), {"HOPRAG_CORPUS": str(CORPUS), "HOPRAG_RANKER": ranker})
    assert done.returncode == 0, done.stdout[-3000:]
    assert summary(done) == (len(json.loads(EVALSET.read_text())["eval_cases"]), 0)


@pytest.mark.slow  # adk eval
def test_a_budget_without_room_for_the_extra_read_fails_the_stale_case():
    """Negative control: with one unit of budget the fetch is refused, so the agent abstains instead."""
    done = adk_eval(str(EVALSET), {"HOPRAG_CORPUS": str(CORPUS), "HOPRAG_SEARCH_BUDGET": "1"},
                    cases="heron_stale_outranks_newer_wins")
    assert done.returncode == 1 and summary(done) == (0, 1)
    assert "tool_trajectory_avg_score:  FAILED" in done.stdout and "answer_match:               FAILED" in done.stdout


@pytest.mark.slow  # adk eval
def test_the_stale_answer_as_reference_fails(tmp_path):
    """Negative control: the metric tells the stale region from the fresh one."""
    evalset = json.loads(EVALSET.read_text(encoding="utf-8"))
    case = next(c for c in evalset["eval_cases"] if c["eval_id"] == "heron_stale_outranks_newer_wins")
    case["conversation"][0]["final_response"]["parts"][0]["text"] = "us-west-1\nEvidence: Heron --region--> us-west-1 [h01]"
    evalset["eval_cases"], evalset["eval_set_id"] = [case], "freshness_stale_reference"
    path = tmp_path / "freshness_stale_reference.evalset.json"
    path.write_text(json.dumps(evalset), encoding="utf-8")
    done = adk_eval(str(path), {"HOPRAG_CORPUS": str(CORPUS)})
    assert done.returncode == 1 and summary(done) == (0, 1)
    assert "answer_match:               FAILED" in done.stdout


# --- the agent in-process: every ranker, every k ---------------------------------------------------

@pytest.fixture(scope="module", params=RANKERS)
def sweep(request) -> dict[int, list]:
    """Engineering's runs of every question at k = 1..5 under one ranker."""
    mp = pytest.MonkeyPatch()
    try:
        out = {}
        for k in range(1, 6):
            mp.setattr(policy, "SEARCH_K", k)
            out[k] = run_all(CORPUS, list(EXPECTED), ranker=request.param)
        return out
    finally:
        mp.undo()


@pytest.mark.slow  # the agent at five k under each ranker: 12 s a ranker
@pytest.mark.parametrize("k", range(1, 6))
def test_the_newer_source_wins_at_every_k_although_the_stale_one_ranks_first(sweep, k):
    for run in sweep[k]:
        line, fetched = EXPECTED[run.question]
        assert run.answer_line == line, (k, run.question, run.response)
        assert [a["id"] for n, a in run.tool_uses if n == "fetch"] == fetched, (k, run.question)
        searched = run.ledger["searches"][0]["results"]
        assert len(searched) == k and searched[0] == RANKED_FIRST[run.question]
        assert not set(fetched) & set(searched)  # ...and what had to be fetched was never retrieved
    heron = next(r for r in sweep[k] if r.question == HERON)
    assert "Newer source wins over superseded h01." in heron.response


def test_ignoring_the_claims_cites_the_stale_fact(monkeypatch):
    """Negative control: the same agent without the engine's claims answers from what it happened to retrieve."""
    monkeypatch.setattr(policy, "_unread", lambda *a, **k: [])
    heron, jay = run_all(CORPUS, [HERON, JAY], user="lead")
    assert heron.answer_line == "us-west-1" and jay.answer_line == "eu-central-1"


@pytest.mark.slow  # hoprag ask processes
def test_a_reader_of_the_newer_document_gets_the_newer_answer():
    for user in ("lead", "ops"):
        (jay,) = run_all(CORPUS, [JAY], user=user)
        result = report(jay.ledger, jay.response)
        assert result["answer"] == "me-south-1" and [c["doc_id"] for c in result["citations"]] == ["j09"], user
        assert result["fetches"] == 1  # j01 ranks first for both: j09 is fetched


def test_a_stale_grade_that_cannot_be_read_abstains():
    """A fetch the server refused is not retried, and the stale fact is still not cited."""
    ledger = policy.new_ledger(HERON, 4)
    ledger.update(start="Heron", goal="region")
    policy.record(ledger, "search", {"query": "Heron region", "k": 1}, {"results": [{
        "id": "h01", "text": "Heron runs in region us-west-1.", "trusted": True, "updated": "2025-06-01",
        "facts": [["Heron", "region", "us-west-1"]],
        "claims": [{"subject": "Heron", "relation": "region", "object": "us-west-1", "status": "superseded",
                    "superseded_by": ["h09"], "conflicts_with": []}]}]})
    assert policy.grade(ledger) == {"status": "stale", "entity": "Heron", "fetch": "h09",
                                    "reason": "h09 is newer than or contradicts h01; read it before citing"}
    ledger["calls"].append({"tool": "fetch", "args": {"id": "h09"}})  # what after_tool records for a failed call
    assert policy.grade(ledger) == {"status": "exhausted", "reason": policy.ABSTAIN_STALE}
    ledger["calls"].pop()
    ledger["budget"] = 1
    assert policy.grade(ledger)["status"] == "budget"


# --- the raw MCP tools over HTTP ------------------------------------------------------------------

@pytest.fixture(scope="module", params=RANKERS)
def server(request):
    proc = ServerProcess("--corpus", str(CORPUS), "--access", str(CORPUS / "access.yaml"), "--ranker", request.param)
    yield proc
    proc.stop()


def calls(url: str, principal: str, todo: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def go() -> list[Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS[principal]}"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return [await client.call_tool(name, args) for name, args in todo]
    return asyncio.run(go())


def claim(result: dict[str, Any]) -> dict[str, Any]:
    (only,) = result["claims"]
    assert [only["subject"], only["relation"], only["object"]] == result["facts"][0]
    return {k: only[k] for k in ("status", "superseded_by", "conflicts_with")}


def test_search_annotates_the_stale_fact_at_every_k(server):
    searches = [("search", {"query": f"{e} region", "k": k}) for e in ("Heron", "Ibis", "Egret") for k in range(1, 6)]
    got = calls(server.url, "engineering", searches)
    for (_, args), result in zip(searches, got):
        results = result.structured_content["results"]
        top = results[0]
        assert len(results) == args["k"] and top["id"][0] == args["query"][0].lower(), args
        assert not {"h09", "i09", "e08", "e09"} & {r["id"] for r in results}, args  # the fresher ones never retrieved
        want = {"Heron": ("superseded", ["h09"], []), "Ibis": ("unresolved", [], ["i09"]),
                "Egret": ("superseded", ["e08", "e09"], [])}[args["query"].split()[0]]
        assert claim(top) == dict(zip(("status", "superseded_by", "conflicts_with"), want)), args
        assert all(r["claims"] == [] for r in results[1:])  # distractors state nothing


def test_fetch_annotates_the_winner_and_the_tie(server):
    h09, i09, e08, e09, h01 = (r.structured_content for r in calls(server.url, "engineering", [
        ("fetch", {"id": i}) for i in ("h09", "i09", "e08", "e09", "h01")]))
    assert claim(h09) == {"status": "current", "superseded_by": [], "conflicts_with": []}
    assert claim(i09) == {"status": "unresolved", "superseded_by": [], "conflicts_with": ["i01"]}
    assert claim(e08) == {"status": "unresolved", "superseded_by": [], "conflicts_with": ["e09"]}
    assert claim(e09) == {"status": "unresolved", "superseded_by": [], "conflicts_with": ["e08"]}
    assert claim(h01)["superseded_by"] == ["h09"]


def test_a_newer_document_the_caller_cannot_read_is_invisible(server):
    todo = [("search", {"query": "Jay region", "k": 50}), ("fetch", {"id": "j01"}), ("fetch", {"id": "j09"}),
            ("fetch", {"id": "nope99"}), ("graph_walk", {"start": "Jay", "relation": "region"}), ("graph_overview", {})]
    search, j01, j09, unknown, walk, overview = calls(server.url, "engineering", todo)
    assert claim(j01.structured_content) == {"status": "current", "superseded_by": [], "conflicts_with": []}
    assert walk.structured_content["answer"] == "eu-central-1" and walk.structured_content["status"] == "agreed"
    for result in (search, j01, walk, overview):
        assert "j09" not in json.dumps(result.model_dump(mode="json")) and "me-south-1" not in json.dumps(
            result.model_dump(mode="json"))
    assert j09.is_error and unknown.is_error
    assert j09.content[0].text.replace("j09", "ID") == unknown.content[0].text.replace("nope99", "ID")
    # the same document, read by a caller who may read the newer one, is superseded
    (lead_j01,) = calls(server.url, "lead", [("fetch", {"id": "j01"})])
    assert claim(lead_j01.structured_content) == {"status": "superseded", "superseded_by": ["j09"], "conflicts_with": []}


def test_an_untrusted_newer_document_never_wins(server):
    kite, lark, t09, l09 = calls(server.url, "engineering", [
        ("search", {"query": "Kite region", "k": 1}), ("search", {"query": "Lark region", "k": 1}),
        ("fetch", {"id": "t09"}), ("fetch", {"id": "l09"})])
    for result, doc_id in ((kite, "t01"), (lark, "l01")):
        top = result.structured_content["results"][0]
        assert top["id"] == doc_id and claim(top) == {"status": "current", "superseded_by": [], "conflicts_with": []}
    for result in (t09, l09):  # readable, shown for transparency, never evidence: no facts, no claims
        assert result.structured_content["trusted"] is False
        assert result.structured_content["facts"] == [] and result.structured_content["claims"] == []


# --- hoprag ask --json ----------------------------------------------------------------------------

def ask(question: str, principal: str = "engineering") -> dict[str, Any]:
    done = subprocess.run([str(Path(sys.executable).parent / "hoprag"), "ask", question, "--json", "--as", principal,
                           "--corpus", str(CORPUS)], capture_output=True, text=True, timeout=300, cwd=ROOT, env=ENV)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.slow  # hoprag ask processes
@pytest.mark.parametrize("question", list(EXPECTED))
def test_hoprag_ask_json(question):
    result = ask(question)
    line, fetched = EXPECTED[question]
    assert (result["answer"] if not result["abstained"] else f"I cannot answer: {result['reason']}.") == line
    assert (result["searches"], result["fetches"]) == (1, len(fetched))
    assert result["tool_calls"] == ["graph_overview", "search", *["fetch"] * len(fetched)]
    if not result["abstained"]:
        assert result["citations"][-1]["doc_id"] not in {"h01", "i01", "e01"}  # never the stale document
    if question == JAY:
        assert "j09" not in json.dumps(result) and "me-south-1" not in json.dumps(result)


# --- the engine's claims, case by case ------------------------------------------------------------

def test_claims_follow_resolve_case_by_case():
    """Older agreeing sources stay current, undated ones count as oldest, ties name their rivals only."""
    import datetime as dt

    from hoprag.claims import Claim
    from hoprag.corpus import Corpus, Doc
    from hoprag.engine import Engine
    from hoprag.lexicon import load_lexicon

    day = lambda m: dt.date(2026, m, 1)  # noqa: E731
    texts = [("a1", "Atlas runs in region north.", day(1)), ("a2", "Atlas runs in region south.", day(3)),
             ("a3", "Atlas runs in region south.", day(2)), ("a4", "Atlas runs in region west.", None),
             ("b1", "Borealis runs in region north.", day(2)), ("b2", "Borealis runs in region south.", day(2)),
             ("b3", "Borealis runs in region east.", day(1)), ("c1", "Comet runs in region north.", day(1))]
    docs = tuple(Doc(i, t, frozenset({"g"}), updated=u) for i, t, u in texts)
    engine = Engine(Corpus(docs, load_lexicon(CORPUS / "relations.yaml")), "overlap")
    got = {d.id: engine.claims(d, frozenset({"g"}))[0] for d in docs}
    assert {i: (c.status, c.superseded_by, c.conflicts_with) for i, c in got.items()} == {
        "a1": ("superseded", ("a2",), ()), "a2": ("current", (), ()), "a3": ("current", (), ()),
        "a4": ("superseded", ("a2",), ()),
        "b1": ("unresolved", (), ("b2",)), "b2": ("unresolved", (), ("b1",)), "b3": ("superseded", ("b1", "b2"), ()),
        "c1": ("current", (), ())}
    assert len(engine.contested(frozenset({"g"}))) == 5
    assert engine.claims(docs[0], frozenset({"other"})) == (Claim("Atlas", "region", "north"),)  # no view, no rival


def test_a_whole_document_fetch_keeps_its_passages_standing():
    """``fetch(document=true)`` joins a chunked document's passages; a stale passage stays stale in it."""
    import datetime as dt

    from hoprag.corpus import Corpus, Doc
    from hoprag.engine import Engine
    from hoprag.lexicon import Lexicon, Relation

    lexicon = Lexicon((Relation("region", ("runs in region",), ("region",)),))
    eng = frozenset({"eng"})
    old, new = dt.date(2025, 1, 1), dt.date(2026, 1, 1)
    docs = (Doc("runbook#0", "Intro to the runbook.", eng, updated=old, document="runbook", position=0),
            Doc("runbook#1", "Pike runs in region eu-west-1.", eng, updated=old, document="runbook", position=1),
            Doc("notice", "Pike runs in region ap-east-1.", eng, updated=new))
    engine = Engine(Corpus(docs, lexicon), "overlap")
    whole = engine.document("runbook#0", eng)
    assert whole is not None and whole.id == "runbook"
    assert engine.evidence(whole) == (("Pike", "region", "eu-west-1"),)
    (claim,) = engine.claims(whole, eng)
    assert claim.status == "superseded" and claim.superseded_by == ("notice",)
    assert engine.claims(engine.fetch("runbook#1", eng), eng) == (claim,)
