"""The entity view of prose: which named things each passage mentions, and how they connect passages.

Entities come from a passage's precomputed ``triples`` when it has them, otherwise from the
reader's cue triples plus capitalised spans per sentence; titles are entities too. The
passage-entity *mention* matrix links a passage to every vocabulary entity its text names, not
just those in its own triples: extracted triples often leave a hop's bridge entity out of the
next hop's triples, but the text still names it.

The vocabulary is corpus-wide (it only decides which n-grams *can* be an entity); everything a
caller can observe -- how many passages mention an entity, which passage is titled with it, the
walk matrices -- is computed per caller view (:class:`EntityView`) from the passages they may read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Iterator, Sequence

import numpy as np
from scipy import sparse

from .cache import pack, unpack
from .corpus import Doc
from .facts import extract_facts
from .lexicon import Lexicon
from .passages import Passages
from .postings import FORMAT as POSTINGS_FORMAT, Builder, Postings
from .splice import Splice
from .text import is_name, sentences
from .tokens import STOP, fold, tokenize

_SPAN = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|du|la|le|von|van|del|da|di|and)\s+)*[A-Z][\w'’.-]*)*")
MAX_NGRAM = 8
#: A sentence's full stop caught at the end of a name ("... depends on Cirrus."): not part of it; an
#: abbreviation's is ("U.S.", "St.").
_END_DOT = re.compile(r"(?<=[a-z0-9]{2})\.+$")
#: The layout :meth:`EntityIndex.to_bytes` writes, its word postings' included (the key it persists under):
#: an older layout is a cache miss.
FORMAT = f"7.{POSTINGS_FORMAT}"

Unit = tuple[str, str]  # (entity surface, context the entity was stated in)


def norm(text: str) -> str:
    """An entity's key: folded, lower-cased tokens joined by spaces."""
    return " ".join(tokenize(fold(text)))


def title_base(title: str) -> str:
    """The entity a title names: ``Hello Love (song)`` -> ``hello love``, ``Baure, Nigeria`` -> ``baure``."""
    return norm(re.sub(r"\s*\(.*?\)", "", title).split(",")[0])


def grams(tokens: Sequence[str], longest: int = MAX_NGRAM) -> Iterator[str]:
    """Every token n-gram up to ``longest`` words, as a space-joined key."""
    for n in range(1, longest + 1):
        for i in range(len(tokens) - n + 1):
            yield " ".join(tokens[i:i + n])


def _useful(key: str) -> bool:
    words = key.split()
    return bool(words) and not all(w in STOP for w in words) and not key.replace(" ", "").isdigit()


def units(doc: Doc, lexicon: Lexicon) -> tuple[Unit, ...]:
    """``(entity, context)`` pairs a reader can take a bridge from.

    A triple ``(s, r, o)`` yields ``(s, "r o")`` and ``(o, "s r")`` (the passage's ``triples``, or
    else the reader's cue triples); every capitalised span of a sentence yields ``(span, sentence)``
    as well, since extracted triples often bury the next hop's name inside a longer object
    ("a town in the Hiran region of Somalia"). A sentence's first word is capitalised anyway, so
    alone it counts only if the passage capitalises it elsewhere too ("However, ..." is no name).
    """
    out: list[Unit] = []
    facts = doc.triples if doc.triples is not None else extract_facts(doc, lexicon)
    for s, r, o in facts:
        out += [(s, f"{r} {o}"), (o, f"{s} {r}")]
    said = [s.strip() for s in sentences(doc.text)]
    spans = [(m.start(), m.group().split(), sentence) for sentence in said for m in _SPAN.finditer(sentence)]
    named = {w.lower() for start, words, _ in spans if start for w in words} | set(tokenize(fold(doc.title)))
    for start, words, sentence in spans:
        while words and words[0].lower() in STOP:
            words.pop(0)
        if words and (start or len(words) > 1 or words[0].lower() in named):
            out.append((_END_DOT.sub("", " ".join(words)), sentence))
    return tuple(out)


