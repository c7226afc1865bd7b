"""How much of a question a passage answers (hoprag.assess) and what the search tool says of it."""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client

from hoprag.access import Principal
from hoprag.assess import (MAX_CODE_CHARS, Question, _premise, _units, assess, release_notes, states_default,
                           states_number, stems)
from hoprag.corpus import Corpus, Doc
from hoprag.engine import Engine
from hoprag.lexicon import Lexicon
from hoprag.text import sentences
from hoprag.tokens import content
from mcp_server.auth import fixed_caller
from mcp_server.server import build_server

G = frozenset({"g"})
IDF = {"limit": 2.0, "iterations": 3.0, "loopagent": 4.0, "number": 1.0}


def test_coverage_weighs_words_by_idf_and_matches_stems_and_identifier_parts():
    q = Question("How do I limit the number of iterations of a LoopAgent?", IDF, 100)
    assert set(q.weights) == {"limit", "number", "iter", "loopag", "loop", "agent"}  # "how", "do", "i" are asking
    full = assess(q, "Set max_iterations to limit the number of iterations of a LoopAgent.")
    assert full.coverage == 1.0 and full.highlights[0].text.startswith("Set max_iterations")
    part = assess(q, "A loop agent repeats.")  # "loop" and "agent" only: words no passage holds weigh the most
    unseen = q.weights["loop"]
    assert unseen == max(q.weights.values()) and part.matched == ("loop", "agent")
    assert part.coverage == round(2 * unseen / q.total, 3) < 1
    assert assess(q, "Nothing relevant here.").coverage == 0 and assess(q, "Nothing relevant here.").highlights == ()
    assert "sandbox" in stems("SandboxedEnvironment") and "length" in stems("X-Line-Length")


def test_a_snake_case_name_is_a_word_of_its_own_so_a_sentence_naming_it_answers_for_it():
    """"max_form_parts" is searched in its words, but "File parts can be larger" only holds "parts": the item naming
    `max_form_parts` answers for it. Control: its words alone are still matched (coverage), and a name's joined word
    weighs as its weightiest word, not as a word no passage holds."""
    q = Question("What are the defaults of max_form_memory_size and max_form_parts?", {"parts": 3.0, "memory": 2.0}, 100)
    assert q.weights["maxformpart"] == max(q.weights[w] for w in ("max", "form", "part"))
    text = ("-   `max_form_memory_size` - Stop parsing form data if any non-file part is larger than this many bytes.\n"
            "File parts can be larger, they are moved to disk at this limit. The default is 500kB.\n"
            "-   `max_form_parts` - Stop parsing form data if more than this number of parts are received.\n"
            "The default is 1000.")
    said = " ".join(h.text for h in assess(q, text).highlights)
    assert "`max_form_memory_size`" in said and "`max_form_parts`" in said and "File parts" not in said
    assert {"maxformpart", "getcurrentobject", "plaintraceback"} <= stems(
        "`max_form_parts`, `_get_current_object`, structlog.dev.plain_traceback")
    assert "init" in stems("__init__") and "part" in stems("max_form_parts")


def test_two_words_of_the_question_a_name_writes_as_one_count_as_both():
    """"line length" is `g:black_linelength` in a Vim plugin's settings: the item naming it answers, not its neighbour.
    Controls: a name's own parts make no compound ("uWSGI" is not "u wsgi"), nor do words apart in the question."""
    q = Question("Which variable sets the line length for the Vim plugin, and what is its default?", {}, 100)
    text = ("Configuration:\n\n- `g:black_fast` (defaults to `0`)\n- `g:black_linelength` (defaults to `88`)\n"
            "- `g:black_virtualenv` (defaults to `~/.vim/black`)")
    assert "g:black_linelength" in assess(q, text).highlights[0].text
    assert q.covered(stems("`g:black_linelength`")) == q.covered(stems("line length"))
    assert "uwsgi" not in Question("How do I pip install uWSGI?", {}, 100).compounds
    assert "lengthvim" not in q.compounds and "linelength" in q.compounds


def test_highlights_are_near_sentences_or_the_code_with_its_introduction():
    q = Question("How do I install the package in editable mode?", {}, 10)
    text = ("The project is open source. You can install it in editable mode:\n\nUnix/macOS:\n\n"
            "```sh\npip install -e .\n```\n\nUnrelated closing words about licences.")
    found = assess(q, text, "Guide › Installing")
    assert [h.text for h in found.highlights] == ["You can install it in editable mode:", "Unix/macOS:",
                                                  "```sh\npip install -e .\n```"]
    assert all(text[h.start:h.end] == h.text for h in found.highlights)
    answered_by_code = assess(Question("Which command clears the cache?", {}, 10),
                              "Run this:\n\n```sh\n# clears the cache\ntool cache clear\n```")
    assert answered_by_code.highlights[-1].text.startswith("```sh") and answered_by_code.highlights[0].text == "Run this:"
    lines = assess(q, "You can install\nit in editable mode. Done.")  # wrapped lines read as one sentence
    assert lines.highlights[0].text == "You can install\nit in editable mode."



def test_a_question_not_asking_how_is_answered_by_a_sentence_not_by_code_echoing_its_words():
    """A console transcript holds "start", "server", "worker", "number"; the sentence that answers holds fewer
    of the question's words, but it is the statement -- code answers "how", or a question no sentence touches."""
    text = ("The default is only 1 worker.\n\n```text\n$ server run\nStarting server\nBooting worker number 1\n```")
    found = assess(Question("Which number of workers does the server start with by default?", {}, 10), text)
    assert [h.text for h in found.highlights] == ["The default is only 1 worker."]
    many = assess(Question("How many workers does the server start with by default?", {}, 10), text)
    assert [h.text for h in many.highlights] == ["The default is only 1 worker."]  # a quantity, not a "how to"
    how = assess(Question("How do I start the server with 4 workers?", {}, 10), text)
    assert how.highlights[-1].text.startswith("```text")


def test_a_sentence_introducing_code_reads_with_it_whatever_the_question_asks():
    """"By default, it compares the current code to the latest tag:" then the command it describes: the sentence says
    what that command does, so the command's words count for it -- the question names the command, not the sentence
    ("If I run `tool check pkg` without a reference, what does it compare my current code against?"). Control: the
    same code after a sentence not introducing it is its example, and a sentence covering more of the question wins."""
    text = ("For example, you can ask it to compare your current code against a specific tag. Tags are cheap."
            "\n\nBy default, it compares the current code to the latest tag{end}\n\n```console\n$ tool check pkg\n```")
    asked = Question("If I run `tool check pkg` without a reference, what does it compare my current code against?",
                     {}, 10)
    found = assess(asked, text.format(end=":"))
    assert found.highlights[0].text.startswith("By default") and "tool check pkg" in found.highlights[-1].text, found
    # ... and what it answers counts the code it was read with
    said = stems("By default, it compares the current code to the latest tag: $ tool check pkg")
    assert found.focus == round(asked.covered(said), 3) > round(asked.covered(stems(found.highlights[0].text)), 3)
    # (asked without "without a reference", which asks for the default "By default, ..." states either way)
    plain = Question("If I run `tool check pkg`, what does it compare my current code against?", {}, 10)
    found = [h.text for h in assess(plain, text.format(end=".")).highlights]
    assert found[0].startswith("For example"), found
    assert [h.text for h in assess(asked, text.format(end=".")).highlights][0].startswith("By default")


def test_a_table_row_is_one_unit_whatever_sentences_its_cells_hold():
    q = Question("Which variable holds the current iteration of the loop?", {}, 10)
    text = ("Inside a loop you can use:\n\n| Variable | Description |\n|---|---|\n"
            "| `loop.index` | The current iteration of the loop. (1 indexed) |\n| `loop.first` | True if first. |")
    found = assess(q, text)
    assert "| `loop.index` | The current iteration of the loop. (1 indexed) |" in [h.text for h in found.highlights]
    prose = assess(q, "The current iteration of the loop. (1 indexed)")  # the same words as prose: two sentences
    assert [h.text for h in prose.highlights] == ["The current iteration of the loop."]


def test_a_stop_inside_inline_code_ends_no_sentence():
    """sqlparse: "Semicolons within certain SQL constructs like ``BEGIN ... END`` blocks are handled correctly ..." is
    one sentence; cut at "...", the half beginning "END` blocks" was quoted as an answer."""
    q = Question("Which constructs does the splitting mechanism handle?", {}, 10)
    text = ("The end of a statement is identified by a semicolon. Semicolons within certain SQL constructs like "
            "`BEGIN ... END` blocks are handled correctly by the splitting mechanism.")
    assert [h.text for h in assess(q, text).highlights] == [text.split(". ", 1)[1]]
    assert sentences(text) == ["The end of a statement is identified by a semicolon.", text.split(". ", 1)[1]]
    assert sentences("Use `a. B` here. Then go.") == ["Use `a. B` here.", "Then go."]
    control = text.replace("`BEGIN ... END`", "BEGIN ... END")  # out of code, "... E" ends a sentence as before
    assert sentences(control)[2].startswith("END blocks")


def test_a_sentence_ending_in_a_colon_brings_what_it_introduces():
    """"We do it in two steps:" is not an answer; the steps are -- a list's items, or the line after a label."""
    q = Question("What are the two steps of the technique?", {}, 10)
    text = "Some background first. We implement the technique in two steps:\n\n1. Rewrite the prompt\n2. Ask again\n\nLater prose."
    assert [h.text for h in assess(q, text).highlights] == [
        "We implement the technique in two steps:", "1. Rewrite the prompt", "2. Ask again"]
    label = assess(Question("How do I install a project in editable mode?", {}, 10),
                   "You can install a project in editable mode:\n\nPip cli:\n$ pip install -e path\n\nMore words.")
    assert [h.text for h in label.highlights][-1] == "Pip cli:\n$ pip install -e path"
    plain = assess(q, "The technique has two steps. Rewrite the prompt.\n\n- an unrelated item")
    assert "- an unrelated item" not in [h.text for h in plain.highlights]  # no colon: nothing is introduced

def test_a_how_question_brings_the_code_a_few_sentences_on_with_its_introduction():
    """Docs name the task, then show how: the command below "then install gunicorn." answers, not "X is easy"."""
    q = Question("How do I install gunicorn?", {}, 10)
    text = ("Gunicorn is easy to install, as it does not require external dependencies.\n"
            "It runs on Windows only under WSL.\n\nCreate a virtualenv, then run this:\n\n"
            "```text\n$ pip install gunicorn\n```\n\nA closing remark.")
    texts = [h.text for h in assess(q, text).highlights]
    assert texts[0].startswith("Gunicorn is easy") and texts[-2:] == [
        "Create a virtualenv, then run this:", "```text\n$ pip install gunicorn\n```"]
    assert assess(q, text).focus == 1.0  # the code is read with the answer, not counted as answering more
    what = Question("What does gunicorn need to install?", {}, 10)  # not a "how": the sentence alone
    assert not any(h.text.startswith("```") for h in assess(what, text).highlights)
    headed = text.replace("Create a virtualenv", "## Other platforms\n\nCreate a virtualenv").replace(
        "pip install gunicorn", "pip install virtualenv")
    assert not any(h.text.startswith("```") for h in assess(q, headed).highlights)  # another section's code
    far = text.replace("It runs on Windows only under WSL.", "One. Two. Three. Four.")
    assert not any(h.text.startswith("```") for h in assess(q, far).highlights)  # too far from the answer
    named = "To install gunicorn, run `pip install gunicorn`.\n\nExample:\n\n```text\n$ pip install flask\n```"
    assert [h.text for h in assess(q, named).highlights] == ["To install gunicorn, run `pip install gunicorn`."]
    other = named.replace("`pip install gunicorn`", "the installer with `--user`")  # code, but not what is asked
    assert [h.text for h in assess(q, other).highlights][-1] == "```text\n$ pip install flask\n```"


def test_of_sentences_answering_as_much_a_how_question_takes_the_one_that_shows_how():
    q = Question("How do I format notebooks with the tool?", {}, 10)
    text = ("The tool supports formatting notebooks natively.\n\n## Installation\n\n"
            "To format notebooks, install the tool with its extra:\n\n```sh\npip install \"tool[notebooks]\"\n```")
    assert [h.text for h in assess(q, text).highlights][-1] == '```sh\npip install "tool[notebooks]"\n```'
    what = Question("What does the tool support for notebooks formatting?", {}, 10)  # no "how": the first sentence
    assert [h.text for h in assess(what, text).highlights] == ["The tool supports formatting notebooks natively."]
    # a sentence that answers more with its neighbour wins over one that shows code but answers less
    more = ("`daemon` is not packaged by default. You will need `pip install tool[d]` to install it.\n\n"
            "It starts fast. It logs to stderr. It binds locally.\n\n`daemon` has few options. Check that the daemon runs:\n\n```sh\ndaemon --port 1\n```")
    texts = [h.text for h in assess(Question("How do I install the daemon?", {}, 10), more).highlights]
    assert any("pip install tool[d]" in t for t in texts) and not any(t.startswith("```") for t in texts)


def test_search_hits_say_how_well_they_answer_and_untrusted_ones_say_nothing():
    docs = (Doc("a", "To limit the iterations, set max_iterations on the LoopAgent.", G, title="Loops"),
            Doc("b", "To limit the iterations, set max_iterations on the LoopAgent.", G, trusted=False, title="Upload"))
    engine = Engine(Corpus(docs, Lexicon(()), None, None), "bm25")

    async def go():
        async with Client(build_server(engine, fixed_caller(Principal("p", G)))) as client:
            return (await client.call_tool("search", {"query": "limit LoopAgent iterations", "k": 2})).structured_content
    hits = {h["id"]: h for h in asyncio.run(go())["results"]}
    assert hits["a"]["coverage"] == 1.0 and hits["a"]["answers"] == 1.0 and hits["a"]["highlights"]
    assert (hits["b"]["coverage"], hits["b"]["answers"], hits["b"]["highlights"], hits["b"]["matched"]) == (0.0, 0.0, [], [])


