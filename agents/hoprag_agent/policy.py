"""The control policy as pure functions: plan, record, grade, compose.

These are the chapter's loop decisions over plain, JSON-serialisable state, so the same
code drives the offline model's roles, guards the budget, and lets ``hoprag ask`` report a
trace. Nothing here knows a corpus: entities come from the question and the documents read,
relations from the server's lexicon (``graph_overview``).
"""

from __future__ import annotations

import datetime as dt
import re
import textwrap
from dataclasses import dataclass
from typing import Any, Callable

from hoprag.assess import (ASKING, INLINE_CODE, ITEM as _ITEM, Question, gives_default, names_code, release_notes,
                           states_default, states_number, states_place, states_version, stems)
from hoprag.corpus import Doc
from hoprag.entities import norm
from hoprag.lexicon import Lexicon, Relation
from hoprag.tokens import content, identifiers, tokenize
from hoprag.verdict import Resolution, assess_all, resolve
from hoprag.text import is_entity, is_name
from hoprag.walk import BridgeWalker, Budget, Hop, edges_of, fuse, reach, relation_graph, specific
from mcp_server.tools import MAX_QUERY_CHARS

from .directives import directives

Ledger = dict[str, Any]
#: A versioned name: a protocol and its version ("HTTP/2", "TLS/1.3"), or a release ("6.6.0"), which search splits into
#: words ("6", "0": the 5.1.0 notes saying "Tornado 6.0 will drop ..." hold them). A two-part number is often a
#: Python version the docs write otherwise ("2.4pre1"), and is left to the words.
_VERSIONED = re.compile(r"\b[A-Za-z]+/\d+(?:\.\d+)*\b|(?<![\d.])\d+\.\d+\.\d+(?![.\d]*\d)")
#: The tools that spend the read budget: one unit per call of either, whatever it returns (a failed
#: call reached the server too); the other tools are free.
READS = ("search", "fetch")
SEARCH_K = 2
#: Open mode ranks passages, so each search asks for a list (the hop's runners-up are recall, too).
OPEN_K = 10
#: Open mode: the first search's best passage answers alone once it fits this share of the question
#: (:func:`fit`: ``search``'s ``coverage`` and ``answers``, the IDF-weighted content words) ...
COVERS = 0.7
#: ... and when no hop helps, a passage fitting less than this does not answer: the agent abstains.
ANSWERS = 0.45
#: ... unless it fits at least this much and the sentences it answers with hold the question's rarest word (its most
#: specific term, :func:`states_rarest`): a paraphrase shares few words with its answer, but that one it keeps.
SPECIFIC = 0.34
#: ... or at least this much when the word and the meaning rankings both put it first (``search``'s ``agreed``): a
#: paraphrase shares few words with its answer, yet two rankings sharing nothing but the question agree on it.
#: Chosen on the development sets (each half gained), reported on held-out ones (benchmarks/RESULTS.md).
AGREED = 0.25
#: ... or at least this much when the embedding singles it out among everything the caller may read: its cosine with
#: the question :data:`STANDS_OUT` standard deviations above the mean (``search``'s ``stands_out``) -- a question
#: the documents do not answer is near many passages alike. Both chosen on one half of the development sets (the
#: other gained too, with one unanswerable question answered), reported on held-out ones (benchmarks/RESULTS.md).
STANDS_OUT_FIT = 0.2
STANDS_OUT = 3.0
#: ... and when the best-fitting hit answers by none of these, the search's own first hit fitting STANDS_OUT_FIT
#: answers if the embedding singles it out further still, by this many standard deviations: a paraphrase's words are
#: met in passing by other pages ("Where should my CLI keep its per-user settings file so it ends up in the right place
#: on Windows, Mac and Linux?" fits a page on running scripts on Windows and Linux better), its meaning by the one page
#: saying it (`get_app_dir`). Chosen on one half of the development sets, checked on the other (benchmarks/RESULTS.md).
FIRST_STANDS_OUT = 3.8
#: A chain of hops answers before the walk is over only when it covers this much: a chain that
#: covers less may be one hop short (a three-hop question after two hops).
CHAIN_COVERS = 0.85
#: A second passage joins the answer when it covers this much more of the question than the first (and the two
#: together cover COVERS).
MIN_GAIN = 0.15
#: Hits whose fit is this close to the best are tied (a "how" question then prefers one showing code).
TIED = 0.05
#: A "how" question whose best hit shows no code at all (no block, no inline code) is answered by a hit showing
#: code that fits this close to it: a sentence restating the task in the question's words does not say how.
HOW_TIED = 0.15
#: A hit under a release's heading (release notes, a changelog) ranks as if it fit this much less, unless the
#: question asks about versions or changes: a changelog mentions every feature, and says what changed then. An entry
#: naming a feature in its own words ("Add support for random-yet-realistic values through `factory.Faker`") fits
#: a question on it up to about this much better than the reference page that says how to use it.
RELEASE_NOTES = 0.30
#: An abstention lists this many closest pages ("see also").
SEE_ALSO = 3
_WH = {"what", "which", "who", "whom", "whose", "where", "when", "how", "why", "is", "are", "does", "do"}

