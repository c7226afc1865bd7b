"""Synthetic corpora for the scale benchmark: realistic-length passages with entities and relation cues.

A corpus is a set of small "worlds" -- a project that depends on a system, which stores telemetry
in a store, which runs in a region, plus an owner, a release gate and a (finance-only) budget --
stated by short fact passages, surrounded by longer filler passages that mention the same names
(the distractors a ranker must see past). Filler words follow a Zipf law over an
engineering-wiki vocabulary, so posting-list lengths look like real text: a few very common
words, a long tail. Passages run 40-140 tokens (MuSiQue paragraphs average about 100).

Everything is deterministic in ``seed``. :func:`write` produces a directory the engine and
``hoprag serve`` load unchanged: ``corpus.jsonl``, ``access.yaml``, ``allowlist.yaml`` and
``queries.json`` (search strings for the load generators).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hoprag.settings import DEMO_CORPUS

WORDS = """
the of and to in a is for on with as by that this from at be are was it an or which its not have has
were been their more can will all also than other these into only after over new but most some such
team service dashboard latency incident review deploy deployment release rollout cluster region storage
pipeline queue cache database index shard replica backup restore migration schema endpoint gateway
traffic load balancer certificate secret token rotation alert alerting paging oncall runbook
postmortem outage error rate budget quota capacity forecast cost invoice vendor contract renewal
audit compliance policy access group permission role owner maintainer roadmap milestone quarter
sprint ticket backlog priority severity customer partner tenant account billing usage metric
metrics trace tracing log logging retention archive snapshot volume disk memory cpu node pod
container image build test suite coverage flaky regression benchmark throughput p99 slo sli
error-budget canary feature flag experiment cohort rollback hotfix patch version upgrade
dependency library framework client server protocol api schema contract integration webhook
batch stream event topic consumer producer scheduler job cron worker timeout retry backoff
weekly monthly daily friday monday review meeting notes decision proposal draft approved
rejected pending blocked resolved open closed scheduled planned completed delayed
""".split()
ONSETS = "b c d f g h k l m n p r s t v z br cr dr fl gr kr pl pr sk st tr th".split()
VOWELS = "a e i o u ai ea io ou".split()
CODAS = ["", "n", "r", "s", "l", "x", "th", "nd", "rk", "st"]
FIRST = "Maya Ravi Dana Lena Omar Iris Tomas Priya Noor Felix Hana Jonas Aiko Mateo Sara Idris".split()
LAST = "Chen Patel Ortiz Novak Haddad Berg Silva Kimura Okafor Rossi Weber Lund Moreau Sato Varga".split()
REGIONS = [f"{a}-{b}-{n}" for a in ("us", "eu", "ap", "sa", "me") for b in ("east", "west", "north", "south", "central")
           for n in (1, 2, 3)]
GATES = ["SLO review", "security sign-off", "load test", "canary bake", "change board", "privacy review"]
AMOUNTS = [f"{n} million dollars" for n in ("two", "three", "four", "five", "eight", "twelve", "twenty")]
GROUPS = (("engineering",), ("finance",), ("engineering", "ops"))
PRINCIPALS = {"engineering": ["engineering"], "finance": ["finance"], "auditor": ["engineering", "finance", "ops"]}
TOKENS = {f"bench-{name}-token": name for name in PRINCIPALS}


@dataclass(frozen=True)
class World:
    """One multi-hop chain of named things (the synthetic Falcon -> Atlas -> Aurora -> region)."""

    project: str
    system: str
    store: str
    region: str
    owner: str
    gate: str
    budget: str


class _Names:
    """Unique capitalised pseudo-words ("Kresthal"), drawn without repeats."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.used = rng, set()

    def __call__(self) -> str:
        while True:
            parts = [self.rng.choice(ONSETS) + self.rng.choice(VOWELS) + self.rng.choice(CODAS)
                     for _ in range(2)]
            name = "".join(parts).capitalize()
            if name not in self.used and len(name) > 3:
                self.used.add(name)
                return name


def _facts(w: World) -> list[tuple[str, tuple[str, ...]]]:
    """Fact sentences of a world, each with the groups that may read it."""
    eng = ("engineering",)
    return [(f"Project {w.project} depends on {w.system}. Project {w.project} is owned by {w.owner}.", eng),
            (f"{w.system} stores telemetry in {w.store}.", eng),
            (f"{w.store} runs in region {w.region}.", ("engineering", "ops")),
            (f"The {w.project} release gate is {w.gate}.", eng),
            (f"{w.project} has an annual budget of {w.budget}.", ("finance",))]