def test_a_word_the_view_holds_in_another_form_weighs_as_that_form():
    """Coverage matches by stem, so "keeps" must weigh as the view's "keep" -- not as a word no passage holds."""
    docs = (Doc("a", "Pip will keep its cache under the user's home.", G, title="Caching"),
            Doc("b", "Nothing about it here at all.", G, title="Other"), Doc("c", "Keep calm.", G, title="Calm"))
    view = Engine(Corpus(docs, Lexicon(()), None, None), "bm25").view(G)
    weights = view.weights("Where does pip keeps its caches?")
    assert weights["keeps"] == view.idf["keep"] and weights["caches"] == view.idf["cache"]
    assert "where" not in weights and "zebra" not in view.weights("zebra keeps")  # stop words; words no form of
    near = Question("Where does pip keeps its caches?", weights, len(view.docs))
    unseen = Question("Where does pip keeps its caches?", view.idf, len(view.docs))  # "keeps" as if no passage held it
    partial = "The pip cache lives under the user's home."  # all but "keeps": a paraphrase's verb weighs as usual
    assert assess(unseen, partial).coverage < assess(near, partial).coverage < 1.0


def test_turning_something_on_or_off_is_asked_and_said_as_enabling_or_disabling_it():
    """"Which option turns that off?" is answered by "Set `ignore-vcs` to `true` to disable this behavior", and by a
    passage saying "turn it off" too; the search weighs the question's "disable" as the view does. Control: "turn" in
    another sense ("which in turn renders") says nothing of it. "How do I stop the cache from filling up?" asks to
    disable it; "How do I stop the cache?" does not."""
    asked = Question("How do I turn off the cache?", {}, 10)
    assert assess(asked, "Set `no_cache` to disable the cache.").coverage == 1.0
    assert assess(asked, "The cache is on by default; turn it off with `no_cache`.").coverage == 1.0
    assert assess(asked, "Each request reads the cache, which in turn renders the page.").coverage == 0.5
    docs = (Doc("a", "Set `no_cache` to disable the cache.", G, title="Cache"),
            Doc("b", "Enable the cache.", G, title="On"), Doc("c", "Nothing here.", G, title="Other"))
    view = Engine(Corpus(docs, Lexicon(()), None, None), "bm25").view(G)
    assert view.weights("How do I switch it off?") == {"disable": view.idf["disable"]}
    # stopping a thing from doing something is disabling it too; stopping a thing is not (control)
    stop = Question("How do I stop the cache from filling up?", {}, 10)
    assert assess(stop, "Set `no_cache` to disable the cache filling up.").coverage == 1.0
    assert view.weights("How do I stop the cache from filling?").keys() >= {"disable"}
    assert "disable" not in view.weights("How do I stop the cache?")


def test_where_the_asker_expects_the_answer_is_no_word_a_page_must_hold():
    """"..., according to the attrs docs?" names where the answer is, not what it says: every page is the docs, and
    "Data classes get `__slots__` support from Python version 3.10 on." answers the whole question. Controls: "per" in another sense
    ("requests per second") and a question asking about the guide itself keep their words."""
    answer = "Data classes get `__slots__` support from Python version 3.10 on."
    asked = Question("In which Python version did data classes get __slots__ support, according to the attrs docs?",
                     {}, 10)
    assert asked.covered(stems(answer)) == 1.0
    assert Question("What does it default to, as per the reference guide?", {}, 10).words.keys() == {"default"}
    assert "second" in Question("How many requests per second does it handle?", {}, 10).words
    assert "guid" in Question("What does the reference guide say about timeouts?", {}, 10).words


def test_a_how_many_question_is_answered_by_a_sentence_stating_a_number():
    """The sentence covering most of "How many workers ..." states none; the one that does answers (with the other
    beside it, as it adds to the question); asked "Which workers ..." (the control), the best-covering one alone."""
    text = "The server starts its workers by default in the background.\n\nLogs go elsewhere. Here it is started with 2 processes."
    many = assess(Question("How many workers does the server start by default?", {}, 10), text)
    assert "Here it is started with 2 processes." in [h.text for h in many.highlights]
    which = assess(Question("Which workers does the server start by default?", {}, 10), text)
    assert [h.text for h in which.highlights] == ["The server starts its workers by default in the background."]


def test_which_version_asks_for_a_version_number():
    """"Since which version is the hook available?" is answered by the sentence naming the version, not the one
    sharing more of the question's words that names none. Control: asked what the hook does, the latter answers."""
    text = ("To use this hook, replace the hook's `id: tool` with `id: tool-nb` in your pre-commit configuration.\n\n"
            "Logs go elsewhere. Workers restart. Hooks run.\n\n"
            "Note: The `tool-nb` hook became available in version 21.8b0.")
    since = Question("Since which version is the tool-nb pre-commit hook available?", {}, 10)
    what = Question("What does the tool-nb pre-commit hook replace?", {}, 10)
    said = [h.text for h in assess(since, text).highlights]
    assert said == ["Note: The `tool-nb` hook became available in version 21.8b0."]
    assert [h.text for h in assess(what, text).highlights][0].startswith("To use this hook")


def test_of_sentences_covering_as_much_the_one_saying_least_else_answers():
    """Two table rows hold every word of "Which command adds all files under directories matching a pattern?"; the
    one adding a condition ("that match any of the listed patterns") describes another command. Controls: asked
    about that condition too, the row stating it answers; of two prose sentences, the first answers."""
    text = ("| `recursive-include {dir-pattern} {pat}` | Add all files under directories matching `dir-pattern` that "
            "match any of the listed patterns |\n| `graft {dir-pattern}` | Add all files under directories matching "
            "`dir-pattern` |\n")
    plain = Question("Which command adds all files under directories matching a pattern?", {}, 10)
    listed = Question("Which command adds all files under directories matching a pattern that match listed patterns?",
                      {}, 10)
    assert assess(plain, text).highlights[0].text.startswith("| `graft")
    assert assess(listed, text).highlights[0].text.startswith("| `recursive-include")
    # prose is no list of alternatives: of two sentences holding it all, the first -- which defines it -- answers
    prose = ("With no access file, the server runs in single-user mode: one principal reads every group, whatever the "
             "user.\n\nLogs go elsewhere. Workers restart. Hooks run.\n\nSingle-user mode serves stdio only.")
    defined = Question("What is single-user mode?", {}, 10)
    assert assess(defined, prose).highlights[0].text.startswith("With no access file")


@pytest.mark.parametrize("said, heading", [("It only works", True), ("It is only meant", False)])
def test_a_sentence_whose_subject_is_a_pronoun_is_about_its_heading(said: str, heading: bool):
    """"It only works with the basic and contextual lexers." answers "Which lexers does `lexer_callbacks` work with?"
    under a heading naming `lexer_callbacks`, where the sentence naming it does not. Controls: "It is ..." may refer to
    nothing; without the heading, the sentence naming it covers most."""
    text = ("`lexer_callbacks` can be used to interface with the lexer as it generates tokens.\n\nIt accepts a "
            "dictionary of handlers.\n\nEach handler maps a token to a token.\n\n"
            f"{said} with the basic and contextual lexers.")
    asked = Question("Which lexers does lexer_callbacks work with?", {}, 10)
    under = assess(asked, text, "Recipes\nCollect all comments with lexer_callbacks").highlights[0].text
    assert under.startswith(said) is heading
    assert assess(asked, text, "Recipes\nCollect all comments").highlights[0].text.startswith("`lexer_callbacks`")


def test_what_happens_is_answered_by_a_sentence_saying_what_it_leads_to():
    """"If I pass cors_enable=True and also a CORSMiddleware instance, what happens?": of the sentences about the two,
    the one saying what the combination results in (a `ValueError`) answers, not the one covering more of the
    question's words. Control: asked whether the two may be combined, the latter answers."""
    text = ("Note: Passing the `cors_enable` parameter set to `True` is mutually exclusive with directly passing an "
            "instance of `CORSMiddleware` to the application's initializer.\n\nLogs go elsewhere. Workers restart. "
            "Hooks run.\n\nChanged in version 4.0: Adding a `CORSMiddleware` then results in a `ValueError`.")
    happens = Question("If I pass cors_enable=True and also a CORSMiddleware instance, what happens?", {}, 10)
    combine = Question("May I pass cors_enable=True and also a CORSMiddleware instance?", {}, 10)
    assert [h.text for h in assess(happens, text).highlights][0].startswith("Changed in version 4.0")
    assert [h.text for h in assess(combine, text).highlights][0].startswith("Note: Passing")


@pytest.mark.parametrize("asked, answer, other, kept", [
    ("What happens if the audience in the token doesn't match?",
     "If the audience does not match, `InvalidAudienceError` will be raised.",
     "A replay attack happens when a bad actor reuses a token.", "When does the cleanup happen?"),
    ("What is the difference between Any and object?",
     "Unlike `Any`, `object` is an ordinary static type.",
     "The difference between bound and unbound methods is not expressed: a method of an object is replaced.",
     "How large is the difference in speed?"),
    ("How does TypedEnv differ from local.env?",
     "`TypedEnv` converts values to types, while `local.env` holds strings.",
     "Paths differ from strings: `local.path` is typed.", "Why are the two environments different?"),
    ("What does the error 'Library stubs not installed' mean?",
     "If stubs exist but are missing, you get `error: Library stubs not installed for \"yaml\"`.",
     "Library stubs mean an error is reported less often.", "Does it mean the stubs are not installed?")])
def test_how_a_question_asks_is_not_a_word_the_answer_holds(asked: str, answer: str, other: str, kept: str):
    """"What happens if ...?" asks what follows, "What is the difference between X and Y?" and "How does X differ
    from Y?" ask about X and Y, "What does X mean?" what X is: "happens", "difference", "between", "differ" and "mean"
    are how the question asks, as "make" is in "How do I make ...". The passage saying it ("... will be raised", "Unlike `Any`, `object` is ...") covers
    the question; one using the asking words about something else does not gain by them. Control: asked about the
    happening or the difference itself, the word stays."""
    question = Question(asked, {}, 10)
    assert not {"happen", "differ", "between", "mean"} & question.weights.keys()
    assert assess(question, answer).coverage > assess(question, other).coverage
    assert {"happen", "differ", "mean"} & Question(kept, {}, 10).weights.keys()


def test_a_question_asking_how_two_things_differ_reads_on_to_the_sentence_contrasting_them():
    """"What is the difference between move_on_after and fail_after?": the sentence naming the two says nothing of how
    they differ; the answer reads on to the one that does ("The former simply exits ..., while the other raises ..."),
    though it holds no word of the question. Control: a sentence already contrasting them ("Unlike ...") answers alone, and a question not comparing
    reads no further."""
    text = ("There are two principal ways to time out: `move_on_after` and `fail_after`. Both are context managers. "
            "The former simply exits the block, while the other raises `TimeoutError`.")
    compared = [h.text for h in assess(Question("What is the difference between move_on_after and fail_after?", {},
                                                10), text).highlights]
    assert compared[-1].endswith("while the other raises `TimeoutError`."), compared
    unlike = "Unlike `move_on_after`, `fail_after` raises `TimeoutError`. Both are context managers."
    assert [h.text for h in assess(Question("How does fail_after differ from move_on_after?", {}, 10),
                                   unlike).highlights] == [unlike.split(" Both")[0]]
    named = [h.text for h in assess(Question("Which ways are there to time out: move_on_after and fail_after?", {},
                                             10), text).highlights]
    assert not named[-1].endswith("`TimeoutError`."), named


@pytest.mark.parametrize("opening, brings", [
    ("There are several common reasons why obviously wrong code is not flagged as an error.", True),
    ("Obviously wrong code is sometimes not flagged as an error.", False)])
def test_a_sentence_announcing_what_follows_brings_it(opening: str, brings: bool):
    """"Why doesn't mypy report errors in my obviously wrong function?": "There are several common reasons why ... ."
    announces the reasons as a sentence ending in ":" does, and the first comes along. Control: a sentence announcing
    nothing comes alone."""
    text = (f"{opening}\n\n**The function containing the error is not annotated.**\n\nOther text about plugins "
            "follows here.")
    found = [h.text for h in assess(Question("Why doesn't mypy flag my obviously wrong code as an error?", {}, 10),
                                    text).highlights]
    assert found[0] == opening and ("**The function containing the error is not annotated.**" in found) is brings


def test_how_short_or_small_asks_for_an_amount():
    """"How short can an HMAC key be?" asks for an amount, as "How long ..." does: the sentence stating it ("at least
    32 bytes") answers, not the example of a short key, which is how a "how" question is answered. Control: "How do I
    shorten ..." asks how."""
    text = ("Short HMAC keys only warn by default:\n\n```python\njwt.encode(payload, 'short', algorithm='HS256')\n```"
            "\n\nAn HMAC key must be at least 32 bytes long.")
    for asked in ("How short can an HMAC key be?", "How small may an HMAC key be?"):
        question = Question(asked, {}, 10)
        assert question.quantity and not question.how
        assert [h.text for h in assess(question, text).highlights] == ["An HMAC key must be at least 32 bytes long."]
    how = Question("How do I shorten an HMAC key?", {}, 10)
    assert how.how and assess(how, text).highlights[-1].text.startswith("```python")


def test_of_units_covering_as_much_the_one_saying_it_in_its_own_words_answers():
    """"What does send() return?": the sentence introducing an example whose code returns covers it all through the
    code; "The return value of `send` collects ..." says it itself, and answers. Control: when that sentence says it
    in other words, the first introduction answers."""
    text = ("Additional keyword arguments can be passed to `send`. These will in turn be passed to the connected "
            "functions:\n\n```python\n>>> @sig.connect\n... def receive(sender, **kw):\n...     return 'ok'\n"
            ">>> result = sig.send('anonymous', abc=123)\n```\n\nThe return value of `send` collects the return "
            "values of each connected function as a list of pairs:\n\n```python\n>>> result\n[(receive, 'ok')]\n```")
    asked = Question("What does send() return?", {}, 10)
    assert assess(asked, text).highlights[0].text.startswith("The return value of `send`")
    other = text.replace("The return value of `send` collects the return values of", "It collects what")
    assert assess(asked, other).highlights[0].text.startswith("Additional keyword")


def test_what_exit_code_or_port_asks_for_a_number():
    """"What exit code ...?" is answered by the sentence giving the code, not the one sharing more of the
    question's words without it. Control: "What is the exit code policy ...?" asks no number."""
    text = ("- code 0 if nothing would change;\n- code 123 if there was an internal error\n\n"
            "With `--quiet` only the exit code will be returned, unless there was an internal error.")
    asked = Question("What exit code is returned on an internal error?", {}, 10)
    assert asked.quantity and assess(asked, text).highlights[0].text == "- code 123 if there was an internal error"
    assert Question("Which port does the server listen on?", {}, 10).quantity
    other = Question("What is the exit code policy on an internal error?", {}, 10)
    assert not other.quantity and [h.text for h in assess(other, text).highlights] == [text.split("\n\n")[1]]