def _names(found: Sequence[Unit], keys: Sequence[str], vocab: dict[str, int]) -> list[tuple[int, str]]:
    """The proper names among a passage's units: ``(entity, first surface naming it)`` in text order."""
    out: dict[int, str] = {}
    for (surface, _), key in zip(found, keys):
        if _useful(key) and vocab[key] not in out and is_name(surface):
            out[vocab[key]] = surface
    return list(out.items())


@dataclass(frozen=True, eq=False)
class _Ragged:
    """One int list per passage, as flat arrays (``flat[ptr[i]:ptr[i + 1]]``): a view gathers its rows'
    lists in one numpy step, and they persist as they are."""

    flat: np.ndarray
    ptr: np.ndarray

    @classmethod
    def of(cls, lists: Sequence[Sequence[int]]) -> "_Ragged":
        return cls(np.array([j for own in lists for j in own], dtype=np.int64),
                   np.cumsum([0, *map(len, lists)], dtype=np.int64))

    def gather(self, rows: np.ndarray) -> np.ndarray:
        """Positions in :attr:`flat` of the lists of ``rows``, in row order."""
        starts, lengths = self.ptr[rows], self.ptr[rows + 1] - self.ptr[rows]
        total = int(lengths.sum())
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        return offsets + np.arange(total, dtype=np.int64)


def _named(tokens: Sequence[str], vocab: dict[str, int], prefixes: set[str] | None) -> Iterator[int]:
    """The vocabulary entities among ``tokens``' n-grams (what ``grams`` would find in ``vocab``, in
    one pass: a gram grows only while it is the start of some entity's key, or to :data:`MAX_NGRAM`
    words when ``prefixes`` is ``None``: the same names, for a few passages cheaper than the prefixes)."""
    for i in range(len(tokens)):
        gram = ""
        for token in tokens[i:i + MAX_NGRAM]:
            gram = f"{gram} {token}" if gram else token
            j = vocab.get(gram)
            if j is not None:
                yield j
            if prefixes is not None and gram not in prefixes:
                break


def _stream(doc: Doc) -> list[str]:
    """The tokens a passage's names are looked for in: its title and text, folded."""
    return tokenize(fold(f"{doc.title} {doc.text}"))


def _prefixes(keys: Iterable[str], into: set[str]) -> set[str]:
    """``into`` with every proper word prefix of ``keys`` (what :func:`_named` grows a gram through)."""
    for key in keys:
        at = key.find(" ")
        while at > 0:
            into.add(key[:at])
            at = key.find(" ", at + 1)
    return into


def _adjacent(key: str) -> re.Pattern[str]:
    """Where ``key``'s words follow one another as tokens of :func:`_stream` (on the folded, lower-cased
    title and text): a candidate passage is checked by one search instead of re-tokenising it."""
    words = (re.escape(w) for w in key.split())
    return re.compile(r"(?<![^\W_])(?<!-)" + r"(?:[^\w-]|_)+".join(words) + r"(?![^\W_])(?!-)")


class _Read:
    """What one passage contributes to the index, read from it alone: its units, the key of its
    title, the keys of its units."""

    def __init__(self, doc: Doc, lexicon: Lexicon):
        self.units = units(doc, lexicon)
        self.title = title_base(doc.title)
        self.keys = [norm(e) for e, _ in self.units]

    def own(self) -> list[str]:
        """The keys this passage defines (title first), in order."""
        return [k for k in [self.title, *self.keys] if _useful(k)]


def _mention_row(stream: Sequence[str], read: _Read, vocab: dict[str, int], prefixes: set[str] | None) -> tuple[int, dict[int, float]]:
    """A passage's title entity (``-1``: none) and its mentions: every vocabulary entity its title and
    text name (1.0), its own names (1.0), and the entity it is titled with (2.0: a passage is most
    strongly about it)."""
    found = dict.fromkeys(_named(stream, vocab, prefixes), 1.0)
    found.update({vocab[k]: 1.0 for k in read.keys if k in vocab})
    title = vocab.get(read.title, -1)
    if title >= 0:
        found[title] = 2.0
    return title, found


