"""Where the corpus, the access file and the ranker come from: flags, then environment, then defaults.

``HOPRAG_CORPUS`` (a directory or ``.jsonl``), ``HOPRAG_ACCESS`` (an access file; default
``access.yaml`` in or beside the corpus) and ``HOPRAG_RANKER`` (``overlap`` | ``bm25``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .access import Access, AccessError, load_access
from .corpus import Corpus
from .engine import DEFAULT_CORPUS, DEFAULT_RANKER


def corpus_path(flag: str | Path | None = None) -> Path:
    return Path(flag or os.environ.get("HOPRAG_CORPUS") or DEFAULT_CORPUS)


def ranker(flag: str | None = None) -> str:
    return flag or os.environ.get("HOPRAG_RANKER") or DEFAULT_RANKER


def access_for(corpus: Corpus, flag: str | Path | None = None) -> Access:
    """Load the operator access file for a corpus (flag, ``HOPRAG_ACCESS``, or the corpus's own)."""
    path = flag or os.environ.get("HOPRAG_ACCESS") or corpus.config_path("access.yaml")
    if path is None or not Path(path).exists():
        raise AccessError(f"no access file: pass --access FILE or put access.yaml beside the corpus ({corpus.root})")
    return load_access(path)
