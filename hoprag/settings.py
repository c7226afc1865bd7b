"""The one settings resolver: flags, then environment, then defaults -- for the CLI, the server and the agent.

| setting | flag | environment | default |
|---|---|---|---|
| corpus | ``--corpus`` | ``HOPRAG_CORPUS`` | the packaged Falcon demo corpus |
| store | ``--store`` | ``HOPRAG_STORE`` | none; when given it is served instead of the corpus (``hoprag index``) |
| access file | ``--access`` | ``HOPRAG_ACCESS`` | ``access.yaml`` beside the store file, else in (or beside) the corpus; none there: single-user mode |
| ranker | ``--ranker`` | ``HOPRAG_RANKER`` | what the corpus's ``corpus.yaml`` asks for, else ``bm25-titles`` |
| embedder | ``--embedder`` | ``HOPRAG_EMBEDDER`` | ``hoprag index``: the store's own, else ``minilm`` when installed, else ``none``; serving a store: the one it was indexed with; a corpus: ``none`` |
| search budget | ``--budget`` | ``HOPRAG_SEARCH_BUDGET`` | 4 reads (searches + fetches) per question |
| loop rounds | ``--iterations`` | ``HOPRAG_MAX_ITERATIONS`` | 4 grader/researcher rounds |
| model | ``--model`` | ``HOPRAG_MODEL`` | ``hoprag-offline``, whatever keys the environment holds |
| model endpoint | ``--model-base-url`` | ``HOPRAG_MODEL_BASE_URL`` | the provider's own (or its SDK's variable) |
| MCP server | ``--mcp-url`` | ``HOPRAG_MCP_URL`` | none: a stdio subprocess per principal |

Nothing here loads a corpus: resolving is cheap and side-effect free, so the agent module can
resolve its settings at import and load only what it is asked to serve.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

from .access import LOCAL, Access, AccessError, Principal, load_access
from .corpus import Corpus
from .store import is_database, redact

#: The best LLM-free ranker measured on real multi-hop prose (benchmarks/RESULTS.md); a corpus
#: asks for another in its ``corpus.yaml`` (the Falcon corpus asks for the chapter's ``overlap``).
DEFAULT_RANKER = "bm25-titles"
DEFAULT_BUDGET = 4
DEFAULT_ITERATIONS = 4
#: Who ``hoprag ask``, ``hoprag search`` and ``hoprag serve --transport stdio`` act as without
#: ``--as``: ADK's default session user id (``adk web``), mapped through the access file's ``users:``.
DEFAULT_USER = "user"
OFFLINE_MODEL = "hoprag-offline"
GEMINI_MODEL = "gemini-2.5-flash"
#: Variables that select a hosted model in other tools; here only ``HOPRAG_MODEL`` does, so a
#: key that happens to be exported never turns an offline run into a networked one.
MODEL_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "OPENAI_API_KEY")

_PACKAGED = Path(__file__).resolve().parent / "demo"
#: The Falcon demo corpus: packaged into the wheel as ``hoprag/demo``, ``corpus/`` in a checkout.
DEMO_CORPUS = _PACKAGED if _PACKAGED.is_dir() else Path(__file__).resolve().parent.parent / "corpus"


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the variable or flag."""


@dataclass(frozen=True)
class Settings:
    corpus: Path
    access: Path | None
    ranker: str | None
    search_budget: int
    max_iterations: int
    model: str
    mcp_url: str | None
    store: str | None = None  # a store file path, or a postgresql:// URL
    model_base_url: str | None = None
    #: ``None``: not set (the store's own, or lexical for a corpus); ``"none"``: lexical, explicitly.
    embedder: str | None = None

    def with_flags(self, **flags: object) -> "Settings":
        """These settings with every flag that was given (``None`` = not given) taking precedence."""
        given = {k: (Path(v) if k in ("corpus", "access") else str(v) if k == "store" else v)
                 for k, v in flags.items() if v is not None}
        return replace(self, **given)


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise SettingsError(f"{name} must be a positive integer, got {raw!r}")
    return value