ABSTAIN_UNREADABLE = "not found in what you may read"
ABSTAIN_BUDGET = "budget exhausted"
ABSTAIN_CONFLICT = "conflicting sources"
ABSTAIN_EMPTY = "the question is empty"
ABSTAIN_NO_MATCH = "nothing you may read matches the question"
ABSTAIN_STALE = "a newer source could not be read"


def question_problem(question: str) -> str | None:
    """Why a question cannot be asked at all (empty, or longer than a search query may be), else ``None``:
    checked before any model call, so a bad question costs nothing."""
    if not question.strip():
        return "the question is empty: ask something, e.g. hoprag ask \"How do I ...?\""
    if len(question.strip()) > MAX_QUERY_CHARS:
        return (f"the question is {len(question.strip()):,} characters long; the limit is {MAX_QUERY_CHARS:,}: "
                "ask it in fewer words")
    return None


def new_ledger(question: str, budget: int) -> Ledger:
    return {"question": question, "start": None, "goal": None, "budget": budget, "plan": None,
            "searches": [], "calls": [], "queried": [], "evidence": {}, "dropped": [],
            "directives": [], "trace": [], "greps": {}}


def lexicon_of(overview: dict[str, Any]) -> Lexicon:
    """The relations the caller can reach, as the server reported them."""
    return Lexicon(tuple(Relation(r["name"], tuple(r.get("cues", ())), tuple(r.get("asks", ())))
                         for r in overview.get("relations", [])))


def start_entity(question: str) -> str | None:
    """The entity a question is about, named as the reader names subjects.

    Take the last run of name words (:func:`hoprag.text.is_name`; skipping a sentence-initial
    question word) and, like the reader's subject rule, keep its last word: "Project Falcon" -> "Falcon".
    """
    words = re.findall(r"[A-Za-z0-9][\w-]*", re.sub(r"'s\b", "", question))
    runs, current = [], []
    for i, w in enumerate(words):
        if is_name(w) and not (i == 0 and w.lower() in _WH):
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


_ASKING = r"(?:how|what|which|who|where|when|why|is|are|does|do|can|could|should|will)\b"
#: Where a question asks two things: ", and which ...", "... and how ...", or a second sentence that is a question;
#: a preposition or an adverb may lead the second asking (", and since which version ...", ", and roughly how ..."),
#: or a clause setting its scene, which stays with it (", and if I build it from source, which compiler ...").
_LEADING = r"(?:since|in|for|from|on|at|by|with|under)\s+(?=wh)"
_AND = r",?\s+(?:and|but)\s+"
_SECOND = re.compile(rf"(?i)(?:{_AND}(?:(?:also|roughly|then)\s+|{_LEADING})?|[?;]\s+)(?={_ASKING})"
                     rf"|{_AND}(?=(?:if|when|once)\s+[^,?\s]+\s+[^,?]{{1,80}},\s+{_ASKING})")
#: A question's asking, a preposition leading it or not ("Since which version ...").
_ASKS = re.compile(rf"(?i)(?:{_LEADING})?{_ASKING}")
#: A phrase leading the asking ("When I press Ctrl+C, which code ...", "I want X: which option ..."): it ends here.
_LED = re.compile(rf"(?i)[,:]\s+(?={_ASKING})")
#: Each part names at least this many content words (a bare "and is it?" is no question of its own).
PART_WORDS = 2


def parts(question: str) -> list[str]:
    """The two questions of a compound one ("How do I X, and how can I Y?"), else ``[]``: each part may be
    answered by a different page, so each is searched on its own when no page answers the whole."""
    cut = [m for m in _SECOND.finditer(question)]
    if len(cut) != 1:
        return []
    first, second = question[:cut[0].start()].strip(" ,;"), question[cut[0].end():].strip()
    asking = re.split(r"(?<=[.!?])\s+", first)[-1]  # "I used X before. What replaces it": the last sentence asks
    led = list(_LED.finditer(asking))  # "In a test, what do I ...", "When I press Ctrl+C, which code ...":
    phrase, asks = (asking[:led[-1].start()], asking[led[-1].end():]) if led else ("", asking)  # a phrase may lead
    if not _ASKS.match(asks):  # the asking, and it sets both parts' scene
        return []  # "The default port is taken; how do I ...": the first part is context, not a question
    both = [first if first.endswith("?") else f"{first}?", f"{phrase}, {second}" if phrase else second]
    # a part naming one thing, its other words asking ("What do the maintainers say?"), asks about the other part
    return both if all(len([w for w in content(p) if w not in ASKING]) >= PART_WORDS for p in both) else []


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
    if tool == "grep":  # what a literal look-up found: the lines holding the text, and the untrusted documents too
        ledger["greps"][args.get("text", "")] = len((result or {}).get("matches") or []) + len(
            (result or {}).get("withheld") or [])
    if tool != "search":
        if tool == "graph_overview" and result and (result.get("prose") or {}).get("passages"):
            ledger["passages"] = result["prose"]["passages"]  # how many passages the caller may read
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
    hits = [{"id": r["id"], "coverage": float(r.get("coverage") or 0.0), "answers": float(r.get("answers") or 0.0),
             "matched": r.get("matched") or [], "agreed": bool(r.get("agreed")),
             "stands_out": float(r.get("stands_out") or 0.0), "highlights": r.get("highlights") or [],
             "section": r.get("section") or ""}
            for r in results if r.get("trusted")]
    ledger["searches"].append({"query": args.get("query", ""), "k": args.get("k"), "results": ids, "dropped": dropped,
                               "hits": hits})
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
        # an untrusted document's words come only in untrusted_text: scanned for directives, never read
        for clause in directives(r.get("untrusted_text") or r.get("text", "")):
            found = {"id": r["id"], "clause": clause}
            if found not in ledger["directives"]:  # a document retrieved twice is reported once
                ledger["directives"].append(found)
                ledger["trace"].append(f"directive detected in {r['id']}, not executed: {clause!r}")
    for r in fresh:
        entry = {k: r.get(k) for k in ("title", "text", "source", "updated", "facts", "section", "document")}
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
    """Budget units used: one per :data:`READS` call recorded -- the budget caps reads, whichever tool."""
    return sum(c.get("tool") in READS for c in ledger.get("calls", []))


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
    found = reach(relation_graph(edges_of(facts.items())), start, goal)
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


