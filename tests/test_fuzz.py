"""Fuzzing the loaders and the tokenizer.

Arbitrary bytes and text in corpus files (``*.md``, ``*.jsonl``, ``relations.yaml``,
``allowlist.yaml``, stray files) yield either a corpus the engine can serve or a ``CorpusError``
whose every problem names the file (or ``file:line``) and a field -- never another exception, and
never a "valid" document that cannot be serialised (a lone surrogate from a ``\\ud800`` escape).
The access file behaves the same with ``AccessError``. ``tokenize`` never raises, emits only
lowercase runs of letters, digits and hyphens, is idempotent on its own output joined by spaces,
is local (tokens never span a space) and equals the chapter's ``[a-z0-9-]+`` on ASCII text.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import examples
from hoprag import corpus as corpus_module
from hoprag.access import AccessError, load_access
from hoprag.corpus import FIELDS, Corpus, CorpusError, load_corpus
from hoprag.formats import Problem
from hoprag.engine import Engine
from hoprag.tokens import token_count, tokenize

#: Examples per fuzz target: 300 in CI (fewer in the fast tier); ``HOPRAG_FUZZ_EXAMPLES=20000`` for a long hunt.
FUZZ = settings(max_examples=int(os.environ.get("HOPRAG_FUZZ_EXAMPLES", examples(300))), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
GOOD_MD = (b"---\nid: a1\ntitle: Alpha\ngroups: [eng]\ntrusted: true\nsource: https://x.example/a1\n"
           b"updated: 2026-01-02\n---\nAlpha depends on Beta. Beta runs in region eu-west-1.\n")
GOOD_RECORD = {"id": "a1", "title": "Alpha", "groups": ["eng"], "trusted": True, "source": "https://x.example/a1",
               "updated": "2026-01-02", "text": "Alpha depends on Beta."}
WORD = re.compile(r"(?:[^\W_]|-)+")


def servable(c: Corpus) -> None:
    """What a loaded corpus promises the server: valid ids and fields, UTF-8-encodable everything,
    and an engine that indexes, searches, greps and graphs it."""
    assert c.docs
    for d in c.docs:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}", d.id) and d.groups and d.text == d.text.strip() != ""
        assert isinstance(d.trusted, bool) and all(isinstance(g, str) and g for g in d.groups)
        json.dumps([d.id, d.title, d.text, d.source, sorted(d.groups), d.triples, d.path, d.front_matter,
                    d.updated and d.updated.isoformat()], ensure_ascii=False).encode("utf-8")
        assert d.front_matter == "" or isinstance(json.loads(d.front_matter), dict)  # metadata: one JSON object
        assert len(d.front_matter.encode("utf-8")) <= corpus_module.MAX_METADATA_BYTES
    everyone = frozenset().union(*(d.groups for d in c.docs))
    engine = Engine(c)
    engine.search(c.docs[0].text, everyone, 3)
    engine.grep(c.docs[0].text[:5], everyone, 3)
    engine.graph(everyone)


def outcome(load: Callable[[], Corpus], named: list[Path]) -> str:
    """``ok`` (servable) or ``error`` (every problem names one of ``named`` and a field); anything
    else -- another exception, an unservable corpus, an anonymous problem -- fails."""
    try:
        loaded = load()
    except CorpusError as err:
        assert err.problems
        for p in err.problems:
            assert any(p.where == str(n) or p.where.startswith(f"{n}:") for n in named), p.where
            assert p.field and p.message and len(str(p).splitlines()) == 1, p  # one problem per line
        str(err).encode("utf-8")  # printable, whatever the files held
        return "error"
    servable(loaded)
    return "ok"


def load_files(files: dict[str, bytes], jsonl: bool = False) -> str:
    """Write ``files`` into a fresh corpus directory and load it (or its ``c.jsonl``)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        root.mkdir()
        for name, data in files.items():
            (root / name).write_bytes(data)
        target = root / "c.jsonl" if jsonl else root
        paths = [root / name for name in files] + [root, target]
        return outcome(lambda: load_corpus(target), paths)


