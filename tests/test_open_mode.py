"""Open mode: prose multi-hop through the MCP tools and the offline policy, and its bad inputs."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from agents.hoprag_agent import policy
from benchmarks.retrieval import load_corpus
from conftest import ROOT
from fake_models import HashEmbedder
from hoprag.access import Principal
from hoprag.corpus import Corpus, Doc
from hoprag.embed import Vectors
from hoprag.engine import Engine
from hoprag.lexicon import Lexicon
from hoprag.walk import Budget, bridge_walk, bridges, specific
from mcp_server.auth import fixed_caller
from mcp_server.server import build_server
from mcp_server.tools import MAX_ENTITIES
from test_agent import ask

MUSIQUE = ROOT / "eval_sets" / "corpora" / "musique" / "corpus.jsonl"
PUBLIC = frozenset({"public"})


def prose_corpus(extra: tuple[Doc, ...] = ()) -> Corpus:
    """A three-passage chain in ordinary prose: question -> Harbor Bridge -> Ravel County -> Lena Ortiz."""
    docs = (
        Doc("p1", "The Harbor Bridge was designed by the engineer Marta Quell in 1931.", PUBLIC, title="Harbor Bridge"),
        Doc("p2", "Marta Quell was born in Ravel County and trained in Vienna.", PUBLIC, title="Marta Quell"),
        Doc("p3", "Ravel County is governed by a council led by Lena Ortiz.", PUBLIC, title="Ravel County"),
        Doc("p4", "Vienna is a large city on the Danube.", PUBLIC, title="Vienna"),
        Doc("s1", "A sealed memo says Marta Quell also visited Zorba Island.", frozenset({"secret"}), title="Memo"),
        *extra)
    return Corpus(docs, Lexicon(()), None, None)


def calls(engine: Engine, groups: frozenset[str], *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_server(engine, fixed_caller(Principal("caller", groups)))) as client:
            return [await client.call_tool(name, args) for name, args in requests]
    return asyncio.run(go())


def drive(engine: Engine, question: str, groups: frozenset[str] = PUBLIC, budget: int = 3) -> dict[str, Any]:
    """The offline policy's roles over a real (in-memory) MCP server, without ADK: plan, then grade/research."""
    async def go() -> dict[str, Any]:
        async with Client(build_server(engine, fixed_caller(Principal("caller", groups)))) as client:
            overview = (await client.call_tool("graph_overview", {})).structured_content
            ledger = policy.new_ledger(question, budget)
            policy.record(ledger, "graph_overview", {}, overview)
            plan = policy.plan(question, overview)
            ledger["plan"], ledger["start"], ledger["goal"] = plan, plan.get("start"), plan.get("goal")
            step = plan if plan["action"] == "search" else {}
            for _ in range(budget + 2):
                if step.get("status") == "check":  # a literal look-up: free, then grade again
                    looked = {"text": step["grep"]}
                    policy.record(ledger, "grep", looked, (await client.call_tool("grep", looked)).structured_content)
                    step = policy.grade(ledger)
                    continue
                if "query" not in step or step.get("status", "gap") != "gap":
                    break
                args = {"query": step["query"], "k": step.get("k", policy.SEARCH_K)}
                result = await client.call_tool("search", args)
                assert not result.is_error, result.content
                policy.record(ledger, "search", args, result.structured_content)
                step = policy.grade(ledger)
            graded = policy.grade(ledger)
            return {"ledger": ledger, "grade": graded, "answer": policy.compose(ledger, graded)}
    return asyncio.run(go())


def test_search_hits_carry_entities_counted_over_the_callers_view_only():
    engine = Engine(prose_corpus(), "bm25-titles")
    mine, everything = (calls(engine, groups, ("search", {"query": "Marta Quell born", "k": 3}))[0].structured_content
                        for groups in (PUBLIC, PUBLIC | {"secret"}))
    p2 = next(r for r in mine["results"] if r["id"] == "p2")
    counts = {m["name"]: m["passages"] for m in p2["entities"]}
    assert counts["Marta Quell"] == 2 and counts["Ravel County"] == 2  # p1+p2, p2+p3: the hidden memo is not counted
    p2_all = next(r for r in everything["results"] if r["id"] == "p2")
    assert {m["name"]: m["passages"] for m in p2_all["entities"]}["Marta Quell"] == 3  # a reader of the memo counts it
    assert "Zorba" not in json.dumps(mine) and "s1" not in json.dumps(mine)
    assert set(mine["weights"]) == {"marta", "quell", "born"} and mine["weights"]["born"] > 0
    assert all(len(r["entities"]) <= MAX_ENTITIES for r in mine["results"])


def test_graph_hops_reaches_passages_a_search_misses_and_says_what_connects_them():
    engine = Engine(prose_corpus(), "bm25-titles")
    hops, overview, bad = calls(engine, PUBLIC, ("graph_hops", {"query": "Who designed the Harbor Bridge?", "k": 3}),
                                ("graph_overview", {}), ("graph_hops", {"query": "", "k": 3}))
    found = hops.structured_content
    assert found["seed"] == "p1" and [p["id"] for p in found["passages"]][:2] == ["p1", "p2"]
    assert "Marta Quell" in found["passages"][1]["connects"]
    assert "s1" not in json.dumps(found)
    prose = overview.structured_content["prose"]
    assert prose["passages"] == 4 and {"name": "Marta Quell", "passages": 2} in prose["connected"]
    assert "Zorba" not in json.dumps(overview.structured_content)
    assert bad.is_error


def test_a_question_outside_the_lexicon_walks_the_prose_and_quotes_its_sources():
    run = drive(Engine(prose_corpus(), "bm25-titles"), "Who leads the council of the county where the designer of "
                                                         "the Harbor Bridge was born?")
    graded, ledger = run["grade"], run["ledger"]
    assert graded["status"] == "sufficient" and graded["mode"] == "open"
    assert [s["query"].split()[0] for s in ledger["searches"]][1:] == ["Marta", "Ravel"]  # each read chose the next query
    assert "Lena Ortiz" in graded["answer"] and graded["answer_doc"] == "p3"
    assert [(c["doc_id"], c["via"]) for c in graded["citations"]][:3] == [
        ("p1", None), ("p2", "Marta Quell"), ("p3", "Ravel County")]
    assert "Hop path: question --> p1; p1 --Marta Quell--> p2; p2 --Ravel County--> p3" in run["answer"]
    assert len(ledger["searches"]) <= 3


def test_the_lexicon_still_decides_relation_questions_and_restricted_relations_abstain_before_searching():
    overview = {"relations": [{"name": "owner", "cues": ["is owned by"], "asks": ["who owns"]}],
                "absent": [{"name": "budget", "cues": ["annual budget of"], "asks": ["budget"]}]}
    assert policy.plan("Who owns Project Falcon?", overview)["query"] == "Falcon owner"
    assert policy.plan("What is Falcon's annual budget?", overview)["action"] == "abstain"
    opened = policy.plan("Who designed the Harbor Bridge?", overview)
    assert opened["mode"] == "open" and opened["query"] == "Who designed the Harbor Bridge?"


@pytest.mark.slow  # hoprag ask / the agent over a stdio server
def test_the_agent_replays_the_library_walk_exactly_from_what_the_tools_returned():
    """The policy sees only MCP results (entities, counts, weights), yet walks as the engine's own walk:
    the same queries in the same order, as far as it goes (it stops once what it read answers)."""
    engine = Engine(load_corpus(MUSIQUE), "bm25-titles")
    view = engine.view(PUBLIC)
    cases = json.loads((ROOT / "eval_sets" / "musique.evalset.json").read_text(encoding="utf-8"))["eval_cases"]
    questions = [c["conversation"][0]["user_content"]["parts"][0]["text"] for c in cases]
    hopped = 0
    for question in questions[:8]:
        agent = drive(engine, question)
        searched = [s["query"] for s in agent["ledger"]["searches"]]
        library = bridge_walk(question, lambda q, k: [h.doc for h in view.search(q, k)], view, Budget(len(searched)),
                              10, most=specific(len(view.docs)))
        assert searched == [h.query for h in library.hops], question
        assert policy.retrieved(agent["ledger"]) == library.ranked, question
        hopped += len(searched) > 1
    assert hopped >= 6  # multi-hop questions: the walk goes on where the first read does not answer


@pytest.mark.parametrize("question", ["", "   ", "what is it?", "x " * 600, "¿Quién diseñó el puente del puerto?",
                                      "ハーバーブリッジを設計したのは誰ですか"])
def test_bad_questions_get_an_answer_or_a_clear_abstention(question):
    run = drive(Engine(prose_corpus(), "bm25-titles"), question)
    assert run["answer"].startswith("I cannot answer: ") or "]\n\nSources:\n- " in run["answer"]
    assert all(len(s["query"]) <= 1000 for s in run["ledger"]["searches"])


def test_a_corpus_without_names_and_a_huge_passage_are_served():
    plain = Corpus((Doc("a", "the pump failed after the valve was left open overnight.", PUBLIC),
                    Doc("b", "the valve is checked every morning by the night shift.", PUBLIC),
                    Doc("big", "Harbor words. " * 8000 + "The Harbor Bridge is long.", PUBLIC, title="Big")),
                   Lexicon(()), None, None)
    engine = Engine(plain, "bm25-titles")
    run = drive(engine, "why did the pump fail?")
    assert run["grade"]["status"] == "sufficient" and run["grade"]["answer_doc"] == "a"
    huge = drive(engine, "How long is the Harbor Bridge?")  # the answer lies past the 8,000 characters shown
    assert huge["answer"].startswith("The Harbor Bridge is long. [big]") and len(huge["answer"]) < 5000