# --- open mode: answer from the passage that answers; bridge only on a named, specific gap -------


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


def _opening(ledger: Ledger) -> int:
    """Where open mode's searches start (a relation path that read nothing may come first)."""
    opening = open_plan(ledger["question"]).get("query")
    return next((i for i, s in enumerate(ledger["searches"]) if s["query"] == opening), len(ledger["searches"]))


def _walked(ledger: Ledger) -> list[dict[str, Any]]:
    """Open mode's searches of the bridge walk: from the opening one, without a compound question's parts."""
    asked = parts(ledger["question"])
    return [s for s in ledger["searches"][_opening(ledger):] if s["query"] not in asked]


def walk_of(ledger: Ledger) -> tuple[BridgeWalker, Hop | None]:
    """Replay the ledger's searches through the product's bridge walker; return it and its next search.

    Bridges are specific names only (:func:`hoprag.walk.specific` of the caller's passage count,
    as ``graph_overview`` reported it)."""
    most = specific(ledger["passages"]) if ledger.get("passages") else None
    walker = BridgeWalker(ledger["question"], _RecordedView(ledger), most=most)
    for search in _walked(ledger):
        if walker.next() is None:
            break
        walker.take([_passage(ledger, i) for i in search["results"]])
    return walker, None if Budget(ledger["budget"], spent(ledger)).exhausted else walker.next()


def _answering(ledger: Ledger, search: dict[str, Any], asked: str | None = None) -> list[dict[str, Any]]:
    """A search's trusted hits that can answer, best covering first (ties: rank order): each with its
    highlights minus any sentence the injection detector flags -- flagged text never becomes an answer.
    A "how many" question is answered by a number: hits whose highlights state one come first (a "where" question,
    by a place: a path, a directory); a question
    asking for a default, by what the default is: hits whose highlights say "default" come first -- of the hits
    that could answer at all (:data:`SPECIFIC`): a weak hit does not jump ahead for stating a number. Release
    notes fall behind by :data:`RELEASE_NOTES`. A hit the word and the meaning rankings both put first (``agreed``)
    that fits :data:`COVERS` comes before hits fitting better: two rankings agreeing on a page that answers most of
    the question outweigh more of its words elsewhere ("Which ORMs does it support?" is the ORMs page's, not the ideas
    page's "support of third-party ORMs"). A hit not holding a versioned name or a release the question asks about
    ("HTTP/2", "6.6.0") as written answers nothing of it: the search matched its parts ("HTTP", "2"). ``asked``: the
    part of a compound question the search was for (:func:`parts`) -- it is what the hits answer, not the whole."""
    out = []
    literal = [m.lower() for m in _VERSIONED.findall(asked or ledger["question"])]
    for rank, hit in enumerate(search.get("hits", [])):
        clean = [h for h in hit.get("highlights", []) if not directives(h["text"])]
        if clean and all(x in _context(ledger, hit["id"]).lower() for x in literal):
            out.append({**hit, "highlights": clean, "rank": rank})
    question = _question(ledger, asked)

    def silent(hit: dict[str, Any], states: Callable[[str], bool]) -> bool:
        return not any(states(x["text"]) for x in hit["highlights"])

    def ranked_fit(hit: dict[str, Any]) -> float:
        later = not question.history and release_notes(hit["section"])
        return fit(hit) - (RELEASE_NOTES if later else 0.0)

    def order(hit: dict[str, Any]) -> tuple:
        fits = ranked_fit(hit)
        return (fits < SPECIFIC, question.quantity and silent(hit, states_number),
                question.version and silent(hit, states_version),
                question.where and silent(hit, states_place),
                question.default and silent(hit, states_default), not (hit.get("agreed", False) and fits >= COVERS),
                -fits, hit["rank"])

    return sorted(out, key=order)