# Hostile YAML source snippets: real scalars, impossible dates, digit-limit integers, escapes
# that make lone surrogates, tags, aliases, deep nesting.
YAML_VALUES = st.one_of(
    st.sampled_from([
        "a1", "true", "false", "null", "~", "yes", "2026-01-02", "2026-13-45", "2001-02-30 21:59:43",
        "2001-12-14t21:59:43.10-05:00", ".inf", "-.nan", "0x" + "f" * 5000, "0b" + "1" * 20000, "9" * 5000,
        "1:" + "5" * 5000, "[]", "{}", "[eng]", "[eng, ops]", "[[eng]]", "{a: 1}", "https://x.example/a",
        "'quoted'", '"\\ud800"', '"a\\udfffb"', '"\\x00"', '"\\t"', "!!binary aGVsbG8=", "!!set {a, b}",
        "!!python/object:os.system ls", "!!omap [a: 1]", "*undefined", "&a [1, *a]", "[" * 50 + "]" * 50,
        "|\n  block\n  text", ">\n  folded", "[1, 2.5, -3, 0o17]", "[ 'a', \"b\", ~ ]"]),
    st.text(max_size=20).map(json.dumps),
    st.integers().map(str),
    st.floats().map(str),
)
YAML_KEYS = st.one_of(st.sampled_from(FIELDS + ("triples", "text", "owner", "<<", "? [a]", "1", "~", "2026-01-01")),
                      st.text(max_size=8).map(json.dumps))


@st.composite
def markdown(draw: st.DrawFn) -> bytes:
    """A Markdown document: structured hostile front matter, random text, or a mutated good file."""
    kind = draw(st.sampled_from(["front matter", "text", "mutation", "bytes"]))
    if kind == "front matter":
        fields = draw(st.dictionaries(YAML_KEYS, YAML_VALUES, max_size=8))
        front = "\n".join(f"{k}: {v}" for k, v in fields.items())
        newline = draw(st.sampled_from(["\n", "\r\n"]))
        return f"---{newline}{front}{newline}---{newline}{draw(st.text(max_size=80))}".encode("utf-8")
    if kind == "text":
        return draw(st.text(max_size=200)).encode("utf-8")
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    data = bytearray(GOOD_MD)
    for position, byte, op in draw(st.lists(st.tuples(st.integers(0, len(GOOD_MD)), st.integers(0, 255),
                                                      st.sampled_from(["set", "insert", "delete"])), max_size=6)):
        position = min(position, len(data) - 1)
        if op == "set":
            data[position] = byte
        elif op == "insert":
            data.insert(position, byte)
        elif len(data) > 1:
            del data[position]
    return bytes(data)


FILE_NAMES = st.sampled_from(["a.md", "b.md", "c.md", "notes.txt", ".hidden", "relations.yaml", "allowlist.yaml",
                              "questions.yaml", "\udcff.md", "x.MD", "README"])


@FUZZ
@given(files=st.dictionaries(FILE_NAMES, markdown(), min_size=1, max_size=3))
@example(files={"a.md": GOOD_MD})
@example(files={"a.md": GOOD_MD, "b.md": GOOD_MD})
def test_markdown_corpus_loads_or_names_file_and_field(files):
    load_files({n: d for n, d in files.items() if not n.endswith("yaml")} or {"a.md": GOOD_MD})


@FUZZ
@given(files=st.dictionaries(FILE_NAMES, markdown(), min_size=1, max_size=4))
def test_markdown_corpus_with_hostile_config_files(files):
    load_files(files)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(st.characters(), max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10)
RAW_LINES = st.sampled_from([
    b"", b"   ", b"{", b"[]", b"null", b"42", b'"text"', b"\xef\xbb\xbf{}", b"\xff\xfe", b"NaN", b"[" * 100_000,
    b'{"id": ' + b"9" * 5000 + b"}", b'{"id": "a1", "id": "a2"}', b'{"\\ud800": 1}', b'{"text": "\\udfff"}',
    b'{"a": ' + b"[" * 3000 + b"]" * 3000 + b"}",
])


@st.composite
def jsonl_line(draw: st.DrawFn) -> bytes:
    """A record with hostile field values (surrogates become ``\\udXXX`` escapes), or a raw line."""
    kind = draw(st.sampled_from(["record", "good-ish", "raw", "bytes"]))
    if kind == "record":
        return json.dumps(draw(st.dictionaries(st.sampled_from(FIELDS + ("text", "triples", "x")), json_values))).encode()
    if kind == "good-ish":
        field = draw(st.sampled_from(FIELDS + ("text", "triples")))
        return json.dumps({**GOOD_RECORD, "id": draw(st.sampled_from(["a1", "a2"])), field: draw(json_values)}).encode()
    if kind == "raw":
        return draw(RAW_LINES)
    return draw(st.binary(max_size=120)).replace(b"\n", b" ")


@FUZZ
@given(lines=st.lists(jsonl_line(), min_size=1, max_size=5))
@example(lines=[json.dumps(GOOD_RECORD).encode()])
def test_jsonl_corpus_loads_or_names_line_and_field(lines):
    load_files({"c.jsonl": b"\n".join(lines)}, jsonl=True)