def _gained(docs: Passages, slots: np.ndarray, words: Postings, fresh: dict[str, int],
            added: set[int]) -> tuple[np.ndarray, np.ndarray]:
    """The mentions of ``fresh`` names (key -> entity) that passages already in the corpus gain (the
    ``added`` rows were read whole): ``(rows, entities)`` of the generation ``docs`` (``slots[slot]``:
    the row of each slot of ``words``). A name is looked
    for only in the passages holding all its words (:class:`~hoprag.postings.Postings` of
    :func:`_stream`), then checked for the words in a row."""
    rows, entities = [], []
    for key, entity in fresh.items():
        words_of = sorted(set(key.split()), key=lambda w: len(words.lookup(w)[0]))  # the rarest word first
        if len(key.split()) > MAX_NGRAM:  # longer than any gram a passage's text is read for
            continue
        held = words.lookup(words_of[0])[0]
        for word in words_of[1:]:
            if not len(held):
                break
            held = np.intersect1d(held, words.lookup(word)[0], assume_unique=True)
        pattern = _adjacent(key)
        for row in slots[held].tolist():
            if row >= 0 and row not in added and pattern.search(fold(f"{docs[row].title} {docs[row].text}").lower()):
                rows.append(row)
                entities.append(entity)
    return np.array(rows, dtype=np.int64), np.array(entities, dtype=np.int64)