def _shown(ledger: Ledger, ranked: list[dict[str, Any]], asked: str | None = None) -> list[dict[str, Any]]:
    """Among hits that fit as well as the best (within :data:`TIED`), the one saying it the way the question
    asks comes first: for a "how" question the first that shows code (documentation answers "how" in code,
    and the sentence about it alone does not) -- when the best shows no code at all, the first within
    :data:`HOW_TIED` naming any; else for one asking for a default (not an amount of the default thing: "How much
    data can I store with the default session factory?" is answered by a number, first already), the first giving
    it in code or a number ("Default: `timedelta(days=31)`") -- when the best gives none ("messages are truncated to a
    limit by default"), the first giving it that fits :data:`ANSWERS` ("Default truncation limits are 8 lines or 640
    characters"); else for a "which ..." question the first naming something
    in code that holds a word of the question ("Which environment variable ..." -- `PIP_CONFIG_FILE`). ``asked``: as
    for :func:`_answering`."""
    question = _question(ledger, asked)
    if not ranked or not (question.how or question.default or question.which):
        return ranked
    tied = [h for h in ranked if fit(h) >= fit(ranked[0]) - TIED]
    if question.how:
        # an answer naming its code ("`web.run_app(app, access_log=None)`", not a bare "`group`") already says how
        named = any(names_code(question, x["text"]) for x in ranked[0]["highlights"])
        coded = None if named else next((h for h in tied if any(_is_code(x) for x in h["highlights"])), None)
        if coded is None and not named and not _shows_code(ranked[0]):
            # ... one that answers, when the best does: code is how to say an answer, not a reason to drop it
            best = fit(ranked[0])
            floor = best - HOW_TIED if best < ANSWERS else max(ANSWERS, best - HOW_TIED)
            coded = next((h for h in ranked if fit(h) >= floor and _shows_code(h)), None)
    elif question.default and not question.quantity:
        def gives(hit: dict[str, Any]) -> bool:
            return any(gives_default(question, x["text"]) for x in hit["highlights"])

        coded = next((h for h in tied if gives(h)), None)
        if coded is None and question.value:
            # ... one that answers, when the best (tied with itself) says what happens by default but not the value
            coded = next((h for h in ranked if fit(h) >= ANSWERS and gives(h)), None)
    elif question.which:
        coded = next((h for h in tied if any(stems(span) & question.weights.keys() for x in h["highlights"]
                                             for span in INLINE_CODE.findall(x["text"]))), None)
    else:
        coded = None
    return ranked if coded is None else [coded, *(h for h in ranked if h is not coded)]


def fit(hit: dict[str, Any]) -> float:
    """How well a hit answers: what the passage covers and what its highlights alone cover, alike --
    a passage on the topic whose best sentences do not answer is not the answer."""
    return (hit["coverage"] + hit.get("answers", 0.0)) / 2


def _union(ledger: Ledger, hits: list[dict[str, Any]]) -> float:
    """How much of the question several hits of one search cover together (their ``matched`` words
    weighed by the search's ``weights``; the first hit's coverage fixes the question's total weight)."""
    weights, first = ledger.get("weights") or {}, hits[0]
    mine = sum(weights.get(w, 0.0) for w in first.get("matched", []))
    if not first["coverage"] or not mine:
        return first["coverage"]
    words = {w for h in hits for w in h.get("matched", [])}
    return min(1.0, first["coverage"] * sum(weights.get(w, 0.0) for w in words) / mine)


def _cite(ledger: Ledger, hit: dict[str, Any], via: str | None = None, source: str | None = None,
          hop: int | None = None) -> dict[str, Any]:
    e = ledger["evidence"].get(hit["id"]) or {}
    return {"doc_id": hit["id"], "document": e.get("document") or hit["id"], "section": e.get("section") or "",
            "quote": _quote(hit["highlights"]), "via": via, "from": source, "hop": hop}


def _is_code(highlight: dict[str, Any]) -> bool:
    """A code block, or lines of one (``code``: a block too long to quote answers with a few of its lines)."""
    return bool(highlight.get("code")) or highlight["text"].lstrip().startswith(("```", "~~~"))


def _shows_code(hit: dict[str, Any]) -> bool:
    """Does a hit's answer show code of any kind: a block, lines of one or a name in inline code?"""
    return any(_is_code(x) or INLINE_CODE.search(x["text"]) for x in hit["highlights"])


def _quote(highlights: list[dict[str, Any]]) -> str:
    """Highlights as one answer: sentences joined by spaces, a code block and each list item on lines of their own
    (a sentence after an item that ends unpunctuated -- "- code 123 if there was an internal error" -- is not
    part of it: it starts a line too)."""
    parts: list[str] = []
    for n, h in enumerate(highlights):
        text = h["text"].strip()
        if text.startswith(("```", "~~~")):
            fence = text[:3]
            parts.append("\n" + text + ("" if text.rstrip().endswith(fence) and text.count(fence) >= 2 else f"\n{fence}")
                         + "\n")
        elif _is_code(h):  # lines of a longer block, fenced as code, their indentation kept
            parts.append("\n```\n" + textwrap.dedent(h["text"]).strip("\n") + "\n```\n")
        elif _ITEM.match(text):  # a list's items stay one per line
            parts.append("\n" + " ".join(text.split()))
        else:
            last = highlights[n - 1]["text"].strip() if n else ""
            open_ = not last.endswith((".", "!", "?", ":", ";"))
            if n and open_ and not last.endswith("`") and "\n" not in last and not _ITEM.match(last) \
                    and not _is_code(highlights[n - 1]) and not last.startswith("|"):
                parts[-1] += ":"  # a heading the answer stands under ("AUTOTHROTTLE_START_DELAY: Default: `5.0` ...")
            ended = _ITEM.match(last) is not None and open_
            parts.append(("\n" if ended else "") + " ".join(text.split()))
    return " ".join(parts).replace(" \n", "\n").replace("\n ", "\n").strip()