ALIAS_BOMB = "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
HOSTILE_FILES = {
    "deep YAML": {"a.md": b"---\nid: " + b"[" * 5000 + b"]" * 5000 + b"\n---\nx"},
    "YAML surrogate escape": {"a.md": GOOD_MD.replace(b"title: Alpha", b'title: "Alpha\\ud800"')},
    "YAML impossible date": {"a.md": GOOD_MD.replace(b"2026-01-02", b"2026-13-45")},
    "YAML 5000-digit integer": {"a.md": GOOD_MD.replace(b"trusted: true", b"trusted: " + b"9" * 5000)},
    "YAML 20000-bit hex integer": {"a.md": GOOD_MD.replace(b"trusted: true", b"trusted: 0x" + b"f" * 5000)},
    "YAML alias bomb": {"a.md": b"---\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                        + ALIAS_BOMB.encode() + b"id: *i\ntrusted: *i\nsource: *i\nupdated: *i\n---\nx"},
    "non-UTF-8 file name": {"\udcff.txt": GOOD_MD},
    "deep relations.yaml": {"a.md": GOOD_MD, "relations.yaml": b"relations: " + b"[" * 5000 + b"]" * 5000},
    "relations.yaml huge integer": {"a.md": GOOD_MD, "relations.yaml": b"relations: " + b"9" * 5000},
    "relations.yaml surrogate cue": {"a.md": GOOD_MD, "relations.yaml": b'relations: [{name: x, cues: ["a\\ud800"]}]'},
    "relations.yaml mixed keys": {"a.md": GOOD_MD, "relations.yaml": b"relations: [{name: x, cues: [a], 1: 2, z: 3}]"},
    "deep allowlist.yaml": {"a.md": GOOD_MD, "allowlist.yaml": b"sources: " + b"[" * 5000 + b"]" * 5000},
}
HOSTILE_LINES = {
    "deep JSON": b'{"id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "JSON 5000-digit integer": b'{"id": "a1", "updated": ' + b"9" * 5000 + b"}",
    "JSON surrogate in text": json.dumps({**GOOD_RECORD, "text": "Alpha \ud800 depends on Beta."}).encode(),
    "JSON surrogate in a key": json.dumps({**GOOD_RECORD, "\udfff": 1}).encode(),
    "JSON surrogate in groups": json.dumps({**GOOD_RECORD, "groups": ["eng\ud800"]}).encode(),
    "JSON surrogate in a triple": json.dumps({**GOOD_RECORD, "triples": [["Alpha", "depends_on", "B\udc00"]]}).encode(),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_hostile_corpus_file_is_a_corpus_error(name):
    assert load_files(HOSTILE_FILES[name]) == "error"


@pytest.mark.parametrize("name", sorted(HOSTILE_LINES))
def test_hostile_jsonl_line_is_a_corpus_error(name):
    assert load_files({"c.jsonl": HOSTILE_LINES[name]}, jsonl=True) == "error"


def test_front_matter_keys_of_any_type_become_json_metadata():
    """Other keys are metadata: YAML keys of mixed types become JSON object keys (strings)."""
    assert load_files({"a.md": GOOD_MD.replace(b"id: a1", b"id: a1\n1: x\nfoo: y\n2026-01-01: z")}) == "ok"


def test_a_paired_surrogate_escape_is_just_an_emoji():
    record = json.dumps({**GOOD_RECORD, "text": "Alpha depends on Beta \U0001f600."})  # ensure_ascii: \ud83d\ude00
    assert "\\ud83d\\ude00" in record and load_files({"c.jsonl": record.encode()}, jsonl=True) == "ok"


def test_an_alias_bomb_is_reported_briefly():
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a.md").write_bytes(HOSTILE_FILES["YAML alias bomb"]["a.md"])
        with pytest.raises(CorpusError) as err:
            load_corpus(tmp)
    assert len(str(err.value)) < 5000  # the full repr of the value is 9**8 strings long


ACCESS_VALUES = st.one_of(YAML_VALUES, st.sampled_from(["{engineering: {groups: [engineering]}}", "{x: {groups: []}}",
                                                        "{demo-engineering-token: engineering}", "{abcdefghij: [a]}",
                                                        '{"abcdefghij\\ud800": engineering}', "{0xfffff: engineering}"]))


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(["principals", "tokens", "users", "other", "1"]), ACCESS_VALUES, max_size=4),
       tail=st.binary(max_size=20))
@example(fields={"principals": "{engineering: {groups: [engineering]}}", "tokens": "{demo-engineering-token: engineering}"},
         tail=b"")
def test_access_file_loads_or_names_file_and_field(fields, tail):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "access.yaml"
        path.write_bytes("\n".join(f"{k}: {v}" for k, v in fields.items()).encode() + tail)
        try:
            access = load_access(path)
        except AccessError as err:
            assert str(path) in str(err)
            return
    for token, name in access.tokens.items():
        assert access.by_token(token) == access.principals[name]  # a bad token would crash every request
    assert access.by_token("not-a-known-token") is None


@pytest.mark.parametrize("text, fragment", [
    ("principals: " + "[" * 5000 + "]" * 5000, "cannot read"),
    ("principals: " + "9" * 5000, "cannot read"),
    ("principals:\n  ? 0x" + "f" * 5000 + "\n  : {groups: [g]}", "principal names must be strings"),
    ("principals: {a: {groups: [g]}}\ntokens: {abcdefghij: [a]}", "mapping of strings"),
    ('principals: {a: {groups: [g]}}\ntokens: {"abcdefghij\\ud800": a}', "RFC 6750"),
    ("principals: {a: {groups: [g]}}\ntokens: {'token with spaces': a}", "RFC 6750"),
    ("principals: {a: {groups: [g]}}\n1: x\nfoo: y", "unknown key"),
])
def test_hostile_access_file_is_an_access_error(tmp_path, text, fragment):
    path = tmp_path / "access.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AccessError, match=fragment):
        load_access(path)


# Negative controls: the same checks catch a loader that lets a bad document or error through.

def test_negative_control_an_unservable_document_is_caught(monkeypatch):
    monkeypatch.setattr(corpus_module, "_lone_surrogate", lambda value: False)  # the guard, switched off
    with pytest.raises(UnicodeEncodeError):
        load_files({"c.jsonl": HOSTILE_LINES["JSON surrogate in text"]}, jsonl=True)


def test_negative_control_an_anonymous_problem_is_caught(tmp_path):
    def vague() -> Corpus:
        raise CorpusError([Problem("somewhere", "text", "bad")])
    with pytest.raises(AssertionError, match="somewhere"):
        outcome(vague, [tmp_path / "a.md"])


def test_negative_control_a_foreign_exception_is_not_swallowed(tmp_path):
    def crashing() -> Corpus:
        raise RecursionError("maximum recursion depth exceeded")
    with pytest.raises(RecursionError):
        outcome(crashing, [tmp_path / "a.md"])


def tokenizer_properties(tok: Callable[[str], list[str]], text: str) -> None:
    tokens = tok(text)
    assert all(WORD.fullmatch(t) for t in tokens), tokens          # non-empty letters, digits, hyphens
    assert all(t == t.lower() for t in tokens), tokens
    assert tok(" ".join(tokens)) == tokens, tokens                 # idempotent on its own output


@FUZZ
@given(text=st.text(st.characters(), max_size=200))  # every code point, lone surrogates included
@example(text="İstanbul ΑΣ ß ½ ﬁ x_y a--b ①")
def test_tokenize_never_raises_and_is_stable(text):
    tokenizer_properties(tokenize, text)
    assert token_count(text) == len(tokenize(text))


@FUZZ
@given(a=st.text(st.characters(), max_size=50), b=st.text(st.characters(), max_size=50))
def test_tokenize_is_local(a, b):
    assert tokenize(f"{a} {b}") == tokenize(a) + tokenize(b)


@FUZZ
@given(text=st.text(st.characters(max_codepoint=127), max_size=200))
def test_tokenize_is_the_chapters_tokenizer_on_ascii(text):
    assert tokenize(text) == re.findall(r"[a-z0-9-]+", text.lower())


@FUZZ
@given(text=st.text(st.characters(), max_size=200))
@example(text="snake_case_name __init__ a_-_b é_1")
def test_tokenize_is_maximal_runs_of_letters_digits_and_hyphens(text):
    assert tokenize(text) == re.findall(r"(?:[^\W_]|-)+", text.lower())  # the definition, tried per character


def test_tokenize_is_linear_on_a_long_run():
    assert tokenize("a-" * 200_000) == ["a-" * 199_999 + "a-"]


@pytest.mark.parametrize("broken, text", [
    (lambda t: t.split(), "Which region? Falcon."),                                              # keeps case and punctuation
    (lambda t: [unicodedata.normalize("NFKC", w) for w in tokenize(t)], "½ cup"),                # not idempotent
])
def test_negative_control_broken_tokenizers_are_caught(broken, text):
    with pytest.raises(AssertionError):
        tokenizer_properties(broken, text)