def generate(n: int, seed: int = 0) -> tuple[list[dict], list[str]]:
    """``n`` passage records (the engine's JSONL fields) and search queries about their entities."""
    rng = np.random.default_rng(seed)
    names = _Names(rng)
    n_worlds = max(1, n // 20)
    worlds = [World(names(), names(), names(), str(rng.choice(REGIONS)),
                    f"{rng.choice(FIRST)} {rng.choice(LAST)}", str(rng.choice(GATES)), str(rng.choice(AMOUNTS)))
              for _ in range(n_worlds)]
    zipf = 1.0 / np.arange(1, len(WORDS) + 1)
    zipf /= zipf.sum()
    records: list[dict] = []
    start = dt.date(2024, 1, 1).toordinal()
    for i in range(n):
        w = worlds[i % n_worlds]
        facts = _facts(w)
        fact, groups = facts[i // n_worlds % len(facts)] if i < n_worlds * len(facts) else ("", GROUPS[i % 3])
        mentions = [w.project, w.system, w.store, worlds[int(rng.integers(n_worlds))].project]
        length = int(rng.integers(40, 140)) - len(fact.split())
        words = list(rng.choice(WORDS, size=max(length, 8), p=zipf))
        for at in rng.integers(0, len(words), size=3):
            words[int(at)] = mentions[int(rng.integers(len(mentions)))]
        cuts = [int(c) for c in np.cumsum(rng.integers(6, 18, size=len(words) // 6 + 1)) if c < len(words)]
        sentences = [" ".join(words[a:b]) for a, b in zip([0, *cuts], [*cuts, len(words)])]
        filler = " ".join(s[0].upper() + s[1:] + "." for s in sentences)
        trusted = bool(rng.random() > 0.03)
        records.append({
            "id": f"s{i:06d}", "title": f"{w.project} {WORDS[40 + i % 60]} notes",
            "text": f"{fact} {filler}".strip(), "groups": list(groups), "trusted": trusted,
            "source": (f"https://{'finance' if groups == ('finance',) else 'wiki'}.example.internal/{w.project.lower()}/{i}"
                       if trusted else f"upload://inbox/{i}"),
            "updated": dt.date.fromordinal(start + int(rng.integers(0, 900))).isoformat()})
    return records, _queries(worlds, rng)


def _queries(worlds: list[World], rng: np.random.Generator, n: int = 200) -> list[str]:
    """Entity lookups, entity + relation, and full questions, like the agent's and a user's searches."""
    shapes = ("{p}", "{s}", "{p} region", "{s} telemetry store", "Which region stores telemetry for Project {p}?",
              "Who owns Project {p}?", "What is the {p} release gate?", "{st} region")
    out = []
    for i in range(n):
        w = worlds[int(rng.integers(len(worlds)))]
        out.append(shapes[i % len(shapes)].format(p=w.project, s=w.system, st=w.store))
    return out


def write(root: Path, n: int, seed: int = 0) -> Path:
    """Write a corpus of ``n`` passages under ``root``; returns the ``corpus.jsonl`` path."""
    root.mkdir(parents=True, exist_ok=True)
    records, queries = generate(n, seed)
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    access = {"principals": {p: {"groups": g} for p, g in PRINCIPALS.items()}, "tokens": TOKENS}
    (root / "access.yaml").write_text(json.dumps(access, indent=1), encoding="utf-8")
    (root / "allowlist.yaml").write_text(json.dumps({"sources": ["https://wiki.example.internal/",
                                                                 "https://finance.example.internal/"]}), encoding="utf-8")
    (root / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    # The passages state facts in the Falcon corpus's vocabulary, and are served as it is.
    shutil.copy(DEMO_CORPUS / "relations.yaml", root / "relations.yaml")
    shutil.copy(DEMO_CORPUS / "corpus.yaml", root / "corpus.yaml")
    return corpus


def token_for(principal: str) -> str:
    """The bearer token :func:`write` issues a principal."""
    return next(t for t, name in TOKENS.items() if name == principal)
