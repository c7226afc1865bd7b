"""``hoprag bench chapter``: the chapter's measurements (sections 15.4 and 15.8) and the agent's real cost.

Reproduces the one-shot k sweep against the agentic loop (figure 15.2), the loop's budget sweep
and its knee, the token table of long context / RAG / CAG with the lost-in-the-middle curve
(figure 15.4), and runs the ADK agent (``agents.hoprag_agent.run.ask``, offline policy model
unless ``HOPRAG_MODEL`` / ``GOOGLE_API_KEY`` say otherwise) on the same questions, so its
searches, documents, prompt tokens and model calls sit next to the chapter's loop.

Two document counts are reported for the agent: ``docs_read`` (distinct trusted documents that
entered its evidence, what ``hoprag ask`` reports) and ``docs_returned`` (every search hit,
repeats included -- how the chapter's loop counts ``docs_read``).
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import typer
import yaml
from tqdm import tqdm

from hoprag.access import load_access
from benchmarks.chapter.costs import context_costs, utilization
from hoprag.engine import Engine
from hoprag.settings import DEMO_CORPUS
from benchmarks.chapter.sweeps import budget_sweep, k_sweep, knee
from hoprag.questions import Question, load_questions, score
from benchmarks.chapter.loops import agentic, one_shot

OUT = Path(__file__).resolve().parent / "out" / "chapter"
#: The numbers the chapter prints (sections 15.4 and 15.8), to set ours against.
CHAPTER = {
    "k_sweep": {1: (0.67, 1.00), 2: (0.67, 2.00), 3: (0.67, 3.00), 4: (0.67, 4.00), 5: (0.83, 5.00),
                6: (0.83, 5.50), 7: (1.00, 5.83), 8: (1.00, 6.00)},
    "loop": {"accuracy": 1.00, "mean_docs": 3.67, "mean_searches": 1.83},
    "budget_sweep": {1: (0.67, 1.00), 2: (0.83, 1.50), 3: (1.00, 1.83), 4: (1.00, 1.83)},
    "knee": 3,
    "tokens": {"authorized_docs": 8, "corpus_tokens": 66, "long_context": 73, "rag": 36, "cag_per_query": 7},
}
GOAL = {"accuracy": 1.00, "searches": 1.5, "docs_read": 2.5}
_SEARCH = re.compile(r"^search\(.*\) -> (\[[^\]]*\])")


def _principals(path: Path) -> dict[str, str]:
    """Question id -> the principal who asks it (``load_questions`` keeps only the groups)."""
    return {q["id"]: q["principal"] for q in yaml.safe_load(path.read_text(encoding="utf-8"))["questions"]}


def frontier(engine: Engine, questions: Sequence[Question]) -> dict[str, Any]:
    """Section 15.4: per-question table, the k sweep, the loop's point, the budget sweep and its knee."""
    rows = []
    for q in questions:
        o = one_shot(engine, q.text, q.groups, q.start, q.goal, k=3)
        a = agentic(engine, q.text, q.groups, q.start, q.goal)
        rows.append({"id": q.id, "one_shot_k3": o.answer, "one_shot_ok": score(o.answer, q.expected),
                     "agentic": a.answer, "agentic_ok": score(a.answer, q.expected),
                     "searches": a.searches, "docs_read": a.docs_read})
    ks = k_sweep(engine, questions)
    loop = budget_sweep(engine, questions, (4,))[4]
    sweep = budget_sweep(engine, questions)
    return {
        "questions": rows,
        "k_sweep": {k: {"accuracy": round(p.accuracy, 2), "mean_docs": round(p.mean_docs, 2)} for k, p in ks.items()},
        "loop": {"accuracy": round(loop.accuracy, 2), "mean_docs": round(loop.mean_docs, 2),
                 "mean_searches": round(loop.mean_calls, 2)},
        "budget_sweep": {b: {"accuracy": round(p.accuracy, 2), "mean_searches": round(p.mean_calls, 2)}
                         for b, p in sweep.items()},
        "knee": knee(sweep),
    }


