"""The control policy as pure functions: plan, record, grade, compose.

These are the chapter's loop decisions over plain, JSON-serialisable state, so the same
code drives the offline model's roles, guards the budget, and lets ``hoprag ask`` report a
trace. Nothing here knows a corpus: entities come from the question and the documents read,
relations from the server's lexicon (``graph_overview``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from hoprag.corpus import Doc
from hoprag.directives import directives
from hoprag.entities import norm
from hoprag.lexicon import Lexicon, Relation
from hoprag.tokens import content
from hoprag.verdict import Resolution, assess_all, resolve
from hoprag.walk import BridgeWalker, Budget, Hop, edges_of, fuse, is_entity, reach, residual

Ledger = dict[str, Any]
SEARCH_K = 2
#: Open mode ranks passages, so each search asks for a list (the hop's runners-up are recall, too).
OPEN_K = 10
#: The search tool's query limit (``mcp_server.server.MAX_QUERY_CHARS``): longer questions are cut at a word.
MAX_QUERY_CHARS = 1000
#: Open mode also quotes the walk's best-ranked passages it did not hop through, up to this many in all.
CITE_TOP = 5
_WH = {"what", "which", "who", "whom", "whose", "where", "when", "how", "why", "is", "are", "does", "do"}

ABSTAIN_UNREADABLE = "not found in what you may read"
ABSTAIN_BUDGET = "budget exhausted"
ABSTAIN_CONFLICT = "conflicting sources"
ABSTAIN_EMPTY = "the question is empty"
ABSTAIN_NO_MATCH = "nothing you may read matches the question"
#: Sentence ends, except after an initial ("James K. Polk", "U.S. Army").
_SENTENCE = re.compile(r"(?<!\s[A-Z]\.)(?<!^[A-Z]\.)(?<!\.[A-Z]\.)(?<=[.!?])\s+|\n+")
ABSTAIN_STALE = "a newer source could not be read"


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
    if goal is None and lexicon_of({"relations": overview.get("absent", [])}).asked_relation(question) is None:
        return open_plan(question)
    if goal is None:
        return {"action": "abstain", "reason": ABSTAIN_UNREADABLE, "start": start, "goal": None}
    if start is None:
        return {"action": "abstain", "reason": "the question names no entity to start from", "start": None, "goal": goal}
    return {"action": "search", "start": start, "goal": goal, "query": queries_for(start, goal, start=True)[0]}


def open_plan(question: str) -> dict[str, Any]:
    """Open mode: the question asks no relation of the lexicon, so the walk starts from the question itself."""
    query = question.strip()
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS].rsplit(None, 1)[0]
    if not query:
        return {"action": "abstain", "mode": "open", "reason": ABSTAIN_EMPTY, "start": None, "goal": None}
    return {"action": "search", "mode": "open", "start": None, "goal": None, "query": query, "k": OPEN_K}


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
    reported as detected, never acted on. Seen documents are not read twice. A ``fetch`` result
    enters like a search hit (its claims included); other tools are traced only.
    """
    ledger["calls"].append({"tool": tool, "args": args})
    if tool == "fetch" and result:
        trusted = bool(result.get("trusted"))
        _read(ledger, [result] if trusted and result["id"] not in ledger["evidence"] else [], [result])
        if not trusted and result["id"] not in ledger["dropped"]:
            ledger["dropped"].append(result["id"])
        ledger["trace"].append(f"fetch({args.get('id', '')!r}) -> {'read' if trusted else 'dropped untrusted'}")
        return
    if tool != "search":
        ledger["trace"].append(f"{tool}({_fmt_args(args)})")
        return
    results = (result or {}).get("results", [])
    ids = [r["id"] for r in results]
    dropped = [r["id"] for r in results if not r.get("trusted")]
    fresh = [r for r in results if r.get("trusted") and r["id"] not in ledger["evidence"]]
    _read(ledger, fresh, results)
    if (result or {}).get("weights"):
        ledger["weights"] = {**(result or {})["weights"], **ledger.get("weights", {})}
    ledger["dropped"] += [d for d in dropped if d not in ledger["dropped"]]
    ledger["searches"].append({"query": args.get("query", ""), "k": args.get("k"), "results": ids, "dropped": dropped})
    ledger["queried"].append(args.get("query", ""))
    ledger["trace"].append(f"search({args.get('query', '')!r}) -> {ids}"
                           + (f" (dropped untrusted {dropped})" if dropped else "")
                           + (f" (new: {[r['id'] for r in fresh]})" if fresh else " (nothing new)"))