def test_what_is_the_largest_or_maximum_asks_for_a_number():
    """"What is the largest interval I can give -s?" asks for an amount: an entry's sentence giving it ("... to as much
    as 60 seconds") answers, not only the entry's first sentence sharing the question's words. Control: "What does
    ... set?" asks no number."""
    text = ("`-s`, `--scheduler-interval`:\nThe frequency with which the scheduler should run. By default this will run "
            "every second, but you can increase the interval to as much as 60 seconds.")
    for asked in ("What is the largest scheduler interval I can give with the -s option?",
                  "What's the maximum frequency the scheduler can be set to run with?"):
        question = Question(asked, {}, 10)
        assert question.quantity and "60 seconds" in " ".join(h.text for h in assess(question, text).highlights)
    other = Question("What does the -s option set the scheduler frequency to do?", {}, 10)
    assert not other.quantity and "60 seconds" not in " ".join(h.text for h in assess(other, text).highlights)


def test_a_question_asking_after_what_it_sets_up_asks_as_if_it_began_there():
    """Users say what happened, then ask: "My view returns a generator ... How do I keep the request available?" asks
    how, "... on my Mac; what port ..." asks for a number, as if the question began there. Control: "how" inside a
    clause ("Why does the guide say how to deploy?") asks why, not how."""
    assert Question("My view streams a generator. How do I keep the request available?", {}, 10).how
    assert Question("Under load my endpoints stall; how do I raise that cap?", {}, 10).how
    assert Question("It fails under load, how?", {}, 10).how
    assert Question("The server starts twice. Which port does it use?", {}, 10).quantity
    assert not Question("Why does the guide say how to deploy?", {}, 10).how
    assert not Question("The server starts twice. Why?", {}, 10).how


def test_make_in_a_question_is_asking_not_the_need():
    """"How do I make an argument accept unlimited values?": "make" is how it is asked, as "how do I" is -- a
    sentence saying "make an argument ..." about something else is no better for it. Control: the need's words."""
    text = ("To make an argument accept a default, give it one.\n\nLogs go elsewhere. Workers restart. Hooks run.\n\n"
            "An unlimited number of values is accepted when nargs is -1.")
    q = Question("How do I make an argument accept unlimited values?", {}, 10)
    assert "make" not in q.weights and [h.text for h in assess(q, text).highlights] == [text.split("\n\n")[-1]]
    assert set(q.weights) == {"argument", "accept", "unlimit", "valu"}
    assert "make" in Question("When did the band make its first record?", {}, 10).weights


def test_a_question_asking_for_a_default_is_answered_by_the_sentence_saying_it():
    """The sentence covering most of "What is the default timeout ..." says nothing of a default; the one that
    does answers; asked "Which timeout ..." (the control), the best-covering one."""
    text = "The request timeout is checked per route.\n\nLogs go elsewhere. Workers restart. By default it is 30 seconds."
    idf = {"request": 2.0, "timeout": 3.0, "default": 1.0}
    asked = assess(Question("What is the default request timeout?", idf, 10), text)
    assert [h.text for h in asked.highlights] == ["By default it is 30 seconds."]
    which = assess(Question("Which request timeout is checked?", idf, 10), text)
    assert [h.text for h in which.highlights] == ["The request timeout is checked per route."]
    # in any form: "... the `SHELL` environment variable will be used, defaulting to `bash`."
    defaulting = text.replace("By default it is 30 seconds.", "A setting holds it, defaulting to 30 seconds.")
    asked = assess(Question("Which request timeout does it default to?", idf, 10), defaulting)
    assert [h.text for h in asked.highlights] == ["A setting holds it, defaulting to 30 seconds."]


def test_a_question_asking_what_holds_when_nothing_is_given_asks_for_a_default():
    """Whoosh: "... what maximum edit distance is used if I write a fuzzy term like cat~ without a number?" asks for the
    default without the word -- "If you don't specify an edit distance, the default is `1`." answers; so does "If I
    don't configure license-files, which glob patterns ...?". Controls: "How can ... without setting it ...?" and "Why
    ... without a percent sign?" ask no default (how to do without, why)."""
    fuzzy = ("Once you add the fuzzy plugin to the parser, you can specify a fuzzy term by adding a `~` followed by an "
             "optional maximum edit distance. If you don't specify an edit distance, the default is `1`.")
    asked = Question("With the FuzzyTermPlugin, what maximum edit distance is used if I write a fuzzy term like cat~ "
                     "without a number?", {}, 10)
    assert asked.default
    assert "If you don't specify an edit distance, the default is `1`." in [h.text for h in assess(asked, fuzzy).highlights]
    assert Question("If I don't configure license-files, which glob patterns does it use?", {}, 10).default
    assert not Question("How can every key be converted automatically without setting it field by field?", {}, 10).default
    assert not Question("Why is a cell left untouched when a line is written without a percent sign?", {}, 10).default


@pytest.mark.parametrize(("text", "states"), [
    ("If the URL is one that may modify or delete data, the consequences can be dire.", False),  # a pronoun
    ("Once Lingua is installed, you may extract a message catalog.", False),  # a conjunction
    ("See https://github.com/Pylons/pyramid/pull/3300 for the change.", False),  # a link's digits
    ("The session holds fewer than 4000 bytes.", True), ("Only one worker runs.", True),
    ("It retries once.", True), ("One of the workers restarts.", False),
    ("You can also change the default timeout for all the jobs of a queue at once.", False)])  # "at once": together
def test_a_quantity_is_a_number_the_text_states(text, states):
    """"How much data can I store ...?" is answered by a sentence stating a number: a pronoun "one", "Once" opening
    a clause, "at once" and the digits of a link state none, and a changelog entry linking its pull request is no
    answer."""
    assert states_number(text) is states


def test_a_question_for_a_default_naming_a_snippet_asks_for_the_value_not_to_be_shown():
    """"What is the default timeout for running a code snippet ...?" asks for a value: "snippet" names what the
    timeout is for, it does not ask for one -- the "Default:" line answers, not the description beside it. Asked for
    an example of it, the question is one of how (control); "for example" gives one, it asks for none."""
    text = ("##### RUN_TIMEOUT\n\nDefault: `30.0`\n\nThe default timeout in seconds for running a single code "
            "snippet sent to the `/execute` endpoint. Override it per request via the `timeout_sec` field.")
    asked = Question("What is the default timeout for running a single code snippet sent to the /execute endpoint?",
                     {}, 10)
    assert asked.default and not asked.how
    # the sentence saying "default" names the endpoint in code, the question's own word: it gives no value
    assert "Default: `30.0`" in [h.text for h in assess(asked, text).highlights]
    assert Question("Is there an example of a code snippet sent to the endpoint?", {}, 10).how
    assert not Question("Which setting renames the cookie, for example to add a prefix?", {}, 10).how


def test_a_question_setting_the_default_aside_does_not_ask_for_it():
    """"... a different error response instead of the default 403?" asks for the other thing: the sentence
    saying it answers, not one saying what a default is. Control: asked for the default, that one answers."""
    text = ("Closing before accepting sends a 403 error. To send a different error response, use the "
            "`send_denial_response()` method.\n\nThe error handler defaults to plain-text responses.")
    aside = Question("Which method sends a different error response instead of the default 403?", {}, 10)
    assert not aside.default
    assert "`send_denial_response()`" in " ".join(h.text for h in assess(aside, text).highlights)
    asked = Question("What is the default error response?", {}, 10)
    assert asked.default and [h.text for h in assess(asked, text).highlights] == [
        "The error handler defaults to plain-text responses."]


def test_a_reference_entry_answers_for_the_name_it_stands_under_and_a_default_is_given():
    """A reference page defines names one entry after another: "Default: `timedelta(days=31)`" says nothing of
    the name it is about, but stands under it; and of sentences saying "default", the one giving it answers.
    Controls: the entry of another name (its sentence covers less), and a label that is no name ("Note:")."""
    text = ("SESSION_COOKIE_SECURE:\nSend the cookie over HTTPS only.\n\nDefault: `False`\n\n"
            "PERMANENT_SESSION_LIFETIME:\nIf `session.permanent` is true, the cookie expires this many seconds later.\n\n"
            "The default cookie implementation checks the signature's age against this value.\n\n"
            "Default: `timedelta(days=31)`\n\n"
            "SESSION_REFRESH_EACH_REQUEST:\nSend the permanent session cookie with every response (the default).\n\n"
            "Default: `True`")
    asked = Question("What is the default PERMANENT_SESSION_LIFETIME?", {}, 10)
    # the answer reads with the term it stands under, named on the entry's first line
    assert [h.text for h in assess(asked, text).highlights] == [
        "PERMANENT_SESSION_LIFETIME:\nIf `session.permanent` is true, the cookie expires this many seconds later.",
        "Default: `timedelta(days=31)`"]
    labelled = text.replace("PERMANENT_SESSION_LIFETIME:", "Note:")
    assert "Default: `timedelta(days=31)`" not in [h.text for h in assess(asked, labelled).highlights]


@pytest.mark.parametrize("term, named", [("m3u/default_encoding:", True),
                                         ("Default encoding:", False)])  # control: a label, no setting's name
def test_a_setting_named_under_its_section_is_a_reference_entry(term: str, named: bool):
    """Mopidy's settings are named under their section ("m3u/default_encoding:"): the entry's "Default is `latin-1`."
    stands under that name, and answers "Which encoding does it assume for .m3u files?" with the words the name
    says. Control: a label in words is no name, and its default stands under nothing."""
    text = ("m3u/playlists_dir:\nPath to directory with M3U files.\nUnset by default.\n\n"
            f"{term}\nText encoding used for files with extension `.m3u`.\nDefault is `latin-1`.\n"
            "Note that files with extension `.m3u8` are always\nexpected to be UTF-8 encoded.\n\n"
            "m3u/default_extension:\nThe file extension for M3U playlists created using the core playlist API.\n"
            "Default is `.m3u8`.")
    asked = Question("Playlists I saved come out garbled. Which encoding does it assume for .m3u files, and which "
                     "extension is always read as UTF-8?",
                     {"playlists": 1.0, "saved": 5.0, "garbled": 6.5, "encoding": 3.6, "assume": 4.6, "m3u": 3.0,
                      "files": 2.0, "extension": 1.2, "always": 2.6, "read": 2.9, "utf-8": 3.7, "utf": 3.6, "8": 3.0,
                      "come": 4.0, "out": 2.3}, 10)
    said = " ".join(h.text for h in assess(asked, text).highlights)
    assert "`.m3u8` are always" in said and ("`latin-1`" in said) is named


def test_a_list_items_later_sentence_answers_for_the_term_the_item_defines():
    """"* `max_age` - Sets ... . Defaults to `600`.": the item's second sentence says nothing of the name it is
    about, but the item defines it; the answer reads with the item's start. Controls: the same sentences in a
    paragraph of their own (no item defines a term), and another item's default."""
    items = ("The following arguments are supported:\n\n"
             "* `allow_methods` - A list of HTTP methods allowed. Defaults to `['GET']`.\n"
             "* `allow_headers` - A list of request headers. Defaults to `[]`.\n"
             "* `max_age` - Sets a maximum time in seconds for browsers to cache responses. Defaults to `600`.\n")
    asked = Question("What is the default max_age for the middleware?", {}, 10)
    found = [h.text for h in assess(asked, items).highlights]
    assert found == ["* `max_age` - Sets a maximum time in seconds for browsers to cache responses.", "Defaults to `600`."]
    other = [h.text for h in assess(Question("What is the default allow_headers?", {}, 10), items).highlights]
    assert other == ["* `allow_headers` - A list of request headers.", "Defaults to `[]`."]
    prose = items.replace("* ", "The option ")  # no list: "Defaults to ..." stands under nothing
    assert "Defaults to `600`." not in [h.text for h in assess(asked, prose).highlights]
    # every item a sentence of the answer belongs to comes with its start, not only the best sentence's
    session = ("Sessions:\n\n- `session_cookie` - The name of the session cookie. Defaults to \"session\".\n"
               "- `max_age` - Session expiry time in seconds. Defaults to 2 weeks.\n")
    found = [h.text for h in assess(Question("how long does the session cookie last by default?", {}, 10),
                                     session).highlights]
    assert "Defaults to 2 weeks." in found and "- `max_age` - Session expiry time in seconds." in found, found
    assert "Defaults to \"session\"." not in found or "- `session_cookie` - The name of the session cookie." in found


def test_a_list_items_later_sentence_is_scored_with_the_items_start_it_reads_with():
    """Starlette's GZip options: "Below what response size does GZipMiddleware skip compression by default?" --
    "Defaults to `500`." reads with "* `minimum_size` - Do not GZip responses that are smaller than this minimum
    size in bytes." and answers with all the two say; another item's "Defaults to ..." naming "already-compressed
    formats - zip and gzip archives" covered more on its own. Control: asked of that item, it answers."""
    items = ("The following arguments are supported:\n\n"
             "* `minimum_size` - Do not GZip responses that are smaller than this minimum size in bytes. "
             "Defaults to `500`.\n"
             "* `compresslevel` - Used during GZip compression. It is an integer ranging from 1 to 9. Defaults to `9`.\n"
             "* `exclude_content_types` - Content types that are never compressed. A response is excluded when its "
             "`Content-Type` media type equals one of these values. Defaults to `DEFAULT_EXCLUDED_CONTENT_TYPES`: "
             "`text/event-stream`, plus already-compressed formats - zip and gzip archives, common raster image types.")
    weights = {"below": 3.72, "respons": 0.97, "size": 2.76, "gzipmiddlewar": 2.99, "g": 2.71, "zip": 2.82,
               "middlewar": 1.02, "skip": 5.33, "compress": 3.48, "default": 2.14}
    asked = Question("Below what response size does GZipMiddleware skip compression by default?", weights, 308)
    found = [h.text for h in assess(asked, items, "Using middleware\nGZipMiddleware").highlights]
    assert found[:2] == ["* `minimum_size` - Do not GZip responses that are smaller than this minimum size in bytes.",
                         "Defaults to `500`."], found
    excluded = Question("Which content types are never compressed by default?", {}, 308)
    found = [h.text for h in assess(excluded, items).highlights]
    assert found[0] == "* `exclude_content_types` - Content types that are never compressed.", found

