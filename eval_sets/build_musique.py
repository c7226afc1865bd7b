"""Build the MuSiQue eval set and its corpus (``eval_sets/corpora/musique``) from the benchmark's data.

Questions come from the held-out half of the 100-question subset (questions 50-99; the
development half, 0-49, is where the open mode was developed): the first five 2- and 3-hop questions and
every 4-hop one (two), plus the next three questions with the gold passage that states the answer made
unreadable to the caller (group ``restricted``). The corpus holds every candidate paragraph of
those questions with the same ids as ``hoprag bench convert-musique``. The gold is written into
each case's reference response for :mod:`eval_sets.metrics` -- never into anything the agent reads.

    python -m eval_sets.build_musique
"""

from __future__ import annotations

import json
from pathlib import Path

from eval_sets import eval_case
from benchmarks.musique import DEFAULT_SOURCE, _clean_triples
from benchmarks.retrieval import normalise

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "corpora" / "musique"
EVALSET = ROOT / "musique.evalset.json"
HELD_OUT = slice(50, 100)
PER_HOPS, UNREADABLE = {2: 5, 3: 5, 4: 4}, 3  # the held-out half has only two 4-hop questions
PRINCIPAL = "reader"


def reference(answer: str, supporting: list[str], hidden: list[str]) -> str:
    """The reference response: the gold, one ``key: value`` line each (read by the metrics only)."""
    return "\n".join([f"answer: {answer}", f"supporting: {' '.join(supporting)}", f"hops: {len(supporting)}",
                      f"unreadable: {' '.join(hidden) or '-'}"])


def build(source: Path = DEFAULT_SOURCE) -> None:
    questions = json.loads((source / "questions.json").read_text(encoding="utf-8"))[HELD_OUT]
    passages = json.loads((source / "corpus.json").read_text(encoding="utf-8"))
    openie = json.loads((source / "openie_triples.json").read_text(encoding="utf-8"))
    ids = {(p["title"], p["text"]): f"musique-{i:04d}" for i, p in enumerate(passages)}
    chosen: list[tuple[dict, list[str]]] = []
    taken = {2: 0, 3: 0, 4: 0}
    hidden_left = UNREADABLE
    for q in questions:
        gold = [p for p in q["paragraphs"] if p["is_supporting"]]
        hops = len(gold)
        if taken.get(hops, 0) < PER_HOPS.get(hops, 0):
            taken[hops] += 1
            chosen.append((q, []))
        elif hidden_left:
            states = [p for p in gold if normalise(q["answer"]) in normalise(p["paragraph_text"])] or gold[-1:]
            chosen.append((q, [ids[(states[0]["title"], states[0]["paragraph_text"])]]))
            hidden_left -= 1
    hidden = {h for _, hs in chosen for h in hs}
    needed = {ids[(p["title"], p["paragraph_text"])] for q, _ in chosen for p in q["paragraphs"]}
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i, (p, o) in enumerate(zip(passages, openie)):
            doc_id = f"musique-{i:04d}"
            if doc_id in needed:
                f.write(json.dumps({"id": doc_id, "title": p["title"], "text": p["text"],
                                    "triples": _clean_triples(o["extracted_triples"]),
                                    "groups": ["restricted" if doc_id in hidden else "public"], "trusted": True,
                                    "source": "bench:musique", "updated": "2000-01-01"}, ensure_ascii=False) + "\n")
    (OUT / "access.yaml").write_text(
        "# Eval corpus access file (MuSiQue subset, CC BY 4.0). DEMO CREDENTIALS ONLY.\n"
        f"principals:\n  {PRINCIPAL}: {{groups: [public]}}\n  auditor: {{groups: [public, restricted]}}\n"
        f"tokens:\n  demo-reader-token: {PRINCIPAL}\n  demo-auditor-token: auditor\n"
        f"users:\n  user: {PRINCIPAL}\n  test_user: {PRINCIPAL}\n", encoding="utf-8")
    cases = []
    for q, hs in chosen:
        supporting = [ids[(p["title"], p["paragraph_text"])] for p in q["paragraphs"] if p["is_supporting"]]
        eval_id = f"{q['id']}{'_unreadable' if hs else ''}"
        cases.append(eval_case(eval_id, q["question"], reference(q["answer"], supporting, hs), PRINCIPAL))
    EVALSET.write_text(json.dumps({
        "eval_set_id": "musique",
        "name": "MuSiQue held-out subset: 2-, 3- and 4-hop prose questions, 3 with an unreadable gold passage "
                "(run with HOPRAG_CORPUS=eval_sets/corpora/musique/corpus.jsonl and eval_sets/musique.test_config.json)",
        "description": "Open mode on real multi-hop text; references hold the gold for eval_sets.metrics.",
        "eval_cases": cases}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    build()
