"""The control policy as pure functions: plan, record, grade, compose.

These are the chapter's loop decisions over plain, JSON-serialisable state, so the same
code drives the offline model's roles, guards the budget, and lets ``hoprag ask`` report a
trace. Nothing here knows a corpus: entities come from the question and the documents read,
relations from the server's lexicon (``graph_overview``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from hoprag.corpus import Doc
from hoprag.directives import directives
from hoprag.lexicon import Lexicon, Relation
from hoprag.verdict import assess_all, resolve
from hoprag.walk import Budget, edges_of, is_entity, reach

Ledger = dict[str, Any]
SEARCH_K = 2
_WH = {"what", "which", "who", "whom", "whose", "where", "when", "how", "why", "is", "are", "does", "do"}

ABSTAIN_UNREADABLE = "not found in what you may read"
ABSTAIN_BUDGET = "budget exhausted"
ABSTAIN_CONFLICT = "conflicting sources"


def new_ledger(question: str, budget: int) -> Ledger:
    return {"question": question, "start": None, "goal": None, "budget": budget, "plan": None,
            "searches": [], "calls": [], "queried": [], "evidence": {}, "dropped": [],
            "directives": [], "trace": []}


def lexicon_of(overview: dict[str, Any]) -> Lexicon:
    """The relations the caller can reach, as the server reported them."""
    return Lexicon(tuple(Relation(r["name"], tuple(r.get("cues", ())), tuple(r.get("asks", ())))
                         for r in overview.get("relations", [])))


def start_entity(question: str) -> str | None:
    """The entity a question is about, named as the reader names subjects.

    Take the last run of capitalised words (skipping a sentence-initial question word) and,
    like the reader's subject rule, keep its last word: "Project Falcon" -> "Falcon".
    """
    words = re.findall(r"[A-Za-z0-9][\w-]*", re.sub(r"'s\b", "", question))
    runs, current = [], []
    for i, w in enumerate(words):
        if w[:1].isupper() and not (i == 0 and w.lower() in _WH):
            current.append(w)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs[-1][-1] if runs else None


def plan(question: str, overview: dict[str, Any]) -> dict[str, Any]:
    """Decide the start entity and goal relation, or abstain before retrieving anything.

    A goal relation absent from the caller's own graph cannot be answered from what they
    may read, so the planner abstains without a search (the cheap route for restricted asks).
    """
    goal = lexicon_of(overview).asked_relation(question)
    start = start_entity(question)
    if goal is None:
        return {"action": "abstain", "reason": ABSTAIN_UNREADABLE, "start": start, "goal": None}
    if start is None:
        return {"action": "abstain", "reason": "the question names no entity to start from", "start": None, "goal": goal}
    return {"action": "search", "start": start, "goal": goal, "query": queries_for(start, goal, start=True)[0]}


def queries_for(entity: str, goal: str, start: bool = False) -> tuple[str, str]:
    """The named gap as queries, in the order to try them.

    The start entity is looked up directly with the relation still missing ("Falcon region"),
    which answers one-hop questions in one search. A bridge entity is searched by name alone
    -- its own statements are what the next hop needs, and the goal's words would pull in
    look-alike distractors -- and reformulated with the goal words only if that reads nothing.
    """
    direct = f"{entity} {goal.replace('_', ' ')}"
    return (direct, entity) if start else (entity, direct)


def record(ledger: Ledger, tool: str, args: dict[str, Any], result: dict[str, Any] | None) -> None:
    """Add one tool call and what it returned to the ledger (the only path into evidence).

    Untrusted results are dropped before anything is read from them; their directives are
    reported as detected, never acted on. Seen documents are not read twice.
    """
    ledger["calls"].append({"tool": tool, "args": args})
    if tool != "search":
        ledger["trace"].append(f"{tool}({_fmt_args(args)})")
        return
    results = (result or {}).get("results", [])
    ids = [r["id"] for r in results]
    dropped = [r["id"] for r in results if not r.get("trusted")]
    fresh = [r for r in results if r.get("trusted") and r["id"] not in ledger["evidence"]]
    for r in results:
        for clause in directives(r.get("text", "")):
            found = {"id": r["id"], "clause": clause}
            if found not in ledger["directives"]:  # a document retrieved twice is reported once
                ledger["directives"].append(found)
                ledger["trace"].append(f"directive detected in {r['id']}, not executed: {clause!r}")
    for r in fresh:
        ledger["evidence"][r["id"]] = {k: r.get(k) for k in ("title", "text", "source", "updated", "facts")}
    ledger["dropped"] += [d for d in dropped if d not in ledger["dropped"]]
    ledger["searches"].append({"query": args.get("query", ""), "k": args.get("k"), "results": ids, "dropped": dropped})
    ledger["queried"].append(args.get("query", ""))
    ledger["trace"].append(f"search({args.get('query', '')!r}) -> {ids}"
                           + (f" (dropped untrusted {dropped})" if dropped else "")
                           + (f" (new: {[r['id'] for r in fresh]})" if fresh else " (nothing new)"))


def _fmt_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def _docs(ledger: Ledger) -> list[Doc]:
    return [Doc(doc_id, e.get("text") or "", frozenset(), True, e.get("title") or "", e.get("source") or "",
                dt.date.fromisoformat(e["updated"]) if e.get("updated") else None)
            for doc_id, e in ledger["evidence"].items()]


def grade(ledger: Ledger) -> dict[str, Any]:
    """Grade the evidence so far and name the next step (the chapter's gate + loop state).

    Walks the admitted facts breadth-first from the start entity (:func:`hoprag.walk.reach`). An entity holding the goal
    relation is graded with ``assess``/``resolve``: ``sufficient`` (cite), or ``conflict``
    when the newest sources disagree. Otherwise the first discovered entity not yet searched
    is the ``gap``; with none left the search is ``exhausted``, and at the budget it stops.
    """
    start, goal = ledger.get("start"), ledger.get("goal")
    if not start or not goal:
        return {"status": "abstain", "reason": (ledger.get("plan") or {}).get("reason", ABSTAIN_UNREADABLE)}
    facts = {doc_id: [tuple(t) for t in e.get("facts") or []] for doc_id, e in ledger["evidence"].items()}
    docs = _docs(ledger)
    found = reach(start, goal, edges_of(facts.items()))
    if found.entity is not None:
        entity, holding = found.entity, {e[3] for e in found.goals}
        holders = [d for d in docs if d.id in holding]
        verdicts = assess_all(holders, ledger["question"], entity, goal, facts)
        res = resolve(verdicts, {d.id: d.updated for d in docs})
        path = [list(e) for e in found.path]
        graded = [{"doc": v.passage, "relevant": v.relevant, "supported": v.supported, "action": v.action}
                  for v in verdicts]
        if res.answer is None:
            return {"status": "conflict", "reason": ABSTAIN_CONFLICT, "entity": entity, "path": path,
                    "cited": list(res.cited), "verdicts": graded}
        winner = next(v.passage for v in verdicts if v.passage in res.cited)
        path.append([entity, goal, res.answer, winner])
        return {"status": "sufficient", "answer": res.answer, "path": path, "resolution": res.status,
                "superseded": list(res.superseded), "verdicts": graded}
    read = {t[0] for triples in facts.values() for t in triples}
    gaps = [(e, q) for e in found.order if is_entity(e) and e not in read
            for q in queries_for(e, goal, start=e == start) if q not in ledger["queried"]][:1]
    if Budget(ledger["budget"], len(ledger["searches"])).exhausted:
        return {"status": "budget", "reason": ABSTAIN_BUDGET}
    if not gaps:
        return {"status": "exhausted", "reason": ABSTAIN_UNREADABLE}
    entity, query = gaps[0]
    return {"status": "gap", "entity": entity, "query": query,
            "reason": f"no {goal} for {start} yet; nothing read about {entity} so far"}


def hops_text(path: list[list[str]]) -> str:
    """A citation path as the writer states it: ``s --relation--> o [doc]`` joined by ``; ``."""
    return "; ".join(f"{s} --{r}--> {o} [{d}]" for s, r, o, d in path)


def compose(ledger: Ledger, graded: dict[str, Any]) -> str:
    """The writer's answer: the object with its citation path, or an explicit abstention."""
    notes = []
    if ledger["dropped"]:
        notes.append(f"Untrusted documents dropped unread: {', '.join(ledger['dropped'])}.")
    if ledger["directives"]:
        ids = sorted({d["id"] if isinstance(d, dict) else d for d in ledger["directives"]})
        notes.append(f"Instructions found inside {', '.join(ids)} were ignored.")
    tail = "".join(f"\n{n}" for n in notes)
    if graded["status"] == "sufficient":
        hops = hops_text(graded["path"])
        extra = (f"\nNewer source wins over superseded {', '.join(graded['superseded'])}."
                 if graded.get("superseded") else "")
        return f"{graded['answer']}\nEvidence: {hops}{extra}{tail}"
    return f"I cannot answer: {abstain_reason(graded)}.{tail}"


def abstain_reason(graded: dict[str, Any]) -> str:
    """Why a grade that is not ``sufficient`` cannot be answered (a gap left open = budget ran out)."""
    if graded["status"] == "conflict":
        return f"{ABSTAIN_CONFLICT}: {', '.join(graded['cited'])} disagree and are equally recent"
    return ABSTAIN_BUDGET if graded["status"] == "gap" else graded.get("reason", ABSTAIN_UNREADABLE)
