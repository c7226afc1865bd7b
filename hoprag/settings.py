"""The one settings resolver: flags, then environment, then defaults -- for the CLI, the server and the agent.

| setting | flag (commands) | environment | default |
|---|---|---|---|
| corpus | ``--corpus`` (search, serve, ask) | ``HOPRAG_CORPUS`` | the packaged Falcon demo corpus |
| store | ``--store`` (search, serve, ask, index) | ``HOPRAG_STORE`` | none; when given it is served instead of the corpus (``hoprag index``) |
| access file | ``--access`` (search, serve, ask, index) | ``HOPRAG_ACCESS`` | ``access.yaml`` beside the store file, else in (or beside) the corpus; none there: single-user mode |
| ranker | ``--ranker`` (search, serve, index) | ``HOPRAG_RANKER`` | what the corpus's ``corpus.yaml`` asks for, else ``bm25-titles`` |
| embedder | ``--embedder`` (search, serve, index) | ``HOPRAG_EMBEDDER`` | ``hoprag index``: the store's own, else ``minilm`` when installed, else ``none``; serving a store: the one it was indexed with; a corpus: ``none`` |

The agent adds its own (model, read budget, loop rounds, a remote MCP server):
:mod:`agents.hoprag_agent.config`. Nothing here loads a corpus: resolving is cheap and side-effect
free, so the agent module can resolve its settings at import and load only what it is asked to serve.
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
#: Who ``hoprag ask``, ``hoprag search`` and ``hoprag serve --transport stdio`` act as without
#: ``--as``: ADK's default session user id (``adk web``), mapped through the access file's ``users:``.
DEFAULT_USER = "user"

_PACKAGED = Path(__file__).resolve().parent / "demo"
#: The Falcon demo corpus: packaged into the wheel as ``hoprag/demo``, ``corpus/`` in a checkout.
DEMO_CORPUS = _PACKAGED if _PACKAGED.is_dir() else Path(__file__).resolve().parent.parent / "corpus"


@dataclass(frozen=True)
class Settings:
    corpus: Path
    access: Path | None
    ranker: str | None
    store: str | None = None  # a store file path, or a postgresql:// URL
    #: ``None``: not set (the store's own, or lexical for a corpus); ``"none"``: lexical, explicitly.
    embedder: str | None = None

    def with_flags(self, **flags: object) -> "Settings":
        """These settings with every flag that was given (``None`` = not given) taking precedence."""
        given = {k: (Path(v) if k in ("corpus", "access") else str(v) if k == "store" else v)
                 for k, v in flags.items() if v is not None}
        return replace(self, **given)


def resolve(env: Mapping[str, str] | None = None, **flags: object) -> Settings:
    """Resolve every setting: a flag that is not ``None`` wins, then ``env`` (``os.environ``), then the default."""
    env = os.environ if env is None else env
    access = env.get("HOPRAG_ACCESS")
    base = Settings(
        corpus=Path(env.get("HOPRAG_CORPUS") or DEMO_CORPUS),
        access=Path(access) if access else None,
        ranker=env.get("HOPRAG_RANKER") or None,
        store=env.get("HOPRAG_STORE") or None,
        embedder=env.get("HOPRAG_EMBEDDER", "").strip() or None,
    )
    return base.with_flags(**flags)


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
            f"to tell users apart write {access_path(settings)}: see docs/security.md)")


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