def _chain(ledger: Ledger, walker: BridgeWalker, least: float) -> tuple[list[dict[str, Any]], float] | None:
    """The deepest hop whose chain of passages -- from a first-search passage, each naming the bridge
    the next was searched by, each next one stating it -- covers ``least`` of the question together,
    the last adding :data:`MIN_GAIN` of it; as citations from the question on, with what the chain
    covers (``None``: no such hop)."""
    searches, hops = _walked(ledger), walker.walk.hops
    question = _question(ledger)
    for at in range(len(hops) - 1, 0, -1):
        links, node = [], hops[at]
        while node is not None and node.entity is not None:
            found = next((h for h in _answering(ledger, searches[hops.index(node)]) if h["id"] == node.read), None)
            if found is None or not set(content(node.entity)) <= set(found.get("matched", [])):
                break  # not read, nothing to quote, or it does not state the bridge that led to it
            links.append((node, found))
            node = next((h for h in hops if h.read == node.source), None) or (
                hops[0] if node.source in hops[0].results else None)  # the first search reads its top passages
        if not links or node is None or node.entity is not None:
            continue
        first = next((h for h in searches[0].get("hits", []) if h["id"] == links[-1][0].source), None)
        if first is None:
            continue
        passages = [first["id"], *(found["id"] for _, found in reversed(links))]
        pages = [(ledger["evidence"].get(i) or {}).get("document") or i for i in passages]
        if any(a == b for a, b in zip(pages, pages[1:])):
            continue  # a hop within one page is that page read further, not a chain of sources
        seen = [stems(_context(ledger, i)) for i in passages]
        together = question.covered(set().union(*seen))
        if together < least or together - question.covered(set().union(*seen[:-1])) < MIN_GAIN:
            continue  # the chain does not cover enough, or its last passage adds nothing to it
        chain = [_cite(ledger, {**first, "highlights": _answering_of(first)}, hop=0)]
        for node, found in reversed(links):
            chain.append(_cite(ledger, found, node.entity, node.source, hops.index(node)))
        return chain, together
    return None


def _question(ledger: Ledger, asked: str | None = None) -> Question:
    """The question (or the part of it ``asked``) weighed as ``search`` weighed it (words no readable passage holds:
    the rarest weight)."""
    weights = ledger.get("weights") or {}
    return Question(asked or ledger["question"], weights, ledger.get("passages") or 0,
                    max(weights.values(), default=1.0))


def _context(ledger: Ledger, doc_id: str) -> str:
    e = ledger["evidence"].get(doc_id) or {}
    return f"{e.get('title') or ''}\n{e.get('section') or ''}\n{e.get('text') or ''}"


def _answering_of(hit: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for h in hit.get("highlights", []) if not directives(h["text"])]


def _see_also(ledger: Ledger) -> list[dict[str, str]]:
    """The closest pages read: the first search's best-ranked trusted hits, one per document."""
    first = ledger["searches"][_opening(ledger)] if len(ledger["searches"]) > _opening(ledger) else {}
    out: dict[str, dict[str, str]] = {}
    for hit in first.get("hits", []):
        e = ledger["evidence"].get(hit["id"]) or {}
        document = e.get("document") or hit["id"]
        out.setdefault(document, {"doc_id": hit["id"], "document": document, "section": e.get("section") or ""})
    return list(out.values())[:SEE_ALSO]


#: The run of word characters and hyphens a name stands in ("__Host-"): the search weighed the question's words so.
_RUN = re.compile(r"[-\w]*")
_RUN_AT = re.compile(r"[-\w]*\Z")


def _asides(question: str) -> list[tuple[int, int]]:
    """The spans of a question's parentheses: a name in them is an example or another name of what is asked."""
    return [m.span() for m in re.finditer(r"\([^()]*\)", question)]


#: What a hyphenated name ends on when it says of what kind something is ("Epytext-style docstrings", "Sphinx-based"):
#: the name before it is what the question hangs on.
_MODIFIER = re.compile(r"(?i)-(?:style|based|like|compatible|aware|enabled|specific|friendly|powered|only|flavou?red)$")


def unheard(ledger: Ledger) -> list[str]:
    """The names a question asks about that nothing the caller may read holds in any form ("Can Black
    format Rust files?" over docs that never say "Rust"): capitalised words past a sentence's first, none of
    whose words the search weighed. A CamelCase name is one word: pages saying "web" and "assembly" do not
    mention "WebAssembly" (a hyphenated one is heard in its words: "bash completion" for "Bash-completion" -- less a
    last word saying of what kind, "Epytext-style" is heard only as "Epytext"; one glued to code marks as the search
    spelled it: "host-" for the cookie prefix "__Host-").
    No page can answer about them -- the honest answer is to say so. A name in parentheses is an example or
    another name of what the question asks about ("a non-standard HTTP method (PURGE)", "Chain of Verification
    (CoVe)"): the question does not hang on it.
    """
    weights = ledger.get("weights") or {}
    out = []
    question = ledger["question"]
    aside = _asides(question)
    for m in re.finditer(r"[A-Za-z][\w+.-]*[\w+]|[A-Za-z]", question):
        word, before = m.group(), question[:m.start()].rstrip()
        if not before or before.endswith((".", "?", "!", ":")) or not is_name(word):
            continue  # a sentence's first word is capitalised whatever it is
        if any(a < m.start() < b for a, b in aside):
            continue
        named = _MODIFIER.sub("", word)  # "Epytext-style" names Epytext: the style is any style
        words = content(identifiers(named) if "-" in named else named)
        run = _RUN_AT.search(question, 0, m.start()).group() + word + _RUN.match(question, m.end()).group()
        spelled = tokenize(_MODIFIER.sub("", run))
        if words and not any(w in weights for w in (*words, *spelled)) and word not in out:
            out.append(word)
    return out


