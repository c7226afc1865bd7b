"""The multi-hop retrieval benchmark: recall of supporting passages per strategy, with costs.

Input is a generic format, so any multi-hop dataset converts to it (see :mod:`benchmarks.musique`):

- corpus JSONL, one ``{id, title, text, triples?}`` per line;
- questions JSONL, one ``{id, question, answer, supporting_ids}`` per line.

A strategy sees only the question text and the caller's view of the corpus -- the product's
engine, one per ranker a strategy asks for; answers and supporting ids are read by the scorer alone.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import re
import tempfile
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from tqdm import tqdm

from hoprag.corpus import Corpus, load_corpus as load_engine_corpus
from hoprag.embed import Embedder, Vectors, embed_all, text_of
from hoprag.engine import Engine
from hoprag.search import View
from hoprag.walk import DEFAULT_BUDGET

from .strategies import AGENT, AGENT_HYBRID, DENSE_STRATEGIES, STRATEGIES, AgentServer, Strategy, Tools

GROUPS = frozenset({"public"})

KS = (2, 5, 10)


@dataclass(frozen=True)
class Question:
    """A labelled multi-hop question; ``supporting_ids`` are the passages a full answer needs."""

    id: str
    question: str
    answer: str
    supporting_ids: tuple[str, ...]


@dataclass(frozen=True)
class Score:
    """One strategy's averages over a question set (``extra``: what only the agent reports)."""

    recall: dict[int, float]
    searches_per_question: float
    ms_per_question: float
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out = {f"recall@{k}": round(v, 4) for k, v in self.recall.items()}
        return out | {"searches_per_question": round(self.searches_per_question, 3),
                      "ms_per_question": round(self.ms_per_question, 3)} | self.extra


class Bench:
    """One benchmark corpus served by the product's engine: one :class:`Engine` per ranker asked for
    (``dense`` and ``hybrid`` over the passages' vectors of ``embedder``, embedded once and kept in
    ``cache``, a folder, so a long corpus is embedded once across runs)."""

    def __init__(self, corpus: Corpus, embedder: Embedder | None = None, cache: Path | None = None):
        self.corpus, self.embedder, self.cache = corpus, embedder, cache
        self.row = {d.id: i for i, d in enumerate(corpus.docs)}
        self._engines: dict[str, Engine] = {}
        self._vectors: Vectors | None = None
        self.embed_seconds = 0.0

    @property
    def vectors(self) -> Vectors:
        """The passages' vectors, from the cache when it holds this corpus's for this embedder."""
        if self._vectors is None:
            if self.embedder is None:
                raise ValueError("dense and hybrid strategies need an embedder: pass --embedder (e.g. minilm)")
            texts = [text_of(d) for d in self.corpus.docs]
            key = hashlib.sha256("\0".join([self.embedder.identity, *texts]).encode()).hexdigest()[:20]
            path = self.cache / f"{self.embedder.name.replace(':', '_').replace('/', '_')}-{key}.npy" if self.cache else None
            if path is not None and path.exists():
                matrix = np.load(path)
            else:
                start = time.perf_counter()
                matrix = embed_all(self.embedder, texts, lambda line: print(line, file=sys.stderr))
                self.embed_seconds = time.perf_counter() - start
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    np.save(path, matrix.astype(np.float16))
            self._vectors = Vectors(self.embedder, np.asarray(matrix, dtype=np.float32))
        return self._vectors

    def engine(self, ranker: str) -> Engine:
        if ranker not in self._engines:
            if ranker in ("dense", "hybrid"):
                self._engines[ranker] = Engine(self.corpus, "dense" if ranker == "dense" else "bm25-titles",
                                               vectors=self.vectors)
            else:
                self._engines[ranker] = Engine(self.corpus, ranker)
        return self._engines[ranker]

    def view(self, ranker: str) -> View:
        """What a benchmark caller (the ``public`` group) may read, ranked by ``ranker``."""
        return self.engine(ranker).view(GROUPS)