def tokens(engine: Engine, question: Question) -> dict[str, Any]:
    """Section 15.8: prompt tokens per query for long context, RAG k=3 and CAG, and the utilization curve."""
    authorized = [d for d in engine.docs if d.groups & question.groups and engine.provenance.admits(d)]
    retrieved = [d for d in engine.search_docs(question.text, question.groups, 3) if engine.provenance.admits(d)]
    c = context_costs(authorized, question.text, retrieved)
    n = len(authorized)
    return {"question": question.id, "authorized_docs": c.authorized_docs, "corpus_tokens": c.corpus_tokens,
            "question_tokens": c.question_tokens, "long_context": c.long_context, "rag": c.rag,
            "rag_ids": list(c.rag_ids), "cag_prefill": c.cag_prefill, "cag_per_query": c.cag_per_query,
            "utilization": [round(utilization(p, n), 2) for p in range(n)]}


def _returned(trace: Sequence[str]) -> int:
    """Search hits in an agent trace, repeats included (the chapter loop's ``docs_read``)."""
    return sum(len(ast.literal_eval(m.group(1))) for line in trace if (m := _SEARCH.match(line)))


async def _ask_all(questions: Sequence[Question], principals: dict[str, str], corpus: Path,
                   access: Path) -> list[dict[str, Any]]:
    from agents.hoprag_agent.run import ask

    rows = []
    for q in tqdm(questions, desc="agent questions", file=sys.stderr, leave=False):
        start = time.perf_counter()
        r = await ask(q.text, principals[q.id], corpus, access)
        rows.append({"id": q.id, "answer": r["answer"], "correct": score(r["answer"], q.expected),
                     "searches": r["searches"], "docs_read": r["docs_read"], "docs_returned": _returned(r["trace"]),
                     "prompt_tokens": r["prompt_tokens"], "model_calls": r["model_calls"],
                     "tool_calls": len(r["tool_calls"]), "seconds": round(time.perf_counter() - start, 2)})
    return rows


def agent_cost(questions: Sequence[Question], principals: dict[str, str], corpus: Path, access: Path) -> dict[str, Any]:
    """The ADK agent on every question: per-question cost, means, accuracy, and the goal check."""
    rows = asyncio.run(_ask_all(questions, principals, corpus, access))
    n = len(rows)
    means = {key: round(sum(r[key] for r in rows) / n, 2)
             for key in ("searches", "docs_read", "docs_returned", "prompt_tokens", "model_calls", "tool_calls", "seconds")}
    accuracy = round(sum(r["correct"] for r in rows) / n, 2)
    goal = {"accuracy": accuracy >= GOAL["accuracy"], "searches": means["searches"] <= GOAL["searches"],
            "docs_read": means["docs_read"] <= GOAL["docs_read"]}
    from agents.hoprag_agent.config import resolve

    return {"model": resolve().model, "questions": rows, "mean": means, "accuracy": accuracy,
            "goal": GOAL, "goal_met": goal | {"all": all(goal.values())}}