#: A name written as code, its words joined by "_" ("NO_COLOR", "max_body_size"): one word, as a CamelCase name is.
_JOINED = re.compile(r"(?<![\w.-])_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w-])")
#: A name given as an example of what is asked about ("namespaced like MYAPP_DEBUG", "such as `FOO_BAR`").
_EXAMPLE = re.compile(r"(?i)\b(?:like|such\s+as|e\.g\.?|for\s+example|say)[\s`'\"]*\Z")


def unspelled(ledger: Ledger) -> list[str]:
    """The names in code a question asks about (:data:`_JOINED`) that no passage read holds, as written or in
    another case: pages saying "no" and "color" do not mention ``NO_COLOR`` -- the search weighs the words, so whether
    any page names it is for a literal look-up (``grep``) to tell. A name in parentheses or given as an example is not
    what the question hangs on (:func:`unheard`)."""
    question = ledger["question"]
    aside = _asides(question)
    read = "\n".join(str(e.get("text") or "") for e in ledger["evidence"].values()).lower()
    return list(dict.fromkeys(
        m.group() for m in _JOINED.finditer(question)
        if not any(a < m.start() < b for a, b in aside) and not _EXAMPLE.search(question, 0, m.start())
        and m.group().lower() not in read))


def grade_open(ledger: Ledger) -> dict[str, Any]:
    """Open mode's grade, after each read: does what was read answer the question?

    The first search's best-covering passage answers alone when it covers :data:`COVERS` of the
    question (another hit of that search joins it when it covers what the first leaves out); else a
    hop's passage answers when it covers what it was searched for and the chain to it is complete.
    Otherwise the gap is a specific bridge name a read passage states plus the part of the question
    still unexplained (:class:`hoprag.walk.BridgeWalker`, replayed over the recorded results); with no
    such gap left, the best passage answers if it covers :data:`ANSWERS` (:data:`SPECIFIC` when it quotes
    the question's rarest word, :func:`states_rarest`; :data:`AGREED` when the word and the meaning rankings both
    put it first; :data:`STANDS_OUT_FIT` when its meaning stands out from all the caller's documents), else the
    search's first hit answers if its meaning stands out further still (:data:`FIRST_STANDS_OUT`, fitting
    :data:`STANDS_OUT_FIT`), else the agent abstains and lists the closest pages. Coverage, highlights, matched words,
    agreement and standing are what ``search`` returned.
    """
    walker, hop = walk_of(ledger)
    searches = _walked(ledger)
    if not searches:
        if hop is None:
            return {"status": "budget", "mode": "open", "reason": ABSTAIN_BUDGET}
        return _search_alone(hop.query, "nothing searched yet: start from the question")
    retrieved = walker.walk.ranked
    unspelt = unspelled(ledger)
    looked = {c["args"].get("text") for c in ledger["calls"] if c.get("tool") == "grep"}  # a failed look-up too
    unchecked = [name for name in unspelt if name not in looked]
    if unchecked:
        return {"status": "check", "mode": "open", "grep": unchecked[0],
                "reason": f"no passage read names {unchecked[0]}: look for it as written"}
    absent = unheard(ledger) + [name for name in unspelt if ledger["greps"].get(name) == 0]
    if absent:
        return {"status": "exhausted", "mode": "open", "reason": f"nothing you may read mentions {', '.join(absent)}",
                "coverage": 0.0, "see_also": _see_also(ledger), "retrieved": retrieved}
    ranked = _shown(ledger, _answering(ledger, searches[0]))
    best = ranked[0] if ranked else None
    if best is not None and fit(best) >= COVERS:
        return _answered(ledger, _joined(ledger, best, ranked), retrieved)
    split = _part_answers(ledger, best)
    if split is not None and split["status"] == "answered":
        return _answered(ledger, split["citations"], fuse([retrieved, split["results"]]))
    if split is not None and not Budget(ledger["budget"], spent(ledger)).exhausted:
        return split
    chain = _chain(ledger, walker, CHAIN_COVERS)
    if chain is not None:
        return _answered(ledger, chain[0], retrieved, multi=True)
    if hop is not None and hop.entity is not None:
        return {"status": "gap", "mode": "open", "entity": hop.entity, "rest": hop.rest, "from": hop.source,
                "query": hop.query, "k": OPEN_K,
                "reason": f"{hop.source} names {hop.entity}; still unexplained: {hop.rest}"}
    chain, single = _chain(ledger, walker, ANSWERS), fit(best) if best is not None else 0.0
    if chain is not None and chain[1] > single:
        return _answered(ledger, chain[0], retrieved, multi=True)
    if best is not None and (single >= ANSWERS or (single >= SPECIFIC and states_rarest(ledger, best))
                             or (single >= AGREED and best.get("agreed", False))
                             or _stands_out(best, STANDS_OUT)):
        return _answered(ledger, _joined(ledger, best, ranked), retrieved)
    first = next((h for h in ranked if h["rank"] == 0), None)
    if first is not None and _stands_out(first, FIRST_STANDS_OUT):
        return _answered(ledger, _joined(ledger, first, ranked), retrieved)
    return {"status": "exhausted", "mode": "open", "reason": ABSTAIN_UNREADABLE if ranked or ledger["evidence"]
            else ABSTAIN_NO_MATCH, "coverage": fit(best) if best else 0.0, "see_also": _see_also(ledger),
            "retrieved": retrieved}