def load_corpus(path: str | Path) -> Corpus:
    """Load a benchmark corpus through the engine's validating loader.

    A benchmark corpus has no ACLs or provenance, so every passage gets the same neutral
    defaults: readable by one ``public`` group, trusted (the integrity gate has nothing to
    drop), a ``bench:<file>`` source URI, and one fixed ``updated`` date so freshness never
    breaks a tie. Fields a record does set win.
    """
    path = Path(path)
    defaults = {"groups": sorted(GROUPS), "trusted": True, "source": f"bench:{path.stem}", "updated": "2000-01-01"}
    return load_engine_corpus(path, defaults=defaults)


def load_questions(path: str | Path) -> tuple[Question, ...]:
    """Read questions JSONL; every question needs an id, the text and at least one supporting id."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        r = json.loads(line)
        missing = [f for f in ("id", "question", "supporting_ids") if not r.get(f)]
        if missing:
            raise ValueError(f"{path}:{n}: missing {', '.join(missing)}")
        out.append(Question(str(r["id"]), r["question"], str(r.get("answer", "")), tuple(r["supporting_ids"])))
    return tuple(out)


def recall_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Fraction of the gold passages among the first ``k`` ranked ids."""
    top = set(ranked[:k])
    return sum(g in top for g in gold) / len(gold)


def evaluate(bench: Bench, questions: Sequence[Question], strategy: Strategy,
             budget: int = DEFAULT_BUDGET, bar: tqdm | None = None) -> Score:
    """Run one strategy over every question; average recall@k, searches and wall time.

    One untimed warm-up question first, so lazily built structures (the view, the entity graph)
    and first-call overheads are not charged to whichever strategy happens to run first.
    """
    unknown = {g for q in questions for g in q.supporting_ids} - set(bench.row)
    if unknown:
        raise ValueError(f"supporting ids not in the corpus: {', '.join(sorted(unknown)[:5])}")
    view = bench.view(strategy.ranker)
    if view.vectors is not None:
        view.vectors.forget()  # each strategy embeds its own queries: their cost is in its ms/q
    if questions:
        strategy.run(questions[0].question, Tools(view, budget))
    recall = {k: 0.0 for k in KS}
    searches, seconds = 0, 0.0
    for q in questions:
        tools = Tools(view, budget)
        start = time.perf_counter()
        ranked = list(strategy.run(q.question, tools))
        seconds += time.perf_counter() - start
        searches += tools.searches
        for k in KS:
            recall[k] += recall_at(ranked, q.supporting_ids, k)
        if bar is not None:
            bar.update()
    n = max(len(questions), 1)
    return Score({k: v / n for k, v in recall.items()}, searches / n, 1000 * seconds / n)