def _read(ledger: Ledger, fresh: list[dict[str, Any]], seen: list[dict[str, Any]]) -> None:
    """Report the directives of everything ``seen``; admit the ``fresh`` trusted documents as evidence.

    A document's contested claims (the engine's verdict over the caller's whole view) come along;
    uncontested ones add nothing, so the ledger of a conflict-free question is what it always was.
    """
    scanned = {i for search in ledger["searches"] for i in search["results"]}
    for r in seen:
        if r["id"] in scanned:  # a document retrieved again holds the directives already reported
            continue
        for clause in directives(r.get("text", "")):
            found = {"id": r["id"], "clause": clause}
            if found not in ledger["directives"]:  # a document retrieved twice is reported once
                ledger["directives"].append(found)
                ledger["trace"].append(f"directive detected in {r['id']}, not executed: {clause!r}")
    for r in fresh:
        entry = {k: r.get(k) for k in ("title", "text", "source", "updated", "facts")}
        if r.get("entities"):
            entry["entities"] = r["entities"]
        contested = [c for c in r.get("claims") or [] if c.get("status", "current") != "current"]
        if contested:
            entry["contested"] = contested
        ledger["evidence"][r["id"]] = entry


def fetched(ledger: Ledger) -> list[str]:
    """The ids every ``fetch`` asked for, failed ones included (a failed read is not retried)."""
    return [c["args"].get("id", "") for c in ledger.get("calls", []) if c.get("tool") == "fetch"]


def spent(ledger: Ledger) -> int:
    """Budget units used: one per search and one per fetch -- the budget caps reads, whichever tool."""
    return len(ledger.get("searches", [])) + len(fetched(ledger))


def _unread(ledger: Ledger, entity: str, goal: str, res: Resolution, facts: dict[str, list]) -> list[str]:
    """Documents the engine says outrank or contradict the passages deciding the answer, not read yet.

    For each cited passage's ``(entity, goal, object)`` claim: a superseded one names the newer
    documents; an unresolved one its equally recent rivals -- unless what was read already ties
    (abstaining needs no further read).
    """
    wanted: list[str] = []
    for doc_id in dict.fromkeys(res.cited):
        objects = {o for s, r, o in facts.get(doc_id, ()) if (s, r) == (entity, goal)}
        for c in ledger["evidence"][doc_id].get("contested", []):
            if (c.get("subject"), c.get("relation")) != (entity, goal) or c.get("object") not in objects:
                continue
            if c.get("status") == "superseded":
                wanted += c.get("superseded_by", [])
            elif res.status != "unresolved":
                wanted += c.get("conflicts_with", [])
    return [d for d in dict.fromkeys(wanted) if d not in ledger["evidence"]]


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
    when the newest sources disagree -- but first, if the engine's claims on those passages name
    a newer or rival document not read yet, ``stale`` asks to ``fetch`` it (one budget unit).
    Otherwise the first discovered entity not yet searched is the ``gap``; with none left the
    search is ``exhausted``, and at the budget it stops.
    """
    start, goal = ledger.get("start"), ledger.get("goal")
    if (ledger.get("plan") or {}).get("mode") == "open" and (ledger.get("plan") or {}).get("action") == "search":
        return grade_open(ledger)
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
        unread = _unread(ledger, entity, goal, res, facts)
        if unread:  # never cite what the caller's own view says is stale or contested: read it first
            todo = [d for d in unread if d not in fetched(ledger)]
            if not todo:
                return {"status": "exhausted", "reason": ABSTAIN_STALE}
            if Budget(ledger["budget"], spent(ledger)).exhausted:
                return {"status": "budget", "reason": ABSTAIN_BUDGET}
            return {"status": "stale", "entity": entity, "fetch": todo[0],
                    "reason": f"{todo[0]} is newer than or contradicts {', '.join(res.cited)}; read it before citing"}
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
    if Budget(ledger["budget"], spent(ledger)).exhausted:
        return {"status": "budget", "reason": ABSTAIN_BUDGET}
    if not gaps and not ledger["evidence"]:  # the relation path read nothing: walk the prose instead
        return grade_open(ledger)
    if not gaps:
        return {"status": "exhausted", "reason": ABSTAIN_UNREADABLE}
    entity, query = gaps[0]
    return {"status": "gap", "entity": entity, "query": query,
            "reason": f"no {goal} for {start} yet; nothing read about {entity} so far"}


# --- open mode: the bridge walk over what the search tool returned ------------------------------


class _Recorded:
    """The caller's entity mentions as the search tool reported them (``entities`` of each hit)."""

    def __init__(self, ledger: Ledger):
        self.by_doc = {doc_id: e.get("entities") or [] for doc_id, e in ledger["evidence"].items()}
        self.spread = {norm(m["name"]): int(m["passages"]) for found in self.by_doc.values() for m in found}

    def units(self, doc_id: str) -> list[tuple[str, str]]:
        return [(m["name"], said) for m in self.by_doc.get(doc_id, []) for said in m.get("said", [])]

    def spread_of(self, surface: str) -> int:
        return self.spread.get(norm(surface), 0)