def _stands_out(hit: dict[str, Any], sigmas: float) -> bool:
    """Does a hit fitting :data:`STANDS_OUT_FIT` stand ``sigmas`` standard deviations out in meaning (``search``'s
    ``stands_out``)? The best-fitting hit needs :data:`STANDS_OUT`, the search's first hit :data:`FIRST_STANDS_OUT`."""
    return fit(hit) >= STANDS_OUT_FIT and hit.get("stands_out", 0.0) >= sigmas


def states_rarest(ledger: Ledger, hit: dict[str, Any]) -> bool:
    """Do a hit's highlights hold the question's rarest word the caller's documents hold (the weightiest the search
    weighed; any of equals: the first of them in the question is no rarer than the others)? A word no readable
    passage holds is no evidence either way: ``unheard`` and the coverage weights speak for it."""
    question, held = _question(ledger), stems(" ".join(ledger.get("weights") or {}))
    readable = [key for key in question.weights if key in held]
    if not readable:
        return False
    top = max(question.weights[key] for key in readable)
    return any(question.weights[key] == top for key in stems(" ".join(h["text"] for h in hit["highlights"]))
               if key in readable)


def _searched(ledger: Ledger, query: str) -> dict[str, Any] | None:
    """The recorded search for exactly ``query``, if one was made."""
    return next((s for s in ledger["searches"] if s["query"] == query), None)


def _search_alone(query: str, reason: str) -> dict[str, Any]:
    """The grade asking for ``query`` to be searched as it is: no bridge entity, the whole query still unexplained."""
    return {"status": "gap", "mode": "open", "entity": None, "rest": query, "query": query, "k": OPEN_K,
            "reason": reason}


def _part_answers(ledger: Ledger, best: dict[str, Any] | None) -> dict[str, Any] | None:
    """A compound question (:func:`parts`) whose best page answers one part but not the other: search the
    other part on its own (one more read), then the first part on its own too -- the sentences answering the whole
    question are not those answering its part, and when the other part's search finds the same page, that page held the
    first part's words, not necessarily its answer ("Which Python versions does it support, and how do I check that
    the C extension is used?": the installation page names Python versions); then answer each part from its own
    page, as that part asks -- or ``None`` (one page answers both). When no hit of the other part's search answers it
    but that search ranks the same page first, fitting :data:`SPECIFIC`, the page is still taken as the other part's
    (its sentences were read for the whole question, which they answer that part of) and the first part is searched
    on its own: "Which Python flag is recommended while developing ..., and how can I serve my app from the command
    line ...?" -- the command-line page held "development"; the first part's own search finds `python -X dev`.

    What a page answers of a part is the part's share of the question words the page holds (``matched``)."""
    asked = parts(ledger["question"])
    if not asked or best is None:
        return None
    weights = ledger.get("weights") or {}
    held = stems(" ".join(best.get("matched", [])))
    shares = [Question(p, weights, ledger.get("passages") or 0, max(weights.values(), default=1.0)).covered(held)
              for p in asked]
    strong, weak = (0, 1) if shares[0] >= shares[1] else (1, 0)
    if shares[strong] < ANSWERS:
        return None
    done = _searched(ledger, asked[weak])
    if done is None:
        return _search_alone(asked[weak], f"{best['id']} answers \"{asked[strong]}\" but not this part: {asked[weak]}")
    other = _shown(ledger, _answering(ledger, done, asked[weak]), asked[weak])
    if not other or fit(other[0]) < ANSWERS:
        if not any(h["id"] == best["id"] and h["rank"] == 0 and fit(h) >= SPECIFIC for h in other):
            return None
        other = [best]
    own = _searched(ledger, asked[strong])
    if own is None and not Budget(ledger["budget"], spent(ledger)).exhausted:
        return _search_alone(asked[strong], f"{other[0]['id']} answers \"{asked[weak]}\"; this part on its own: "
                                            f"{asked[strong]}")
    mine = _shown(ledger, _answering(ledger, own, asked[strong]), asked[strong]) if own else []
    if mine and fit(mine[0]) >= ANSWERS and mine[0]["id"] != other[0]["id"]:
        best = mine[0]  # its sentences answering this part, not the whole question
    elif other[0]["id"] == best["id"]:
        return None  # the one page answers both parts, searched together and apart
    pair = [best, other[0]] if strong == 0 else [other[0], best]
    return {"status": "answered", "citations": [_cite(ledger, h) for h in pair], "results": done["results"]}


