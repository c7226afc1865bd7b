"""The ``hoprag`` command line: the front door to the engine, the server, the agent and the benchmarks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from hoprag import settings
from hoprag.access import Access, AccessError, load_access
from hoprag.corpus import CorpusError, load_corpus
from hoprag.engine import Engine
from hoprag.ingest import EXAMPLES, MAX_FILE_BYTES, Report, by_reason
from hoprag.search import RANKERS
from mcp_server import tools
from mcp_server.run import EMBEDDERS, serve

if TYPE_CHECKING:
    from hoprag.embed import Embedder
    from hoprag.store import Store

app = typer.Typer(help=__doc__, no_args_is_help=True, add_completion=False)

CorpusOpt = typer.Option(None, "--corpus", help="Corpus directory or .jsonl file [env HOPRAG_CORPUS; default: the Falcon corpus].")
AccessOpt = typer.Option(None, "--access", help="Operator access file [env HOPRAG_ACCESS; default: access.yaml beside "
                         "the store, else in or beside the corpus; none there: single-user mode, you read everything].")
StoreOpt = typer.Option(None, "--store", help="Store built by `hoprag index`: a file, or a postgresql:// URL (served instead of the corpus) [env HOPRAG_STORE].")
AsOpt = typer.Option(None, "--as", help="Act as this principal of the access file, or an ADK user id its "
                     f"'users:' maps to one [default: {settings.DEFAULT_USER}, ADK's default user; no access file: "
                     "ignored, you read everything].")
RankerOpt = typer.Option(None, "--ranker", help=f"Ranker: {' | '.join(RANKERS)} [env HOPRAG_RANKER; default: the corpus's corpus.yaml, else bm25-titles].")
EmbedderOpt = typer.Option(None, "--embedder", help=f"Embedder for hybrid search: {EMBEDDERS} [env HOPRAG_EMBEDDER; "
                           "default: a store's own (the one it was indexed with); a corpus: none, lexical].")


def fail(message: str) -> None:
    typer.secho(message, err=True, fg=typer.colors.RED)
    raise typer.Exit(1)


def open_engine(resolved: settings.Settings) -> Engine:
    try:
        return Engine.open(resolved)
    except (CorpusError, ValueError) as exc:
        fail(str(exc))
        raise  # unreachable; keeps type checkers honest


@app.command("check-corpus")
def check_corpus(path: Path = typer.Argument(..., help="Corpus directory or .jsonl file.")) -> None:
    """Validate a corpus (documents, relations.yaml, access.yaml); exit 1 naming every bad file and field."""
    try:
        corpus = load_corpus(path)
        access_file = corpus.config_path("access.yaml")
        principals = sorted(load_access(access_file).principals) if access_file and access_file.exists() else []
    except (CorpusError, AccessError) as exc:
        fail(str(exc))
        return
    trusted = sum(d.trusted for d in corpus.docs)
    typer.echo(f"ok: {len(corpus.docs)} documents ({trusted} trusted, {len(corpus.docs) - trusted} untrusted)")
    typer.echo(f"relations: {', '.join(corpus.lexicon.names())}")
    groups = sorted(set().union(*(d.groups for d in corpus.docs)))
    typer.echo(f"groups: {', '.join(groups)}")
    typer.echo(f"principals: {', '.join(principals)}" if principals else
               "principals: none (no access file: single-user mode, one user reads every group)")
    typer.echo("allowlist: " + (", ".join(corpus.allowlist) if corpus.allowlist is not None
                                else "none (the trust flag is the only integrity control)"))


@app.command()
def search(
    query: str = typer.Argument(..., help="What to search for."),
    principal: Optional[str] = AsOpt,
    k: int = typer.Option(tools.DEFAULT_K, "-k", min=1, max=tools.MAX_K, help="Results to return."),
    corpus: Optional[Path] = CorpusOpt,
    store: Optional[str] = StoreOpt,
    access: Optional[Path] = AccessOpt,
    ranker: Optional[str] = RankerOpt,
    embedder: Optional[str] = EmbedderOpt,
    as_json: bool = typer.Option(False, "--json", help="Print {query, principal, results, weights}: the MCP "
                                 "search tool's result."),
) -> None:
    """Search the corpus as a principal: authorization first, then ranking; untrusted hits carry no facts."""
    resolved = settings.resolve(corpus=corpus, access=access, ranker=ranker, store=store, embedder=embedder)
    engine = open_engine(resolved)
    try:
        who = settings.principal_for(resolved, principal)
    except AccessError as exc:
        fail(str(exc))
        return
    if who.everything:
        typer.echo(settings.single_user_note(resolved), err=True)
    found = tools.search(engine, who, query, k)
    if as_json:
        typer.echo(json.dumps({"query": query, "principal": who.name, **found.model_dump(mode="json")}, indent=2))
        return
    for r in found.results:
        flag = "" if r.trusted else "  [untrusted: not evidence]"
        typer.echo(f"{r.id}  score={round(r.score, 4):g}{flag}\n    {r.text or r.untrusted_text}")
        for s, rel, o in r.facts:
            typer.echo(f"    fact: {s} --{rel}--> {o}")
    if not found.results:
        typer.echo("no results in what this principal may read")


app.command("serve")(serve)


@app.command("index")
def index(
    src: Path = typer.Argument(..., help="Folder (recursive), one file, or a .jsonl file to mirror into the store."),
    store: str = typer.Option(..., "--store", envvar="HOPRAG_STORE", help="Store file (embedded SQLite; created if missing), "
                              "or a postgresql:// URL (its schema created if missing; see docs/stores.md for roles) [env HOPRAG_STORE]."),
    groups: Optional[list[str]] = typer.Option(None, "--groups", help="Default groups for files that name none (repeatable); "
                                               "front matter and corpus.yaml rules win [default: the group 'local']."),
    max_file_mb: float = typer.Option(MAX_FILE_BYTES / 2**20, "--max-file-mb", min=0.001, help="Refuse larger files."),
    access: Optional[Path] = typer.Option(None, "--access", envvar="HOPRAG_ACCESS", help="The access file your servers use: build every "
                                          "principal's search view now, so a server's first start loads it "
                                          "(required for this on a postgresql:// store) [env HOPRAG_ACCESS; default: "
                                          "access.yaml beside the store file, if there is one]."),
    ranker: Optional[str] = typer.Option(None, "--ranker", envvar="HOPRAG_RANKER", help="The ranker your servers use, "
                                         "whose views to build [env HOPRAG_RANKER; default: corpus.yaml's, else bm25-titles]."),
    embedder: Optional[str] = typer.Option(None, "--embedder", envvar="HOPRAG_EMBEDDER", help=f"Embed every "
                                           f"passage for hybrid search: {EMBEDDERS} [env HOPRAG_EMBEDDER; default: "
                                           "the store's own, else minilm when installed, else none]; only new or "
                                           "changed text is embedded."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress lines."),
    verbose: bool = typer.Option(False, "--verbose", help=f"List every failed or skipped file, not the first {EXAMPLES} "
                                 "of each reason."),
) -> None:
    """Mirror SRC into STORE: new and changed files (by content digest) re-indexed, unchanged ones untouched,
    files gone from SRC deleted, in one atomic commit; then build the derived data servers load at start
    (the entity index; with an access file, each principal's views). Failed and skipped files are
    counted by reason and named on stderr; exit 1 only when SRC is missing or empty or no file could
    be indexed (then nothing is committed, and a store this run would have created is not left behind)."""
    from hoprag import embed
    from hoprag.ingest import IngestError, index as run_index, prepare
    from hoprag.store import is_database, open_store, redact

    progress = None if quiet else (lambda line: typer.echo(line, err=True))
    fresh = ([] if is_database(store) or Path(store).exists() else  # the files of a store this run creates
             [Path(f"{store}{end}") for end in ("", "-wal", "-shm", "-journal")])
    beside = None if is_database(store) else Path(store).parent / "access.yaml"
    in_play = access if access is not None else (beside if beside and beside.exists() else None)
    try:
        operator = load_access(in_play) if in_play else None  # None: single-user mode (a file store)
        principals = [p.groups for p in operator.principals.values()] if operator else []
        opened = open_store(store, create=True)
        try:
            model = _embedder_for(embedder, opened)
            report = run_index(src, opened, groups or (), int(max_file_mb * 2**20), progress, model)
            _show_outcomes(report, verbose)
            typer.echo(f"indexed {src} into {redact(store)}: {report.summary()}")
            if report.indexed:
                typer.echo(report.embedding(model.name if model else None))
            for line in report.counts():
                typer.echo(line)
            if report.local:
                typer.echo(_local_line(report.local, in_play, operator, is_database(store)))
            if report.indexed == 0:
                raise IngestError(f"nothing could be indexed from {src}: every file failed or was skipped "
                                  "(listed above); nothing was committed")
            if principals or not is_database(store):
                if progress:
                    progress("building the derived data servers load at start ...")
                seconds = prepare(opened, principals, ranker, everyone=operator is None,
                                  embedder=model.name if model else embed.NONE)
                typer.echo(f"derived data ready in {seconds:.1f} s (the packed passages, entity index and evidence"
                           + (f"; the views of {len(principals)} principals)" if principals else
                              "; the view of single-user mode, which reads every group)"))
        finally:
            opened.close()
    except (IngestError, AccessError, ValueError) as exc:
        for path in fresh:  # a store this run created and failed to fill is not left behind
            path.unlink(missing_ok=True)
        fail(str(exc))
        return


def _embedder_for(setting: Optional[str], store: "Store") -> "Embedder | None":
    """What ``hoprag index`` embeds with: the setting; unset, the embedder the store already holds
    vectors of (re-indexing never switches models unasked), else the packaged default when it runs
    here -- otherwise lexical, said in one line."""
    from hoprag import embed

    if setting is not None:
        return embed.load(setting)
    held = store.embedding()
    try:
        if held is not None:
            return embed.load(held.name)
    except embed.EmbedderError as exc:
        typer.echo(f"note: lexical search only: {exc}", err=True)
        return None
    model, note = embed.default()
    if note:
        typer.echo(note, err=True)
    return model


def _show_outcomes(report: Report, verbose: bool) -> None:
    """Each noted, skipped or failed file's lines on stderr: all of them with ``--verbose``, else the
    first few of each reason and how many more."""
    for label, outcomes, colour in (("note", report.noted, None), ("skipped", report.skipped, None),
                                    ("failed", report.failed, typer.colors.RED)):
        for reason, group in by_reason(outcomes).items():
            shown = group if verbose else group[:EXAMPLES]
            for outcome in shown:
                for problem in outcome.problems:
                    typer.secho(f"{label}: {problem}", err=True, fg=colour)
            if len(group) > len(shown):
                more = len(group) - len(shown)
                typer.secho(f"{label}: ... and {more} more file{'' if more == 1 else 's'} {reason} (--verbose lists "
                            "every one)", err=True, fg=colour)


def _local_line(documents: int, access_file: Optional[Path], operator: Optional[Access], shared: bool) -> str:
    """What the default group means for who reads the documents that named no groups (``shared``: a
    PostgreSQL store, which is never single-user)."""
    from hoprag.ingest.meta import DEFAULT_GROUP

    head = (f"default group: {documents} document{'' if documents == 1 else 's'} named no groups (front matter, "
            f"corpus.yaml rules, --groups) and {'is' if documents == 1 else 'are'} in group '{DEFAULT_GROUP}'")
    if operator is None:
        return (f"{head}: only a principal holding group '{DEFAULT_GROUP}' in your servers' access file reads them"
                if shared else f"{head}: with no access file you read every document (single-user mode)")
    holders = sorted(p.name for p in operator.principals.values() if DEFAULT_GROUP in p.groups)
    if holders:
        return (f"{head}: under the access file {access_file} only {', '.join(holders)} (holding group "
                f"'{DEFAULT_GROUP}') read{'s' if len(holders) == 1 else ''} them")
    return (f"{head}: under the access file {access_file} no principal holds group '{DEFAULT_GROUP}', so nobody reads "
            "them: add it to a principal's groups, or give the documents groups")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, add_help_option=False)
def bench(ctx: typer.Context) -> None:
    """Benchmarks: quality, cost and speed side by side (``hoprag bench --help``; needs the ``bench`` extra)."""
    try:
        from benchmarks.cli import bench_app
    except ImportError as exc:
        fail(f"hoprag bench needs the benchmark extra ({exc.name} is missing): pip install 'hoprag[bench]'")
        return
    bench_app(args=ctx.args, prog_name="hoprag bench")


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question to answer."),
    principal: Optional[str] = AsOpt,
    corpus: Optional[Path] = CorpusOpt,
    store: Optional[str] = StoreOpt,
    access: Optional[Path] = AccessOpt,
    model: Optional[str] = typer.Option(None, "--model", help="hoprag-offline | gemini-<version> | openai/<name> | "
                                        "ollama_chat/<name> [env HOPRAG_MODEL; default: hoprag-offline]."),
    model_base_url: Optional[str] = typer.Option(None, "--model-base-url", help="The model's endpoint, e.g. "
                                                 "http://127.0.0.1:11434 for Ollama [env HOPRAG_MODEL_BASE_URL]."),
    as_json: bool = typer.Option(False, "--json", help="Print {answer, abstained, reason, mode, citations, see_also, "
                                 "retrieved, searches, fetches, docs_read, model, trace}."),
    trace: bool = typer.Option(False, "--trace", help="After the answer, what it cost and every step the agent took."),
) -> None:
    """Answer a question with the ADK agent team (the offline policy model unless HOPRAG_MODEL / --model)."""
    import asyncio

    from agents.hoprag_agent.policy import question_problem

    problem = question_problem(question)
    if problem:
        fail(problem)
    try:
        from agents.hoprag_agent.config import SettingsError, unused_keys_note
        from agents.hoprag_agent.models import ModelError
        from agents.hoprag_agent.run import answer, prepare

        resolved, user = prepare(principal, corpus=corpus, access=access, store=store, model=model,
                                 model_base_url=model_base_url)
        typer.echo(f"model: {resolved.model}" + (f" at {resolved.model_base_url}" if resolved.model_base_url else ""),
                   err=True)
        note = unused_keys_note(resolved)
        if note:
            typer.echo(note, err=True)
        if settings.single_user(resolved):
            typer.echo(settings.single_user_note(resolved), err=True)
        result = asyncio.run(answer(resolved, user, question))
    except (SettingsError, AccessError, CorpusError, ModelError) as exc:
        fail(str(exc))
        return
    if result["response_replaced"]:
        typer.echo("note: the model's reply disagreed with the evidence gate; the gate's answer is shown", err=True)
    if as_json:
        keys = ("answer", "abstained", "reason", "mode", "citations", "see_also", "retrieved", "searches", "fetches",
                "docs_read", "dropped_untrusted", "tool_calls", "model", "response", "response_replaced", "trace")
        typer.echo(json.dumps({k: result[k] for k in keys}, indent=2, ensure_ascii=False))
        return
    typer.echo("\n".join(line.rstrip() for line in result["response"].splitlines()))  # no Markdown hard breaks
    if trace:
        typer.echo(f"\nsearches: {result['searches']}  fetches: {result['fetches']}  passages read: "
                   f"{result['docs_read']}  tool calls: {', '.join(result['tool_calls']) or 'none'}")
        for line in result["trace"]:
            typer.echo(f"  {line}")


def main() -> None:
    app()