@pytest.mark.slow  # hoprag ask / the agent over a stdio server
def test_hoprag_ask_json_reports_mode_quotes_and_retrieved(tmp_path: Path):
    corpus = tmp_path / "notes"
    corpus.mkdir()
    for doc in prose_corpus().docs:
        if doc.groups == PUBLIC:
            (corpus / f"{doc.id}.md").write_text(f"---\nid: {doc.id}\ntitle: {doc.title}\ngroups: [public]\n"
                                                  f"trusted: true\nsource: notes://{doc.id}\nupdated: 2026-01-01\n---\n{doc.text}\n")
    (corpus / "access.yaml").write_text("principals:\n  staff: {groups: [public]}\ntokens: {}\nusers: {}\n")
    result = ask("Who leads the council of the county where the designer of the Harbor Bridge was born?",
                 "--as", "staff", "--corpus", str(corpus))
    assert result["mode"] == "open" and not result["abstained"]
    assert all(c["doc_id"] and c["quote"] for c in result["citations"])
    assert result["retrieved"][:3] == ["p1", "p2", "p3"] and result["searches"] <= 4
    relation = ask("Who owns Project Falcon?")
    assert relation["mode"] == "relation" and relation["citations"][0]["doc_id"] == "d01"
    assert relation["retrieved"][0] == "d01"


def test_the_server_keeps_serving_after_bad_input(http_server):
    from mcp_client import http_client

    async def go():
        async with http_client(http_server.url, "engineering") as c:
            bad = [await c.call_tool("graph_hops", {"query": "x" * 1001}), await c.call_tool("graph_hops", {"k": 0})]
            good = await c.call_tool("graph_hops", {"query": "Who owns Project Falcon?", "k": 2})
            return bad, good
    bad, good = asyncio.run(go())
    assert all(b.is_error for b in bad) and not good.is_error and good.structured_content["passages"]
    assert http_server.alive()


def test_what_the_prose_tools_say_does_not_depend_on_unreadable_passages():
    """Non-interference: a public caller gets the same entities, counts, weights, hops and overview from
    the full corpus as from a corpus holding only their passages (the memo names entities of its own)."""
    full = prose_corpus((Doc("s2", "Harbor Bridge Authority of Ravel runs the Quell Foundation.", frozenset({"secret"}),
                             title="Harbor Bridge Authority"),))
    mine = Corpus(tuple(d for d in full.docs if d.groups & PUBLIC), full.lexicon, None, None)
    probes = [("search", {"query": q, "k": 5}) for q in ("Marta Quell", "Harbor Bridge Authority", "Ravel County council")]
    probes += [("graph_hops", {"query": "Who designed the Harbor Bridge Authority?", "k": 4}), ("graph_overview", {})]
    for ranker in ("bm25-titles", "bm25"):
        got = [r.structured_content for r in calls(Engine(full, ranker), PUBLIC, *probes)]
        want = [r.structured_content for r in calls(Engine(mine, ranker), PUBLIC, *probes)]
        assert got == want
        assert "Authority" not in json.dumps(got[-1]) and "Foundation" not in json.dumps(got)


def test_hops_within_one_page_are_that_page_read_further_not_a_chain_of_sources():
    """The same three statements as passages of one document: the walk may still hop through them, but
    an answer is never a multi-hop chain inside one page (docs: a hop to the next section of the page found)."""
    one_page = tuple(Doc(d.id, d.text, d.groups, title="Harbor guide", document="harbor.md", position=i)
                     for i, d in enumerate(prose_corpus().docs) if d.id in ("p1", "p2", "p3", "p4"))
    question = "Who leads the council of the county where the designer of the Harbor Bridge was born?"
    apart = drive(Engine(prose_corpus(), "bm25-titles"), question)["grade"]
    together = drive(Engine(Corpus(one_page, Lexicon(()), None, None), "bm25-titles"), question)["grade"]
    assert apart["multi_hop"] and apart["answer_doc"] == "p3"  # the control: separate sources chain
    assert not together.get("multi_hop")


