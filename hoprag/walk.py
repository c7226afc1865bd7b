"""The multi-hop walker: the frontier, the next-gap choice, and the search budget that stops it.

One module for every loop of the product -- the library strategies, the agent's offline policy,
the graph tool and the benchmark strategies all walk through here:

- :class:`Budget` is the hard cap on searches; spending past it raises :class:`BudgetExceeded`;
- :class:`Frontier` is a best-first queue of what to look up next, ties in discovery order (so
  equal scores walk breadth-first, as the chapter's loop does);
- :func:`reach` walks relation edges (facts, a networkx multigraph: :func:`relation_graph`)
  breadth-first from a start entity to the first entity holding the goal relation;
- :func:`bridge_walk` walks prose: each read passage's bridge entities become the next queries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Callable, Generic, Hashable, Iterable, Iterator, Mapping, Protocol, Sequence, TypeVar

from .assess import stem
from .entities import norm
from .facts import FactTable
from .text import FENCE, is_name
from .tokens import content

if TYPE_CHECKING:
    import networkx as nx

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
Edge = tuple[str, str, str, str]  # (subject, relation, object, doc_id)


#: The default cap on reads per question (the agent's ``HOPRAG_SEARCH_BUDGET``, the benchmarks' ``--budget``).
DEFAULT_BUDGET = 4


class BudgetExceeded(RuntimeError):
    """A walk asked for more searches than its budget allows."""


@dataclass
class Budget:
    """The hard cap on reads for one question, and how much of it is spent: one unit per search (and,
    for the agent, per fetch: :data:`agents.hoprag_agent.policy.READS`)."""

    limit: int
    used: int = 0

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)

    @property
    def exhausted(self) -> bool:
        return self.used >= self.limit

    def spend(self) -> None:
        """Account for one search; refuse it (raise) once the cap is reached."""
        if self.exhausted:
            raise BudgetExceeded(f"search budget of {self.limit} exhausted")
        self.used += 1


class Frontier(Generic[K, T]):
    """Best-first queue of keys to explore, each explored at most once.

    Offering a queued key again only raises its score; ties pop in first-offered order.
    """

    def __init__(self) -> None:
        self._queued: dict[K, tuple[float, T]] = {}
        self.done: set[K] = set()

    def offer(self, key: K, item: T, score: float = 0.0) -> bool:
        """Queue ``key`` (or raise its score); ``False`` if it was explored or already better queued."""
        if key in self.done or (key in self._queued and score <= self._queued[key][0]):
            return False
        self._queued[key] = (score, item)
        return True

    def pop(self) -> tuple[K, T]:
        key = max(self._queued, key=lambda x: self._queued[x][0])
        _, item = self._queued.pop(key)
        self.done.add(key)
        return key, item

    def score(self, key: K) -> float | None:
        entry = self._queued.get(key)
        return entry[0] if entry else None

    def __bool__(self) -> bool:
        return bool(self._queued)


# --- relation walks (facts) -------------------------------------------------------------------


@dataclass(frozen=True)
class Reach:
    """Where a relation walk got: the first entity holding the goal, the path there, and its goal edges.

    ``order`` lists every entity discovered before the walk stopped, breadth-first -- when no entity
    holds the goal, all it could reach: the candidates for the next gap.
    """

    entity: str | None
    path: tuple[Edge, ...]
    goals: tuple[Edge, ...]
    order: tuple[str, ...]


def relation_graph(edges: Iterable[Edge]) -> nx.MultiDiGraph:
    """Facts as a networkx multigraph, subject -> object, with ``relation`` and ``doc`` on each edge.

    An edge's key is its position among its subject's edges in ``edges``: networkx lists a node's edges
    neighbour by neighbour, so the key is what keeps document order (which fact a walk cites first).
    Numbered per subject, not over all edges, so a change re-keys only the subjects it touches
    (:meth:`hoprag.graph.Graph.amended`)."""
    import networkx as nx  # ≈ 0.15 s: imported with the first graph (a server's warm-up), not before it listens

    graph = nx.MultiDiGraph()
    add = graph.add_edge  # a third faster than add_edges_from, which re-reads each edge through views
    stated: dict[str, int] = {}
    for s, r, o, d in edges:
        key = stated.get(s, 0)
        stated[s] = key + 1
        add(s, o, key, relation=r, doc=d)
    return graph


def edges_of(facts: Iterable[tuple[str, Sequence[Sequence[str]]]]) -> Iterator[Edge]:
    """The edges of ``(doc_id, triples)`` pairs, in document order (for :func:`relation_graph`)."""
    return ((s, r, o, doc_id) for doc_id, triples in facts for s, r, o in triples)


def edges_of_table(table: FactTable) -> Iterator[Edge]:
    """The edges of a fact table, in table order (for :func:`relation_graph`)."""
    return ((s, r, o, doc_id) for (s, r), found in table.items() for o, doc_id in found)


def in_order(edges: Iterable[tuple[str, str, int, Mapping[str, str]]]) -> list[Edge]:
    """networkx's ``(subject, object, key, data)`` edges of one subject of a :func:`relation_graph` as
    :data:`Edge` tuples, in document order (keys order a subject's edges only)."""
    return [(s, d["relation"], o, d["doc"]) for s, o, _, d in sorted(edges, key=itemgetter(2))]


def reach(graph: nx.MultiDiGraph, start: str, goal: str, max_hops: int | None = None) -> Reach:
    """Breadth-first (networkx's ``bfs_edges``) from ``start`` to the first entity with a ``goal`` edge;
    an entity is reached by its first edge in document order.

    Paths hold at most ``max_hops`` edges, the goal edge included (``None``: unbounded).
    """
    import networkx as nx  # loaded already: the graph is a networkx one

    if start not in graph:
        return Reach(None, (), (), (start,))
    paths: dict[str, tuple[Edge, ...]] = {start: ()}
    depth = None if max_hops is None else max_hops - 1
    for parent, entity in chain([(None, start)], nx.bfs_edges(graph, start, depth_limit=depth)):
        if parent is not None:
            first = in_order((parent, entity, k, d) for k, d in graph[parent][entity].items())[0]
            paths[entity] = paths[parent] + (first,)
        goals = tuple(e for e in in_order(graph.out_edges(entity, keys=True, data=True)) if e[1] == goal)
        if goals:
            return Reach(entity, paths[entity], goals, tuple(paths))
    return Reach(None, (), (), tuple(paths))


# --- bridge walks (prose) ---------------------------------------------------------------------


class Passage(Protocol):
    id: str
    title: str
    text: str


class Mentions(Protocol):
    """What a bridge choice reads of the caller's entity graph (an :class:`~hoprag.entities.EntityView`,
    or a client's copy rebuilt from MCP ``search`` results)."""

    def units(self, doc_id: str) -> Sequence[tuple[str, str]]: ...

    def spread_of(self, surface: str) -> int: ...


class Bridging(Protocol):
    """A caller's view as far as a bridge walk needs it: entity mentions and term weights (IDF)."""

    @property
    def entities(self) -> Mentions: ...

    @property
    def idf(self) -> Mapping[str, float]: ...


Search = Callable[[str, int], Sequence[Passage]]

#: A bridge is a *specific* name: mentioned by at most this share of the caller's passages (and at
#: most :data:`MIN_SPECIFIC` passages in a small view). "Python", "HTTP", or a capitalised common
#: word ("Set", counted wherever "set" occurs) lead everywhere, so they lead nowhere.
SPECIFIC = 0.02
MIN_SPECIFIC = 5


#: A bridge's statement must bear on the question: hold at least this share of the question's word
#: weight ("... published by the American Psychological Association" holds most of "Who was the first
#: president of the association which published the Journal of ..."), so a name dropped in passing
#: ("See HookName.COMPLETION_KWARGS") is no bridge.
BEARING = 0.12


def specific(passages: int) -> int:
    """How many of a view's ``passages`` may mention a name that is still a bridge."""
    return max(MIN_SPECIFIC, int(SPECIFIC * passages))


def bridges(question: str, read: Sequence[Passage], view: Bridging, skip: set[str],
            named: str = "", most: int | None = None) -> dict[str, tuple[float, str, str]]:
    """Entities of the passages just read that could lead to the next hop: ``key -> (score, name, passage id)``.

    A bridge is a proper name absent from the question (and from ``named``, the entity that led
    here), that at least one other passage of the caller's view mentions, and at most ``most``
    (:func:`specific`; ``None``: no limit) do; its score is how much of
    the question the triple or sentence stating it covers (IDF-weighted; an agent noun of the question counts where
    its verb stands, :func:`_agents`), discounted by the passage's rank: "Journal of Psychotherapy Integration --
    published by -> American Psychological Association".
    """
    asked = set(content(question))
    old = asked | set(content(named))
    least = BEARING * sum(view.idf.get(t, 0.0) for t in asked)
    agents = _agents(asked)
    best: dict[str, tuple[float, str, str]] = {}
    for rank, passage in enumerate(read):
        first: dict[str, str] = {}  # a name as the passage first states it (what MCP ``search`` reports)
        code = "\n".join(m.group() for m in FENCE.finditer(passage.text))
        for surface, context in view.entities.units(passage.id):
            key = norm(surface)
            if (key in skip or not is_name(surface) or not set(content(surface)) - old or _common(surface, passage)
                    or _not_a_name(surface, context, code)):
                continue
            surface = first.setdefault(key, surface)
            spread = view.entities.spread_of(surface)
            if spread < 2 or (most is not None and spread > most):
                continue
            said = set(content(context))
            # the deed said, its doer asked (no stems to take for a question naming no doer: most of them)
            doers = {agents[s] for s in map(stem, said - asked) if s in agents} if agents else set()
            bearing = sum(view.idf.get(t, 0.0) for t in said & asked | doers)
            score = bearing / (1 + rank)
            if bearing > 0 and bearing >= least and (key not in best or score > best[key][0]):
                best[key] = (score, surface, passage.id)
    return best


#: A name written as code ("Mode.JSON", "HookName.COMPLETION_KWARGS") or stated only in a heading,
#: table row or label line names a part of a document, not a thing another passage is about; so does
#: a capitalised word on a line of a code block (``click.prompt('Please enter a number')``).
_CODE = re.compile(r"_|\w\.\w{2,}|[()`]")


def _not_a_name(surface: str, context: str, code: str) -> bool:
    """``code``: the passage's fenced code blocks, joined."""
    return (bool(_CODE.search(surface)) or context.lstrip().startswith(("#", "|", "**"))
            or (bool(code) and context.strip() in code))


def _agents(asked: set[str]) -> dict[str, str]:
    """The verbs a question's agent nouns name, by stem: "director" is what "directed by" states, "performer"
    "performed by", "composer" "composed by" -- a bridge's sentence says the deed, the question its doer."""
    out: dict[str, str] = {}
    for word in sorted(asked):
        if len(word) > 5 and word.endswith(("or", "er")):
            for base in (word[:-2], word[:-1]):
                out.setdefault(stem(base), word)
    return out


def _common(surface: str, passage: Passage) -> bool:
    """A one-word name the passage also writes in lower case is a common word ("Always", "Set"), not a name."""
    word = surface.strip(".,;:!?'’\"").lower()
    return " " not in word and re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", passage.text) is not None


def residual(question: str, read: Sequence[Passage]) -> str:
    """The question's content words the passages read so far do not contain: what is still asked."""
    seen = {t for p in read for t in content(f"{p.title} {p.text}")}
    return " ".join(t for t in content(question) if t not in seen)


def fuse(lists: Sequence[Sequence[str]]) -> list[str]:
    """Round by round, each search's best passage not yet taken, in search order.

    Every hop looks for a different passage, so each hop's best comes before any hop's runner-up;
    reciprocal-rank fusion would instead lift passages several searches share (mostly the first
    hop's, already placed) and interleave a hop's runners-up ahead of the next hop's answer.
    """
    out: dict[str, None] = {}
    for _ in range(max(map(len, lists), default=0)):
        for ranked in lists:
            new = next((i for i in ranked if i not in out), None)
            if new is not None:
                out[new] = None
    return list(out)


@dataclass
class Hop:
    """One search of a bridge walk: the entity that led to it, its query, and what it returned."""

    entity: str | None
    query: str
    results: list[str]
    read: str | None = None  # the new passage this hop took
    rest: str = ""  # the part of the question the chain that led here left unexplained
    source: str | None = None  # the passage whose bridge entity led to this hop


@dataclass
class BridgeWalk:
    """A bridge walk's outcome: the fused ranking, and every hop in the order it was searched."""

    ranked: list[str]
    hops: list[Hop] = field(default_factory=list)
    chains: dict[str, list[str]] = field(default_factory=dict)  # passage id -> the passages that led to it


class BridgeWalker:
    """The bridge walk one step at a time: :meth:`next` names the next search, :meth:`take` reads its hits.

    :func:`bridge_walk` drives it with a search function; the agent's offline policy drives it from
    the search results an MCP client recorded, so the product and the library walk identically.
    """

    def __init__(self, question: str, view: Bridging, read: int = 2, discount: float = 0.5, most: int | None = None):
        """``most``: the most passages a bridge may be mentioned by (:func:`specific`; ``None``: any)."""
        self.question, self.view, self.read, self.discount, self.most = question, view, read, discount, most
        self.walk = BridgeWalk([])
        #: key -> (name, the chain of passages that led to it, the passage stating it)
        self.frontier: Frontier[str, tuple[str, list[Passage], str]] = Frontier()
        self._pending: Hop | None = None
        self._chain: list[Passage] = []

    def next(self) -> Hop | None:
        """The next search to run (the question itself first), or ``None`` when no bridge is left
        that would explain more of the question.

        Asking again before :meth:`take` names the same search."""
        if self._pending is None and not self.walk.hops:
            self._pending = Hop(None, self.question, [])
        while self._pending is None and self.frontier:
            _, (name, chain, source) = self.frontier.pop()
            rest = residual(self.question, chain)
            if rest:  # a chain that explains every word of the question needs no further hop
                self._pending, self._chain = Hop(name, f"{name} {rest}", [], rest=rest, source=source), chain
        return self._pending

    def take(self, hits: Sequence[Passage]) -> Hop:
        """Record the hits of the search :meth:`next` named; queue the bridges of what it read."""
        hop = self.next()
        if hop is None:
            raise ValueError("the walk has no search pending")
        self._pending = None
        hop.results = [p.id for p in hits]
        self.walk.hops.append(hop)
        if hop.entity is None:
            hop.read = hits[0].id if hits else None
            read = {p.id: p for p in hits[:self.read]}
            for key, (score, name, source) in bridges(self.question, list(read.values()), self.view, set(),
                                                            most=self.most).items():
                self.frontier.offer(key, (name, [read[source]], source), score)  # explained by the passage naming it
        else:
            chain = self._chain
            seen = {p.id for p in chain} | {h.read for h in self.walk.hops if h.read}  # read once, whichever hop
            new = next((p for p in hits if p.id not in seen), None)
            if new is not None:
                hop.read = new.id
                self.walk.chains.setdefault(new.id, [p.id for p in chain])
                for nxt, (score, onward, source) in bridges(self.question, [new], self.view, self.frontier.done,
                                                             named=hop.entity, most=self.most).items():
                    self.frontier.offer(nxt, (onward, chain + [new], source), self.discount * score)
        self.walk.ranked = fuse([h.results for h in self.walk.hops])
        return hop


def bridge_walk(question: str, search: Search, view: Bridging, budget: Budget, k: int = 10, read: int = 2,
                discount: float = 0.5, most: int | None = None) -> BridgeWalk:
    """The chapter's loop (section 15.3) on prose, without an LLM: each read chooses the next query.

    Search the question and read the top ``read`` passages: their bridge entities form a
    frontier. While budget remains, search the best frontier entity together with the part of the
    question its chain of passages leaves unexplained, read the best new passage, and add its own
    bridges (scores times ``discount`` per hop). A best-first frontier lets a strong second
    candidate of the first hop (a hedge) compete with the next hop of a chain.
    """
    walker = BridgeWalker(question, view, read, discount, most)
    budget.spend()
    walker.take(search(question, k))
    while not budget.exhausted and (hop := walker.next()) is not None:
        budget.spend()
        walker.take(search(hop.query, k))
    return walker.walk