def resolve(env: Mapping[str, str] | None = None, **flags: object) -> Settings:
    """Resolve every setting: a flag that is not ``None`` wins, then ``env`` (``os.environ``), then the default."""
    env = os.environ if env is None else env
    access = env.get("HOPRAG_ACCESS")
    base = Settings(
        corpus=Path(env.get("HOPRAG_CORPUS") or DEMO_CORPUS),
        access=Path(access) if access else None,
        ranker=env.get("HOPRAG_RANKER") or None,
        search_budget=_positive(env, "HOPRAG_SEARCH_BUDGET", DEFAULT_BUDGET),
        max_iterations=_positive(env, "HOPRAG_MAX_ITERATIONS", DEFAULT_ITERATIONS),
        model=env.get("HOPRAG_MODEL", "").strip() or OFFLINE_MODEL,
        mcp_url=env.get("HOPRAG_MCP_URL") or None,
        store=env.get("HOPRAG_STORE") or None,
        model_base_url=env.get("HOPRAG_MODEL_BASE_URL", "").strip() or None,
        embedder=env.get("HOPRAG_EMBEDDER", "").strip() or None,
    )
    return base.with_flags(**flags)


def unused_keys_note(settings: Settings, env: Mapping[str, str] | None = None) -> str | None:
    """A one-line note when model keys are exported but the offline model runs (never a silent switch)."""
    env = os.environ if env is None else env
    present = [k for k in MODEL_KEYS if env.get(k, "").strip().lower() not in ("", "0", "false")]
    if not present or settings.model != OFFLINE_MODEL:
        return None
    return (f"note: {', '.join(present)} {'is' if len(present) == 1 else 'are'} set but unused: the model is "
            f"{OFFLINE_MODEL}; set HOPRAG_MODEL (e.g. {GEMINI_MODEL}) to use a hosted model")


def ranker_for(corpus: Corpus, setting: str | None = None) -> str:
    """The ranker a corpus is served with: the setting, else the corpus's ``corpus.yaml``, else the default."""
    return setting or corpus.ranker or DEFAULT_RANKER


def access_path(settings: Settings, corpus_root: Path | None = None) -> Path:
    """Where the operator access file is: the setting, else ``access.yaml`` beside the store file
    (a store holds no credentials), else in or beside the corpus."""
    if settings.access is not None:
        return settings.access
    if settings.store is not None and corpus_root is None:
        if is_database(settings.store):
            raise AccessError(f"{redact(settings.store)} holds no credentials: pass --access FILE (or set HOPRAG_ACCESS)")
        return Path(settings.store).parent / "access.yaml"
    root = corpus_root or settings.corpus
    return (root if root.is_dir() else root.parent) / "access.yaml"


def single_user(settings: Settings) -> bool:
    """Whether these settings run in single-user mode: no access file was named (flag or
    environment) and there is none where one is looked for. A PostgreSQL store -- shared by
    design -- always names its access file."""
    if settings.access is not None or (settings.store is not None and is_database(settings.store)):
        return False
    return not access_path(settings).exists()


#: Set by a front door for the server it launches as its child (the agent's toolset), having printed
#: :func:`single_user_note` itself: a run says it once.
NOTED = "HOPRAG_SINGLE_USER_NOTED"


def single_user_note(settings: Settings) -> str:
    """The one line a front door prints (stderr) when it runs in single-user mode."""
    return (f"note: no access file: single-user mode, you read every document (as '{LOCAL}', whatever the user id; "
            f"to tell users apart write {access_path(settings)}: see the README's Identity)")


def load_operator_access(settings: Settings) -> Access:
    """Load the access file these settings name; :meth:`Access.single` when none was named and none
    is where one is looked for; a clear error when a named one is missing."""
    if single_user(settings):
        return Access.single()
    path = access_path(settings)
    if not path.exists():
        raise AccessError(f"no access file at {path}: pass --access FILE naming one that exists (or leave --access "
                          "and HOPRAG_ACCESS unset to run single-user)")
    return load_access(path)


def principal_for(settings: Settings, user_id: str | None = None) -> Principal:
    """Who ``user_id`` (default :data:`DEFAULT_USER`) acts as: a principal, or a ``users:`` entry mapping to one.

    The one rule for every front door; an unknown user is an error naming the file and the fix.
    """
    access = load_operator_access(settings)
    try:
        return access.acting_as(user_id or DEFAULT_USER)
    except AccessError as exc:
        raise AccessError(f"{access_path(settings)}: {exc}: pass --as one of them, or map the user "
                          "to a principal under 'users:'") from None