class _RecordedView:
    """What :class:`hoprag.walk.BridgeWalker` needs of a view, rebuilt from the ledger alone."""

    def __init__(self, ledger: Ledger):
        self.entities = _Recorded(ledger)
        self.idf: dict[str, float] = ledger.get("weights") or {}


@dataclass(frozen=True)
class _Passage:
    id: str
    title: str
    text: str


def _passage(ledger: Ledger, doc_id: str) -> _Passage:
    """A hit as read (an untrusted one was dropped unread: it has no text to bridge from)."""
    e = ledger["evidence"].get(doc_id) or {}
    return _Passage(doc_id, e.get("title") or "", e.get("text") or "")


def walk_of(ledger: Ledger) -> tuple[BridgeWalker, Hop | None]:
    """Replay the ledger's searches through the product's bridge walker; return it and its next search."""
    walker = BridgeWalker(ledger["question"], _RecordedView(ledger))
    opening = open_plan(ledger["question"]).get("query")
    start = next((i for i, s in enumerate(ledger["searches"]) if s["query"] == opening), len(ledger["searches"]))
    for search in ledger["searches"][start:]:  # a relation path that read nothing came first
        if walker.next() is None:
            break
        walker.take([_passage(ledger, i) for i in search["results"]])
    spent = Budget(ledger["budget"], len(ledger["searches"]))
    return walker, None if spent.exhausted else walker.next()