def test_a_code_block_too_long_to_quote_answers_with_its_lines_that_cover_the_question():
    """A command's whole --help output holds every word of a question, each on another option's line: it answers
    with the few lines that cover most (marked as code), and covers only what they do -- quoted as those lines, as
    a listing's are wherever they lie; a program is quoted from its start when they lie in the part a quote can
    hold (its head sets up what they use). Control: a short block is quoted whole."""
    options = [f"  --option-{n:03d}          Does thing number {n} of the tool." for n in range(60)]
    options[41:43] = ["  --durations=N         Show N slowest setup/test durations (N=0 for all)",
                      "  --durations-min=N     Minimal duration in seconds for inclusion in slowest"]
    text = "Every flag of the tool:\n\n```\n" + "\n".join(options) + "\n```\n\nThe end."
    q = Question("How do I show the slowest test durations?", {}, 10)
    found = assess(q, text)
    code = [h for h in found.highlights if h.code]
    assert code and code[0].text.lstrip().startswith("--durations=N") and "--option-040" not in code[0].text
    assert text[code[0].start:code[0].end] == code[0].text and len(code[0].text.splitlines()) <= 3
    early = options[:2] + options[41:43] + options[2:41] + options[43:]  # the answering lines in the quotable part
    listing = [h for h in assess(q, "Every flag:\n\n```console\n" + "\n".join(early) + "\n```").highlights if h.code]
    assert listing[0].text.lstrip().startswith("--durations=N") and len(listing[0].text.splitlines()) <= 3
    program = "\n".join(f"tool.add('{line.split()[0]}', help='{' '.join(line.split()[1:])}')" for line in early)
    head = [h for h in assess(q, f"Every flag:\n\n```python\n{program}\n```").highlights if h.code]
    assert head[0].text.startswith("```python\ntool.add('--option-000'") and 900 < len(head[0].text) <= MAX_CODE_CHARS
    assert "--durations=N" in head[0].text
    short = "Every flag of the tool:\n\n```\n" + "\n".join(options[40:44]) + "\n```"
    whole = [h for h in assess(q, short).highlights if h.code]
    assert whole and whole[0].text.startswith("```") and whole[0].text.endswith("```")


def test_a_pointer_to_another_page_is_no_answer():
    """"See also: printing output." holds both words of "How do I see my prints?" and says nothing: the sentence
    that does answers. Control: the same words in a sentence of their own are one."""
    q = Question("How do I see my prints?", {}, 10)
    text = "See also: printing output.\n\nPass -s to show prints as they happen."
    assert [h.text for h in assess(q, text).highlights] == ["Pass -s to show prints as they happen."]
    plain = "You see prints of failing tests only.\n\nPass -s to show prints as they happen."
    assert assess(q, plain).highlights[0].text == "You see prints of failing tests only."
    short = Question("How do I exclude lines?", {}, 10)  # "See <name>." alone points too
    text = "Advanced exclusion of lines. See multi_line_exclude.\n\nAdd `# pragma: no cover` to exclude lines."
    assert "See multi_line_exclude." not in [h.text for h in assess(short, text).highlights]
    # "Also see the X section in the Y docs." points too (pluggy's firstresult was answered with it)
    first = Question("What does firstresult do on a hook specification?", {}, 10)
    text = ("A hookspec can be marked so that the hook call stops at the first result other than `None`.\n\n"
            "Also see the pytest:firstresult section in the `pytest` docs.")
    assert [h.text for h in assess(first, text).highlights] == [text.split("\n\n")[0]]


def test_a_heading_naming_a_release_or_release_notes_marks_them_and_one_mentioning_a_version_does_not():
    for section in ("Changelog › pytest 3.8.0 (2018-09-05)", "Release Notes › 0.115.0", "Version 3.0.3",
                    "v2.1 release notes", "Changes 2.6.1", "News › 26.3 (2025-10-24)",
                    # release notes by name, their versions not headings (Sphinx changelog directives)
                    "Changelog › Improvements", "What's New in Pyramid 1.10 › Feature Additions",
                    "Change history for coverage.py", "Version history", "Release Notes", "Changes in 2.0"):
        assert release_notes(section), section
    for section in ("Built-in Caching (v1.9.1 and later) › Cache isolation in 1.17", "Install › Python 3.8 and newer",
                    "Flask 3.0 support", "Exit codes", "Changes in behaviour", "Tracking changes", "Newsletter",
                    "History", "Changes", "News", "What's New", ""):
        assert not release_notes(section), section
    assert Question("Which version added the flag?", {}, 10).history
    assert not Question("Which flag stops the run?", {}, 10).history


def test_which_thing_is_asked_wherever_the_asking_starts():
    """"Which variable ...", "Which environment variable ...", "Which pip config environment variable ..." (up to three
    words before the kind of thing), "In tests, which option ..." and "What macOS service ..." ask which thing, one
    with a name; "Which is faster?" and "What is the default?" do not."""
    for asked in ("Which variable sets the line length?", "Which environment variable moves the cache?",
                  "Which pip config environment variable moves the cache?", "In tests, which option skips it?",
                  "flask run says address already in use. What macOS service is using that port?"):
        assert Question(asked, {}, 10).which, asked
    for asked in ("Which is faster, the cache or the batch API?", "What is the default timeout?",
                  "What is the default error response?"):
        assert not Question(asked, {}, 10).which, asked
    # "default" describing the thing asked for asks which one, not what a default is; control: "the default timeout"
    named = Question("Which default Python Markdown extension does the new one replace?", {}, 10)
    assert named.which and not named.default
    assert Question("Which option sets the default timeout?", {}, 10).default


def test_a_which_question_naming_code_is_answered_by_the_sentence_naming_it():
    """"Which default Tool plugin does `tool.betty` replace ...?": the intro covers more of the question's common words
    ("default", "plugins", "loaded at the same time"), the list item names `tool.betty` and what it replaces -- a
    question naming a thing in code asks about that thing. Controls: without the name the intro answers; a sentence
    naming the thing and nothing more ("Loading `tool.betty` twice is harmless.") answers nothing of "which"."""
    text = ("Tool includes three plugins that are meant to **replace** their counterpart in the default Tool plugins; "
            "**they cannot be loaded at the same time**. You need not use them all.\n\nAlso, include each plugin only once. "
            "Some plugins bundle others.\n\n- `tool.fastx` replaces `core.plugins.fenced`.\n\n"
            "- `tool.betty` replaces `core.plugins.strong`.\n\nLoading `tool.betty` twice is harmless.")
    named = Question("Which default Tool plugin does tool.betty replace, so that the two cannot be loaded at the same "
                     "time?", {}, 100)
    assert [h.text for h in assess(named, text).highlights] == ["- `tool.betty` replaces `core.plugins.strong`."]
    unnamed = Question("Which default Tool plugin does the new one replace, so that the two cannot be loaded at the "
                       "same time?", {}, 100)
    assert assess(unnamed, text).highlights[0].text.startswith("Tool includes")
    bare = text.replace("`tool.betty` replaces `core.plugins.strong`", "`tool.betty` is one of them")
    assert "core.plugins" not in " ".join(h.text for h in assess(named, bare).highlights)
    assert not any("harmless" in h.text for h in assess(named, bare).highlights)


@pytest.mark.parametrize("named, found", [
    ("To use Tracker you need to install the `tracker-sdk` client with extra `flask` dependencies.", True),
    ("To use Tracker you need to install the `tracker-sdk` client.", False),  # control: it adds nothing the answer lacks
    ("To use Tracker you need to install its client with extra flask dependencies.", False)])  # control: names nothing
def test_a_which_answer_naming_nothing_brings_the_sentence_naming_what_it_leaves_out(named: str, found: bool):
    """"Which package do I pip install to report my Flask app's errors to Tracker?": the sentence covering most
    ("After installation, failures ... are automatically reported to Tracker ...") names nothing, and nothing after it
    does; the one naming the package and saying what that one leaves out ("flask") comes along, though it stands
    before it. Controls: a naming sentence adding no word of the question, and one naming nothing, do not."""
    text = (f"We recommend Tracker for dealing with application errors. {named}\n\nAnd then add this to your app:\n\n"
            "```python\nimport tracker\ntracker.init(DSN)\n```\n\nAfter installation, failures leading to an Internal "
            "Server Error are automatically reported to Tracker and from there you can receive error notifications.")
    question = Question("Which package do I pip install to report my Flask app's errors to Tracker?",
                        {"package": 2.6, "pip": 3.0, "install": 2.6, "report": 4.9, "flask": 0.4, "app": 0.7,
                         "errors": 2.4, "tracker": 5.2}, 100)
    said = [h.text for h in assess(question, text).highlights]
    assert said[-1].startswith("After installation") and (named in said) is found, said


@pytest.mark.parametrize("said, asked, whether, name, unnamed, first", [
    ("By default, a group is not invoked unless a subcommand is passed. In fact, not providing one passes `--help` "
     "instead.{gap}This changes with `{name}` on the group. Groups nest.",
     "How can a group be invoked when no subcommand is passed?", "Is a group invoked when no subcommand is passed?",
     "invoke_without_command=True", "always=True", "By default"),
    ("Aliases are often chained. In this case the alias cannot be resolved, since the chain goes in a loop."
     "{gap}Then it stops with a `{name}`. Chains resolve lazily.",
     "Which exception do I get when resolving an alias chain that loops?", "Can an alias chain that loops be resolved?",
     "CyclicAliasError", "alias", "Aliases are often chained"),  # "In this case" reads with what the case is
], ids=["how", "which"])
def test_an_answer_reads_on_in_its_paragraph_to_the_sentence_naming_what_is_asked(said: str, asked: str, whether: str,
                                                                                 name: str, unnamed: str, first: str):
    """Docs state the task, then say how a sentence or two later ("This changes with `invoke_without_command=True`";
    one saying what to do, "pass ...", answers a "how" question on its own), or set the scene, then name the thing asked ("... the chain goes in a loop. Then
    it stops with a `CyclicAliasError`"). Controls: a question asking neither, code naming nothing the answer lacks
    (for "how", none of the question's words; for "which", only the question's), and the same sentence past a
    paragraph break are not read on to."""
    question, text = Question(asked, {}, 10), said.format(gap=" ", name=name)
    found = [h.text for h in assess(question, text).highlights]
    assert found[0].startswith(first) and f"`{name}`" in found[-1], found
    assert not any("Groups nest" in h or "lazily" in h for h in found)
    assert not any(name in h.text for h in assess(Question(whether, {}, 10), text).highlights)
    assert not any(f"`{unnamed}`" in h.text for h in assess(question, said.format(gap=" ", name=unnamed)).highlights)
    assert not any(name in h.text for h in assess(question, said.format(gap="\n\n", name=name)).highlights)


def test_a_name_joining_two_words_of_the_question_is_nothing_new():
    """"Which Sentinel method should the connection pool come from?": "`RedisHuey` accepts a pre-configured
    `connection_pool`" names only what the question says ("connection pool" written as one name), so the answer reads
    on to the sentence naming `master_for()`. Control: a name joining words the question does not put together is
    new, and nothing is read on."""
    text = ("`RedisHuey` accepts a pre-configured `connection_pool`, which means huey works with Redis Sentinel. "
            "The pool returned by `master_for()` follows the current master after a failover.")
    question = Question("When using Redis Sentinel with RedisHuey, which Sentinel method should the connection pool "
                        "come from?", {}, 10)
    assert "`master_for()`" in " ".join(h.text for h in assess(question, text).highlights)
    apart = Question("When using Redis Sentinel with RedisHuey, which Sentinel method should the pool of each "
                     "connection come from?", {}, 10)
    assert "`master_for()`" not in " ".join(h.text for h in assess(apart, text).highlights)


def test_a_which_answer_naming_nothing_shows_the_code_right_after_it():
    """"Which tox command rebuilds the lexer mapping?": the docs say "... made publicly known by rebuilding the lexer
    mapping." and show the command in the block after it -- the block names what the sentence does not. Controls: a
    block past a heading is another section's, and a question asking whether, not which, is answered by the sentence."""
    text = ("* Next, list the lexer class in `__all__`.\n\n* Finally the lexer can be made publicly known by rebuilding "
            "the lexer mapping.\n\n```console\n$ tox -e mapfiles\n```\n\nRun the tests afterwards.")
    which = Question("After adding a lexer, which tox command rebuilds the lexer mapping?", {}, 10)
    assert [h.text for h in assess(which, text).highlights][-1] == "```console\n$ tox -e mapfiles\n```"
    parted = text.replace("\n\n```console", "\n\n## Testing\n\n```console")
    assert not any("mapfiles" in h.text for h in assess(which, parted).highlights)
    whether = Question("Does adding a lexer require rebuilding the lexer mapping?", {}, 10)
    assert not any("mapfiles" in h.text for h in assess(whether, text).highlights)
    # ... and past the sentence introducing it: "An experienced user can enable this feature by providing:"
    ini = ("Nested step modules caused problems. Therefore, loading nested step modules is disabled by default.\n\n"
           "An experienced user can enable this feature by providing:\n\n```ini\n[tool]\nuse_nested = true\n```")
    setting = Question("Which ini setting turns on loading nested step modules, now disabled by default?", {}, 10)
    said = [h.text for h in assess(setting, ini).highlights]
    assert said[-2:] == ["An experienced user can enable this feature by providing:", "```ini\n[tool]\nuse_nested = true\n```"]
    apart = ini.replace("\n\nAn experienced", "\n\n## Enabling\n\nAn experienced")  # control: another section
    assert not any("use_nested" in h.text for h in assess(setting, apart).highlights)


def test_a_question_asking_for_a_means_reads_on_to_the_sentence_naming_it():
    """"Is there a single setting for that?", "Can I ...?": the docs state the need, then name the means a sentence
    later ("Enabling the `detached` option ..."). Controls: a question asking why (no means) is answered by the
    sentence, and a "can" inside a question is not its asking ("Why can a lint environment skip ...?")."""
    text = ("A common use case is standalone environments that neither inherit settings nor install the project, such "
            "as for linting. Enabling the `detached` option makes the environment skip project installation.")
    for asked in ("I want a lint environment that installs nothing and inherits no settings. Is there a setting for "
                  "that?", "Can I have a lint environment that neither inherits settings nor installs the project?"):
        assert "`detached`" in " ".join(h.text for h in assess(Question(asked, {}, 10), text).highlights), asked
    for asked in ("Why would a lint environment neither inherit settings nor install the project?",
                  "Why can a lint environment neither inherit settings nor install the project?"):
        assert "`detached`" not in " ".join(h.text for h in assess(Question(asked, {}, 10), text).highlights), asked


