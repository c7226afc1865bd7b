"""Postings that grow by delta equal postings built fresh; BM25 read off them equals bm25s to the bit;
a splice carries per-row data over as rebuilding it from the rows would."""

from __future__ import annotations

import bm25s
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hoprag.corpus import Doc
from hoprag.passages import Passages
from hoprag.postings import Postings
from hoprag.search import Searcher, analysed
from hoprag.splice import Splice
from hoprag.tokens import tokenize

WORDS = st.sampled_from("a b c d e f g h alpha beta gamma delta-x".split())
token_lists = st.lists(st.lists(WORDS, max_size=12), max_size=12)


def as_sets(postings: Postings, alive: list[int]) -> dict[str, list[tuple[int, int]]]:
    """Each token's living postings as (position among the living slots, count): slot numbers aside."""
    rank = {slot: i for i, slot in enumerate(alive)}
    out = {}
    for token in postings.vocab:
        slots, counts = postings.lookup(token)
        found = [(rank[s], int(c)) for s, c in zip(slots.tolist(), counts.tolist()) if s in rank]
        if found:
            out[token] = found
    return out


@settings(max_examples=150, deadline=None)
@given(first=token_lists, steps=st.lists(st.tuples(token_lists, st.lists(st.integers(0, 40), max_size=5),
                                                   st.booleans()), max_size=5))
def test_grown_and_compacted_postings_equal_a_fresh_build(first, steps):
    postings, lists, alive = Postings.build(first), list(first), list(range(len(first)))
    for added, dropped, compact in steps:
        for d in dropped:
            if alive:
                alive.pop(d % len(alive))
        start = len(lists)
        lists += added
        alive += range(start, len(lists))
        living = np.zeros(len(lists), dtype=bool)
        living[alive] = True
        postings = postings.grown(added, living)
        if compact:
            renumber = np.where(living, np.cumsum(living) - 1, -1)
            postings = postings.compacted(renumber)
            lists = [lists[s] for s in alive]
            alive = list(range(len(alive)))
        assert as_sets(postings, alive) == as_sets(Postings.build([lists[s] for s in alive]), list(range(len(alive))))
        assert postings.lengths[alive].tolist() == [len(lists[s]) for s in alive]


texts = st.lists(st.lists(WORDS, min_size=1, max_size=15).map(" ".join), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None)
@given(texts=texts, readable=st.lists(st.booleans(), min_size=25, max_size=25),
       queries=st.lists(st.lists(WORDS, min_size=1, max_size=5), min_size=1, max_size=5))
def test_bm25_equals_bm25s_to_the_bit_over_any_view(texts, readable, queries):
    docs = [Doc(f"d{i}", text, frozenset({"in" if readable[i] else "out"}), title=f"T{i % 3}")
            for i, text in enumerate(texts)]
    view = Searcher(docs, "bm25").view(frozenset({"in"}))
    mine = [d for d in docs if readable[docs.index(d)]]
    if not mine:
        assert view.search("a", 5) == []
        return
    reference = bm25s.BM25()  # the Lucene variant, k1 = 1.5, b = 0.75: what scores were first defined by
    reference.index([tokenize(analysed(d)) for d in mine], show_progress=False)
    for query in queries:
        known = [t for t in dict.fromkeys(query) if t in reference.vocab_dict]
        expected = reference.get_scores(known).astype(np.float64) if known else np.zeros(len(mine))
        assert np.array_equal(view.scorer.scores(query), expected)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 30), data=st.data())
def test_a_splice_carries_rows_over_as_rebuilding_them_would(n, data):
    keys = sorted(data.draw(st.sets(st.tuples(st.sampled_from("abc"), st.integers(0, 50)), min_size=n, max_size=n)))
    removed = data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)) if n else set()
    kept = [k for i, k in enumerate(keys) if i not in removed]
    added = sorted(data.draw(st.sets(st.tuples(st.sampled_from("abcd"), st.integers(0, 50)), max_size=8)) - set(kept))
    splice = Splice.of(n, sorted(removed), lambda i: (keys[i][0], "", keys[i][1]), [(a, "", b) for a, b in added])
    after = sorted(kept + added)
    assert splice.list(keys, added) == after
    assert splice.array(np.arange(n), -1 - np.arange(len(added))).tolist() == [
        keys.index(k) if k in kept else -1 - added.index(k) for k in after]
    assert [splice.new_of_old[keys.index(k)] for k in kept] == [after.index(k) for k in kept]
    ragged = [[i, i] for i in range(n)]
    flat, ptr = np.array([j for r in ragged for j in r], dtype=np.int64), np.cumsum([0] + [2] * n)
    new_flat, new_ptr = splice.ragged(flat, ptr, [[-1] for _ in added])
    assert [new_flat[a:b].tolist() for a, b in zip(new_ptr[:-1], new_ptr[1:])] == [
        [keys.index(k)] * 2 if k in kept else [-1] for k in after]


def test_a_passage_keeps_its_slot_while_rows_move():
    docs = [Doc(f"p{i}", f"text {i}", frozenset({"g"}), path=f"f{i}") for i in range(4)]
    old = Passages.of(docs, [f"f{i}" for i in range(4)])
    new_doc = Doc("p1b", "inserted", frozenset({"h"}))
    splice = Splice.of(4, [0], old.key, [("f1b", "p1b", 0)])
    new = old.spliced(splice, [new_doc], ["f1b"])
    assert new.ids == ["p1", "p1b", "p2", "p3"] and [new.file(i) for i in range(4)] == ["f1", "f1b", "f2", "f3"]
    assert new.slot_of_row.tolist() == [1, 4, 2, 3] and new.row_of_slot.tolist() == [-1, 0, 2, 3, 1]
    assert new.group_sets[new.group_of[1]] == frozenset({"h"}) and new[1] is new_doc and new.row("p2") == 2
    assert old.ids == ["p0", "p1", "p2", "p3"]  # the generation before is untouched
