"""``hoprag bench docs``: what a person reads, asking a documentation folder questions.

Everything goes through the product's front doors, as a user runs it: ``hoprag index`` builds a
store of the folder, one ``hoprag serve --transport http`` serves it, and each question is asked
with ``hoprag ask --json`` (the ADK agent, offline model, over that server) and searched with
``hoprag search --json``. ``--against`` runs another checkout of hoprag (say the previous commit,
``git worktree add``) the same way, so the two are compared side by side in one run.

Questions are JSONL, one object per line (the format hidden sets use; ``eval_sets/DOCS_QUESTIONS.md``):
``{"id", "question", "answer": [expected words], "pages": [document ids], "kind", "split"}``;
``pages: []`` marks a question the folder does not answer.

Metrics, per checkout, over the questions chosen (``--split``):

- **answer line**: an answerable question is right when every expected word or phrase is in the
  answer (case- and accent-insensitive, punctuation ignored) and it did not abstain; an unanswerable
  one when it abstained;
- **first source**: the first cited passage belongs to a page of ``pages``;
- **search doc@1 / doc@5**: a page of ``pages`` among the top 1 / 5 of ``hoprag search -k 5``;
- **reads / question**: searches plus fetches the agent made (all questions, and single-page ones);
- **abstention precision / recall**: of the abstentions, how many were on unanswerable questions,
  and of the unanswerable questions, how many were abstained on;
- **alarms**: answers that reported instructions found inside a document.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import typer

from .docs_questions import load_questions as checked
from .httpload import ServerProcess

GROUP, PRINCIPAL, TOKEN = "public", "public", "bench-docs-token"
ALARM = "Instructions found inside"


@dataclass(frozen=True)
class DocsQuestion:
    id: str
    question: str
    answer: tuple[str, ...]
    pages: tuple[str, ...]
    kind: str
    split: str


def load_questions(path: Path) -> list[DocsQuestion]:
    """Read a docs question file, checked by the one reader of the format
    (:func:`benchmarks.docs_questions.load_questions`): a bad line is one error naming file, line and field."""
    return [DocsQuestion(r["id"], r["question"], tuple(r["answer"]), tuple(r["pages"]), r["kind"], r["split"])
            for r in checked(path)]


def normalise(text: str) -> str:
    """Lower case, accents folded, punctuation to spaces, single spaces."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def says(answer: str, expected: Sequence[str]) -> bool:
    """Every expected word or phrase is in the answer (as whole words, punctuation ignored). A phrase of
    punctuation only -- a marker or an operator, "`???+`", "`===+`", "`->`" -- has no words: it is matched as
    written, standing apart (quoted, in code or between spaces), so "???" is not said by "???+"."""
    said, plain = f" {normalise(answer)} ", answer.lower()
    return all(f" {normalise(e)} " in said if normalise(e) else
               re.search(rf"(?:^|[\s`'\"(\[])({re.escape(e.strip())})(?=$|[\s`'\")\],;.:!?])", plain) is not None
               for e in expected)


def document_of(passage_id: str) -> str:
    """A passage id's document (``page.md#3`` -> ``page.md``; ``#`` never occurs in a document id)."""
    return passage_id.split("#", 1)[0]


