"""Convert HippoRAG's MuSiQue sample into the benchmark's generic JSONL format.

Source: MuSiQue (Trivedi et al., 2022; CC BY 4.0) as redistributed by the HippoRAG repository
(OSU-NLP-Group/HippoRAG, MIT): ``questions.json`` (questions with their 20 candidate
``paragraphs``), ``corpus.json`` (the pooled passages) and ``openie_triples.json`` (GPT-3.5
OpenIE triples, aligned with ``corpus.json``).

Supporting paragraphs are mapped to corpus ids by exact ``(title, text)``: titles alone are
ambiguous (85 titles name several passages), the pair is unique. The gold decompositions are
*not* written out, so no strategy reading the converted files can see them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

DEFAULT_SOURCE = Path(__file__).resolve().parent / "data" / "musique"
DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "musique"
#: A benchmark corpus has no ACLs or provenance: every passage is public, trusted and equally old,
#: so the converted corpus serves as written (``hoprag serve --corpus …/corpus.jsonl``).
NEUTRAL = {"groups": ["public"], "trusted": True, "source": "bench:musique", "updated": "2000-01-01"}
ACCESS = """# Written by `hoprag bench convert-musique`: one reader of the public benchmark corpus.
principals:
  reader: {groups: [public]}
tokens:
  bench-reader-token: reader
users:
  user: reader
"""


def _clean_triples(raw: Iterable[Any]) -> list[list[str]]:
    """Keep well-formed ``[s, r, o]`` string triples; OpenIE emits ~1% of 2- or 4+-element lists."""
    return [[x.strip() for x in t] for t in raw
            if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t)]


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def convert(source: Path = DEFAULT_SOURCE, out: Path = DEFAULT_OUT, limit: int | None = None,
            triples: bool = True) -> tuple[Path, Path]:
    """Write ``corpus.jsonl`` and ``questions.jsonl`` under ``out``; return their paths.

    ``limit`` keeps the first questions and only their candidate paragraphs (a CI-sized slice);
    ``triples=False`` omits the OpenIE triples, to benchmark the extraction fallback.
    """
    questions = json.loads((source / "questions.json").read_text(encoding="utf-8"))[:limit]
    passages = json.loads((source / "corpus.json").read_text(encoding="utf-8"))
    openie = json.loads((source / "openie_triples.json").read_text(encoding="utf-8"))
    if len(openie) != len(passages):
        raise ValueError(f"openie_triples.json has {len(openie)} records, corpus.json {len(passages)}")
    ids = {(p["title"], p["text"]): f"musique-{i:04d}" for i, p in enumerate(passages)}
    needed = {ids[(p["title"], p["paragraph_text"])] for q in questions for p in q["paragraphs"]}
    docs = []
    for i, (p, o) in enumerate(zip(passages, openie)):
        doc_id = f"musique-{i:04d}"
        if limit is not None and doc_id not in needed:
            continue
        record = {"id": doc_id, "title": p["title"], "text": p["text"], **NEUTRAL}
        if triples:
            record["triples"] = _clean_triples(o["extracted_triples"])
        docs.append(record)
    qs = [{"id": q["id"], "question": q["question"], "answer": q["answer"],
           "supporting_ids": [ids[(p["title"], p["paragraph_text"])] for p in q["paragraphs"] if p["is_supporting"]]}
          for q in questions]
    corpus_path, questions_path = out / "corpus.jsonl", out / "questions.jsonl"
    _write_jsonl(corpus_path, docs)
    _write_jsonl(questions_path, qs)
    (out / "access.yaml").write_text(ACCESS, encoding="utf-8")
    return corpus_path, questions_path