def test_a_which_answer_names_in_quotes_too():
    """"What macOS service ...?": the sentence after the answer names it in quotes -- "AirPlay Receiver"."""
    service = Question("flask run says the address is in use. What macOS service uses port 5000?", {}, 10)
    text = ('macOS starts a service that uses port 5000. You can turn this service off by searching for '
            '"AirPlay Receiver" in System Settings.')
    assert "AirPlay Receiver" in " ".join(h.text for h in assess(service, text).highlights)


def test_a_how_answer_stating_what_happens_leads_to_the_sentence_saying_how_to_change_it():
    """"By default, `load` will raise ..." [its example] "This behavior can be modified with the `unknown` option,
    which accepts one of the following:" and its items: the docs state what happens, show it, then say how to
    change it -- the sentence after the example that refers back and names code comes along (with what it
    introduces), as does "The `get_parameter_source` method can be used to find this out." Controls: a question
    not asking how; a sentence naming no code; one naming only the question's words; one past a heading."""
    text = ("By default, `load` will raise a `ValidationError` if it encounters a key with no matching `Field`.\n\n"
            "```python\nUserSchema().load({{'extra': 1}})\n# raises ValidationError\n```\n\n{gap}"
            "This behavior can be modified with the {code} option, which accepts one of the following:\n\n"
            "- `RAISE` (default): raise an error\n- `EXCLUDE`: exclude unknown fields\n")
    how = Question("How do I make load drop input keys that match no declared field instead of raising an error?",
                   {}, 10)
    found = [h.text for h in assess(how, text.format(gap="", code="`unknown`")).highlights]
    assert found[0].startswith("By default") and found[1].startswith("This behavior") and "`EXCLUDE`" in found[-1]
    assert not any(h.startswith("```") for h in found), found  # the example of what happens is not how
    tell = Question("How can I tell whether a value came from the environment or is the default?", {}, 10)
    said = ("Whether a value came from the environment or the default can matter. The "
            "`Context.get_parameter_source` method can be used to find this out.")
    found = [h.text for h in assess(tell, said).highlights]
    assert len(found) == 2 and "get_parameter_source" in found[1], found
    # asking what changes it is asking how, and the code a sentence introduces names what it leads to
    cached = ("By default the connector caches DNS resolutions for `10` seconds. This can be tuned, as "
              "in the following example:\n\n```python\nconn = TCPConnector(ttl_dns_cache=300)\n```\n")
    for asked, leads in (("How long does the connector cache DNS resolutions by default, and which parameter changes "
                          "that?", True), ("How long does the connector cache DNS resolutions by default?", False)):
        found = [h.text for h in assess(Question(asked, {}, 10), cached).highlights]
        assert any("ttl_dns_cache" in h for h in found) is leads, (asked, found)
    whether = Question("Does load raise an error for input keys that match no declared field?", {}, 10)
    for question, gap, code in ((whether, "", "`unknown`"), (how, "", "unknown"), (how, "", "`load`"),
                                (how, "## Meta options\n\n", "`unknown`")):
        said = [h.text for h in assess(question, text.format(gap=gap, code=code)).highlights]
        assert not any(h.startswith("This behavior") for h in said), (question.text, gap, code, said)
    # referring back and naming code, but saying what it is, not how to do anything
    described = text.format(gap="", code="`unknown`").replace("can be modified with the `unknown` option, which "
                                                               "accepts", "is a `dict` of")
    assert not any(h.startswith("This behavior") for h in (x.text for x in assess(how, described).highlights))


def test_sentences_join_across_the_examples_between_them_but_not_across_code_a_sentence_introduces():
    """A method's sentence, its two examples, then "Pass `temp_dir` to control where ...": an answer counts
    sentences apart, not code blocks, so both join. Control: a first sentence ending in ":" introduces the
    code after it -- an answer does not skip what it introduces, so the later sentence answers alone."""
    text = ("The `runner.isolated_filesystem` method sets the working directory to a new, empty folder{end}\n\n"
            "```python\nimport click\n```\n\n```python\nwith runner.isolated_filesystem():\n    open('x', 'w')\n```\n\n"
            "Pass `temp_dir` to control where the temporary directory is created. It is not removed then.")
    # (the method in words: written `isolated_filesystem`, the name is a word of its own too, and the sentence naming
    # it ties with the one saying how -- the earlier wins, and the code after it stands between)
    q = Question("How do I control where the isolated filesystem creates its temporary directory?", {}, 10)
    joined = [h.text for h in assess(q, text.format(end=".")).highlights]
    assert joined[0].startswith("The `runner.isolated_filesystem`") and joined[1].startswith("Pass `temp_dir`")
    introduced = [h.text for h in assess(q, text.format(end=", like this:")).highlights]
    assert introduced == ["Pass `temp_dir` to control where the temporary directory is created.",
                          "It is not removed then."]  # (what limits it comes along)


def test_which_setting_should_i_set_asks_how_and_brings_the_example():
    """"Which profile should I set ...?" asks what to write: the sentence answers with the example it leads to.
    Control: "Which profile is set ...?" asks for a name; the sentence alone."""
    text = ("You can set the black profile in any of the config files. Below, an example for `pyproject.toml`:\n\n"
            "```toml\n[tool.isort]\nprofile = \"black\"\n```")
    how = Question("Which isort profile should I set to make isort compatible with Black?", {}, 10)
    assert how.how and 'profile = "black"' in " ".join(h.text for h in assess(how, text).highlights)
    name = Question("Which isort profile is set to make isort compatible with Black?", {}, 10)
    assert not name.how and 'profile = "black"' not in " ".join(h.text for h in assess(name, text).highlights)


def test_what_should_i_use_or_call_asks_how():
    """"What should I use?" and "What should I call instead of the pause?" ask what to write, as "What do I add?" does:
    the sentence leads to the example showing it. Control: "What should I know ...?" asks no such thing."""
    text = ("Suppose you need to download something from the internet once. Mark the task:\n\n"
            "```python\ndef task_get():\n    return {'actions': [fetch], 'uptodate': [run_once]}\n```")
    for asked in ("My task downloads an archive and I don't want the download repeated. What should I use?",
                  "My task downloads an archive every time. What should I call so it downloads only once?"):
        question = Question(asked, {}, 10)
        assert question.how and "run_once" in " ".join(h.text for h in assess(question, text).highlights), asked
    assert not Question("My task downloads an archive. What should I know about downloads?", {}, 10).how


def test_a_how_answers_code_counts_in_what_it_answers():
    """"How do I send JSON in a POST request?": "If you want to send JSON data:" introduces the call that says the
    rest (`session.post(url, json=...)`) -- for a how question that code is the answer, so what the answer covers
    counts it; so it does for any question, the sentence introducing it (":") being read with it. Control: after a
    sentence not introducing it, the code is an example, read with the answer to a question not asking how."""
    text = "If you want to send JSON data:\n\n```\nasync with session.post(url, json={'a': 1}) as resp:\n    ...\n```"
    idf = {"send": 2.0, "json": 2.0, "post": 2.0, "request": 0.5}
    how = assess(Question("How do I send JSON in a POST request?", idf, 10), text)
    assert how.highlights[-1].code and how.focus == how.coverage
    what = Question("What JSON data is sent in a POST request?", idf, 10)
    assert assess(what, text).focus == assess(what, text).coverage
    example = assess(what, text.replace("data:", "data."))
    assert example.focus < example.coverage


def test_what_do_i_add_asks_how_and_is_answered_by_the_code_to_add():
    """"What do I add to ~/.bashrc ...?" asks for what to write, as "How do I ...?" does: the Bash tab's code
    answers, not the Fish tab's sentence sharing more words. Control: "What is added ...?" asks what a thing is -- and
    is answered by the same code, which the sentence ending in ":" introduces (it reads with it whatever is asked)."""
    idf = {"add": 0.4, "foo": 1.0, "bar": 1.0, "completion": 1.0, "shell": 1.5, "bash": 2.0, "enable": 2.0,
           "bashrc": 2.5}
    text = ("Tabs:\n\nBash:\nAdd this to `~/.bashrc`:\n\n```bash\neval \"$(_FOO_BAR_COMPLETE=bash_source foo-bar)\"\n```"
            "\n\nFish:\nAdd this to `~/.config/fish/completions/foo-bar.fish`:\n\n"
            "```fish\n_FOO_BAR_COMPLETE=fish_source foo-bar | source\n```")
    how = Question("What do I add to ~/.bashrc to enable Bash shell completion for foo-bar?", idf, 10)
    assert how.how and [h.text.split("\n")[0] for h in assess(how, text).highlights] == ["Bash:", "```bash"]
    what = Question("What is added to ~/.bashrc to enable Bash shell completion for foo-bar?", idf, 10)
    assert not what.how and [h.text.split("\n")[0] for h in assess(what, text).highlights] == ["Bash:", "```bash"]


def test_a_how_questions_sentence_is_read_with_the_code_after_it_and_code_repeating_the_question_is_no_answer():
    """"You can configure `git` to ignore revisions ... on every call to `git blame`." then the command: for a how
    question the sentence is read with its code (which names the file the question does), so it outranks a later
    sentence naming the file in prose, and its inline code, repeating the question's own words, does not stand in
    for the command. Controls: a question not asking how takes the statement; inline code saying more than the
    question ("pass `--ignore-revs-file`") is the answer itself, and no block is shown."""
    text = ("You can even configure `git` to automatically ignore revisions listed in a file on every call to "
            "`git blame`.\n\n```console\n$ git config blame.ignoreRevsFile .git-blame-ignore-revs\n```\n\n"
            "The one caveat is that some hosts ignore it. However, GitHub supports `.git-blame-ignore-revs` "
            "in blame views by default.")
    idf = {"configure": 2.0, "git": 1.0, "blame": 2.0, "ignore": 2.0, "revs": 4.0, "commits": 1.0, "listed": 1.0}
    how = Question("How do I configure git so that git blame always ignores the commits listed in "
                   ".git-blame-ignore-revs?", idf, 10)
    found = [h.text for h in assess(how, text).highlights]
    assert found == ["You can even configure `git` to automatically ignore revisions listed in a file on every call "
                     "to `git blame`.", "```console\n$ git config blame.ignoreRevsFile .git-blame-ignore-revs\n```"]
    which = Question("Which hosts support .git-blame-ignore-revs in blame views?", idf, 10)
    assert not any(h.code for h in assess(which, text).highlights)
    named = text.replace("on every call to `git blame`.", "when you pass `--ignore-revs-file` to blame.")
    assert not any(h.code for h in assess(how, named).highlights)


def test_an_answer_brings_the_sentences_it_refers_back_to_and_the_instead_after_it():
    """"This variable can also be set to `off` ..." reads only with what "this variable" is: the sentences before it
    in its paragraph that it refers back to come along (up to three in all); docs saying what not to do
    ("Using `@app.task` ... won't be available ...") go on with what to do ("Instead, use `@shared_task`"), and
    docs stating a problem with what to do about it ("To fix this, ..."), and a condition with what holds without it
    ("Otherwise, ..."). Controls: a sentence referring back across a paragraph break, and one not referring back, come
    alone."""
    text = ("An explicit PIN can be provided through the environment variable `DEBUG_PIN`. This can be set to a "
            "number and will become the PIN. This variable can also be set to the value `off` to disable the PIN "
            "check entirely.")
    q = Question("What value disables the PIN check?", {}, 10)
    assert [h.text for h in assess(q, text).highlights][0].startswith("An explicit PIN")
    apart = text.replace(" This can be set", "\n\nThis can be set")
    assert [h.text for h in assess(q, apart).highlights][0].startswith("This can be set")
    plain = text.replace("This variable can also", "The variable can also")
    assert [h.text for h in assess(q, plain).highlights] == [
        "The variable can also be set to the value `off` to disable the PIN check entirely."]
    tasks = ("Using `@app.task` to decorate task functions requires the `app` object, which won't be available "
             "with the factory pattern.\n\nInstead, use the `@shared_task` decorator.\n\nTasks run in workers.")
    which = Question("Which decorator should I use to define tasks with the factory pattern?", {}, 10)
    assert [h.text for h in assess(which, tasks).highlights][-1] == "Instead, use the `@shared_task` decorator."
    after = tasks.replace("\n\nInstead, use", "\n\n## Shared\n\nInstead, use")  # another section
    assert "Instead" not in " ".join(h.text for h in assess(which, after).highlights)
    more = tasks.replace("factory pattern.", "factory pattern. It also ties tasks to one app.")  # paragraph goes on
    assert [h.text for h in assess(which, more).highlights][-1] == "Instead, use the `@shared_task` decorator."
    # ... or what to do about it ("To fix this, ..."); a sentence not saying so stays behind (control)
    gil = ("The server disables the Global Interpreter Lock and with it the threads the scheduler runs jobs in. To fix "
           "this, re-enable it with the `--enable-threads` switch.\n\nRead the server's documentation.")
    never = Question("Why does the scheduler never run jobs under the server?", {}, 10)
    assert [h.text for h in assess(never, gil).highlights][-1].startswith("To fix this")
    gil = gil.replace("To fix this, re-enable", "Some re-enable")
    assert [h.text for h in assess(never, gil).highlights][-1].startswith("The server disables")
    # ... or what holds when it is not done ("Otherwise, ..."), past the code the answer shows
    html = ("When you import HTML, you can pick the table to import by providing the `table_id` argument:\n\n"
            "```\nimport_set(your_html, format='html', table_id='orders')\n```\n\nOtherwise, the first table found "
            "will be imported.\n\nHTML import was added in 3.6.")
    picked = Question("Which table is imported from an HTML page if I give no table_id?", {}, 10)
    assert [h.text for h in assess(picked, html).highlights][-1].startswith("Otherwise")
    html = html.replace("Otherwise, the first", "The first")
    assert not any(h.text.startswith("The first") for h in assess(picked, html).highlights)
    # a sentence the answer shows with its code refers back in turn: "This will keep ..." reads with what "this" is
    stream = ("If you access the `request` while the generator runs, you get a `RuntimeError`.\n\n"
              "If that is a problem, use the `stream_with_context` wrapper. This will keep the "
              "request context active.\n\n```python\nreturn stream_with_context(generate())\n```\n")
    kept = Question("My generator raises a RuntimeError. How do I keep the request available?", {}, 10)
    said = [h.text for h in assess(kept, stream).highlights]
    assert "If that is a problem, use the `stream_with_context` wrapper." in said and said[-1].startswith("```")
    # referring back across a paragraph break (to a sentence not saying what to do, which would answer on its own)
    cut = stream.replace(" This will keep", "\n\nThis will keep").replace("use the", "there is the")
    assert not any("there is the `stream_with_context`" in h.text for h in assess(kept, cut).highlights)
    # a sentence opening on "In that case", "With these ..." refers back too; "In this section" points at the page
    group = ("By default, the help page is shown when no subcommand is given. This behavior can be changed by passing "
             "`invoke_without_command=True` to a group. In that case, the callback is always invoked instead.")
    run = Question("When is the callback always invoked instead?", {}, 10)
    said = [h.text for h in assess(run, group).highlights]
    assert "This behavior can be changed by passing `invoke_without_command=True` to a group." in said
    assert said[-1].startswith("In that case")
    section = group.replace("In that case, the", "In this section, the")
    assert [h.text for h in assess(run, section).highlights] == [
        "In this section, the callback is always invoked instead."]
    # ... and so does a clause opening it: "If you are using this plugin, ..." reads with the sentence naming it
    minify = ("Math may not render in MkDocs. Ask whether you are using the `minify` plugin. If you are using this "
              "plugin, you must stop using it or switch to the default mode.")
    stop = Question("Which plugin must I stop using, or else switch to the default mode?", {}, 10)
    assert "Ask whether you are using the `minify` plugin." in [h.text for h in assess(stop, minify).highlights]
    plain = minify.replace("If you are using this plugin, you", "Users of plugins")
    assert "Ask whether you are using the `minify` plugin." not in [h.text for h in assess(stop, plain).highlights]
    # ... and an opening contrast whose subject is "it": "Instead of ..., it writes ..." says what the thing named
    # before does; control: a subject named in the sentence itself
    style = ("The extension provides a third style called `tool-inline`. Instead of writing the numbers in the pre\n"
             "like the default style does, it writes them as spans. The spans are un-selectable.")
    spans = Question("Which style writes numbers as un-selectable spans?", {}, 10)
    assert [h.text for h in assess(spans, style).highlights][0].startswith("The extension provides")
    named = style.replace("does, it writes them", "does, the span style writes them")
    assert not any("`tool-inline`" in h.text for h in assess(spans, named).highlights)