def _joined(ledger: Ledger, best: dict[str, Any], ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The best passage's citation, and a second hit's when it covers :data:`MIN_GAIN` more of the question and
    the two together cover :data:`COVERS` -- two partial hits are no answer together."""
    cited = [_cite(ledger, best)]
    if fit(best) < COVERS:
        others = [h for h in ranked[1:] if h["id"] != best["id"]]
        gain, other = max(((_union(ledger, [best, h]) - best["coverage"], h) for h in others),
                          key=lambda g: g[0], default=(0.0, None))
        if (other is not None and gain >= MIN_GAIN and best["coverage"] + gain >= COVERS
                and len(set(other.get("matched", [])) - set(best.get("matched", []))) >= 2):
            cited.append(_cite(ledger, other))
    if len(cited) == 1:
        cited += _valued(ledger, best, ranked)
    return cited


def _valued(ledger: Ledger, best: dict[str, Any], ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For a question asking for a default: when the best answer names in code what sets it but states no value ("a
    default timeout via `url_timeout`"), the highlight of another hit defining that name with a value (its row of the
    options table, the name first: "`url_timeout` | float | `#!py3 10.0` | Passes an arbitrary timeout ...") -- or
    nothing."""
    question = _question(ledger)
    said = best["highlights"]
    if not question.default or question.quantity or any(states_number(x["text"]) for x in said):
        return []
    names = {f"`{name}`" for x in said for name in INLINE_CODE.findall(x["text"])
             if stems(name) - question.weights.keys()}
    for hit in (h for h in ranked if h["id"] != best["id"]):
        valued = [x for x in hit["highlights"] if states_number(x["text"])
                  and any(_ITEM.sub("", x["text"], count=1).lstrip().startswith(name) for name in names)]
        if valued:
            return [_cite(ledger, {**hit, "highlights": valued[:1]})]
    return []


def _answered(ledger: Ledger, cited: list[dict[str, Any]], retrieved: list[str], multi: bool = False) -> dict[str, Any]:
    answer = cited[-1] if multi else cited[0]
    return {"status": "sufficient", "mode": "open", "answer": " ".join(c["quote"] for c in ([answer] if multi else cited)),
            "answer_doc": answer["doc_id"], "answer_section": answer["section"], "multi_hop": multi,
            "citations": cited, "retrieved": retrieved}


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
    if graded.get("mode") == "open":
        return compose_open(graded) + tail
    if graded["status"] == "sufficient":
        hops = hops_text(graded["path"])
        extra = (f"\nNewer source wins over superseded {', '.join(graded['superseded'])}."
                 if graded.get("superseded") else "")
        return f"{graded['answer']}\nEvidence: {hops}{extra}{tail}"
    return f"I cannot answer: {abstain_reason(graded)}.{tail}"


def source(cited: dict[str, Any]) -> str:
    """A passage as a person looks it up: ``document id › heading path`` (the passage id, ``page.md#3``,
    is in ``--json`` and the trace; a person finds the page and the heading)."""
    return " › ".join(p for p in (cited.get("document") or cited["doc_id"], cited.get("section") or "") if p)


def compose_open(graded: dict[str, Any]) -> str:
    """Open mode as a person reads it: the sentences that answer, each followed by ``[doc id › heading
    path]``; then the sources, one per line; the hop path only for a multi-hop answer. An abstention
    lists the closest pages instead."""
    if graded["status"] != "sufficient":
        see = graded.get("see_also") or []
        return f"I cannot answer: {abstain_reason(graded)}." + ("\nSee also:" + "".join(f"\n- {source(c)}" for c in see)
                                                              if see else "")
    cites = graded["citations"]
    shown = cites[-1:] if graded.get("multi_hop") else cites
    parts: list[tuple[str, str]] = []  # (quote, source); quotes from one section share one citation
    for c in shown:
        if parts and parts[-1][1] == source(c):
            parts[-1] = (f"{parts[-1][0]} {c['quote']}", parts[-1][1])
        else:
            parts.append((c["quote"], source(c)))
    # a citation after a code block goes on a line of its own: "``` [x]" would not close the block; a quote starting
    # with a list item starts a line, as the item did on its page
    answer = "".join(("\n" if n and _ITEM.match(quote) else " " if n else "")
                     + f"{quote}{chr(10) if quote.endswith(('```', '~~~')) else ' '}[{cited}]"
                     for n, (quote, cited) in enumerate(parts))
    lines = [answer, "", "Sources:", *dict.fromkeys(f"- {source(c)}" for c in cites)]
    if graded.get("multi_hop"):
        lines.append("Hop path: " + "; ".join(f"{c['from']} --{c['via']}--> {c['doc_id']}" if c["via"]
                                              else f"question --> {c['doc_id']}" for c in cites))
    return "\n".join(lines)


def abstain_reason(graded: dict[str, Any]) -> str:
    """Why a grade that is not ``sufficient`` cannot be answered (a gap left open = budget ran out)."""
    if graded["status"] == "conflict":
        return f"{ABSTAIN_CONFLICT}: {', '.join(graded['cited'])} disagree and are equally recent"
    return ABSTAIN_BUDGET if graded["status"] in ("gap", "stale") else graded.get("reason", ABSTAIN_UNREADABLE)