def _among(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Which of ``values`` are in ``rows`` (ascending): a binary search each, not a pass over ``rows``."""
    at = np.searchsorted(rows, values)
    inside = at < len(rows)
    inside[inside] = rows[at[inside]] == values[inside]
    return inside


class EntityIndex:
    """Corpus-wide entity vocabulary and passage-entity mentions: built once, then grown by each change
    to the corpus (:meth:`advanced`)."""

    def __init__(self, docs: Sequence[Doc], lexicon: Lexicon):
        self.docs, self.lexicon = Passages.of(docs), lexicon
        read = [_Read(d, lexicon) for d in self.docs]
        self.units: list[tuple[Unit, ...] | None] = [r.units for r in read]
        self.vocab: dict[str, int] = {}
        for r in read:
            for key in r.own():
                self.vocab.setdefault(key, len(self.vocab))
        #: Per passage, the entities it defines itself (title and stated names): a view's graph uses only
        #: entities its own passages define, so no edge exists because an unreadable passage named a thing.
        self.defines = _Ragged.of([sorted({self.vocab[k] for k in r.own()}) for r in read])
        #: Per passage, the proper names it states (first surface per entity, in text order): a view's
        #: :attr:`EntityView.named` is a gather over its rows, not a re-read of every passage.
        stated = [_names(r.units, r.keys, self.vocab) for r in read]
        self.stated = _Ragged.of([[j for j, _ in own] for own in stated])
        self.stated_names = [name for own in stated for _, name in own]
        prefixes, words, slots = self._prefixes, Builder(), self.docs.slot_of_row.tolist()
        title_of, rows, cols, vals = [], [], [], []
        for i, (d, r) in enumerate(zip(self.docs, read)):
            stream = _stream(d)
            words.add(slots[i], stream)
            title, found = _mention_row(stream, r, self.vocab, prefixes)
            title_of.append(title)
            rows += [i] * len(found)
            cols += list(found)
            vals += list(found.values())
        #: Per passage, the entity it is titled with (``-1``: none).
        self.title_of = np.array(title_of, dtype=np.int64)
        self.mentions = sparse.csr_matrix((vals, (rows, cols)), shape=(len(self.docs), max(1, len(self.vocab))))
        #: The tokens of every passage's title and text, by slot: where a name new to the vocabulary is
        #: looked for when a change brings one (:meth:`advanced`).
        self.words = words.postings(len(self.docs.row_of_slot))

    @cached_property
    def _prefixes(self) -> set[str]:
        return _prefixes(self.vocab, set())

    def units_of(self, row: int) -> tuple[Unit, ...]:
        """A passage's ``(entity, context)`` pairs (read on first use in an index loaded from a store)."""
        found = self.units[row]
        if found is None:
            found = self.units[row] = units(self.docs[row], self.lexicon)
        return found

    def to_bytes(self) -> bytes:
        """The vocabulary, titles, what each passage defines and states, the mention matrix and the
        word postings as plain arrays (:func:`hoprag.cache.pack`, no pickle)."""
        m = self.mentions
        return pack(dict(vocab=list(self.vocab), shape=list(m.shape), title_of=self.title_of,
                         defines=self.defines.flat, defines_ptr=self.defines.ptr,
                         stated=self.stated.flat, stated_ptr=self.stated.ptr, stated_names=self.stated_names,
                         data=m.data, indices=m.indices, indptr=m.indptr,
                         words=np.frombuffer(self.words.to_bytes(), np.uint8)))

    @classmethod
    def from_bytes(cls, docs: Sequence[Doc], lexicon: Lexicon, blob: bytes) -> "EntityIndex | None":
        """The index :meth:`to_bytes` saved for these ``docs`` (``None``: another layout); per-passage
        units are read lazily."""
        arrays = unpack(blob)
        words = Postings.from_bytes(arrays["words"].tobytes()) if arrays is not None else None
        if arrays is None or words is None:
            return None
        index = cls.__new__(cls)
        index.docs, index.lexicon = Passages.of(docs), lexicon
        index.units = [None] * len(index.docs)
        keys = arrays["vocab"]
        index.vocab = dict(zip(keys, range(len(keys))))
        index.title_of = arrays["title_of"]
        index.defines = _Ragged(arrays["defines"], arrays["defines_ptr"])
        index.stated = _Ragged(arrays["stated"], arrays["stated_ptr"])
        index.stated_names = arrays["stated_names"]
        index.mentions = sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                                           shape=tuple(arrays["shape"]))
        index.words = words
        return index

    def advanced(self, docs: Passages, splice: Splice, added: Sequence[Doc], slots: np.ndarray,
                 renumber: np.ndarray | None) -> tuple["EntityIndex", np.ndarray, np.ndarray]:
        """The index of the next generation (``docs``, made by ``splice`` with ``added``; ``slots``:
        each slot's row before ``renumber`` compacts them, if it does), by what changed: the added
        passages are read, their new names join the vocabulary, and the passages already there that
        name one of those gain the mention (found through :attr:`words`, then checked in their text). A removed passage's names stay in the vocabulary but, defined by no
        passage, count in no view -- as if they were gone. Also returns the rows and entities of the
        mentions kept passages gained (parallel arrays), for the views to count."""
        new = EntityIndex.__new__(EntityIndex)
        new.docs, new.lexicon = docs, self.lexicon
        read = [_Read(d, self.lexicon) for d in added]
        new.vocab = vocab = dict(self.vocab)
        fresh = [key for r in read for key in r.own() if vocab.setdefault(key, len(vocab)) >= len(self.vocab)]
        fresh = list(dict.fromkeys(fresh))
        streams = [_stream(d) for d in added]
        # The vocabulary's prefixes (built once, then grown) pay once the change reads about as many tokens
        # as there are keys; a start applying a small change to an index loaded from a store leaves them
        # unbuilt (≈ 0.1-0.2 s at 100,000 passages before its first answer) and reads its grams whole.
        prefixes: set[str] | None = None
        if "_prefixes" in vars(self) or sum(map(len, streams)) > len(vocab):
            prefixes = _prefixes(fresh, self._prefixes)  # only ever grows: a longer gram is looked up, never missed
            new.__dict__["_prefixes"] = prefixes
        rows_of = [_mention_row(stream, r, vocab, prefixes) for stream, r in zip(streams, read)]
        new.words = self.words.grown(streams, slots >= 0)
        gained = _gained(docs, slots, new.words, {key: vocab[key] for key in fresh}, set(splice.placed.tolist()))
        new.units = splice.list(self.units, [r.units for r in read])
        new.title_of = splice.array(self.title_of, np.array([t for t, _ in rows_of], dtype=np.int64))
        new.defines = _Ragged(*splice.ragged(self.defines.flat, self.defines.ptr,
                                             [sorted({vocab[k] for k in r.own()}) for r in read]))
        stated = [_names(r.units, r.keys, vocab) for r in read]
        new.stated = _Ragged(*splice.ragged(self.stated.flat, self.stated.ptr, [[j for j, _ in own] for own in stated]))
        ptr, names = self.stated.ptr, self.stated_names
        new.stated_names = []
        for source, a, b in splice.runs:
            new.stated_names += names[ptr[a]:ptr[b]] if source else [n for own in stated[a:b] for _, n in own]
        width = max(1, len(vocab))
        m = self.mentions
        cols, indptr = splice.ragged(m.indices, m.indptr, [list(found) for _, found in rows_of])
        values, _ = splice.ragged(m.data, m.indptr, [list(found.values()) for _, found in rows_of])
        new.mentions = sparse.csr_matrix((values, cols, indptr), shape=(splice.size, width))
        if len(gained[0]):
            new.mentions = (new.mentions + sparse.csr_matrix((np.ones(len(gained[0])), gained),
                                                              shape=(splice.size, width))).tocsr()
        if renumber is not None:
            new.words = new.words.compacted(renumber)
        return new, gained[0], gained[1]

    @cached_property
    def keys(self) -> list[str]:
        """Each entity's key, by id."""
        return list(self.vocab)

    def entities_in(self, text: str) -> set[int]:
        """Vocabulary entities named in ``text`` (n-gram lookup, so a 3-word entity needs all 3 words)."""
        return {self.vocab[g] for g in grams(tokenize(fold(text))) if g in self.vocab}

    @cached_property
    def _titled(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows titled with some entity, by entity (stably: ascending within one), and the entities."""
        rows = np.flatnonzero(self.title_of >= 0)
        rows = rows[np.argsort(self.title_of[rows], kind="stable")]
        return rows, self.title_of[rows]

    def titled(self, entity: int) -> np.ndarray:
        """The rows titled with ``entity`` (ascending): every view reads its own out of them."""
        rows, entities = self._titled
        return rows[np.searchsorted(entities, entity, "left"):np.searchsorted(entities, entity, "right")]

    def view(self, rows: Sequence[int]) -> "EntityView":
        return EntityView(self, rows)


class EntityView:
    """One caller's entity graph: only the passages they may read count, link or get ranked."""

    def __init__(self, index: EntityIndex, rows: Sequence[int], counts: tuple[np.ndarray, np.ndarray] | None = None):
        """``counts``: how many of ``rows`` mention and define each entity, when known (:meth:`advanced`)."""
        self.index = index
        self.rows = np.asarray(rows, dtype=np.int64)
        if np.any(self.rows[1:] <= self.rows[:-1]):
            raise ValueError("an entity view's rows must be ascending and distinct")
        width = index.mentions.shape[1]
        if counts is None:
            m = index.mentions
            mentioned = np.bincount(m.indices[_Ragged(m.indices, m.indptr).gather(self.rows)], minlength=width)
            defined = np.bincount(index.defines.flat[index.defines.gather(self.rows)], minlength=width)
            counts = mentioned, defined
        #: How many of the caller's passages mention, and define, each entity (a row mentions an entity once).
        self.mentioned, self.defined = counts
        #: How many of the caller's passages mention each entity their passages define: a bridge must
        #: reach another passage (an entity only an unreadable passage defines counts nowhere).
        self.spread = np.where(self.defined > 0, self.mentioned, 0)

    @cached_property
    def mentions(self) -> sparse.csr_matrix:
        """The caller's passage-entity mentions, of the entities their own passages define (the walk's graph)."""
        index = self.index
        mentions = index.mentions[self.rows] if len(self.rows) else sparse.csr_matrix((0, index.mentions.shape[1]))
        mentions = (mentions @ sparse.diags((self.defined > 0).astype(np.float64))).tocsr()
        mentions.eliminate_zeros()
        return mentions

    def advanced(self, index: EntityIndex, rows: np.ndarray, splice: Splice, gained: tuple[np.ndarray, np.ndarray]
                 ) -> "EntityView":
        """This view in the next generation (``index``, made by ``splice``), now reading ``rows``: its
        counts moved by the passages that left it and came into it, and by the mentions kept passages
        ``gained`` (rows, entities) -- never recounted over every passage."""
        old, width = self.index, index.mentions.shape[1]
        gone = self.rows[splice.new_of_old[self.rows] < 0]
        came = splice.placed[_among(splice.placed, rows)]
        inside = _among(gained[0], rows)

        def delta(ragged: _Ragged, which: np.ndarray) -> np.ndarray:
            """How many of ``which`` rows list each entity."""
            return np.bincount(ragged.flat[ragged.gather(which)], minlength=width)

        def grown(counts: np.ndarray) -> np.ndarray:
            return np.concatenate([counts, np.zeros(width - len(counts), dtype=counts.dtype)])

        m_old, m_new = old.mentions, index.mentions
        mentioned = (grown(self.mentioned) - delta(_Ragged(m_old.indices, m_old.indptr), gone)
                     + delta(_Ragged(m_new.indices, m_new.indptr), came) + np.bincount(gained[1][inside], minlength=width))
        defined = grown(self.defined) - delta(old.defines, gone) + delta(index.defines, came)
        return EntityView(index, rows, (mentioned, defined))

    def titled(self, entity: int) -> np.ndarray:
        """Where the passages titled with ``entity`` sit in this view (ascending; none it may not read)."""
        rows = self.index.titled(entity)
        if not len(rows) or not len(self.rows):
            return np.zeros(0, dtype=np.int64)
        at = np.searchsorted(self.rows, rows)
        inside = at < len(self.rows)
        inside[inside] = self.rows[at[inside]] == rows[inside]
        return at[inside]

    def local(self, row: int | None) -> int | None:
        """Where passage ``row`` sits in this view, ``None`` when the caller may not read it."""
        if row is None:
            return None
        i = int(np.searchsorted(self.rows, row))
        return i if i < len(self.rows) and self.rows[i] == row else None

    def spread_of(self, surface: str) -> int:
        j = self.index.vocab.get(norm(surface))
        return int(self.spread[j]) if j is not None else 0

    def units(self, doc_id: str) -> tuple[Unit, ...]:
        """The ``(entity, context)`` pairs of a passage of this view (nothing for any other id)."""
        row = self.index.docs.row(doc_id)
        return self.index.units_of(row) if self.local(row) is not None else ()

    def stated(self, doc_id: str, limit: int = 20, contexts: int = 10, chars: int = 300
               ) -> list[tuple[str, int, list[str]]]:
        """The proper names a passage of this view states, each with how many of the view's passages
        mention it and the statements (triples or sentences) naming it: ``(name, passages, said)`` --
        statements only for names another passage mentions too (the others lead nowhere).

        Built from the passage's own units, never from the corpus-wide vocabulary, so neither a name's
        spelling nor its being an entity at all can come from a passage the caller may not read.
        Names that connect to another passage come first (in text order): they are the bridges.
        """
        found: dict[str, tuple[str, list[str]]] = {}
        for surface, context in self.units(doc_id):
            key = norm(surface)
            if not is_name(surface) or not _useful(key):
                continue
            said = found.setdefault(key, (surface, []))[1]
            if len(said) < contexts and context[:chars] not in said:
                said.append(context[:chars])
        named = [(name, n, said if n > 1 else []) for name, said in found.values() for n in [self.spread_of(name)]]
        return sorted(named, key=lambda e: e[1] < 2)[:limit]

    @cached_property
    def named(self) -> dict[str, tuple[str, int]]:
        """Every proper name the view's passages state: ``key -> (name, passages mentioning it)``."""
        at = self.index.stated.gather(self.rows)
        ids = self.index.stated.flat[at]
        first = np.sort(np.unique(ids, return_index=True)[1])  # each entity's first statement, in row order
        keys, names, spread = self.index.keys, self.index.stated_names, self.spread
        return {keys[j]: (names[a], int(spread[j])) for j, a in zip(ids[first].tolist(), at[first].tolist())}

    @cached_property
    def walk(self) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
        """Transposed transition matrices passage->entity and entity->passage for PPR.

        Passage->entity steps are weighted by 1/spread, so mass flows to specific entities rather
        than hubs ("United States") that touch hundreds of passages.
        """
        def rows_stochastic(m: sparse.spmatrix) -> sparse.csr_matrix:
            total = np.asarray(m.sum(axis=1)).ravel()
            total[total == 0] = 1
            return (sparse.diags(1 / total) @ m).tocsr()
        specific = self.mentions @ sparse.diags(1 / np.maximum(self.spread, 1))
        return rows_stochastic(specific).T.tocsr(), rows_stochastic(self.mentions.T).T.tocsr()

    def restart(self, question: str, seeds: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """Personalised PageRank's restart mass over passages and entities (summing to 1; ``None``: nothing
        to restart at): split between the question's entities (each weighted by 1/spread, so rare names
        dominate) and the seed passages."""
        n_p, n_e = self.mentions.shape
        seed_p, seed_e = np.zeros(n_p), np.zeros(n_e)
        for doc_id in seeds:
            i = self.local(self.index.docs.row(doc_id))
            if i is not None:
                seed_p[i] = 1.0
        for j in self.index.entities_in(question):
            if self.spread[j]:
                seed_e[j] = 1.0 / self.spread[j]
        if seed_e.sum():
            seed_e /= seed_e.sum()
        total = seed_p.sum() + seed_e.sum()
        return (seed_p / total, seed_e / total) if n_p and total else None

    def pagerank(self, question: str, seeds: Sequence[str], k: int, alpha: float = 0.5,
                 iterations: int = 15) -> list[tuple[str, float]]:
        """Personalised PageRank over the mention graph (HippoRAG-style, no LLM): ``(doc_id, mass)``,
        restarting at :meth:`restart`; passages are ranked by the mass they hold, ties by row.

        Passages and entities take turns (the graph is bipartite), so the passage mass after
        ``iterations`` steps depends only on the alternate chain of steps ending in it: that chain is
        computed, one sparse product per step instead of two (the same arithmetic, so the same scores).

        SciPy sparse products over :attr:`walk` rather than ``networkx.pagerank``: measured at 100,000
        passages (``hoprag bench graphs``, benchmarks/RESULTS.md section 12), networkx needs 7-9 s and
        ≈ 0.9 GB to hold one caller's mention graph (2.5M edges) and 10-20 s per call, since it converts
        the whole graph to a SciPy matrix on every call; a whole ``graph_hops`` call here takes ≈ 33 ms
        of CPU (43 at p99), with the same top passages.
        """
        restart = self.restart(question, seeds)
        if restart is None:
            return []
        seed_p, seed_e = restart
        to_entity, to_passage = self.walk
        on_passages = iterations % 2 == 0  # the chain ending on passages starts on them after an even count
        mass = seed_p if on_passages else seed_e
        for _ in range(iterations):
            mass = ((1 - alpha) * (to_entity @ mass) + alpha * seed_e if on_passages
                    else (1 - alpha) * (to_passage @ mass) + alpha * seed_p)
            on_passages = not on_passages
        p = np.round(mass, 12)  # summation order differs with the matrix shape: ulp noise must not reorder or show
        return [(self.index.docs.ids[int(self.rows[i])], float(p[i])) for i in top(p, k)]


def top(mass: np.ndarray, k: int) -> np.ndarray:
    """Where the ``k`` largest positive values of ``mass`` are, largest first, ties by position (only
    the values tied with the k-th largest or above are sorted)."""
    at = np.flatnonzero(mass >= np.partition(mass, -k)[-k]) if k < len(mass) else np.arange(len(mass))
    at = at[np.lexsort((at, -mass[at]))][:k]
    return at[mass[at] > 0]