def test_an_answer_brings_the_sentence_after_it_that_limits_what_it_says():
    """tablib: "Can I import data from LaTeX?" -- "Import/export using the LaTeX format." alone says yes; the docs go on
    "This format is export-only." An answer comes with the sentence right after its last, in its paragraph, that
    refers back to it and limits it. Controls: a sentence after it that refers back without limiting it, and a limiting
    one in the next paragraph, stay behind."""
    q = Question("Can I import data from LaTeX?", {}, 10)
    text = "Import/export using the LaTeX format. This format is export-only.\n\nThe rst format needs docutils."
    assert [h.text for h in assess(q, text).highlights] == [
        "Import/export using the LaTeX format.", "This format is export-only."]
    plain = text.replace("This format is export-only.", "This format is widely used.")
    assert [h.text for h in assess(q, plain).highlights] == ["Import/export using the LaTeX format."]
    apart = text.replace(" This format", "\n\nThis format")
    assert [h.text for h in assess(q, apart).highlights] == ["Import/export using the LaTeX format."]


def test_an_introduced_list_item_introducing_code_brings_it_too():
    """"... in a structure that depends on the `--basetemp` option:" introduces the item "- By default ..., the
    temporary directories will follow this template:", which introduces the template: the answer reads to it.
    Control: an item not ending in ":" does not bring the code after it."""
    text = ("The temporary directories are created under a base directory, in a structure that depends on the "
            "`--basetemp` option:\n\n- By default (without the `--basetemp` option), the temporary "
            "directories will follow this template{end}\n\n```text\n{{temproot}}/pytest-of-{{user}}/\n```\n\nwhere:")
    q = Question("Where are the temporary directories created when the basetemp option is not set?",
                 {"basetemp": 5.0, "temporary": 1.0, "directories": 1.0, "created": 3.0}, 1000)
    assert assess(q, text.format(end=":")).highlights[-1].text == "```text\n{temproot}/pytest-of-{user}/\n```"
    assert not any(h.code for h in assess(q, text.format(end=".")).highlights)


def test_an_answer_keeps_to_the_section_of_its_best_sentence_and_a_sentence_reads_under_its_heading():
    """A merged passage holds sections under their own headings. A sentence under "#### Name formatting" says what
    it says of name formatting, so "By default this option is set to `{value}`." answers the default of the name
    format -- not "If the `default` environment defines matrices ...", which shares more words but stands under
    "#### Default environment" (Hatch's page; it was answered so). And a sentence from the next section never joins
    an answer. Control: without the headings, the other section's sentence covers more and is chosen."""
    q = Question("What is the default value of the matrix-name-format option for environment matrices?",
                 {"default": 1.0, "value": 2.0, "matrix": 3.0, "name": 2.0, "format": 2.0, "option": 1.0,
                  "environment": 1.0, "matrices": 3.0}, 100)
    said, other = "By default this option is set to `{value}`.", \
        "If the `default` environment defines matrices, then the generated names will not be prefixed."
    answer = assess(q, f"#### Name formatting\n\n{said}\n\n#### Default environment\n\n{other}").highlights
    assert [h.text for h in answer] == ["Name formatting", said]  # the heading it counted reads with it
    assert [h.text for h in assess(q, f"{said}\n\n{other}").highlights] == [said, other]


@pytest.mark.parametrize("heading, named", [("FEED_STORAGE_FTP_ACTIVE", True), ("`--log-config`", True),
                                             ("Request.json_body", True), ("_bg", True),  # a leading underscore
                                             ("activate", True), ("dry-run", True),  # a command, as typed
                                             ("Active mode", False), ("Activate", False),  # controls: words,
                                             ("_", False)])  # ... no name
def test_a_heading_naming_code_reads_with_the_sentence_describing_it(heading: str, named: bool):
    """A reference page describes each setting or option under a heading naming it, and its sentence does not:
    "Whether to use the active connection mode ..." under "FEED_STORAGE_FTP_ACTIVE" says nothing a reader can set
    without the name, so the heading reads with it -- even when the sentence holds every word of the question the
    heading does; so does a command named as it is typed ("clean" over "Will clear out the cache ..."). A heading in
    words is a topic, not the thing's name: the sentence reads alone."""
    text = (f"### FTP_USER\n\nThe user name for FTP connections.\n\n### {heading}\n\n"
            "Whether to use the active connection mode when exporting feeds to an FTP server.")
    q = Question("How do I use the active connection mode for FTP feeds?",
                 {"active": 2.0, "connection": 1.0, "mode": 1.0, "ftp": 2.0, "feed": 2.0}, 100)
    found = [h.text for h in assess(q, text).highlights]
    said = "Whether to use the active connection mode when exporting feeds to an FTP server."
    assert found == ([heading, said] if named else [said])
    # a sentence naming it already says which it is
    naming = said.replace("Whether to use", f"{heading.strip('`')} says whether to use")
    assert [h.text for h in assess(q, text.replace(said, naming)).highlights] == [naming]


def test_a_sentence_that_counted_its_heading_answers_with_it():
    """Sphinx reference pages title each setting by a heading and say only "Default: `5.0`" under it: the sentence
    counts the heading's words, so the heading reads with it -- else nothing in the answer says which setting it is.
    Control: a sentence naming the heading's words itself needs no heading."""
    text = ("### AUTOTHROTTLE_ENABLED\n\nDefault: `False`\n\nEnables the AutoThrottle extension.\n\n"
            "### AUTOTHROTTLE_START_DELAY\n\nDefault: `5.0`\n\nThe initial download delay (in seconds).\n\n"
            "### AUTOTHROTTLE_MAX_DELAY\n\nDefault: `60.0`\n\nThe maximum download delay (in seconds).")
    q = Question("What is the default start delay of AutoThrottle?", {"default": 1.0, "start": 2.0, "delay": 2.0,
                                                                        "autothrottle": 3.0}, 100)
    found = assess(q, text).highlights
    assert [h.text for h in found] == ["AUTOTHROTTLE_START_DELAY", "Default: `5.0`"]
    assert all(text[h.start:h.end] == h.text for h in found)
    named = text.replace("Default: `5.0`", "AUTOTHROTTLE_START_DELAY defaults to `5.0`.")
    assert [h.text for h in assess(q, named).highlights] == ["AUTOTHROTTLE_START_DELAY defaults to `5.0`."]
    # a term's line with nothing under it (Scrapy's `.. setting::` target before each heading) defines nothing: it
    # joins no answer, nor brings the next section's "Default: `60.0`" with it
    targets = text.replace("### AUTOTHROTTLE_START", "AUTOTHROTTLE_START_DELAY:\n\n### AUTOTHROTTLE_START").replace(
        "### AUTOTHROTTLE_MAX", "AUTOTHROTTLE_MAX_DELAY:\n\n### AUTOTHROTTLE_MAX")
    assert [h.text for h in assess(q, targets).highlights] == ["AUTOTHROTTLE_START_DELAY", "Default: `5.0`"]


def test_what_a_sentence_says_is_not_there_answers_nothing_of_a_question_asking_for_it():
    """"How do I parse a string with a custom format?": "ISO strings are parsed without a format string:" holds
    "parse", "string" and "format", but says the format is not there; "Parse from a string:" and its call with a
    format answer. Control: asked how to parse without a format, the sentence saying so answers."""
    text = ("Parse from a string:\n\n```python\n>>> arrow.get('2013-05-05 12:30:45', 'YYYY-MM-DD HH:mm:ss')\n```\n\n"
            "Some ISO 8601 strings are recognized and parsed without a format string:\n\n```python\n"
            ">>> arrow.get('2013-09-30T15:34:00')\n```")
    custom = Question("How do I parse a string with a custom format?", {}, 10)
    assert [h.text for h in assess(custom, text).highlights][0] == "Parse from a string:"
    bare = Question("How do I parse a string without a format?", {}, 10)
    assert [h.text for h in assess(bare, text).highlights][0].startswith("Some ISO 8601 strings")


def test_an_entrys_info_fields_are_units_of_their_own_and_a_which_answer_reads_them_under_the_entry():
    """Sphinx's info fields (":param int inflight_hours: ... (default 6).") each document one parameter: a line of its
    own, like a list item -- and a "which" question naming the entry ("Which enable_stats option ...?") is answered by
    the field under its signature line, read with it, not by the signature's own sentence. Controls: a generic field
    list (":Exit code 5: ...") is not cut into fields, and fields standing under no entry of that name do not answer
    for it."""
    text = ("enable_stats(huey, db[, **options]):\nAttach a stats recorder to `huey` and begin writing task events.\n\n"
            ":param int retention_hours: how long to keep events, in hours (default 48).\n"
            ":param int max_events: maximum events retained per queue (default 2000).\n"
            ":param str prefix: the prefix of the stats tables (default huey).\n"
            ":param int batch: events written per batch (default 100).\n"
            ":param int inflight_hours: how long a task may remain in-flight before its\n"
            "row is presumed orphaned and pruned, in hours (default 6).\n"
            ":param bool capture_args: also store the args (default False).")
    fields = [text[a:b] for a, b, _ in _units(text) if text[a:b].startswith(":")]
    assert [x.split(":")[1] for x in fields] == ["param int retention_hours", "param int max_events",
                                                 "param str prefix", "param int batch", "param int inflight_hours",
                                                 "param bool capture_args"]
    assert fields[4].endswith("(default 6).")
    which = Question("Which enable_stats option sets how long a task may stay in-flight before it is presumed "
                     "orphaned, and what is its default?", {}, 10)
    said = [h.text for h in assess(which, text).highlights]
    assert said[0].startswith("enable_stats(huey") and any(x.startswith(":param int inflight_hours") for x in said)
    assert "retention_hours" not in " ".join(said)
    # control: fields under no entry of that name -- the sentence naming it is what names it
    loose = text.replace("enable_stats(huey, db[, **options]):\nAttach", "Use `enable_stats()` to attach")
    assert "inflight_hours" not in " ".join(h.text for h in assess(which, loose).highlights)
    codes = ":Exit code 0: All tests passed\n:Exit code 5: No tests were collected"
    assert len(_units(codes)) == 1


def test_a_sentence_saying_what_to_do_reads_with_the_situation_before_it():
    """The docs describe what happens, then say what to do about it: "If your stubs are the authoritative
    documentation, set `stub_docs_first=True`." covers few of the question's words itself, but answers the situation
    the sentences just before it describe, so it is read with them and is the answer to a question asking how (or
    whether one can). Controls: a question asking why; the sentence under the next heading; a sentence naming the
    setting without saying to use, set or pass it ("every loader ... must use the same ... value" is a constraint), or
    a release note ("Changed in version 2.0: Add `stub_docs_first`.")."""
    text = ("When the loader finds both a module and its stub file, it merges what both files say about each object. "
            "By default a docstring from the module takes precedence, and a docstring from the stub is only used when "
            "the module has none.\n\nIf your stubs are the authoritative documentation, set `stub_docs_first=True`. "
            "Loading is lazy: nothing is parsed until an object is accessed.")
    how = "How do I make the docstrings of stub files take precedence over the module's when loading?"
    for asked in (how, "Can the docstrings of stub files take precedence over the module's when loading?"):
        assert "`stub_docs_first=True`" in " ".join(h.text for h in assess(Question(asked, {}, 10), text).highlights)
    why = Question("Why does the module's docstring take precedence over the stub file's when loading?", {}, 10)
    apart = text.replace("If your stub", "## Writing stubs\n\nIf your stub")
    must = text.replace("set `stub_docs_first=True`", "every loader reading them must use the same `stub_docs_first` value")
    noted = text.replace("If your stubs are the authoritative documentation, set `stub_docs_first=True`.",
                         "Changed in version 2.0: Add `stub_docs_first`.")  # a release note, not what to do
    for question, said in ((why, text), (Question(how, {}, 10), apart), (Question(how, {}, 10), must),
                           (Question(how, {}, 10), noted)):
        assert "stub_docs_first" not in " ".join(h.text for h in assess(question, said).highlights)