def normalise(text: str) -> str:
    """SQuAD-style answer normalisation: folded, lower-case, no punctuation or articles, single spaces."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
    text = re.sub(r"\b(a|an|the)\b", " ", re.sub(r"[^\w\s]", " ", text))
    return " ".join(text.split())


def is_yes_no(answer: str) -> bool:
    return normalise(answer) in ("yes", "no")


def evaluate_agent(bench: Bench, questions: Sequence[Question], budget: int = DEFAULT_BUDGET,
                   bar: tqdm | None = None, hybrid: bool = False) -> Score:
    """The shipped agent through a real HTTP MCP server: its report's ``retrieved`` ranks the passages.

    Besides recall it reports citation recall (gold passages among the cited ``doc_id``s), the
    answer line (the normalised gold answer inside the answer a person reads), answer-in-citations
    (inside any cited quote; both with yes/no questions apart, since a quote never says "yes"), how
    often it abstained, and searches per question by the question's hop count.
    """
    unknown = {g for q in questions for g in q.supporting_ids} - set(bench.row)
    if unknown:
        raise ValueError(f"supporting ids not in the corpus: {', '.join(sorted(unknown)[:5])}")
    recall = {k: 0.0 for k in KS}
    cited_recall, searches, seconds = 0.0, 0, 0.0
    in_quotes = {"answer": [0, 0], "yes_no": [0, 0]}
    in_answer = {"answer": [0, 0], "yes_no": [0, 0]}
    by_hops: dict[int, list[int]] = defaultdict(list)
    answered: list[str | None] = []
    with tempfile.TemporaryDirectory() as tmp, AgentServer(bench.corpus, Path(tmp), budget,
                                                           bench.vectors if hybrid else None) as served:
        if questions:
            served.ask(questions[0].question)  # warm-up, untimed: imports, first MCP session
        for q in questions:
            start = time.perf_counter()
            report = served.ask(q.question)
            seconds += time.perf_counter() - start
            for k in KS:
                recall[k] += recall_at(report["retrieved"], q.supporting_ids, k)
            cited = {c["doc_id"] for c in report["citations"]}
            cited_recall += sum(g in cited for g in q.supporting_ids) / len(q.supporting_ids)
            quotes = normalise(" ".join(c.get("quote") or c.get("object") or "" for c in report["citations"]))
            kind = "yes_no" if is_yes_no(q.answer) else "answer"
            for tally, said in ((in_quotes[kind], quotes), (in_answer[kind], normalise(report["answer"] or ""))):
                tally[0] += bool(normalise(q.answer)) and f" {normalise(q.answer)} " in f" {said} "
                tally[1] += 1
            searches += report["searches"]
            answered.append(report["answer"])
            by_hops[len(q.supporting_ids)].append(report["searches"])
            if bar is not None:
                bar.update()
    n = max(len(questions), 1)
    extra = {"citation_recall": round(cited_recall / n, 4),
             "answer_line": round(in_answer["answer"][0] / max(in_answer["answer"][1], 1), 4),
             "abstained": sum(r is None for r in answered) / n,
             "answer_in_citations": round(in_quotes["answer"][0] / max(in_quotes["answer"][1], 1), 4),
             "answer_in_citations_yes_no": round(in_quotes["yes_no"][0] / max(in_quotes["yes_no"][1], 1), 4),
             "yes_no_questions": in_quotes["yes_no"][1],
             "searches_by_hops": {str(h): round(sum(v) / len(v), 3) for h, v in sorted(by_hops.items())}}
    return Score({k: v / n for k, v in recall.items()}, searches / n, 1000 * seconds / n, extra)


def run(bench: Bench, questions: Sequence[Question], strategies: Mapping[str, Strategy | None],
        budget: int = DEFAULT_BUDGET, progress: bool = False) -> dict[str, Score]:
    """Every strategy over the same questions and corpus, one after another on this machine
    (``None``: the shipped agent through MCP, :func:`evaluate_agent`, over a hybrid server for
    :data:`AGENT_HYBRID`)."""
    with tqdm(total=len(questions) * len(strategies), file=sys.stderr, disable=None if progress else True,
              desc="questions", leave=False) as bar:
        return {name: evaluate(bench, questions, s, budget, bar) if s is not None
                else evaluate_agent(bench, questions, budget, bar, name == AGENT_HYBRID) for name, s in strategies.items()}


def report_json(scores: Mapping[str, Score]) -> str:
    return json.dumps({"strategies": {name: s.as_json() for name, s in scores.items()}}, indent=2)


def report_table(scores: Mapping[str, Score]) -> str:
    lines = [f"{'strategy':<15} {'R@2':>6} {'R@5':>6} {'R@10':>6} {'searches/q':>11} {'ms/q':>8}"]
    for name, s in scores.items():
        r = [f"{100 * s.recall[k]:6.1f}" for k in KS]
        lines.append(f"{name:<15} {' '.join(r)} {s.searches_per_question:11.2f} {s.ms_per_question:8.2f}")
    for name, s in scores.items():
        if s.extra:
            e = s.extra
            lines.append(f"{name}: citation recall {100 * e['citation_recall']:.1f}, answer line "
                         f"{100 * e['answer_line']:.1f}%, answer in citations {100 * e['answer_in_citations']:.1f}% "
                         f"(yes/no apart: {e['yes_no_questions']}), abstained {100 * e['abstained']:.0f}%, "
                         f"searches by hop count {e['searches_by_hops']}")
    return "\n".join(lines)


def select(names: Sequence[str]) -> dict[str, Strategy | None]:
    """Strategies by name, in the order given (``agent``, ``agent-hybrid``: ``None``); raises ``ValueError``
    naming the choices."""
    known = {**STRATEGIES, **DENSE_STRATEGIES}
    bad = [n for n in names if n not in known and n not in (AGENT, AGENT_HYBRID)]
    if bad or not names:
        raise ValueError(f"unknown strategy {', '.join(bad)}; choose from {', '.join([*known, AGENT, AGENT_HYBRID])}")
    return {n: known.get(n) for n in names}