class Checkout:
    """One checkout of hoprag, driven through its CLI and its HTTP server."""

    def __init__(self, name: str, tree: Path, work: Path, embedder: str | None = None):
        """``embedder``: what ``hoprag index`` embeds with (``HOPRAG_EMBEDDER``; ``None``: its default)."""
        self.name, self.tree, self.work = name, tree, work
        self.env = {**os.environ, "PYTHONPATH": str(tree), "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false"}
        for key in ("HOPRAG_MODEL", "HOPRAG_MCP_URL", "HOPRAG_STORE", "HOPRAG_CORPUS", "HOPRAG_ACCESS"):
            self.env.pop(key, None)
        if embedder:
            self.env["HOPRAG_EMBEDDER"] = embedder
        self.store, self.access = work / "docs.db", work / "access.yaml"

    def cli(self, *args: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", "from hoprag_cli.main import main; main()", *args],
                              capture_output=True, text=True, cwd=self.tree, env={**self.env, **env}, timeout=timeout)

    def index(self, corpus: Path) -> str:
        self.access.write_text(json.dumps({"principals": {PRINCIPAL: {"groups": [GROUP]}},
                                           "tokens": {TOKEN: PRINCIPAL}, "users": {PRINCIPAL: PRINCIPAL}}))
        done = self.cli("index", str(corpus.resolve()), "--store", str(self.store), "--groups", GROUP,
                        "--access", str(self.access), "--quiet")
        summary = [line for line in done.stdout.splitlines() if line.strip()]
        if not self.store.exists():
            raise RuntimeError(f"{self.name}: hoprag index made no store: {done.stderr[-2000:]}")
        vectors = [line for line in summary if line.startswith("vectors:")]
        return " ".join(summary[:1] + vectors) if summary else f"exit {done.returncode}"

    def search(self, question: str) -> list[str]:
        done = self.cli("search", question, "-k", "5", "--json", "--store", str(self.store), "--access",
                        str(self.access), "--as", PRINCIPAL)
        if done.returncode:
            return []
        return [r.get("document") or document_of(r["id"]) for r in json.loads(done.stdout)["results"]]

    def ask(self, question: str, url: str) -> dict[str, Any]:
        done = self.cli("ask", question, "--json", "--store", str(self.store), "--access", str(self.access),
                        "--as", PRINCIPAL, HOPRAG_MCP_URL=f"{url}/mcp")
        if done.returncode:
            return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
        return json.loads(done.stdout)