def test_of_sentences_covering_as_much_a_how_or_which_question_takes_the_one_saying_what_to_do():
    """"... the requests get refused. Which flag lets them through?": the access-log sentence holds "web" and
    "request", as the sentence saying what to do holds "browser" read with the situation before it ("Cross-origin
    browser requests are rejected by default."); of the two covering as much, the one saying what to do answers a
    question asking which or how. Control: a question asking whether they can get through is answered by what holds,
    as before (then read on to what to do: it restates the asker's situation)."""
    text = ("The server prints an access log like most web servers, one line per request. It listens on port 45484."
            "\n\nCross-origin browser requests are rejected by default. If you need to reach it from a "
            "browser-based client, pass `--allow-origin` once for each origin to allow.")
    asked = "My web page calls it from the browser and the requests get refused. "
    for ask in ("Which flag lets them through?", "How do I let them through?"):
        said = [h.text for h in assess(Question(asked + ask, {}, 10), text).highlights]
        assert "`--allow-origin`" in said[0] and not any("access log" in h for h in said)
    whether = [h.text for h in assess(Question(asked + "Can they get through?", {}, 10), text).highlights]
    assert whether[0].startswith("The server prints an access log") and "--allow-origin" not in whether[0]


def test_a_question_asking_what_to_do_about_a_problem_reads_on_to_the_remedy():
    """"What does status code 418 mean and what should I do about it?": the docs say what it means, then what to do
    ("Try lowering the request rate by using ..."), a sentence on, or past the error it describes -- the remedy comes
    along. Controls: the question asking only what it means; the remedy under the next heading; a sentence after it
    saying nothing to do."""
    text = ("Status code 418 is a custom code some proxies send when they limit the request rate. Try lowering the "
            "request rate by using a `delay` of 3 seconds.\n\nOther codes are rare.")
    fix = Question("What does status code 418 mean and what should I do about it?", {}, 10)
    said = [h.text for h in assess(fix, text).highlights]
    assert said[0].startswith("Status code 418") and "`delay`" in " ".join(said)
    assert "`delay`" not in " ".join(h.text for h in assess(Question("What does status code 418 mean?", {}, 10),
                                                           text).highlights)
    apart = text.replace(" Try lowering", "\n\n## Slowing down\n\nTry lowering")
    plain = text.replace("Try lowering the request rate by using a `delay` of 3 seconds.",
                         "Such proxies are common in `delay`-sensitive networks.")
    for said in (apart, plain):
        assert "`delay`" not in " ".join(h.text for h in assess(fix, said).highlights)
    # past the error it shows: "If you see an error like:" [the error] "then you may want to configure ... by setting"
    error = ("The broker may drop keys when memory runs out. If you see an error like:\n\n```text\nKeyLost: the key "
             "has been removed\n```\n\nthen configure the broker to keep keys by setting `evict_policy` to `none`.")
    lost = Question("Why do I get KeyLost: the key has been removed, and how do I fix it?", {}, 10)
    assert "`evict_policy`" in " ".join(h.text for h in assess(lost, error).highlights)


def test_a_sentence_drawing_a_conclusion_reads_with_the_one_it_draws_it_from():
    """"Therefore, fenced blocks cannot be nested inside lists." says why only with the sentence before it ("The
    extension's syntax works only at the document's top level."), though that one holds no word of the question.
    Controls: a sentence drawing no conclusion, or one across a paragraph break, reads alone."""
    text = ("The extension's syntax works only at the document's top level. Therefore, fenced blocks cannot be nested "
            "inside lists.")
    nested = Question("Can fenced blocks be nested inside lists?", {}, 10)
    assert [h.text for h in assess(nested, text).highlights][0].startswith("The extension's syntax")
    for alone in (text.replace("Therefore, fenced", "Fenced"), text.replace(" Therefore", "\n\nTherefore")):
        assert [h.text for h in assess(nested, alone).highlights] == [alone.split(". ")[-1].split("\n\n")[-1]]


def test_a_default_question_reads_a_list_items_default_in_its_later_sentence():
    """"What are the default values of `max_form_size` and `max_parts`?": each list item gives its default in a later
    sentence of its own ("The default is 1000."), which comes along with the item. Control: asked what they do, the
    item's later sentence stays out."""
    text = ("Limits on form parsing:\n\n- `max_form_size` - Stop parsing if any field is larger than this number of "
            "bytes. The default is 500kB.\n- `max_parts` - Stop parsing if more than this number of parts are "
            "received. Small fields add up. The default is 1000.\n")
    asked = Question("What are the default values of max_form_size and max_parts?", {}, 10)
    said = " ".join(h.text for h in assess(asked, text).highlights)
    assert "500kB" in said and "1000" in said
    does = Question("What do max_form_size and max_parts stop?", {}, 10)
    assert "1000" not in " ".join(h.text for h in assess(does, text).highlights)


def test_a_where_question_is_answered_by_a_sentence_naming_a_place():
    """"Where does the tool look for its configuration file on Windows?" asks for a place: of the sentences about its
    configuration file, the one naming a path or a directory ("in the %APPDATA% directory") answers, not one covering
    more of the question's words. Controls: asked what, the best-covering sentence answers; a link is no place."""
    text = ("Configuration files must start with the label [tool] and are formatted in the Windows INI style. Labels "
            "are case sensitive. Keys are too. Values are strings. The tool looks for its configuration file in the "
            "working directory, or on Windows in %APPDATA%.")
    where = Question("Where does the tool look for its configuration file formatted in the Windows INI style?", {}, 10)
    what = Question("What does the tool look for its configuration file formatted in the Windows INI style?", {}, 10)
    linked = text.replace("in the working directory, or on Windows in %APPDATA%", "as https://example.org/tool/ says")
    for question, said, first in ((where, text, "The tool looks"), (what, text, "Configuration files"),
                                  (where, linked, "Configuration files")):
        assert [h.text for h in assess(question, said).highlights][0].startswith(first)


@pytest.mark.parametrize("said, says", [("With no other configuration, the server reads `server.toml`.", True),
                                        ("If omitted, the server reads `server.toml`.", True),
                                        ("In production, the server reads `server.toml`.", False)])  # control
def test_what_holds_unless_one_says_otherwise_states_a_default(said: str, says: bool):
    """Documentation says what holds by default without the word: "With no other configuration, ...", "If omitted,
    ...". For "Which file does the server read by default?" that sentence answers, not one only saying there is a
    default; a sentence about one setting of many (the control) does not."""
    text = (f"Every server file can be set per service, and each service has a default. Services are listed below. "
            f"Each has a name. Names are unique. {said}")
    asked = Question("Which file does the server read by default?", {}, 10)
    assert states_default(said) is says
    assert assess(asked, text).highlights[0].text.startswith("Every server") is not says


@pytest.mark.parametrize("intro, shown", [("Supposing you want to prevent that, then you could use the `exclude` option:",
                                           True),
                                          ("Example:", False)])  # control: a label is no sentence introducing tabs
def test_a_how_answers_code_under_a_tab_label_comes_with_the_sentence_introducing_the_tabs(intro: str, shown: bool):
    """Tabbed docs put a short label between the sentence introducing the code and the code ("..., then you could use
    the `exclude_package_data` option:" "pyproject.toml:" then the block): that sentence says what the code does, so a
    "how" answer showing the code reads it too -- not only the label. A label before the label introduces nothing."""
    text = (f"Sometimes marker files such as `.gitkeep` are tracked by git and get installed with the package.\n\n"
            f"{intro}\n\npyproject.toml:\n\n```toml\n[tool.exclude]\nmypkg = ['.gitkeep']\n```\n")
    asked = Question("Marker files like .gitkeep get installed with my package. How do I keep them out?", {}, 10)
    said = [h.text for h in assess(asked, text).highlights]
    assert said[0].startswith("Sometimes") and said[-2:] == ["pyproject.toml:", "```toml\n[tool.exclude]\nmypkg = "
                                                                                "['.gitkeep']\n```"]
    assert (intro in said) is shown


def test_the_askers_emphasis_is_not_what_a_passage_must_say():
    """"Which files will `tool publish` actually upload, just those?" asks which files it uploads: "actually" and
    "just" are how the asker says it, no page says them, so "Only files ending with `.whl` or `.tar.gz` are uploaded by
    `tool publish`." covers the whole question. Control: a word of the need ("artifacts") still counts."""
    answer = "Only files ending with `.whl` or `.tar.gz` are uploaded by `tool publish`."
    asked = Question("Which files will `tool publish` actually upload, just those?", {}, 10)
    assert asked.covered(stems(answer)) == 1.0
    needs = Question("Which artifacts will `tool publish` actually upload, just those?", {}, 10)
    assert needs.covered(stems(answer)) < 1.0
    # ... and saying is asking: "What do the maintainers say?" asks what they recommend, in whatever words
    said = "The maintainers recommend strongly against pinning an upper bound."
    assert Question("Should I pin an upper bound? What do the maintainers say?", {}, 10).covered(stems(said)) == 1.0
    assert Question("Should I pin an upper bound? What do the maintainers ask?", {}, 10).covered(stems(said)) < 1.0


@pytest.mark.parametrize("asked, reads_on", [("Threads made with the low-level thread module are not traced. What "
                                              "should I use instead?", True),
                                             ("What should I call to start the tracer?", True),
                                             ("Are threads made with the low-level thread module traced?", False)])
def test_asking_what_to_use_or_call_instead_asks_for_the_remedy(asked: str, reads_on: bool):
    """"..., what should I use instead?" asks what to do about what it describes, as "what should I do?" does: the
    docs state the problem, then the remedy ("Use the higher-level threading module instead."), which comes along.
    Control: a yes-or-no question about the problem asks for no remedy."""
    text = ("The thread module is the low-level threading interface. Threads made with this module are not traced by "
            "the tracer. Use the higher-level `threading` module instead.\n\nOther modules are traced.")
    question = Question(asked, {}, 10)
    assert question.remedy is reads_on
    if reads_on and "instead" in asked:
        assert "`threading`" in " ".join(h.text for h in assess(question, text).highlights)


@pytest.mark.parametrize("intro, whole", [("This setting can be one of three values:", True),
                                          ("Its values are these.", False)])  # control: nothing introduced
def test_a_list_the_answer_introduces_comes_whole_though_its_first_item_was_chosen(intro: str, whole: bool):
    """"What values can the allow_style setting take?": "This setting can be one of three values:" answers with its
    first item, chosen for its own words ("style output") -- the list it introduces comes whole, not only that item.
    Control: a sentence not ending in ":" introduces nothing: no list comes with it."""
    text = (f"### allow_style\n\nEscape sequences color the output.\n\n{intro}\n\n"
            "- `Never` - all escape sequences which style output are stripped.\n"
            "- `Terminal` - escape sequences pass through to a terminal.\n"
            "- `Always` - escape sequences always pass through.\n")
    said = " ".join(h.text for h in assess(Question("What values can the allow_style setting take?", {}, 10),
                                           text).highlights)
    assert ("`Never`" in said and "`Terminal`" in said and "`Always`" in said) is whole


@pytest.mark.parametrize("middle, filled", [("If you want it sooner, set `BATCH_COUNT` to split the output.", True),
                                            ("```\nBATCH_COUNT = 100\n```", False)])  # control: code is no hole
def test_an_answer_reads_without_a_hole_between_two_of_its_sentences(middle: str, filled: bool):
    """Two sentences chosen for their words ("... only when the crawl ends.", "That way each batch reaches the bucket
    in pieces ...") read with the one between them, which the last refers to and which often says how ("set
    `BATCH_COUNT` ..."). Control: a code block between them is an example, read past, not a hole."""
    text = ("The exporter uploads the file to the bucket only when the crawl ends. "
            f"{middle}\n\nThat way each batch reaches the bucket in pieces before the crawl ends.")
    said = [h.text for h in assess(Question("Can the exporter deliver to the bucket in pieces before the crawl ends?",
                                            {}, 10), text).highlights]
    assert said[0].startswith("The exporter") and said[-1].startswith("That way")
    assert ("`BATCH_COUNT`" in " ".join(said)) is filled


@pytest.mark.parametrize("then, follows", [("The maintainers recommend strongly against this precautionary approach.",
                                            True),
                                           ("The maintainers recommend strongly against pinning.", False)])
def test_a_sentence_referring_back_with_a_word_of_the_question_reads_with_the_answer(then: str, follows: bool):
    """"Should I pin the tool to an exact version? What do the maintainers say?": the docs state the practice, then
    what is said of it, referring back ("this precautionary approach") -- that sentence comes along though the word it
    adds ("maintainers") weighs too little to be chosen for itself. Control: a sentence not referring back does not."""
    idf = {"pin": 5.0, "tool": 1.0, "exact": 5.0, "version": 2.0, "maintainers": 0.5}
    text = f"Some users pin the tool to an exact version to avoid breakage. {then}\n\nOther tools differ."
    said = " ".join(h.text for h in assess(Question("Should I pin the tool to an exact version? What do the "
                                                    "maintainers say?", idf, 10), text).highlights)
    assert said.startswith("Some users") and ("maintainers" in said) is follows


@pytest.mark.parametrize("then, named", [("At one company, this practice is called Canonical Request Lines.", True),
                                         ("At one company, this practice is common.", False)])
def test_what_a_practice_is_called_answers_is_there_a_name_for_it(then: str, named: bool):
    """"Is there a name for ...?" is answered by the sentence after the description saying what it is called, though
    it names nothing in code ("this practice is called Canonical Request Lines"). Control: one naming nothing does not
    come along."""
    text = f"Gathering everything about a request into a single entry keeps the output short.\n\n{then}"
    said = " ".join(h.text for h in assess(Question("Is there a name for gathering everything about a request into "
                                                    "a single log entry?", {}, 10), text).highlights)
    assert said.startswith("Gathering") and ("Canonical Request Lines" in said) is named


@pytest.mark.parametrize("said, before", [("A larger delay is clamped to that maximum, and a negative one is ignored.",
                                           True),
                                          ("A larger delay is clamped to the maximum, and a negative one is ignored.",
                                           False),  # control: refers to nothing
                                          ("A delay has a maximum; a larger one is clamped to that maximum.",
                                           False)])  # control: it stated the maximum itself