def test_a_how_question_answered_equally_well_by_prose_and_by_code_is_answered_with_the_code():
    docs = (Doc("about", "Debug mode for the development server: enable it and the server reloads on changes.",
                PUBLIC, title="Debug mode"),
            Doc("cli", "Enable debug mode of the development server with the run command:\n\n```sh\nrun --debug\n```",
                PUBLIC, title="Command line"),
            Doc("other", "Logging writes to stderr.", PUBLIC, title="Logging"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    ranked = calls(engine, PUBLIC, ("search", {"query": "How do I enable debug mode of the development server?",
                                               "k": 3}))[0].structured_content["results"]
    assert ranked[0]["id"] == "about" and abs(policy.fit(ranked[0]) - policy.fit(ranked[1])) <= policy.TIED
    how = drive(engine, "How do I enable debug mode of the development server?")["grade"]
    assert how["answer_doc"] == "cli" and "run --debug" in how["answer"]
    what = drive(engine, "Which debug mode of the development server reloads on changes?")["grade"]
    assert what["answer_doc"] == "about"  # not a "how" question: the best fit answers, code or not


def test_a_how_answer_naming_its_code_is_not_displaced_by_a_tied_hit_showing_a_block():
    """"Use `run_app(app, access_log=None)` to disable access logs." already says how, in code saying more than the
    question: a hit fitting nearly as well whose block is another tool's command listing does not come first.
    Control: inline code only repeating the question's words ("`run_app`") is no such answer, the block is."""
    ledger = {"question": "How do I disable access logging when starting my server with run_app?", "passages": 10,
              "weights": {"disable": 2.0, "access": 1.0, "logging": 1.0, "starting": 1.0, "server": 1.0, "run_app": 2.0}}

    def hit(doc_id: str, fit: float, *highlights: dict) -> dict:
        return {"id": doc_id, "coverage": fit, "answers": fit, "matched": [], "section": "", "highlights": list(highlights)}

    block = hit("deploy", 0.72, {"text": "Pass the flag when starting the server under a worker:"},
                {"text": "```\n$ worker --accesslog app:main\n```", "code": True})
    named = hit("logging", 0.75, {"text": "Use `run_app(app, access_log=None)` to disable access logs."})
    assert policy._shown(ledger, [named, block])[0]["id"] == "logging"
    repeated = hit("logging", 0.75, {"text": "Use `run_app` to disable access logs."})
    assert policy._shown(ledger, [repeated, block])[0]["id"] == "deploy"
    # a reference entry names its code as its term ("AppRunner.access_log: Set it to ..."): not displaced
    entry = hit("runner", 0.75, {"text": "AppRunner.access_log:\nSet it to `None` to turn the log off."})
    assert policy._shown(ledger, [entry, block])[0]["id"] == "runner"
    plain = hit("runner", 0.75, {"text": "Server:\nSet it to off to turn the log off."})  # names no code
    assert policy._shown(ledger, [plain, block])[0]["id"] == "deploy"


def test_a_close_hit_showing_code_does_not_displace_an_answering_best_with_one_that_does_not_answer():
    """A "how" answer that shows no code gives way to a close hit showing some (within HOW_TIED) -- but when the best
    answers (fits ANSWERS) and the close hit does not, giving way would turn an answer into an abstention. Controls:
    a close hit that answers too comes first, and so does one below ANSWERS when the best does not answer either."""
    ledger = {"question": "How can I exclude a whole file with a comment inside it?", "passages": 10,
              "weights": {"exclude": 2.0, "whole": 1.0, "file": 1.0, "comment": 2.0, "inside": 1.0}}

    def hit(doc_id: str, fit: float, *highlights: dict) -> dict:
        return {"id": doc_id, "coverage": fit, "answers": fit, "matched": [], "section": "", "highlights": list(highlights)}

    def coded(fit: float) -> dict:
        return hit("sample", fit, {"text": "A sample file:"}, {"text": "```\n[report]\nexclude_also = ['if 0:']\n```",
                                                                 "code": True})
    best = hit("excluding", policy.ANSWERS + 0.1, {"text": "This lets you exclude files with an internal comment."})
    below = policy.ANSWERS - 0.04
    assert policy.fit(best) - below <= policy.HOW_TIED
    assert policy._shown(ledger, [best, coded(below)])[0]["id"] == "excluding"
    assert policy._shown(ledger, [best, coded(policy.ANSWERS + 0.01)])[0]["id"] == "sample"
    weak = hit("excluding", policy.ANSWERS - 0.01, {"text": "This lets you exclude files with an internal comment."})
    assert policy._shown(ledger, [weak, coded(policy.ANSWERS - 0.1)])[0]["id"] == "sample"


def test_a_how_question_whose_best_hit_shows_no_code_is_answered_by_a_close_hit_that_does():
    """The sentence restating the task in the question's words ("the test run stops at the first failure") fits
    best but does not say how; a hit naming the option fits nearly as well (beyond TIED, within HOW_TIED)."""
    def engine_with(flags: str) -> Engine:
        docs = (Doc("story", "The test run stops at the first failure, so you fix one failing test at a time.",
                    PUBLIC, title="Stepwise"),
                Doc("flags", flags, PUBLIC, title="Failures"),
                *(Doc(f"r{i}", text, PUBLIC, title=f"Run {i}") for i, text in
                  enumerate(("Each run writes a report.", "A run can be repeated.", "Run it nightly."))))
        return Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    how = "How do I stop the test run at the first failure?"
    close = engine_with("To stop testing at the first failure, pass `-x`.")
    ranked = calls(close, PUBLIC, ("search", {"query": how, "k": 3}))[0].structured_content["results"]
    assert ranked[0]["id"] == "story" and policy.TIED < policy.fit(ranked[0]) - policy.fit(ranked[1]) <= policy.HOW_TIED
    answer = drive(close, how)["grade"]
    assert answer["answer_doc"] == "flags" and "`-x`" in answer["answer"]
    assert drive(close, "Does the test run stop at the first failure?")["grade"]["answer_doc"] == "story"  # not "how"
    far = engine_with("To stop testing at a failure, pass `-x`.")  # fits too much less: the best fit answers
    ranked = calls(far, PUBLIC, ("search", {"query": how, "k": 3}))[0].structured_content["results"]
    assert policy.fit(ranked[0]) - policy.fit(ranked[1]) > policy.HOW_TIED
    assert drive(far, how)["grade"]["answer_doc"] == "story"


def test_release_notes_answer_after_a_page_fitting_nearly_as_well_unless_the_question_asks_about_releases():
    """A changelog entry under a release's heading ("tool 3.8.0 (2018-09-05)") restates the question and fits
    best; the reference page fitting within RELEASE_NOTES answers instead. Controls: the same entry under a
    heading naming no release answers, and so does the release note when the question asks about a release."""
    def engine_with(section: str) -> Engine:
        docs = (Doc("news", "- 3913: The tool now returns exit code 4 when called with unknown arguments.", PUBLIC,
                    title="Release notes", document="changelog.md", section=section),
                Doc("codes", "Exit code 4: the tool was called with unknown arguments or options.", PUBLIC,
                    title="Exit codes", document="exit-codes.md", section="Exit codes"),
                Doc("other", "Logging writes to stderr.", PUBLIC, title="Logging"),
                Doc("more", "Every function returns a value; a call returns once.", PUBLIC, title="Returns"))
        return Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    question = "Which exit code does the tool return when called with unknown arguments?"
    released = engine_with("Changelog › tool 3.8.0 (2018-09-05)")
    hits = {r["id"]: r for r in calls(released, PUBLIC, ("search", {"query": question, "k": 3}))[0]
            .structured_content["results"]}
    assert 0 < policy.fit(hits["news"]) - policy.fit(hits["codes"]) <= policy.RELEASE_NOTES
    assert drive(released, question)["grade"]["answer_doc"] == "codes"
    assert drive(engine_with("Tool › Improvements"), question)["grade"]["answer_doc"] == "news"
    assert drive(engine_with("What's New in Tool 3.8 › Improvements"), question)["grade"]["answer_doc"] == "codes"
    asked = "In which release does the tool return exit code 4 for unknown arguments?"
    assert drive(released, asked)["grade"]["answer_doc"] == "news"


def test_a_question_asking_two_things_searches_each_part_when_no_page_answers_both():
    """Two pages, each answering one part: the whole question's best page answers one part only, so
    the other part is searched on its own, then the first too (three reads: a page's sentences answering the whole
    question are not those answering its part), and the answer quotes both pages, in the question's order."""
    docs = (Doc("install", "Installing the toolkit requires Python 3.9 or newer on every platform.", PUBLIC,
                title="Installation", document="install.md"),
            Doc("xai", "The xAI integration streams partial objects and needs Python 3.10 for its async client.",
                PUBLIC, title="xAI", document="xai.md"),
            Doc("misc", "Release notes list the changes of each version of the toolkit.", PUBLIC, title="Releases",
                document="releases.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    question = "Which Python version does installing the toolkit require, and what does the xAI async client need?"
    assert policy.parts(question) == ["Which Python version does installing the toolkit require?",
                                      "what does the xAI async client need?"]
    run = drive(engine, question, budget=4)
    assert [c["doc_id"] for c in run["grade"]["citations"]] == ["install", "xai"]
    assert "3.9" in run["grade"]["answer"] and "3.10" in run["grade"]["answer"]
    queries = [s["query"] for s in run["ledger"]["searches"]]
    assert queries[0] == question and queries[1:] == policy.parts(question)  # xAI's page answers the second first
    single = drive(engine, "Which Python version does installing the toolkit require?", budget=4)
    assert len(single["ledger"]["searches"]) == 1 and single["grade"]["answer_doc"] == "install"  # control


def test_each_part_of_a_compound_question_is_answered_as_that_part_asks():
    """"Which package do I install ..., and how long does the cookie last by default?": the page answering the first
    part is picked from its own search as that part asks -- the whole question asks for a default, the part does
    not, so a page merely saying "Defaults to" does not go first -- and the second part is quoted with the sentences
    answering it (the list item's start with its later sentence). Control: read as the whole question, the part's
    search puts the page stating a default first -- when it fits enough to answer alone."""
    docs = (Doc("deps", "Optional dependencies. `itsdangerous` is required for session support; install it with pip.",
                PUBLIC, title="Dependencies", document="deps.md"),
            Doc("sessions", "Session support is set by these options, each with its default.\n\n"
                "- `session_cookie` - The name of the session cookie. "
                "Defaults to \"session\".\n- `max_age` - Session expiry time in seconds. Defaults to 2 weeks.\n"
                "- `path` - The path the cookie is set for. Defaults to \"/\".", PUBLIC, title="Sessions",
                document="sessions.md"),
            Doc("misc", "Release notes list the changes of each version of the toolkit.", PUBLIC, title="Releases",
                document="releases.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    question = ("Which package do I need to install for session support, and how long does the session cookie last "
                "by default?")
    run = drive(engine, question, budget=4)
    ledger, first = run["ledger"], policy.parts(question)[0]
    assert [s["query"] for s in ledger["searches"]] == [question, *policy.parts(question)]
    assert [c["doc_id"] for c in run["grade"]["citations"]] == ["deps", "sessions"]
    assert "`max_age` - Session expiry time in seconds. Defaults to 2 weeks." in run["grade"]["answer"]
    assert policy._answering(ledger, ledger["searches"][1], first)[0]["id"] == "deps"
    # control: read as the whole question, the page stating a default goes first -- of pages fitting enough to
    # answer alone (as fit here, it does not; fitting as well as the other, it does)
    search = ledger["searches"][1]
    top = max(search["hits"], key=policy.fit)
    even = {**search, "hits": [{**h, "coverage": top["coverage"], "answers": top["answers"]} for h in search["hits"]]}
    assert policy._answering(ledger, search)[0]["id"] == "deps"
    assert policy._answering(ledger, even, first)[0]["id"] == "deps"
    assert policy._answering(ledger, even)[0]["id"] == "sessions"


def test_a_phrase_may_lead_the_first_question_of_a_compound_one_and_sets_the_scene_of_both():
    """"At server shutdown, which signal ...?" asks, led by where: it is a question of its own -- and the second
    part asks at server shutdown too, so its search says so ("When I press Ctrl+C, which exit code ..., and which
    option ...?": a clause led by an asking word leads too). Controls: a clause stating context before ";" is not a
    question ("The default port is taken; how do I ...", below); a compound question led by nothing leads its second
    part with nothing."""
    question = ("At server shutdown, which application signal should I use to close open websockets, and which "
                "close code tells clients the service is overloaded?")
    assert policy.parts(question) == [
        "At server shutdown, which application signal should I use to close open websockets?",
        "At server shutdown, which close code tells clients the service is overloaded?"]
    assert policy.parts("When I press Ctrl+C on a hung run, which exit code is returned, and which option prints "
                        "the stack?")[1] == "When I press Ctrl+C on a hung run, which option prints the stack?"
    assert policy.parts("Which exit code is returned on Ctrl+C, and which option prints the stack?") == [
        "Which exit code is returned on Ctrl+C?", "which option prints the stack?"]


@pytest.mark.parametrize("question, asked", [
    ("What does `compiled: yes` mean, and since which version does the image ship it?",
     ["What does `compiled: yes` mean?", "which version does the image ship it?"]),  # a preposition leads the asking
    ("Since which version are subtests supported, and how is a failing subtest labelled?",
     ["Since which version are subtests supported?", "how is a failing subtest labelled?"]),
    ("Which option makes instances hashable, and roughly how much slower is creating them?",
     ["Which option makes instances hashable?", "how much slower is creating them?"]),  # ... or an adverb
    ("I want hashable instances: which option should I set, and how much slower is creating them?",
     ["I want hashable instances: which option should I set?",
      "I want hashable instances, how much slower is creating them?"]),  # a colon leads the asking as a comma does
    ("Which Python version does it need, and if I build it from source, which compiler is recommended?",
     ["Which Python version does it need?", "if I build it from source, which compiler is recommended?"])])  # a clause
def test_the_second_question_may_be_led_by_a_preposition_or_an_adverb(question: str, asked: list[str]):
    """"..., and since which version ...?", "..., and roughly how much ...?": the second question starts after the
    words leading its asking word -- and with the clause setting its scene: "..., and if I build it from source, which
    compiler ...?"; a first question may open on "Since which ..." and follow a colon."""
    assert policy.parts(question) == asked


@pytest.mark.parametrize("question", [
    "Which saves more, and since when?",  # control: the second part names nothing
    "Which saves more, and if so, why?",
    "The default port is taken; how do I run on another one?",  # context, then one question
    "What is X and what is Y?",  # parts naming nothing
    "Should I pin an upper bound on the toolkit? What do the maintainers say?",  # one name, and asking words
    "How do I install the toolkit?",
    "Which saves more: the cache or the batch API?"])
def test_a_single_question_is_not_split(question):
    assert policy.parts(question) == []


def test_a_question_about_a_name_nothing_readable_holds_is_abstained_on_in_one_read():
    """"Can the tool format Rust files?" over docs that never say Rust: no page can answer it, however
    many of its other words they hold -- say so, and list the closest pages."""
    docs = (Doc("fmt", "The tool can format Python source files and stub files from standard input.", PUBLIC,
                title="Formatting", document="format.md"),
            Doc("cfg", "Configure the tool in pyproject.toml.", PUBLIC, title="Config", document="config.md"),
            Doc("secret", "Rust files are formatted by the internal fork.", frozenset({"secret"}), title="Fork"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    run = drive(engine, "Can the tool format Rust source files?", budget=4)
    assert run["grade"]["status"] == "exhausted" and "nothing you may read mentions Rust" in run["answer"]
    assert len(run["ledger"]["searches"]) == 1 and "format.md" in run["answer"]  # see also
    assert policy.unheard(run["ledger"]) == ["Rust"]
    insider = drive(engine, "Can the tool format Rust source files?", PUBLIC | {"secret"}, budget=4)
    assert insider["grade"]["status"] == "sufficient"  # a reader of the fork's page: Rust is no unknown
    plain = drive(engine, "Can the tool format Python source files?", budget=4)
    assert plain["grade"]["status"] == "sufficient" and plain["grade"]["answer_doc"] == "fmt"  # control
    first = drive(engine, "Rust aside, can the tool format Python source files?", budget=4)
    assert policy.unheard(first["ledger"]) == []  # a sentence's first word is capitalised whatever it is
    example = drive(engine, "Can the tool format files of another language (Rust) from standard input?", budget=4)
    assert policy.unheard(example["ledger"]) == []  # a name in parentheses is an example of what is asked
    assert example["grade"]["status"] == "sufficient" and example["grade"]["answer_doc"] == "fmt"


def test_a_name_joined_by_underscores_is_looked_up_as_written_before_it_is_called_unheard():
    """"Does the tool honor the NO_COLOR environment variable?" over docs saying "color" and "environment variable"
    but never NO_COLOR: the search weighs the name's words, so no passage read holding it, the agent looks it up
    literally (``grep``, free: no read) and, found nowhere, says no page mentions it -- in one read. Controls: a
    reader of a page naming it answers; a page no search returned that names it (grep finds it) keeps the agent
    going; a name given as an example ("like MYAPP_DEBUG") or in parentheses is not looked up; a failed look-up is
    not repeated."""
    docs = (Doc("color", "The echo function styles its output with color; pass `color=False` to strip the styles.",
                PUBLIC, title="Colors", document="colors.md"),
            Doc("env", "Every option can also be read from an environment variable.", PUBLIC, title="Options",
                document="options.md"),
            Doc("secret", "The internal fork honors NO_COLOR and strips every style.", frozenset({"secret"}),
                title="Fork"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    asked = "Does the tool honor the NO_COLOR environment variable to disable colored output?"
    run = drive(engine, asked, budget=4)
    assert run["grade"]["status"] == "exhausted" and "nothing you may read mentions NO_COLOR" in run["answer"]
    assert len(run["ledger"]["searches"]) == 1 and run["ledger"]["greps"] == {"NO_COLOR": 0}
    assert policy.spent(run["ledger"]) == 1  # the look-up is no read
    insider = drive(engine, asked, PUBLIC | {"secret"}, budget=4)
    assert insider["ledger"]["greps"] == {} and "mentions NO_COLOR" not in insider["answer"]
    searched = {**run["ledger"], "greps": {}, "calls": [c for c in run["ledger"]["calls"] if c["tool"] != "grep"]}
    assert policy.grade(searched)["status"] == "check" and policy.grade(searched)["grep"] == "NO_COLOR"
    found = copy.deepcopy(searched)
    policy.record(found, "grep", {"text": "NO_COLOR"}, {"matches": [{"id": "ref", "line": "NO_COLOR: ..."}]})
    assert policy.grade(found)["status"] != "check" and "mentions" not in policy.grade(found).get("reason", "")
    failed = copy.deepcopy(searched)
    failed["calls"].append({"tool": "grep", "args": {"text": "NO_COLOR"}})  # the look-up failed: nothing recorded
    assert policy.grade(failed)["status"] != "check" and "mentions" not in policy.grade(failed).get("reason", "")
    for example in ("My variables are namespaced like MYAPP_DEBUG; can options be read from an environment variable?",
                    "Can options be read from an environment variable (say MYAPP_DEBUG)?"):
        assert policy.unspelled(drive(engine, example, budget=4)["ledger"]) == []


def test_a_camelcase_name_is_not_heard_in_its_parts():
    """"Compile templates to WebAssembly?" over docs saying "web" and "assembly" apart: the name itself is
    nowhere, so no page answers about it; a hyphenated name is heard in its words (less one saying of what kind:
    "Epytext-style"), and a CamelCase one the docs spell out is heard (controls)."""
    docs = (Doc("web", "Templates render web pages in any style. The assembly of a page starts at its base template.",
                PUBLIC, title="Rendering", document="render.md"),
            Doc("api", "The SandboxedEnvironment compiles templates for untrusted input.", PUBLIC, title="Sandbox",
                document="sandbox.md"),
            Doc("cli", "Bash completion is generated for every command.", PUBLIC, title="Shell", document="shell.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    run = drive(engine, "Can templates be compiled to WebAssembly?", budget=4)
    assert policy.unheard(run["ledger"]) == ["WebAssembly"]
    assert run["grade"]["status"] == "exhausted" and "nothing you may read mentions WebAssembly" in run["answer"]
    assert policy.unheard(drive(engine, "What does the SandboxedEnvironment compile?", budget=4)["ledger"]) == []
    assert policy.unheard(drive(engine, "Is Bash-completion generated?", budget=4)["ledger"]) == []
    # "Epytext-style" names Epytext, whatever the docs say of styles; "Bash-style" names what they say (control)
    epytext = drive(engine, "Is Epytext-style completion generated?", budget=4)["ledger"]
    assert policy.unheard(epytext) == ["Epytext-style"]
    assert policy.unheard(drive(engine, "Is Bash-style completion generated?", budget=4)["ledger"]) == []


def test_a_camelcase_name_is_not_heard_in_another_word_sharing_its_stem():
    """greenlet: "Is greenlet supported on PyPy?" over docs naming only PyPI -- "pypy" and "pypi" stem alike, so
    the search weighed PyPy as PyPI and the agent quoted where wheels are uploaded. A CamelCase name has only its own
    forms: nothing names PyPy. Controls: its plural is the same name ("DataFrames"), and a plain word keeps every form
    of its stem."""
    docs = (Doc("dev", "Binary wheels are uploaded to PyPI when a tag is pushed.", PUBLIC, title="Releases",
                document="dev.md"),
            Doc("df", "Each DataFrame is exported as a table. The exporter keeps its index.", PUBLIC, title="Export",
                document="export.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    view = engine.view(PUBLIC)
    assert "pypy" not in view.weights("Is it supported on PyPy?") and "pypi" in view.weights("Is it on PyPI?")
    run = drive(engine, "Is greenlet supported on PyPy?", budget=4)
    assert policy.unheard(run["ledger"]) == ["PyPy"]
    assert "nothing you may read mentions PyPy" in run["answer"]
    assert view.weights("Are DataFrames exported?")["dataframes"] == view.idf["dataframe"]
    assert view.weights("What does the exporter keep?")["keep"] == view.idf["keeps"]


def test_a_name_glued_to_code_marks_is_heard_as_the_search_spelled_it():
    """"... to use a __Host- cookie prefix?" over docs naming the `__Host-` prefix: the search weighed
    "host-", the name the question asks about is there -- no abstention on "Host". A prefix the docs never
    name ("__Secure-") stays unheard (control)."""
    docs = (Doc("name", "The setting `xsrf_cookie_name` changes the name of the XSRF cookie, to use the `__Host-` "
                "cookie prefix.", PUBLIC, title="Settings", document="web.md"),
            Doc("other", "Cookies are signed with the secret.", PUBLIC, title="Cookies", document="cookies.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    run = drive(engine, "Which setting renames the XSRF cookie, to use a __Host- cookie prefix?", budget=4)
    assert policy.unheard(run["ledger"]) == []
    assert run["grade"]["status"] == "sufficient" and run["grade"]["answer_doc"] == "name"
    other = drive(engine, "Which setting renames the XSRF cookie, to use a __Secure- cookie prefix?", budget=4)
    assert policy.unheard(other["ledger"]) == ["Secure"]


def test_a_question_for_an_amount_of_the_default_thing_is_answered_by_the_number():
    """"How much data can I store with the default cookie-based session factory?" asks for an amount: "default" says
    which factory. The page stating it in a number answers, not one covering more words that gives a default in code
    (a CSRF policy); a hit too weak to answer alone does not jump ahead for stating a number. Control: asked for the
    default itself, the page giving it answers."""
    docs = (Doc("sess", "Data stored by the cookie session factory is limited: at most 4000 bytes fit.", PUBLIC,
                title="Sessions", document="sessions.md"),
            Doc("csrf", "By default the framework comes with a session-based CSRF implementation "
                "`SessionCSRFStoragePolicy`. A cookie-based factory `CookieCSRFStoragePolicy` can store the token "
                "without a session.", PUBLIC, title="CSRF", document="security.md"),
            Doc("news", "Version 2 of the cookie parser changed the default, see https://example.org/pull/3300.",
                PUBLIC, title="Changes", document="changes.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    run = drive(engine, "How much data can I store with the default cookie-based session factory?", budget=4)
    assert run["grade"]["status"] == "sufficient" and run["grade"]["answer_doc"] == "sess"
    default = drive(engine, "What is the default CSRF implementation of the cookie-based session factory?", budget=4)
    assert default["grade"]["status"] == "sufficient" and default["grade"]["answer_doc"] == "csrf"


def test_a_passage_fitting_less_answers_when_its_sentences_hold_the_questions_rarest_word():
    """A paraphrase shares few words with its answer, but keeps the specific one ("ftp"): a passage fitting
    less than ANSWERS answers when the sentences it quotes hold the rarest word the docs hold -- and not when
    only its title does (the sentences then answer something else)."""
    def engine(title: str, text: str) -> Engine:
        docs = (Doc("auth", text, PUBLIC, title=title, document="auth.md"),
                Doc("cache", "Downloaded files come from the cache folder.", PUBLIC, title="Caching", document="cache.md"),
                Doc("cfg", "The configuration file comes first.", PUBLIC, title="Configuration", document="config.md"),
                Doc("logs", "Log files record every request.", PUBLIC, title="Logging", document="logs.md"))
        return Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")

    said = drive(engine("Authentication", "Credentials can come from the netrc file, the format ftp clients read."),
                 "Do my stored passwords come from the ftp file?", budget=4)
    hit = said["ledger"]["searches"][0]["hits"][0]
    assert policy.SPECIFIC <= policy.fit(hit) < policy.ANSWERS and policy.states_rarest(said["ledger"], hit)
    assert said["grade"]["status"] == "sufficient" and "netrc" in said["grade"]["answer"]
    titled = drive(engine("FTP credentials", "Credentials can come from the netrc file."),
                   "Do my passwords come from the ftp file?", budget=4)
    hit = titled["ledger"]["searches"][0]["hits"][0]
    assert policy.SPECIFIC <= policy.fit(hit) < policy.ANSWERS and not policy.states_rarest(titled["ledger"], hit)
    assert titled["grade"]["status"] == "exhausted"


@pytest.mark.parametrize("said, holds", [("re-enable threads with the `--threads` switch", True),
                                         ("re-enable threads with the `--threads` option", False)])  # control
def test_the_rarest_word_is_any_of_the_equally_rare(said: str, holds: bool):
    """"My server never runs jobs. Which switch do I need?": "never" and "switch" are equally rare in the docs; the
    first of them in the question is no rarer than the other, so sentences holding either hold the rarest word --
    and sentences holding neither (the control) do not."""
    ledger = policy.new_ledger("My server never runs jobs. Which switch do I need?", 4)
    ledger["weights"], ledger["passages"] = {"never": 3.6, "switch": 3.6, "server": 1.2, "runs": 2.1, "jobs": 0.7}, 40
    assert policy.states_rarest(ledger, {"highlights": [{"text": f"To fix this, {said}."}]}) is holds


def test_a_capitalised_word_on_a_line_of_code_is_no_bridge():
    """``click.prompt('Please enter a number')``: a word in a code block's string names nothing another page is
    about (a hop on "Please" read the wrong pages); the same words in a sentence do bridge (the control)."""
    def bridged(text: str) -> dict[str, Any]:
        docs = (Doc("ask", text, PUBLIC, title="Input prompts"),
                Doc("pin", "The Harbor Bridge opens at dawn for walkers.", PUBLIC, title="Opening hours"),
                Doc("log", "Logging writes to stderr.", PUBLIC, title="Logging"))
        engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
        view = engine.view(PUBLIC)
        return bridges("How do I ask for a number with a prompt?", [view.search("ask number prompt", 1)[0].doc],
                       view, set())
    assert "harbor bridge" not in bridged("Ask for a number with prompt:\n\n```\nvalue = prompt('Harbor Bridge number')\n```")
    assert "harbor bridge" in bridged("Ask for a number with prompt, as the Harbor Bridge number shows.")


@pytest.mark.parametrize("doer, bridge", [("director", "ada lind"), ("producer", "bo marr")])
def test_a_bridge_stated_by_the_deed_the_question_names_by_its_doer_leads(doer: str, bridge: str):
    """"Who is the spouse of Big Sky's director?": the film's page says who "directed" it, and a name stated by the
    deed the question's agent noun names is the bridge -- "producer" picks the other name of the same page."""
    docs = (Doc("film", "Big Sky was directed by Ada Lind. Big Sky was produced by Bo Marr.", PUBLIC, title="Big Sky"),
            Doc("ada", "Ada Lind grew up by the sea.", PUBLIC, title="Ada Lind"),
            Doc("bo", "Bo Marr grew up in the hills.", PUBLIC, title="Bo Marr"),
            Doc("crew", "A director and a producer work on every film.", PUBLIC, title="Film crews"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    view = engine.view(PUBLIC)
    found = bridges(f"Who is the spouse of Big Sky's {doer}?", [view.search("Big Sky", 1)[0].doc], view, set())
    assert max(found, key=lambda key: found[key][0]) == bridge


def test_a_question_asking_for_a_default_is_answered_by_a_passage_saying_it():
    """"What is the default request timeout ..." is answered by what the default is: a passage covering more of
    the question but saying nothing of a default comes after one that does; asked without "default" (the
    control), the best-covering passage answers."""
    docs = (Doc("route", "The server checks each request timeout per route.", PUBLIC, title="Routing", document="route.md"),
            Doc("dflt", "The default timeout is 30 seconds.", PUBLIC, title="Settings", document="settings.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    asked = drive(engine, "What is the default request timeout of the server?")
    hits = {h["id"]: h for h in asked["ledger"]["searches"][0]["hits"]}
    assert policy.fit(hits["route"]) > policy.fit(hits["dflt"])
    assert asked["grade"]["answer_doc"] == "dflt" and "30 seconds" in asked["grade"]["answer"]
    assert drive(engine, "What is the request timeout of the server?")["grade"]["answer_doc"] == "route"


@pytest.mark.parametrize("given, answers", [("Default: `timedelta(days=31)`", "ref"),
                                            ("Default: as long as the browser keeps it.", "adj")])  # control: no value
def test_of_passages_saying_default_alike_the_one_giving_it_answers(given: str, answers: str):
    """Two passages fit "What is the default session lifetime?" alike and both say "default"; the one giving the
    default in code or a number answers, though the other ranks first; when it gives none, rank order decides."""
    docs = (Doc("adj", "The default cookie implementation checks the session lifetime.", PUBLIC,
                title="Session lifetime", document="security.md"),
            Doc("ref", f"SESSION_LIFETIME:\nHow long a session lasts.\n\n{given}", PUBLIC, title="Configuration",
                document="config.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    asked = drive(engine, "What is the default session lifetime?")
    hits = asked["ledger"]["searches"][0]["hits"]
    assert hits[0]["id"] == "adj" and abs(policy.fit(hits[0]) - policy.fit(hits[1])) <= policy.TIED
    assert asked["grade"]["answer_doc"] == answers


@pytest.mark.parametrize("limits, answers", [("8 lines or 640 characters", "output"),
                                             ("set in the configuration", "ref")])  # control: no value given
def test_a_default_question_is_answered_by_the_value_not_by_saying_there_is_a_default(limits: str, answers: str):
    """"What are the default truncation limits for assertion messages?": a reference entry covering every word says
    messages are truncated "to a limit by default" -- not what the limit is; a page fitting less, still enough to
    answer, gives it ("Default truncation limits are 8 lines or 640 characters.") and answers. Control: when that page
    gives no value, the best fit answers."""
    docs = (Doc("ref", "truncate_chars:\nControls the limit of characters kept of assertion messages. Assertion "
                "messages are truncated to a limit by default.", PUBLIC, title="Reference", document="reference.md"),
            Doc("output", f"Default truncation limits are {limits}, whichever comes first.", PUBLIC,
                title="Assertion messages", document="output.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    asked = drive(Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles"),
                  "What are the default truncation limits for assertion messages?")
    hits = {h["id"]: h for h in asked["ledger"]["searches"][0]["hits"]}
    assert policy.fit(hits["ref"]) - policy.fit(hits["output"]) > policy.TIED
    assert policy.fit(hits["output"]) >= policy.ANSWERS
    assert asked["grade"]["answer_doc"] == answers


@pytest.mark.parametrize("question, answers", [
    ("Which environment variable sets the cache folder?", "named"),
    ("What sets the cache folder?", "plain"),  # control: not a "which" question
    ("Which folder does the environment variable set?", "plain")])  # control: a folder is not named in code
def test_a_which_question_about_a_thing_of_code_prefers_the_tied_hit_naming_it_in_code(question, answers):
    """"Which environment variable ..." asks for a name, and documentation names it in code: of hits that fit
    alike, the one whose highlights name it (`CACHE_FOLDER`, holding words of the question) answers."""
    docs = (Doc("plain", "The cache folder is set by an environment variable; the cache folder holds downloads.", PUBLIC,
                title="Cache folder", document="cache.md"),
            Doc("named", "The environment variable `CACHE_FOLDER` sets the cache folder.", PUBLIC, title="Variables",
                document="vars.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    run = drive(Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles"), question)
    hits = run["ledger"]["searches"][0]["hits"]
    assert [h["id"] for h in hits[:2]] == ["plain", "named"] and policy.fit(hits[0]) == policy.fit(hits[1])
    assert run["grade"]["answer_doc"] == answers


@pytest.mark.parametrize("silent, stating, asked, control, said", [
    (("sync", "Gunicorn starts its workers with the sync worker class by default, right for most uses.", "Worker types"),
     ("count", "Gunicorn runs only 1 worker by default.", "Processes"),
     "How many workers does Gunicorn start by default?", "Which workers does Gunicorn start by default?", "1 worker"),
    (("when", "The tool reads its configuration file once, at start, before any task runs.", "Configuration"),
     ("path", "Each configuration file is read from `/etc/app.yaml`, then `~/.app.yaml`.", "Files"),
     "Where does the tool read its configuration file from?", "When does the tool read its configuration file?",
     "/etc/app.yaml"),
    (("idle", "The pool's worker processes need a recent Python version and stop after 5 minutes idle.", "Workers"),
     ("python", "Pool workers need Python 3.13 or later.", "Requirements"),
     "Which Python version do the pool's worker processes need?", "Why do the pool's worker processes need Python?",
     "3.13")])
def test_a_how_many_or_where_question_is_answered_by_a_passage_stating_a_number_or_a_place(
        silent: tuple[str, str, str], stating: tuple[str, str, str], asked: str, control: str, said: str):
    """"How many ..." asks for a quantity, "Where ..." for a place, "Which version ..." for a version number: a passage
    covering every word of the question but stating no number (naming no path or directory; stating a number that is
    no version) does not answer it, one stating it does; the same words asked another way (the control) take the
    best-covering passage."""
    docs = (*(Doc(i, text, PUBLIC, title=title, document=f"{i}.md") for i, text, title in (silent, stating)),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    run = drive(engine, asked)
    hits = run["ledger"]["searches"][0]["hits"]
    assert [h["id"] for h in hits[:2]] == [silent[0], stating[0]] and policy.fit(hits[0]) > policy.fit(hits[1])
    assert run["grade"]["answer_doc"] == stating[0] and said in run["grade"]["answer"]
    assert drive(engine, control)["grade"]["answer_doc"] == silent[0]


def test_a_help_output_answers_with_the_lines_of_the_option_quoted_as_code():
    """A page holding a command's whole --help output: the answer is the option's few lines, fenced as code with
    their indentation, carried by search's highlights (``code``) -- not the output's first lines."""
    options = [f"  --option-{n:03d}          Does thing number {n} of the tool." for n in range(60)]
    options[41:43] = ["  --durations=N         Show N slowest setup/test durations (N=0 for all)",
                      "                        with setup and teardown."]
    docs = (Doc("help", "All the flags:\n\n```\n" + "\n".join(options) + "\n```", PUBLIC, title="Command line",
                document="cli.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    asked = drive(engine, "How do I show the slowest test durations?")
    answer = asked["grade"]["answer"]
    assert answer.startswith("All the flags:\n```\n--durations=N")
    assert any(line.startswith("  ") and line.lstrip().startswith("with setup") for line in answer.splitlines())
    assert answer.endswith("```") and "--option-000" not in answer


def test_a_second_passage_joins_the_answer_only_when_together_they_answer_the_question():
    """The best hit covers half the question; another hit adding 0.18 (over MIN_GAIN) but leaving the two short
    of COVERS is no second half of the answer -- a collage of two partial hits reads as an answer it is not.
    Control: a hit completing it to 0.78 joins."""
    weights = {w: 1.0 for w in "abcdeg"} | {"f": 1.8, "h": 2.2}  # a..e: half of the total, 10
    ledger = {"question": "What do a, b, c, d, e, f, g and h say?", "weights": weights, "evidence": {}}
    best = {"id": "best", "coverage": 0.5, "answers": 0.5, "matched": list("abcde"), "highlights": [{"text": "A."}]}
    short = {"id": "short", "coverage": 0.18, "answers": 0.18, "matched": ["f"], "highlights": [{"text": "F."}]}
    full = {"id": "full", "coverage": 0.28, "answers": 0.28, "matched": ["f", "g"], "highlights": [{"text": "G."}]}
    assert policy._union(ledger, [best, short]) - best["coverage"] >= policy.MIN_GAIN
    assert policy._union(ledger, [best, short]) < policy.COVERS <= policy._union(ledger, [best, full])
    assert [c["doc_id"] for c in policy._joined(ledger, best, [best, short])] == ["best"]
    assert [c["doc_id"] for c in policy._joined(ledger, best, [best, full])] == ["best", "full"]


def test_an_answer_keeps_list_items_on_their_lines_and_the_sentence_after_an_unfinished_item_on_its_own():
    """A list item stays on a line of its own; a sentence after an item ending unpunctuated ("- code 123 if there was
    an internal error") starts a line too, while one after an item's finished sentence is the item's own (its
    "Defaults to `600`.")."""
    said = policy._quote([{"text": "- code 123 if there was an internal error"},
                          {"text": "With `--quiet` only the exit code is returned."}])
    assert said == "- code 123 if there was an internal error\nWith `--quiet` only the exit code is returned."
    same = policy._quote([{"text": "* `max_age` - Sets a maximum time."}, {"text": "Defaults to `600`."}])
    assert same == "* `max_age` - Sets a maximum time. Defaults to `600`."
    # a heading the answer stands under reads as its title; a term line ending in code is no heading
    titled = policy._quote([{"text": "AUTOTHROTTLE_START_DELAY"}, {"text": "Default: `5.0`"},
                            {"text": "The initial download delay (in seconds)."}])
    assert titled == "AUTOTHROTTLE_START_DELAY: Default: `5.0` The initial download delay (in seconds)."
    # quoted from two pages, the second starting with an item: the item starts a line after the first's citation
    cite = {"via": None, "from": None, "hop": None}
    graded = {"status": "sufficient", "citations": [
        {**cite, "doc_id": "index.md#3", "document": "index.md", "section": "Dependencies",
         "quote": "`itsdangerous` is required for sessions."},
        {**cite, "doc_id": "middleware.md#12", "document": "middleware.md", "section": "Sessions",
         "quote": "* `max_age` - Session expiry time. Defaults to 2 weeks."}]}
    assert policy.compose_open(graded).split("\n")[:2] == [
        "`itsdangerous` is required for sessions. [index.md › Dependencies]",
        "* `max_age` - Session expiry time. Defaults to 2 weeks. [middleware.md › Sessions]"]
    plain = {**graded, "citations": [graded["citations"][0], {**graded["citations"][1], "quote": "It lasts 2 weeks."}]}
    assert policy.compose_open(plain).split("\n")[0].endswith("] It lasts 2 weeks. [middleware.md › Sessions]")


def test_a_versioned_name_the_question_asks_about_must_be_in_the_answer_as_written():
    """"Does the server support HTTP/3?": a passage about HTTP servers and their support, its "3" elsewhere, is no
    answer -- search matched the parts, not the name; the agent abstains. Control: a passage saying HTTP/3 answers."""
    docs = (Doc("proxy", "The development server speaks HTTP/1.1 and supports 3 reload modes; a reverse proxy in front "
                         "of the HTTP server adds support for more protocols.", PUBLIC, title="Server", document="server.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    asked = drive(engine, "Does the development server support HTTP/3?")
    assert asked["grade"]["status"] == "exhausted", asked["grade"]
    said = (Doc("push", "The development server supports HTTP/3 push.", PUBLIC, title="Push", document="push.md"),
            *docs)
    engine = Engine(Corpus(said, Lexicon(()), None, None), "bm25-titles")
    assert drive(engine, "Does the development server support HTTP/3?")["grade"]["answer_doc"] == "push"


def test_a_release_the_question_names_must_be_in_the_answer_as_written():
    """"Which Python versions did Tool 6.6.0 drop support for?": the 5.1.0 notes saying "Tool 6.0 will drop support
    for Python 2.7" hold every word and number of it (search splits 6.6.0 into 6 and 0); the 6.6.0 notes answer.
    Control: asked of "6.6" (a two-part number is often a Python version the docs write otherwise), the words decide."""
    docs = (Doc("old", "- Tool 6.0 will drop support for Python 2.7 and 3.4.", PUBLIC, title="What's new in Tool 5.1.0",
                document="v5.1.0.md"),
            Doc("new", "- Support for Python 3.9 and 3.10 is dropped.", PUBLIC, title="What's new in Tool 6.6.0",
                document="v6.6.0.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles")
    assert drive(engine, "Which Python versions did Tool 6.6.0 drop support for?")["grade"]["answer_doc"] == "new"
    assert drive(engine, "Which Python versions did Tool 6.6 drop support for?")["grade"]["answer_doc"] == "old"


def test_a_second_passage_adding_one_word_of_the_question_does_not_join_the_answer():
    """"How do I insert many rows at once efficiently?": the best passage says how, and a page whose example says
    "multiple keys at once" adds "once" -- one word of the question is no part of its answer a page holds, and the
    joined passage only made the answer longer. Control: a passage adding two of its words joins."""
    ledger = {"question": "How do I insert many rows at once efficiently?", "evidence": {},
              "weights": {w: 1.0 for w in "abcde"} | {"y": 1.5, "z": 3.0}}  # total 9.5
    best = {"id": "best", "coverage": 0.526, "answers": 0.526, "matched": list("abcde"), "highlights": [{"text": "A."}]}
    lone = {"id": "lone", "coverage": 0.42, "answers": 0.42, "matched": ["a", "z"], "highlights": [{"text": "Z."}]}
    pair = {"id": "pair", "coverage": 0.47, "answers": 0.47, "matched": ["y", "z"], "highlights": [{"text": "Y."}]}
    assert policy._union(ledger, [best, lone]) - best["coverage"] >= policy.MIN_GAIN  # the gain alone would join it
    assert policy._union(ledger, [best, lone]) >= policy.COVERS
    assert [c["doc_id"] for c in policy._joined(ledger, best, [best, lone])] == ["best"]
    assert [c["doc_id"] for c in policy._joined(ledger, best, [best, pair])] == ["best", "pair"]


@pytest.mark.parametrize("said, joined", [
    ("By default, a timeout for fetching is set via `fetch_timeout`.", True),
    ("By default, the timeout for fetching is 5 seconds, set via `fetch_timeout`.", False)])  # control: a value given
def test_a_default_answer_naming_its_setting_without_a_value_reads_with_the_row_defining_it(said: str, joined: bool):
    """"What is the default timeout ...?": the usage page says the default is set "via `fetch_timeout`" and stops
    there; the options table's row for `fetch_timeout` gives `10.0`. The answer reads with that row -- not with the
    row of another option the page does not name. Control: a sentence stating the value needs no row."""
    docs = (Doc("usage", f"Remote files can be fetched when enabled. {said}", PUBLIC, title="Remote files",
                document="usage.md"),
            Doc("options", "Option | Type | Default | Description\n--- | --- | --- | ---\n`fetch_size` | int | `1024` | "
                "Largest file.\n`fetch_timeout` | float | `10.0` | Passes a timeout in seconds to the fetcher.", PUBLIC,
                title="Options", document="options.md"),
            Doc("log", "Logs go to stderr.", PUBLIC, title="Logging", document="log.md"))
    grade = drive(Engine(Corpus(docs, Lexicon(()), None, None), "bm25-titles"),
                  "What is the default timeout for fetching remote files?")["grade"]
    assert grade["answer"].startswith("Remote files can be fetched") and "1024" not in grade["answer"]
    assert ("`fetch_timeout` | float | `10.0`" in grade["answer"]) == joined
    assert [c["doc_id"] for c in grade["citations"]] == (["usage", "options"] if joined else ["usage"])


def test_a_passage_the_word_and_the_meaning_rankings_both_put_first_answers_at_a_lower_fit():
    """A paraphrase shares few of its answer's words ("block larger uploads from clients" for "Uploads larger than
    `MAX_BODY` bytes are refused"): when the BM25 and the embedding ranking both put a passage first (``search``'s
    ``agreed``), it answers from AGREED of the question, below SPECIFIC. Controls: the same passages searched by their
    words alone (nothing agreed) abstain, and so does a passage both put first that fits less than AGREED."""
    docs = (Doc("limits", "Uploads larger than `MAX_BODY` bytes are refused with status 413.", PUBLIC,
                title="Request limits"),
            Doc("forms", "Forms post their fields as key and value pairs to the server.", PUBLIC, title="Forms"),
            Doc("static", "Static files are served from the assets folder.", PUBLIC, title="Static files"),
            Doc("logs", "Every request is written to the access log.", PUBLIC, title="Logging"))
    corpus = Corpus(docs, Lexicon(()), None, None)
    hybrid = Engine(corpus, "bm25-titles", vectors=Vectors.of(HashEmbedder(), docs))

    def first(question: str) -> dict:
        return calls(hybrid, PUBLIC, ("search", {"query": question, "k": 3}))[0].structured_content["results"][0]

    question = "How do I block larger uploads from clients at the server?"
    best = first(question)
    assert best["id"] == "limits" and best["agreed"] and policy.AGREED <= policy.fit(best) < policy.SPECIFIC
    answer = drive(hybrid, question)["grade"]
    assert answer["status"] == "sufficient" and answer["answer_doc"] == "limits" and "`MAX_BODY`" in answer["answer"]
    assert drive(Engine(corpus, "bm25-titles"), question)["grade"]["status"] == "exhausted"
    weak = "How do I block uploads over a size limit?"
    best = first(weak)
    assert best["id"] == "limits" and best["agreed"] and policy.fit(best) < policy.AGREED
    assert drive(hybrid, weak)["grade"]["status"] == "exhausted"


@pytest.mark.parametrize("agreed, coverage, first", [
    (True, 0.78, "orms"),       # both rankings put it first and it covers most of the question: it answers
    (False, 0.78, "ideas"),     # control: the word ranking alone -- the page covering every word answers
    (True, 0.6, "ideas")])      # control: agreed on, but covering less than COVERS
def test_a_passage_both_rankings_put_first_answers_before_one_covering_more_words(agreed: bool, coverage: float,
                                                                                  first: str):
    """"Which ORMs does factory_boy support?": the ORMs page's introduction is first in the word and the meaning
    ranking alike and covers most of the question; a page of ideas covers every word ("Define a proper set of rules
    for the support of third-party ORMs") -- the page both rankings chose answers."""
    ledger = {"question": "Which ORMs does factory_boy support?", "evidence": {},
              "weights": {"orm": 2.0, "factory_boy": 1.0, "support": 1.0}}
    hits = [{"id": "orms", "section": "Using factory_boy with ORMs", "coverage": coverage, "answers": coverage,
             "agreed": agreed, "highlights": [{"text": "factory_boy provides custom subclasses for various ORMs."}]},
            {"id": "ideas", "section": "Ideas", "coverage": 1.0, "answers": 1.0, "agreed": False,
             "highlights": [{"text": "Define a proper set of rules for the support of third-party ORMs."}]}]
    assert 0.6 < policy.COVERS <= 0.78  # the two coverages stand on either side of COVERS
    assert [h["id"] for h in policy._answering(ledger, {"hits": hits})][0] == first


def test_a_part_whose_search_finds_the_page_claimed_for_the_other_part_sends_that_part_to_its_own_search():
    """"Which Python versions does the tool support, and how can I check whether my installation uses the C
    extension?": the installation page holds the first part's words (it names Python versions) and is taken to answer
    it; the second part's own search finds that same page -- it answers the second part. The first part is then
    searched on its own, and answered from its own page (the supported versions), not from the installation page.
    Control: when the first part's own search finds the installation page too, that page answers both."""
    question = ("Which Python versions does the tool support, and how can I check whether my installation uses the C "
                "extension?")
    first, second = policy.parts(question)
    weights = {w: 1.0 for w in ("python", "versions", "tool", "support", "check", "whether", "installation", "uses",
                                "c", "extension")}

    def hit(doc: str, text: str, matched: list[str], fits: float) -> dict:
        return {"id": doc, "title": doc, "document": f"{doc}.md", "section": doc.capitalize(), "text": text,
                "trusted": True, "coverage": fits, "answers": fits, "matched": matched,
                "highlights": [{"text": text, "start": 0, "end": len(text)}]}

    install = hit("install", "Run `tool --version`: it says whether the C extension is used, for every Python "
                  "version the tool supports.", ["python", "versions", "tool", "support", "c", "extension"], 0.6)
    support = hit("support", "The tool supports Python 3.11 through 3.14.", ["python", "versions", "tool", "support"],
                  0.9)

    def searched(part_hits: list[dict]) -> dict:
        ledger = policy.new_ledger(question, 4)
        policy.record(ledger, "search", {"query": question, "k": 10}, {"results": [install], "weights": weights})
        assert policy._part_answers(ledger, ledger["searches"][0]["hits"][0])["query"] == second
        policy.record(ledger, "search", {"query": second, "k": 10}, {"results": [install], "weights": weights})
        asks = policy._part_answers(ledger, ledger["searches"][0]["hits"][0])
        assert asks["status"] == "gap" and asks["query"] == first  # the first part, on its own
        policy.record(ledger, "search", {"query": first, "k": 10}, {"results": part_hits, "weights": weights})
        return policy._part_answers(ledger, ledger["searches"][0]["hits"][0])

    answered = searched([support, install])
    assert answered["status"] == "answered" and [c["doc_id"] for c in answered["citations"]] == ["support", "install"]
    assert searched([install]) is None  # control: the installation page answers both


@pytest.mark.parametrize("ranked_first, answered", [(True, True),
                                                     (False, False)])  # control: another page ranks first for it
def test_a_part_whose_search_ranks_the_claimed_page_first_though_fitting_less_sends_the_other_part_alone(
        ranked_first: bool, answered: bool):
    """"Which Python flag is recommended while developing, and how can I serve my app from the command line?": the CLI
    page holds the first part's words ("development", "Python") and is taken to answer it; the second part's own search
    ranks that same page first, though it fits that part less than an answer must (its sentences were read for the
    whole question) -- it is the second part's page. The first part is searched on its own and answered from its
    own page (`python -X dev`), the second from the CLI page as the whole question read it. Control: when the second
    part's search ranks another page first, nothing says the CLI page is that part's: the pair is not formed."""
    question = "Which Python flag is recommended while developing, and how can I serve my app from the command line?"
    first, second = policy.parts(question)
    weights = {w: 1.0 for w in ("python", "flag", "recommended", "developing", "serve", "app", "command", "line")}

    def hit(doc: str, text: str, matched: list[str], fits: float) -> dict:
        return {"id": doc, "title": doc, "document": f"{doc}.md", "section": doc.capitalize(), "text": text,
                "trusted": True, "coverage": fits, "answers": fits, "matched": matched,
                "highlights": [{"text": text, "start": 0, "end": len(text)}]}

    cli = hit("cli", "The CLI serves an app in development: `python -m tool.web module:app`.",
              ["python", "developing", "flag", "recommended", "app"], 0.6)
    weak = {**cli, "coverage": 0.4, "answers": 0.4}  # the same page, read for the second part alone
    other = hit("deploy", "Serve the app behind a proxy in production.", ["serve", "app"], 0.38)
    dev = hit("index", "We recommend Python's development mode (`python -X dev`).",
              ["python", "flag", "recommended", "developing"], 0.9)
    ledger = policy.new_ledger(question, 4)
    policy.record(ledger, "search", {"query": question, "k": 10}, {"results": [cli], "weights": weights})
    assert policy._part_answers(ledger, ledger["searches"][0]["hits"][0])["query"] == second
    policy.record(ledger, "search", {"query": second, "k": 10},
                  {"results": [weak, other] if ranked_first else [other, weak], "weights": weights})
    asks = policy._part_answers(ledger, ledger["searches"][0]["hits"][0])
    if not answered:
        assert asks is None
        return
    assert asks["status"] == "gap" and asks["query"] == first
    policy.record(ledger, "search", {"query": first, "k": 10}, {"results": [dev, cli], "weights": weights})
    pair = policy._part_answers(ledger, ledger["searches"][0]["hits"][0])
    assert pair["status"] == "answered" and [c["doc_id"] for c in pair["citations"]] == ["index", "cli"]
    assert "python -m tool.web" in pair["citations"][1]["quote"]


@pytest.mark.parametrize("asked, first", [
    ("How do I generate random names with Faker in a factory?", "reference"),  # the reference page answers
    ("In which release was Faker support added to factories?", "news")])       # control: it asks about releases
def test_a_changelog_entry_fitting_much_better_still_answers_after_the_reference(asked: str, first: str):
    """"How do I generate random names with Faker?": factory_boy's changelog entry "Add support for random-yet-realistic
    values through fake-factory, through the `factory.Faker` class" holds the question's words as its feature's name and
    fits 0.2 better than the reference entry saying how (`name = factory.Faker('name')`) -- within RELEASE_NOTES, so the
    reference answers. Control: a question about releases is the changelog's."""
    ledger = {"question": asked, "evidence": {}, "weights": {"faker": 2.0, "names": 1.0, "random": 1.0}}
    news = {"id": "news", "section": "ChangeLog › 2.6.0 (2015-10-20)", "coverage": 0.9, "answers": 0.9,
            "highlights": [{"text": "Add support for random-yet-realistic values through the `factory.Faker` class."}]}
    reference = {"id": "reference", "section": "Reference › Declarations › Faker", "coverage": 0.7, "answers": 0.7,
                 "highlights": [{"text": "Use the `Faker` attribute declaration: `name = factory.Faker('name')`."}]}
    assert 0.15 < policy.fit(news) - policy.fit(reference) <= policy.RELEASE_NOTES
    assert policy._answering(ledger, {"hits": [news, reference]})[0]["id"] == first


@pytest.mark.parametrize("stands_out, fits, answers", [
    (3.4, 0.22, True),    # the embedding singles the passage out: it answers below AGREED
    (2.4, 0.22, False),   # control: near the question as many passages are -- abstain
    (3.4, 0.15, False)])  # control: singled out, but fitting less than STANDS_OUT_FIT
def test_a_passage_whose_meaning_stands_out_from_all_the_callers_documents_answers_at_a_lower_fit(
        stands_out: float, fits: float, answers: bool):
    """"A few of my tests are flaky on CI. Can Hatch automatically rerun a failing test a couple of times before giving
    up?" shares two words with its answer ("If a test fails every time and the number of retries is set to 2, the test
    will be run a total of three times"), which no ranking puts first in both: the embedding puts that passage
    STANDS_OUT standard deviations above the mean of all the caller's passages (``search``'s ``stands_out``), while a
    question the documents do not answer is near many passages alike."""
    question = "A few of my tests are flaky on CI. Can Hatch automatically rerun a failing test a couple of times?"
    weights = {"tests": 1.0, "flaky": 3.0, "ci": 2.0, "hatch": 0.2, "automatically": 2.0, "rerun": 3.0,
               "failing": 2.0, "test": 1.0, "couple": 2.5, "times": 1.5}
    text = "If a test fails every time and the number of retries is set to `2`, the test will be run three times."
    hit = {"id": "testing", "title": "Testing", "document": "testing.md", "section": "Testing › Retries", "text": text,
           "trusted": True, "coverage": fits, "answers": fits, "matched": ["test", "times"], "agreed": False,
           "stands_out": stands_out, "highlights": [{"text": text, "start": 0, "end": len(text)}]}
    ledger = policy.new_ledger(question, 4)
    policy.record(ledger, "search", {"query": question, "k": 10}, {"results": [hit], "weights": weights})
    best = ledger["searches"][0]["hits"][0]
    assert policy.fit(best) < policy.AGREED and not policy.states_rarest(ledger, best)
    grade = policy.grade_open(ledger)
    assert (grade["status"] == "sufficient") is answers, grade
    if answers:
        assert grade["answer_doc"] == "testing" and "retries" in grade["answer"]


@pytest.mark.parametrize("stands_out, fits, answers", [
    (4.5, 0.22, True),    # the meaning ranking singles out its first hit: it answers, though another fits better
    (3.4, 0.22, False),   # control: singled out no more than the best fit would need to be -- abstain
    (4.5, 0.15, False)])  # control: singled out, but fitting less than STANDS_OUT_FIT
def test_the_searchs_first_hit_answers_when_its_meaning_stands_out_further_though_another_fits_better(
        stands_out: float, fits: float, answers: bool):
    """"Where should my cli keep its per-user settings file so it ends up in the right place on windows, mac and
    linux?": Click's page on running scripts holds more of the asker's words ("On Linux and OS X ... the file", "on
    Windows") than the sentence that answers ("Click provides a `get_app_dir` function which returns the most
    appropriate location for per-user config files ... depending on the OS"), and neither fits enough to answer. The
    search ranks the answering passage first, its meaning FIRST_STANDS_OUT standard deviations above the mean of all
    the caller's passages: it answers."""
    question = ("Where should my cli keep its per-user settings file so it ends up in the right place on windows, mac "
                "and linux?")
    weights = {"cli": 1.0, "per-user": 3.0, "settings": 1.5, "file": 0.5, "ends": 1.5, "right": 1.0, "place": 1.5,
               "windows": 2.0, "mac": 2.5, "linux": 2.0}

    def hit(doc: str, text: str, fit: float, standing: float) -> dict:
        return {"id": doc, "title": doc, "document": f"{doc}.rst", "section": doc.capitalize(), "text": text,
                "trusted": True, "coverage": fit, "answers": fit, "matched": [], "agreed": False,
                "stands_out": standing, "highlights": [{"text": text, "start": 0, "end": len(text)}]}

    app_dir = hit("utils", "Click provides a `get_app_dir` function which returns the most appropriate location for "
                  "per-user config files for your application depending on the OS.", fits, stands_out)
    near = hit("setuptools", "On Linux and OS X you can add a comment to the beginning of the file; on Windows you "
               "associate interpreters with file extensions.", 0.37, 2.1)
    ledger = policy.new_ledger(question, 4)
    policy.record(ledger, "search", {"query": question, "k": 10}, {"results": [app_dir, near], "weights": weights})
    ranked = policy._answering(ledger, ledger["searches"][0])
    assert ranked[0]["id"] == "setuptools" and policy.fit(ranked[0]) < policy.ANSWERS  # the best fit answers by no rule
    grade = policy.grade_open(ledger)
    assert (grade["status"] == "sufficient") is answers, grade
    if answers:
        assert grade["answer_doc"] == "utils" and "get_app_dir" in grade["answer"]