def score(questions: Sequence[DocsQuestion], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The metrics of one checkout over ``questions`` (``rows``: per question, its search and ask)."""
    n = len(questions)
    right = first = at1 = at5 = abstained_ok = abstentions = unanswerable = alarms = errors = 0
    reads, single_reads = [], []
    by_kind: dict[str, list[int]] = {}
    found_by_kind: dict[str, list[int]] = {}  # the answering page in the top 5, per kind
    for q, row in zip(questions, rows):
        report, found = row["ask"], row["search"]
        if "error" in report:
            errors += 1
        answer = report.get("answer") or ""
        abstained = bool(report.get("abstained", "error" in report))
        ok = abstained if not q.pages else (not abstained and says(answer, q.answer))
        right += ok
        by_kind.setdefault(q.kind, [0, 0])[0] += ok
        by_kind[q.kind][1] += 1
        cited = [document_of(c.get("doc_id", "")) for c in report.get("citations") or []]
        first += bool(q.pages) and bool(cited) and cited[0] in q.pages
        at1 += bool(set(found[:1]) & set(q.pages))
        at5 += bool(set(found[:5]) & set(q.pages))
        if q.pages:
            found_by_kind.setdefault(q.kind, [0, 0])[0] += bool(set(found[:5]) & set(q.pages))
            found_by_kind[q.kind][1] += 1
        spent = int(report.get("searches", 0)) + int(report.get("fetches", 0))
        reads.append(spent)
        if q.kind in ("direct", "paraphrase"):
            single_reads.append(spent)
        abstentions += abstained
        unanswerable += not q.pages
        abstained_ok += abstained and not q.pages
        alarms += ALARM in (report.get("response") or "")
    answerable = max(n - unanswerable, 1)
    return {"questions": n, "answer_line": round(right / n, 3),
            "by_kind": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_kind.items())},
            "doc@5_by_kind": {k: f"{v[0]}/{v[1]}" for k, v in sorted(found_by_kind.items())},
            "first_source": round(first / answerable, 3), "doc@1": round(at1 / answerable, 3),
            "doc@5": round(at5 / answerable, 3), "reads_per_question": round(sum(reads) / n, 2),
            "reads_single_page": round(sum(single_reads) / max(len(single_reads), 1), 2),
            "abstention_precision": round(abstained_ok / abstentions, 3) if abstentions else None,
            "abstention_recall": round(abstained_ok / unanswerable, 3) if unanswerable else None,
            "alarms": alarms, "errors": errors}


def run_checkout(checkout: Checkout, corpus: Path, questions: Sequence[DocsQuestion],
                 progress: bool = True) -> dict[str, Any]:
    start = time.perf_counter()
    summary = checkout.index(corpus)
    argv = [sys.executable, "-m", "mcp_server", "--transport", "http", "--port", "0", "--store", str(checkout.store),
            "--access", str(checkout.access)]
    rows = []
    with ServerProcess(argv, cwd=checkout.tree) as server:
        for i, q in enumerate(questions, start=1):
            rows.append({"id": q.id, "search": checkout.search(q.question), "ask": checkout.ask(q.question, server.base)})
            if progress:
                print(f"{checkout.name}: {i}/{len(questions)}", file=sys.stderr, end="\r")
    metrics = score(questions, rows)
    return {"checkout": str(checkout.tree), "index": summary, "seconds": round(time.perf_counter() - start, 1),
            "metrics": metrics, "answers": [{"id": r["id"], "answer": r["ask"].get("answer"),
                                             "abstained": r["ask"].get("abstained"),
                                             "cited": [c.get("doc_id") for c in r["ask"].get("citations") or []],
                                             "searches": r["ask"].get("searches"), "search_top5": r["search"],
                                             **({"error": r["ask"]["error"]} if "error" in r["ask"] else {})}
                                            for r in rows]}


def table(results: dict[str, dict[str, Any]]) -> str:
    keys = ("answer_line", "first_source", "doc@1", "doc@5", "reads_per_question", "reads_single_page",
            "abstention_precision", "abstention_recall", "alarms", "errors")
    lines = ["| metric | " + " | ".join(results) + " |", "|---" * (len(results) + 1) + "|"]
    for key in keys:
        lines.append(f"| {key} | " + " | ".join(str(r["metrics"][key]) for r in results.values()) + " |")
    lines.append("| by kind | " + " | ".join(", ".join(f"{k} {v}" for k, v in r["metrics"]["by_kind"].items())
                                              for r in results.values()) + " |")
    lines.append("| doc@5 by kind | " + " | ".join(", ".join(f"{k} {v}" for k, v in r["metrics"]["doc@5_by_kind"].items())
                                                   for r in results.values()) + " |")
    return "\n".join(lines)


def docs(
    corpus: Path = typer.Option(..., "--corpus", help="A documentation folder, indexed as it is with `hoprag index`."),
    questions: Path = typer.Option(..., "--questions", help="Questions JSONL (eval_sets/DOCS_QUESTIONS.md)."),
    split: str = typer.Option("all", "--split", help="Only questions of this split (dev, holdout), or all."),
    against: Optional[Path] = typer.Option(None, "--against", help="Another checkout of hoprag (e.g. the previous "
                                           "commit, `git worktree add`), run the same way side by side."),
    embedders: str = typer.Option("", "--embedders", help="Comma-separated embedders (none, minilm, e5-small, ...) "
                                  "to index with, each run side by side [default: hoprag index's own default]."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the full JSON report (every answer) here."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report instead of the table."),
) -> dict[str, Any]:
    """Answer-line accuracy, first source, search doc@1/@5, reads per question, abstention precision and
    recall, and alarms, asking a documentation folder through `hoprag index`, `serve`, `search` and `ask`."""
    try:
        chosen = [q for q in load_questions(questions) if split == "all" or q.split == split]
        if not corpus.is_dir():
            raise ValueError(f"{corpus}: not a folder: pass --corpus DIR, the documentation folder to index")
        if not chosen:
            raise ValueError(f"{questions}: no question in split {split!r}")
    except (OSError, ValueError) as exc:
        typer.secho(str(exc), err=True, fg=typer.colors.RED)
        raise typer.Exit(1)
    trees = {"this checkout": Path(__file__).resolve().parent.parent,
             **({"against": against.resolve()} if against else {})}
    models = [e.strip() for e in embedders.split(",") if e.strip()] or [None]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, tree in trees.items():
            for model in models:
                label = f"{name} ({model})" if model else name
                work = Path(tmp) / label.replace(" ", "-").replace("(", "").replace(")", "")
                work.mkdir()
                results[label] = run_checkout(Checkout(label, tree, work, model), corpus, chosen)
    report = {"corpus": str(corpus), "questions": str(questions), "split": split, "results": results}
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else table(results))
    return report