def test_an_answer_referring_back_with_that_and_a_noun_reads_with_the_sentence_before(said: str, before: bool):
    """"What is the largest delay the queue accepts, and what happens to a bigger one?": "A larger delay is clamped to
    that maximum, ..." answers what happens; "that maximum" is stated by the sentence before it ("... accepts at most
    900 seconds."), which comes along. Controls: a sentence not referring back, and one whose "that maximum" is its
    own, come alone."""
    text = f"The delay is the number of seconds to hold the message, and the queue accepts at most 900 seconds. {said}"
    highlights = [h.text for h in assess(Question("What is the largest delay the queue accepts, and what happens to "
                                                  "a larger delay?", {"delay": 1.0, "larger": 6.0,
                                                                      "largest": 0.5, "queue": 0.5, "accepts": 0.5},
                                                  10), text).highlights]
    assert highlights[-1] == said and ("900" in " ".join(highlights)) is before


@pytest.mark.parametrize("between, before", [("\n\n", True),  # a paragraph opening on "this option" means the last one's
                                             ("\n\n## Details\n\n", False)])  # control: a heading parts them
def test_a_paragraph_opening_on_this_option_reads_with_the_sentence_naming_it(between: str, before: bool):
    """"Does the web plugin honour the headers my proxy forwards ...?": the docs name the option, then open the next
    paragraph on what it does ("Technically, this option lets the proxy provide `X-Script-Name` ...") -- that sentence
    answers best, and the one naming the option comes along though a blank line parts them. Control: under a heading
    of its own, "this option" is not the one before the heading."""
    text = ("Hosting the application under a sub-path is common. Enable the `reverse_proxy` option if you do this."
            f"{between}Technically, this option lets the proxy provide `X-Script-Name` and `X-Scheme` headers to control "
            "the base URL and scheme of the plugin.")
    said = " ".join(h.text for h in assess(Question("Does the web plugin honour the headers my proxy forwards for its "
                                                    "base URL and scheme?",
                                                    {"option": 0.5, "web": 1.0, "plugin": 0.5, "honour": 6.0,
                                                     "headers": 3.0, "proxy": 3.0, "forwards": 4.0, "base": 2.0,
                                                     "url": 2.0, "scheme": 4.0}, 10), text).highlights)
    assert said.endswith("scheme of the plugin.") and ("reverse_proxy" in said) is before


@pytest.mark.parametrize("then, shown", [("In this library you can specify this argument on the `Queue`, like this:",
                                          True),
                                         ("In this library you can specify it on the `Queue`, like this:", False)])
def test_a_sentence_referring_back_brings_the_code_it_introduces(then: str, shown: bool):
    """"How do I set a consumer priority on a Queue?": the broker's sentence ("... enabled by setting the `x-priority`
    argument ...") is followed by one referring back to it ("this argument") that says how here, with its code --
    both come along. Control: a sentence not referring back with a noun ("specify it") does not."""
    text = ("The broker defines a consumer priority extension that can be enabled by setting the `x-priority` argument "
            f"when consuming.\n\n{then}\n\n```python\nqueue = Queue('name', consumer_arguments={{'x-priority': 10}})\n"
            "```\n\nRead more about priorities elsewhere.")
    said = " ".join(h.text for h in assess(Question("How do I set a consumer priority on a Queue?",
                                                    {"set": 0.5, "consumer": 2.0, "priority": 2.0, "queue": 0.5}, 10),
                                           text).highlights)
    assert said.startswith("The broker") and ("consumer_arguments" in said) is shown


@pytest.mark.parametrize("last, found", [("If `TOOL_LOG_DEBUG` is set to 1, both are logged.", True),
                                         ("If `TOOL_LOG_ALL` is set to 1, everything is logged.", False)])  # control
def test_a_which_answer_naming_nothing_reads_on_to_the_paragraph_naming_what_it_asks(last: str, found: bool):
    """"Which environment variable turns on debug logs for both connections and channels?": the introduction ("The tool
    exposes environment variables that control debug logging for connection and channel logs.") names nothing; the
    docs then give each variable its paragraph -- the one naming something and saying what the introduction does not
    ("both") answers with it. Control: when no later paragraph adds a word of the question, nothing is read on to."""
    text = ("The tool exposes environment variables that control debug logging for connection and channel logs.\n\n"
            "If `TOOL_LOG_CONNECTION` is set to 1, connections are logged.\n\n"
            f"If `TOOL_LOG_CHANNEL` is set to 1, channels are logged.\n\n{last}\n\n## Other\n\nMore.")
    idf = {"environment": 3.0, "variable": 3.0, "debug": 1.0, "logs": 1.0, "both": 0.5, "connections": 1.0,
           "channels": 1.0, "turns": 0.5}
    said = [h.text for h in assess(Question("Which environment variable turns on debug logs for both connections "
                                            "and channels?", idf, 10), text).highlights]
    assert said[0].startswith("The tool exposes") and (said[-1] == last) is found
    assert not any("TOOL_LOG_CONNECTION" in x for x in said)


@pytest.mark.parametrize("question, says_noop", [
    ("What does ZODB.event.notify do when zope.event isn't installed?", True),
    ("What does ZODB.event.notify do if zope.event is not installed?", True),
    ("What does ZODB.event.notify do when zope.event is installed?", False),    # control: the other case
    ("ZODB.event.notify is never called for me. What does it do, zope.event installed?", False)])  # control: no case
def test_a_question_on_a_case_of_something_not_so_is_answered_by_the_sentence_on_that_case(question: str,
                                                                                         says_noop: bool):
    """ZODB's event page says both cases, the first naming more of the question ("If zope.event is installed, then
    ZODB.event.notify is simply an alias ..."): a question asking what happens when it is not installed is answered by
    the sentence saying it of that case (which the better-covering one then joins). A negation that is not a case of
    the question ("is never called for me") changes nothing."""
    idf = {"zodb": 0.4, "event": 4.4, "notify": 4.1, "zope": 2.0, "installed": 4.1, "called": 2.0}
    text = ("Going forward, ZODB will use an event mechanism.  ZODB.event.notify is called with events of interest.\n\n"
            "If zope.event is installed, then ZODB.event.notify is simply an alias for zope.event.  If zope.event isn't "
            "installed, then ZODB.event is a noop.")
    said = " ".join(h.text for h in assess(Question(question, idf, 40), text, "Event support").highlights)
    assert said.startswith("If zope.event is installed") and ("noop" in said) is says_noop


@pytest.mark.parametrize("ends, shows", [(":", True),
                                         (".", False)])  # control: a sentence introducing nothing brings nothing
def test_an_answer_does_not_end_on_a_sentence_introducing_what_it_leaves_out(ends: str, shows: bool):
    """Kazoo's logging setup: the message's sentence and its block answer, and "To avoid this issue ..." comes after
    them as what to do about it -- ending on ":" it introduces the fix, which comes too (before, the answer ended on
    "do the following:")."""
    text = ("If logging is not setup for your application, you can get following message:\n\n```python\nNo handlers "
            "could be found for logger \"kazoo.client\"\n```\n\nTo avoid this issue you can at the very minimum do the "
            f"following{ends}\n\n```python\nimport logging\nlogging.basicConfig()\n```\n\nRead Python's logging "
            "tutorial for more details.")
    question = Question("How do I get rid of the 'No handlers could be found for logger' message?",
                        {"rid": 3.0, "handlers": 2.0, "found": 2.0, "logger": 2.0, "message": 2.0}, 30)
    said = [h.text for h in assess(question, text, "Logging Setup").highlights]
    assert said[-1 - shows].startswith("To avoid this issue") and ("logging.basicConfig()" in said[-1]) is shows


@pytest.mark.parametrize("later", [" The method is permitted to modify this value.", ""])  # control: one-sentence items
def test_a_list_introduced_comes_whole_though_its_items_say_more_than_one_sentence(later: str):
    """ZODB's "This method takes three arguments:" then three items of two or three sentences each: the items' first
    sentences come (what each argument is), past their later ones -- before, only the first item came."""
    text = ("To resolve a conflict, a class should define an '_p_resolveConflict' method. This method takes three "
            "arguments:\n\n"
            f"-  'oldState' -- The state of the object that the changes were based on.{later}\n\n"
            f"-  'savedState' -- The state of the object that is currently stored in the database.{later}\n\n"
            f"-  'newState' -- The state after changes made by the current transaction.{later}\n\n"
            "The method should return the state of the object after resolving the differences.")
    question = Question("Which method do I define so that ZODB can resolve write conflicts, and what arguments does it "
                        "take?", {"method": 1.0, "define": 1.0, "resolve": 2.0, "write": 1.0, "conflicts": 2.0,
                                  "arguments": 2.0, "take": 1.0, "zodb": 0.3}, 30)
    said = [h.text for h in assess(question, text).highlights]
    assert [x.split(" -- ")[0] for x in said if x.startswith("-")] == ["-  'oldState'", "-  'savedState'", "-  'newState'"]
    assert not any("permitted" in x for x in said)


def test_the_pieces_contractions_leave_weigh_nothing():
    """"... that hasn't been saved yet?": "hasn" is no word of the need -- weighed as a rare word, it made a sentence
    saying "hasn't" the answer. Every contraction's piece is a function word; the words they negate still count."""
    question = Question("What value does _p_serial have on an object that hasn't been saved, and won't it be?",
                        {"hasn": 4.0, "won": 4.0, "saved": 2.0, "serial": 4.0}, 40)
    assert {"hasn", "won", "t"}.isdisjoint(question.weights) and {"save", "serial"} <= set(question.weights)
    for piece in ("haven", "hadn", "wouldn", "shouldn", "couldn", "mustn", "needn", "doesn", "isn"):
        assert content(f"It {piece}'t work") == ["work"], piece


@pytest.mark.parametrize("question, fallback", [
    ("When publishing to an index and no username is provided by any source, what value does Hatch fall back to?", True),
    ("Where does Hatch store the username when interactively provided credentials were used?", False)])  # control
def test_a_question_on_what_holds_when_nothing_is_given_is_answered_by_the_fallback(question: str, fallback: bool):
    """Hatch's publishing page lists where the username comes from, then "As a fallback the value `__token__` is
    applied.": what holds when none of them gives one is a default without the word, as "falls back to" says it --
    before, the sentence on interactively provided credentials, holding more of the question's words, answered.
    Control: a question on those credentials asks nothing of a case left unsaid: the fallback does not answer it."""
    text = ("The username is derived from the following sources, in order of precedence:\n\n"
            "1. The  `--user` / `-u` cli option.\n2. The `HATCH_INDEX_USER` environment variable.\n"
            "3. The `repos` tables.\n4. The `~/.pypirc` file.\n5. The input to an interactive prompt.\n\n"
            "As a fallback the value `__token__` is applied.\n\nThe password is looked up in these:\n\n"
            "1. The `~/.pypirc` file\n   if the username was provided by it.\n2. The `--auth` / `-a` cli option.\n"
            "3. The `HATCH_INDEX_AUTH` environment variable.\n\nIf interactively provided credentials were used, the "
            "username will be stored in\nHatch's cache and the password stored in the available\nkeyring backed "
            "credentials stores.")
    idf = {"publishing": 2.6, "index": 1.5, "username": 3.0, "provided": 2.4, "source": 1.5, "value": 1.2,
           "hatch": 0.1, "fall": 3.5, "back": 2.5, "store": 2.2, "interactively": 3.5, "credentials": 3.3, "used": 0.8}
    said = " ".join(h.text for h in assess(Question(question, idf, 300), text, "How to authenticate").highlights)
    assert ("`__token__`" in said) is fallback, said


@pytest.mark.parametrize("question, stated", [
    ("Routes assumes incoming URLs are UTF-8. How do I switch it to latin-1?", "Routes assumes incoming URLs are UTF-8."),
    ("FileHuey supports task priorities, but which values are allowed?", "FileHuey supports task priorities"),
    ("How do I switch the encoding to latin-1?", ""),
    ("What is, e.g., the default? And why?", ""),  # a question first is no statement
    ("Is the default e.g. UTF-8 here?", ""),
])
def test_a_question_s_premise_is_the_statement_it_opens_on_before_it_asks(question: str, stated: str):
    assert _premise(question) == stated


_SITUATION = ("Redefining an interface under the same name can raise a `KeyError` from a weak dictionary.{gap}"
              "Old references keep the first definition alive. For this reason, it is best to use distinct names in "
              "tests. Interfaces compare by name and module.")


@pytest.mark.parametrize("gap, advised", [
    (" ", True), ("\n\n", True),  # in its paragraph or the next
    ("\n\n## Caching\n\n", False), ("\n\n```\nx = 1\n```\n\n", False),  # not past a heading, nor past code
    (" It happens in tests. It is rare. ", False),  # not beyond NEAR sentences
])
def test_an_answer_restating_the_askers_situation_reads_on_to_what_to_do(gap: str, advised: bool):
    """"My tests reuse interface names, and I get a KeyError ... What is the advice?": the sentence saying most of the
    question restates what the asker said; the docs say what to do a sentence or two later ("For this reason, it is
    best to use distinct names"), in its section. Control: the same question without the premise (asked as one
    question) is answered by its best sentence alone."""
    text = _SITUATION.format(gap=gap)
    premised = Question("My tests reuse interface names, and I get a KeyError from a weak dictionary. What is the advice?",
                        {}, 10)
    found = " ".join(h.text for h in assess(premised, text).highlights)
    assert found.startswith("Redefining an interface") and ("distinct names" in found) == advised, found
    whole = Question("What is the advice when tests reuse interface names and get a KeyError from a weak dictionary?",
                     {}, 10)
    assert "distinct names" not in " ".join(h.text for h in assess(whole, text).highlights)


def test_asking_what_to_set_asks_for_a_name():
    """Routes: "What do I need to set on the mapper before url_for(...) generates a URL on the fred subdomain?" asks
    for a setting like "Which setting ...?" does -- the code after the sentence describing it names it
    (`map.sub_domains = True`). Control: asking what a thing does asks for no name."""
    assert Question("What do I need to set on the mapper before it matches subdomains?", {}, 10).which
    assert Question("Okay, what should we pass to the client?", {}, 10).which
    assert not Question("What do I need to know about the mapper?", {}, 10).which
    text = ("If subdomain support is enabled, the mapper matches subdomains in generated URLs.\n\n"
            "```\nmap.sub_domains = True\n```")
    found = [h.text for h in assess(Question("What do I need to set on the mapper before it matches subdomains in "
                                             "generated URLs?", {}, 10), text).highlights]
    assert "map.sub_domains = True" in found[-1], found
    found = [h.text for h in assess(Question("What does the mapper do with subdomains in generated URLs?", {}, 10),
                                    text).highlights]
    assert found == ["If subdomain support is enabled, the mapper matches subdomains in generated URLs."], found