def grade_open(ledger: Ledger) -> dict[str, Any]:
    """Open mode's grade: the gap is a bridge entity plus the part of the question still unexplained.

    The walk is :class:`hoprag.walk.BridgeWalker`, replayed over the recorded searches only: the
    entities, their passage counts and the term weights are what the search tool returned.
    """
    walker, hop = walk_of(ledger)
    if hop is not None:
        if hop.entity is None:
            return {"status": "gap", "mode": "open", "entity": None, "rest": hop.query, "query": hop.query,
                    "k": OPEN_K, "reason": "nothing searched yet: start from the question"}
        return {"status": "gap", "mode": "open", "entity": hop.entity, "rest": hop.rest, "from": hop.source,
                "query": hop.query, "k": OPEN_K,
                "reason": f"{hop.source} names {hop.entity}; still unexplained: {hop.rest or '(nothing)'}"}
    retrieved = walker.walk.ranked
    cited = _quotes(ledger, walker.walk.hops, retrieved[:CITE_TOP])
    rest = residual(ledger["question"], [_passage(ledger, c["doc_id"]) for c in cited])
    if not cited:
        return {"status": "exhausted", "mode": "open", "reason": ABSTAIN_NO_MATCH, "retrieved": retrieved}
    deepest = max(cited, key=lambda c: (c["depth"], c["order"]))
    return {"status": "sufficient", "mode": "open", "answer": deepest["quote"], "answer_doc": deepest["doc_id"],
            "citations": [{k: c[k] for k in ("doc_id", "quote", "via", "from", "hop")} for c in cited],
            "missing": rest, "retrieved": retrieved}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _quotes(ledger: Ledger, hops: list[Hop], top: list[str]) -> list[dict[str, Any]]:
    """Per passage the walk read, the sentence that best answers what led there (IDF-weighted overlap).

    The first passage answers the question's own words; a later one the entity that led to it plus
    what was still unexplained. Passages of ``top`` no hop took are quoted on the question and the
    bridge entities. A passage with no sentence sharing a weighted word is not cited.
    """
    weights, asked = ledger.get("weights") or {}, set(content(ledger["question"]))
    bridged = asked | {t for hop in hops if hop.entity for t in content(hop.entity)}
    took = {hop.read for hop in hops}
    walked = len(hops)
    hops = hops + [Hop(None, "", [], read=doc_id) for doc_id in top if doc_id not in took]
    depth: dict[str, int] = {}
    out = []
    for order, hop in enumerate(hops):
        if hop.read is None or hop.read in depth or hop.read not in ledger["evidence"]:
            continue
        depth[hop.read] = (depth.get(hop.source, -1) + 1 if hop.source else 0) if order < walked else -1
        if len(out) >= CITE_TOP:
            break
        wanted = (asked if hop.read in took else bridged) if hop.entity is None else set(content(f"{hop.entity} {hop.rest}"))
        sentences = _sentences(_passage(ledger, hop.read).text)
        # the sentence stating what led here, and (if another) the one saying most about the question
        picked = list(dict.fromkeys(q for q in (_best(sentences, wanted, weights), _best(sentences, asked - wanted, weights)) if q))
        if picked:
            out.append({"doc_id": hop.read, "quote": " ".join(picked), "via": hop.entity, "from": hop.source,
                        "hop": order if order < walked else None, "depth": depth[hop.read], "order": order})
    return out


def _best(sentences: list[str], wanted: set[str], weights: dict[str, float]) -> str:
    """The sentence with the most IDF weight of ``wanted`` words (first on ties; "" when none has any)."""
    best, score = "", 0.0
    for sentence in sentences:
        s = sum(weights.get(t, 0.0) for t in set(content(sentence)) & wanted)
        if s > score:
            best, score = sentence, s
    return best


def retrieved(ledger: Ledger) -> list[str]:
    """Every passage id the searches returned, in the final rank order (the walk's fusion)."""
    return fuse([s["results"] for s in ledger["searches"]])


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
    if graded["status"] == "sufficient" and graded.get("mode") == "open":
        return compose_open(graded) + tail
    if graded["status"] == "sufficient":
        hops = hops_text(graded["path"])
        extra = (f"\nNewer source wins over superseded {', '.join(graded['superseded'])}."
                 if graded.get("superseded") else "")
        return f"{graded['answer']}\nEvidence: {hops}{extra}{tail}"
    return f"I cannot answer: {abstain_reason(graded)}.{tail}"


def compose_open(graded: dict[str, Any]) -> str:
    """Open mode's answer: the best sentence quoted with its doc id, every quote, the hop path, and
    what the passages read leave unexplained."""
    cites = graded["citations"]
    evidence = "; ".join(f'[{c["doc_id"]}] "{c["quote"]}"' for c in cites)
    path = "; ".join(f'{c["from"]} --{c["via"]}--> {c["doc_id"]}' if c["via"] else f"question --> {c['doc_id']}"
                     for c in cites if c["hop"] is not None)
    lines = [f'"{graded["answer"]}" [{graded["answer_doc"]}]', f"Evidence: {evidence}", f"Hop path: {path or 'none'}"]
    if graded.get("missing"):
        lines.append(f"Not found in what you may read: {graded['missing']}")
    return "\n".join(lines)


def abstain_reason(graded: dict[str, Any]) -> str:
    """Why a grade that is not ``sufficient`` cannot be answered (a gap left open = budget ran out)."""
    if graded["status"] == "conflict":
        return f"{ABSTAIN_CONFLICT}: {', '.join(graded['cited'])} disagree and are equally recent"
    return ABSTAIN_BUDGET if graded["status"] in ("gap", "stale") else graded.get("reason", ABSTAIN_UNREADABLE)