def _plots(report: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f, paths = report["frontier"], []
    # Figure 15.2, with the ADK agent as a second point.
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ks = sorted(f["k_sweep"], key=int)
    xs, ys = [f["k_sweep"][k]["mean_docs"] for k in ks], [f["k_sweep"][k]["accuracy"] for k in ks]
    ax.plot(xs, ys, "-o", color="#2a7f9e", label="one-shot RAG (sweep k)")
    for k, x, y in zip(ks, xs, ys):
        ax.annotate(f"k={k}", (x, y), textcoords="offset points", xytext=(4, -9), fontsize=8)
    loop = f["loop"]
    ax.scatter([loop["mean_docs"]], [loop["accuracy"]], marker="*", s=260, color="#b13f3f", zorder=5,
               label="agentic loop (chapter)")
    if "agent" in report:
        a = report["agent"]
        ax.scatter([a["mean"]["docs_read"]], [a["accuracy"]], marker="D", s=70, color="#4b7f52", zorder=5,
                   label="ADK agent (distinct docs read)")
        ax.scatter([a["mean"]["docs_returned"]], [a["accuracy"]], marker="D", s=70, facecolors="none",
                   edgecolors="#4b7f52", zorder=5, label="ADK agent (search hits)")
    ax.set_xlabel("mean documents read into context")
    ax.set_ylabel("supported-answer accuracy")
    ax.set_ylim(0.6, 1.03)
    ax.legend(loc="center left", fontsize=8)
    fig.tight_layout()
    paths.append(out / "fig15_2_frontier.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    # Budget sweep and its knee.
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    bs = sorted(f["budget_sweep"], key=int)
    ax.plot(bs, [f["budget_sweep"][b]["accuracy"] for b in bs], "-o", color="#b13f3f", label="accuracy")
    ax.axvline(f["knee"], color="grey", ls=":", lw=1)
    ax.annotate(f"knee B={f['knee']}", (f["knee"], 0.7), textcoords="offset points", xytext=(4, 0), fontsize=9)
    ax.set_xticks(bs)
    ax.set_xlabel("search budget B")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0.6, 1.03)
    twin = ax.twinx()
    twin.plot(bs, [f["budget_sweep"][b]["mean_searches"] for b in bs], "--s", color="#2a7f9e", label="mean searches")
    twin.set_ylabel("mean searches / question")
    fig.legend(loc="lower right", fontsize=8, bbox_to_anchor=(0.85, 0.2))
    fig.tight_layout()
    paths.append(out / "budget_sweep.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    # Figure 15.4: both panels.
    t = report["tokens"]
    fig, (axl, axr) = plt.subplots(1, 2, figsize=(7.6, 3.2))
    vals = [t["rag"], t["long_context"], t["cag_per_query"]]
    axl.bar(["RAG k=3", "long ctx", "CAG amort."], vals, color=["#2a7f9e", "#b7791f", "#4b7f52"])
    axl.set_ylabel("prompt tokens / query")
    for i, v in enumerate(vals):
        axl.text(i, v + 1, str(v), ha="center", fontsize=9)
    axr.plot(range(len(t["utilization"])), t["utilization"], "-o", color="#b13f3f")
    axr.set_xlabel("gold-document position in window")
    axr.set_ylabel("utilization (illustrative)")
    axr.set_ylim(0, 1.05)
    fig.tight_layout()
    paths.append(out / "fig15_4_tokens.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    if "agent" in report:
        paths.append(_plot_agent(report, out / "agent_cost.png"))
    return paths


def _plot_agent(report: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt

    loop = {r["id"]: r for r in report["frontier"]["questions"]}
    agent = report["agent"]
    ids = [r["id"] for r in agent["questions"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.4))
    x = range(len(ids))
    mean = lambda key: sum(loop[q][key] for q in ids) / len(ids)  # noqa: E731
    w = 0.38
    left.bar([i - w / 2 for i in x], [loop[q]["searches"] for q in ids], w, color="#b13f3f",
             label=f"chapter loop (mean {mean('searches'):.2f})")
    left.bar([i + w / 2 for i in x], [r["searches"] for r in agent["questions"]], w, color="#4b7f52",
             label=f"ADK agent (mean {agent['mean']['searches']:.2f})")
    left.set_ylabel("searches / question")
    w = 0.27
    right.bar([i - w for i in x], [loop[q]["docs_read"] for q in ids], w, color="#b13f3f",
              label=f"chapter loop, hits (mean {mean('docs_read'):.2f})")
    right.bar(list(x), [r["docs_returned"] for r in agent["questions"]], w, color="white", edgecolor="#4b7f52",
              hatch="//", label=f"ADK agent, hits (mean {agent['mean']['docs_returned']:.2f})")
    right.bar([i + w for i in x], [r["docs_read"] for r in agent["questions"]], w, color="#4b7f52",
              label=f"ADK agent, distinct read (mean {agent['mean']['docs_read']:.2f})")
    right.set_ylabel("documents / question")
    for ax in (left, right):
        ax.set_xticks(list(x), ids)
        ax.set_ylim(0, 1.45 * ax.get_ylim()[1])
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"ADK agent ({agent['model']}): {agent['mean']['prompt_tokens']:.0f} prompt tokens and "
                 f"{agent['mean']['model_calls']:.1f} model calls per question", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def matches_chapter(report: dict[str, Any]) -> dict[str, bool]:
    """Whether each measurement reproduces the number the chapter prints."""
    f, t = report["frontier"], report["tokens"]
    return {
        "k_sweep": all((f["k_sweep"][k]["accuracy"], f["k_sweep"][k]["mean_docs"]) == v for k, v in CHAPTER["k_sweep"].items()),
        "loop": f["loop"] == CHAPTER["loop"],
        "budget_sweep": all((f["budget_sweep"][b]["accuracy"], f["budget_sweep"][b]["mean_searches"]) == v
                            for b, v in CHAPTER["budget_sweep"].items()),
        "knee": f["knee"] == CHAPTER["knee"],
        "tokens": all(t[key] == v for key, v in CHAPTER["tokens"].items()),
    }


def chapter(
    corpus: Path = typer.Option(DEMO_CORPUS, "--corpus", help="Corpus directory with questions.yaml and access.yaml."),
    access: Optional[Path] = typer.Option(None, "--access", help="Access file [default: access.yaml in the corpus]."),
    token_question: str = typer.Option("q3", "--token-question", help="Question id for the token table (the chapter's: q3)."),
    agent: bool = typer.Option(True, "--agent/--no-agent", help="Also run the ADK agent on every question."),
    out: Path = typer.Option(OUT, "--out", help="Directory for chapter.json and the PNGs."),
    figures: Optional[Path] = typer.Option(None, "--figures", help="Also copy the PNGs here (benchmarks/figures for the docs)."),
) -> dict[str, Any]:
    """Figure 15.2 (k sweep vs the loop), the budget knee, figure 15.4 (tokens), and the ADK agent's real cost."""
    access = access or corpus / "access.yaml"
    engine = Engine.load(corpus, ranker="overlap")
    questions = load_questions(corpus / "questions.yaml", load_access(access))
    chosen = next((q for q in questions if q.id == token_question), None)
    if chosen is None:
        raise typer.BadParameter(f"no question {token_question!r} in {corpus / 'questions.yaml'}", param_hint="--token-question")
    report: dict[str, Any] = {"corpus": str(corpus), "frontier": frontier(engine, questions), "tokens": tokens(engine, chosen)}
    if agent:
        report["agent"] = agent_cost(questions, _principals(corpus / "questions.yaml"), corpus, access)
    report["matches_chapter"] = matches_chapter(report)
    report["chapter"] = CHAPTER
    out.mkdir(parents=True, exist_ok=True)
    (out / "chapter.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    for path in _plots(report, out):
        if figures is not None:
            figures.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, figures / path.name)
    typer.echo(summary(report))
    return report


def summary(report: dict[str, Any]) -> str:
    f, t = report["frontier"], report["tokens"]
    lines = [f"one_shot k={k}: accuracy={p['accuracy']:.2f}  mean_docs={p['mean_docs']:.2f}" for k, p in f["k_sweep"].items()]
    lines.append(f"agentic loop: accuracy={f['loop']['accuracy']:.2f}  mean_docs={f['loop']['mean_docs']:.2f}  "
                 f"mean_searches={f['loop']['mean_searches']:.2f}")
    lines += [f"budget B={b}: accuracy={p['accuracy']:.2f}  mean_searches={p['mean_searches']:.2f}"
              for b, p in f["budget_sweep"].items()]
    lines.append(f"knee: B={f['knee']}")
    lines.append(f"tokens ({t['question']}): long context {t['long_context']}, RAG k=3 {t['rag']} {t['rag_ids']}, "
                 f"CAG {t['cag_prefill']} prefill + {t['cag_per_query']}/query")
    if "agent" in report:
        a = report["agent"]
        lines.append(f"ADK agent ({a['model']}): accuracy={a['accuracy']:.2f}  searches={a['mean']['searches']:.2f}  "
                     f"docs_read={a['mean']['docs_read']:.2f} (hits {a['mean']['docs_returned']:.2f})  "
                     f"prompt_tokens={a['mean']['prompt_tokens']:.0f}  model_calls={a['mean']['model_calls']:.2f}  "
                     f"goal met: {a['goal_met']['all']}")
    lines.append(f"matches the chapter: {report['matches_chapter']}")
    return "\n".join(lines)
