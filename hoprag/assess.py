"""How much of a question a passage answers: its coverage, and the sentences that answer it.

The open-mode half of assessing evidence (:mod:`.verdict` grades stated facts): a passage
*covers* a question by the IDF-weighted share of the question's content words it contains -- in
its text, its title or its heading path -- and its *highlights* are the one to three sentences
(with a code block, when the question asks how and one follows) that cover most of it. Words are
matched by their Snowball stem ("iterations" meets "iteration"), never by meaning: a paraphrase
sharing no word covers nothing, which is what an abstention threshold must see.

Weights are the caller's own term weights (the view's BM25 IDF); a question word no readable
passage contains weighs as much as the rarest word -- a question about something absent is
mostly not covered. Everything here is a pure function of the texts and weights, so the MCP
server reports the same numbers to every client and the offline grader reads them from there.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable, Mapping

import Stemmer

from .text import FENCE, INLINE_CODE, REFERS_BACK, sentence_ends
from .tokens import content, identifiers

#: At most this many sentences make a highlight (the answer a person reads is short).
MAX_SENTENCES = 3
#: A further sentence joins the best one only if it covers this much more of the question, and is at
#: most this many sentences away from it (an answer reads as one passage, not a collage; the examples between
#: two sentences do not count, but a code block a sentence introduces ends the way).
MIN_GAIN = 0.12
NEAR = 2
#: A line this short ending in ":" between a sentence and its code block is the code's label.
MAX_LABEL = 40
#: A code block longer than this is too long to quote: what it covers is what its :data:`CODE_LINES`
#: consecutive lines covering most of the question cover (a command's whole ``--help`` output holds every
#: word of a question, each on another option's line); it is quoted as those lines -- a program (:func:`_listing`)
#: up to this size from its head when they lie in that part, as its head sets up what they use.
MAX_CODE_CHARS = 1200
CODE_LINES = 3
#: A "how" question's answer shows the code that follows its best sentence within this many units, in
#: the same section: documentation names the task first and shows how a few sentences later.
CODE_AFTER = 4
#: Sentences covering within this much of the best tie (a "how" question then prefers the one showing code).
TIED = 0.05
#: A code block's fence and the language it names; the ones naming none of a program: a listing (:func:`_listing`).
_FENCE_INFO = re.compile(r"[ \t]*(?:```|~~~)[ \t]*\{?\.?([\w+-]*)")
_LISTINGS = frozenset({"", "text", "txt", "console", "shell", "sh", "bash", "zsh", "shell-session", "output", "none",
                       "pytest", "pycon"})
_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+(.*)$")
#: A question asking *how to* do something ("How do I ...", "What is the syntax ...", "What do I add to ...");
#: "How many / much / long / short ..." asks for a quantity instead, which a sentence states (a numeral or a number
#: word): "How short can a key be?" is answered by "at least 32 bytes", not by how to shorten one.
_QUANTITY = (r"(?:many|much|long|often|old|big|large|far|soon|fast|short|small|few|low|high|late|early|frequently"
             r"|wide|deep|heavy)\b")
#: Where a question's asking starts: its beginning, or a sentence or clause after what it sets up ("My view returns a
#: generator ... How do I keep the request available?", "Under load ...; how do I raise that cap?").
ASKS_AT = r"(?:^|[.?!;,]\s+)"
_HOW = re.compile(rf"(?i){ASKS_AT}\s*(how\b(?!\s+{_QUANTITY})|what(?:'s| is) the (?:syntax|command|way)\b"
                  r"|what (?:do|should|must|can) (?:i|you|we) (?:add|put|write|type|run|enter|paste|call|use|set"
                  r"|pass)\b"
                  r"|(?:what|which)\s+(?:[\w-]+\s+){1,3}?(?:should|must|do|can)\s+(?:i|you|we)\s+(?:set|use|add|pass|put|"
                  r"write|run|enable|configure)\b)")
#: ... or one asking to be shown ("an example of a custom converter") -- unless it asks for a value or an amount:
#: "the default timeout for running a code snippet" asks for the timeout, the snippet is what it is for; "for
#: example" gives one of what it asks about.
_SHOW = re.compile(r"(?i)(?<!\bfor )\b(?:example|snippet|syntax)\b")
_HOW_MANY = re.compile(rf"(?i){ASKS_AT}\s*(?:how\s+{_QUANTITY}"
                       # "What exit code ...", "Which port ...", "What status code ...": a number answers
                       r"|(?:what|which)\s+(?:[\w-]+\s+)?(?:(?:exit|status|return|error|http|response)\s+codes?|ports?)\b"
                       # ... and "What is the largest interval ...", "What's the maximum ...": an amount answers
                       r"|(?:what|which)(?:'s|\s+is|\s+are)\s+the\s+(?:largest|maximum|max|minimum|min|smallest|highest"
                       r"|lowest|biggest|longest|shortest)\b)")
#: A question asking which version ("Since which Black version ...?", "Which Python versions ...?"): a sentence naming
#: a version number answers it.
_WHICH_VERSION = re.compile(rf"(?i){ASKS_AT}\s*(?:(?:since|in|from)\s+)?(?:what|which)\s+(?:[\w.-]+\s+){{0,2}}?"
                            r"versions?\b")
#: A question asking what happens ("What happens if uvloop is not installed?").
_WHAT_HAPPENS = r"\bwhat\s+(?:happens|(?:will|would)\s+happen)\b"
_HAPPENS = re.compile(rf"(?i){_WHAT_HAPPENS}")
#: How a question asks, not what about: "What happens if ...?" asks what follows, "What is the difference between X
#: and Y?" and "How does X differ from Y?" ask about X and Y, "What does X mean?" and "What does X stand for?" ask
#: what X is -- the answer holds neither "happens" nor "difference" ("Any vs. object") nor "mean", as it holds no
#: "make" of "How do I make X Y?".
_COMPARING = r"\b(?:differences?\s+between|differ(?:s|ent)?\s+from|differ)\b"
_COMPARES = re.compile(rf"(?i){_COMPARING}")
_FRAME = re.compile(rf"(?i){_WHAT_HAPPENS}|{_COMPARING}"
                    r"|\b(?:means?|stands?\s+for)(?=\s*\?)|\bmeant\s+by\b")
#: A sentence saying how two things differ: "Unlike `Any`, ...", "..., whereas ...", "the former ..., while the other
#: ...", "The difference between these two is ...".
_CONTRAST = re.compile(r"(?i)\b(?:unlike|whereas|while|but|instead|rather\s+than|in\s+contrast|the\s+former|the\s+latter"
                       r"|differ\w*|vs\.?|versus|compared\s+(?:to|with))\b")
#: What something leads to: an exception raised, a failure, a result.
_EFFECT = re.compile(r"(?i)\b(?:rais(?:e|es|ed|ing)|results?\s+in|leads?\s+to|errors?|exceptions?|fails?|failed|ignored"
                     r"|discarded|dropped|lost|abort(?:s|ed)?|crash(?:es|ed)?)\b"
                     r"|(?-i:\w+(?:Error|Exception|Warning))\b")
#: A version number ("3.13", "21.8b0", "v2.1").
_VERSION_NUMBER = re.compile(r"(?<![\w.])v?\d+\.\d+")
#: A question asking where ("Where does behave look for its configuration file?"): a place answers it.
_WHERE = re.compile(rf"(?i){ASKS_AT}\s*where\b")
#: A web address written out in the text.
_LINK = re.compile(r"\b(?:https?|ftp)://\S+")
#: ("one" as a pronoun counts nothing: "the URL is one that may modify data"; nor "Once" opening a clause, nor "at
#: once": all together)
_NUMBER = re.compile(r"(?i)\d|\b(?:one(?!\s+(?:that|which|who|of)\b)|two|three|four|five|six|seven|eight|nine|ten|eleven"
                     r"|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|(?<!\bat )(?-i:once)|twice"
                     r"|dozens?|half)\b")
#: A heading naming a release ("pytest 3.8.0 (2018-09-05)", "0.115.0", "Version 3.0.3", "v2.1 release notes"):
#: what is under it says what changed then, not how things are now.
_RELEASE = re.compile(r"(?i)^(?:[a-z][\w.-]*\s+)?(?:version\s+|release\s+|v)?\d+(?:\.\d+){1,3}(?:[a-z]+\d*|[.-]\w+)*"
                      r"(?:\s*\([^)]*\))?(?:\s+release\s+notes)?\s*:?$")
#: A heading naming release notes: "Changelog", "Change history for coverage.py", "Version history", "Release Notes",
#: "What's New in Pyramid 1.10" -- not a bare "Changes" or "News", which may be anything's title (a song's, a
#: section's).
_RELEASES = re.compile(r"(?i)^(?:change\s*log\b|(?:change|version)\s+history\b|release\s+(?:notes|history)\b"
                       r"|history\s+of\s+changes\b|what['\u2019]?s\s+new\s+in\b|changes\s+in\s+(?:version\s+)?v?\d)")
#: A question asking whether there is a means ("Is there a setting for that?", "Can I get the data in pieces ...?",
#: "Is it possible to ...?"): the docs state the need, then name the means -- a "can" asking, not one inside a clause
#: ("Why can ...").
_MEANS = re.compile(r"(?i)(?:^|[.?!]\s+)(?:can|could)\s+(?:i|we|you|it|my|the|one)\b|\bis\s+there\s+(?:a|an|any)\b"
                    r"|\bis\s+it\s+possible\b")
#: A question about a thing's history ("Which version added ...", "When was ... deprecated?", "What's new in 3.0?",
#: "In which release does ...?"):
#: release notes answer it -- not one naming a version it needs ("Which Python versions does it support?").
_HISTORY = re.compile(r"(?i)\b(released|changelog|changed|added|introduced|deprecated|removed|since|new\s+in"
                      r"|which\s+release)\b")
#: A question asking for a default ("What is the default ...", "... by default?") is answered by a sentence
#: saying what the default is.
_DEFAULT = re.compile(r"(?i)\bdefault(?:s|ed|ing)?\b")
#: ... but not one setting the default aside ("... a different error response instead of the default 403?"): it asks
#: for something else.
_ASIDE = re.compile(r"(?i)\b(?:instead\s+of|rather\s+than|other\s+than|besides|except(?:\s+for)?)\s+(?:the\s+|a\s+|its\s+)?"
                    r"default(?:s|ed|ing)?\b")
#: A question asking what or which holds when something is not given ("If I don't configure license-files, which glob
#: patterns does setuptools use ...?", "what maximum edit distance is used if I write a fuzzy term like cat~ without a
#: number?", "When publishing ... and no username is provided by any source, what value does Hatch fall back to?") asks
#: for a default, without the word: "If you don't specify an edit distance, the default is 1" answers.
_OMITTED = re.compile(r"(?i)\b(?:if|when)\s+(?:i|you|we|one)\s+(?:don't|do\s+not|didn't|never)\s+(?:pass|give|set|specify"
                      r"|provide|supply|write|add|configure|include)\b|\bwithout\s+(?:a|an|specifying|passing|giving)\s"
                      r"|\b(?:if|when)\b[^,;?]*?\b(?:no\s+[\w`'-]+\s+(?:is|are)|(?:is|are)\s+not)\s+"
                      r"(?:given|provided|passed|set|specified|supplied|configured)\b")
_WHAT = re.compile(r"(?i)\b(?:what|which)\b")
#: Asking for a default value itself ("What are the default truncation limits ...?"), not for what happens by default
#: ("Which workers does it start by default?" -- "the sync worker class" says it in words).
_VALUE = re.compile(r"(?i)\b(?:what|which)(?:'s|\s+is|\s+are|\s+was)\s+(?:the\s+|its\s+)?default\b")
#: Asking what to do about a problem: "how do I fix it", "how can we avoid that", "what should I do about it", "what
#: should I use instead?", "what do I change so local testing works?".
_REMEDY = re.compile(r"(?i)\b(?:how\s+(?:do|can|should|would)\s+(?:i|we|you|one)\s+(?:fix|avoid|solve|resolve|prevent"
                     r"|get\s+around|work\s+around|deal\s+with)|what\s+(?:should|can|do|must)\s+(?:i|we|you)\s+"
                     r"(?:do|call|use|change|set|put|write|pass))\b")
_local = threading.local()
#: Words of asking rather than of the need ("How can I ...", "Is there a way to ..."), and the asker's emphasis ("which
#: files will it actually upload?", "which function do I still have to call?", "a greenlet that is already dead"), and
#: saying ("What do the maintainers say?", "a file bigger than, say, 16 MB"): a passage is not expected to contain
#: them, so they do not count toward coverage.
ASKING = frozenset("will shall may might must want wants need needs possible way ways please here anyone someone "
                   "something actually really exactly just still already even yet ever anyway somehow basically "
                   "simply say says".split())

#: Asking what changes a behaviour ("which parameter changes that?", "... can I turn it off?").
_CHANGE = re.compile(r"(?i)\b(?:change|changes|configure|configures|override|overrides|customi[sz]e|disable|disables"
                     r"|turn(?:s)?\s+(?:it\s+|that\s+|this\s+)?off|switch(?:es)?\s+(?:it\s+|that\s+|this\s+)?off)\b")
#: A verb asking with another ("Which folder *does* ..."): the thing asked about comes before it.
_AUXILIARY = r"(?:is|are|was|were|do|does|did|can|could|should|would|will|must|has|have)"
#: A question asking which thing -- of code, or one with a name ("Which exception ...", "What macOS service ...",
#: "Which default Python Markdown extension ..."), or what to set, pass or use ("What do I need to set on the mapper
#: before ...?"): the answer names it, in code or in quotes.
_WHICH = re.compile(rf"(?i){ASKS_AT}\s*(?:(?:which|what)\s+(?:(?!{_AUXILIARY}\b)[\w.-]+\s+){{0,3}}?(?:variable|option|flag|setting|function|"
                    r"method|class|parameter|argument|command|key|field|module|decorator|exception|error|hook|mode|"
                    r"attribute|propert(?:y|ie)|filter|environment|type|endpoint|header|package|library|service|tag|"
                    r"directive|processor|middleware|helper|signal|event|backend|extension|plugin)s?\b"
                    r"|what\s+(?:do|should|must|can)\s+(?:i|we|you|one)\s+(?:(?:need|have)\s+to\s+)?"
                    r"(?:set|pass|use|install|call|add|import|enable|specify|define)\b)")
#: A name in code: an option, or an identifier joined by "_" or "." ("--log-level", "pymdownx.betterem",
#: "max_body_size"); "e.g." is no name, and neither is a word in camel case ("macOS", "JavaScript").
_CODE_NAME = re.compile(r"(?<![\w.-])(?:--?[a-z][\w-]+|(?!(?:e\.g|i\.e)\b)[A-Za-z_][\w.]*(?:_|\.[A-Za-z_])[\w.]*\w)")
#: A proper name of parts joined by hyphens ("Flask-Talisman", "Sphinx-Gallery").
_PROPER = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:-[A-Z][A-Za-z0-9]*)+\b")
#: A name in double quotes ("searching for "AirPlay Receiver" in System Settings").
_QUOTED = re.compile(r'"([^"\n]{1,60})"|\u201c([^\u201d\n]{1,60})\u201d')
#: A name given in prose ("this concept is called Canonical Log Lines", "a pattern known as Unit of Work"): the
#: capitalised words after "called", "named" or "known as".
_CALLED = re.compile(r"\b(?:called|named|known\s+as)\s+((?:[A-Z][\w-]*)(?:\s+[A-Z][\w-]*){0,4})")
#: Turning a thing on or off is how a user says enabling or disabling it, the words documentation uses ("Set
#: `ignore-vcs` to `true` to disable this behavior"); the phrase's words ("turn", "in turn") are not the need.
_TURN = re.compile(r"(?i)\b(?:turn|switch)(?:s|ed|ing)?\s+(?:(?:it|that|this|them)\s+)?(on|off)\b")


def _turned(phrase: re.Match[str]) -> str:
    """What a :data:`_TURN` phrase says in documentation's words."""
    return "enable" if phrase.group(1).lower() == "on" else "disable"


#: Stopping a thing from doing something is how a user says disabling it ("How do I stop the flask command from
#: loading .env files?" -- "Disable dotenv"); stopping a thing ("stop the server") is not.
_STOP_FROM = re.compile(r"(?i)\bstop(?:s|ped|ping)?\b(?=[^.?!,;]*?\bfrom\s+\w+ing\b)")


#: Where the asker expects the answer ("..., according to the attrs docs?", "as per the reference guide"): the source,
#: not the need -- every page is the docs.
_SOURCE = re.compile(r"(?i),?\s*\b(?:according\s+to|as\s+per|per)\s+(?:the\s+)?(?:[\w.-]+\s+){0,2}"
                     r"(?:docs|documentation|manual|guide|reference)\b")


def said(question: str) -> str:
    """``question`` in documentation's words: turning a thing on or off, or stopping it from doing something, is
    enabling or disabling it; where the asker expects the answer (:data:`_SOURCE`) is no word of it."""
    return _SOURCE.sub(" ", _STOP_FROM.sub("disable", _TURN.sub(_turned, question)))


#: "How do I make ..." -- not "When did she make What a Wonderful World?", where making is what is asked about.
_MAKE = re.compile(r"(?i)\bhow\s+(?:do|can|could|should|would|does|will)\s+(?:i|you|we|one)\s+make\b")


def _stemmer() -> Stemmer.Stemmer:
    """PyStemmer objects are not thread-safe: one per thread."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


#: A statement the question opens on before it asks ("Routes assumes incoming URLs are UTF-8. How do I switch it to
#: latin-1?", "FileHuey supports task priorities, but which values are allowed?"): what the asker knows already. Its
#: sentences end on a word, not on an abbreviation's stop ("e.g."), and hold no question mark.
_PREMISE = re.compile(r"(?is)^(?:([^?]*\w(?<!\.\w)[.!])\s+(?=[^.!]*\?\s*$)|([^?]*?),\s+(?:but|so)\s+"
                      r"(?=(?:how|what|which|where|when|why|is|are|can|could|does|do|should)\b))")


def _premise(question: str) -> str:
    """What ``question`` states before it asks (:data:`_PREMISE`), or ``""``."""
    m = _PREMISE.match(question.strip())
    return (m.group(1) or m.group(2)) if m else ""


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """A folded token's Snowball (English) stem."""
    return _stemmer().stemWord(token)


#: A snake_case name ("max_form_parts", "_get_current_object"): searched in its words, but only a sentence naming it
#: names it -- "File parts can be larger" holds "parts", not `max_form_parts` -- so it is a word of its own too.
_SNAKE = re.compile(r"(?<![A-Za-z0-9_])_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")


def _snake(text: str) -> list[tuple[str, str]]:
    """Each snake_case name in ``text``: as written, and joined into one word ("maxformparts")."""
    return [(m.group(), m.group().replace("_", "").lower()) for m in _SNAKE.finditer(text)]


def stems(text: str) -> set[str]:
    """The stems of a text's content words, of its snake_case names as one word each, and of "enable" / "disable"
    where it says turning something on or off (:func:`said`)."""
    return ({stem(t) for t in content(identifiers(text))} | {stem(joined) for _, joined in _snake(text)}
            | {stem(_turned(m)) for m in _TURN.finditer(text)})


@dataclass(frozen=True)
class Highlight:
    """A sentence, a code block or lines of one (``code``) of a passage, as ``text[start:end]``."""

    text: str
    start: int
    end: int
    code: bool = False


@dataclass(frozen=True)
class Assessment:
    """How much of a question a passage covers (0..1) and what in it answers."""

    coverage: float
    highlights: tuple[Highlight, ...]
    matched: tuple[str, ...] = ()  # the question's words the passage contains, in question order
    focus: float = 0.0  # what the answering sentences cover (not what they introduce, but a how answer's code)


#: A plain word: letters only, lower case or capitalised, not part of a name ("uWSGI", "max_form_parts", "X-Line").
_PLAIN = re.compile(r"(?<![\w-])(?:[a-z]+|[A-Z][a-z]+)(?![\w-])")


def _word_pairs(text: str) -> list[tuple[str, str]]:
    """Each two plain content words of ``text`` next to each other (a space apart), folded."""
    words = list(_PLAIN.finditer(text))
    return [(a.group().lower(), b.group().lower()) for a, b in zip(words, words[1:])
            if not text[a.end():b.start()].strip() and content(a.group()) and content(b.group())]


class Question:
    """A question's content words with their weights in one caller's view."""

    def __init__(self, text: str, idf: Mapping[str, float], passages: int, unseen: float | None = None):
        """``idf``: the caller's term weights over their ``passages``; a word it lacks (no readable passage
        holds it) weighs ``unseen``, by default as much as a word can (document frequency 0)."""
        if unseen is None:
            unseen = math.log(1 + (passages + 0.5) / 0.5)
        self.text = text
        self.weights: dict[str, float] = {}
        self.words: dict[str, str] = {}  # stem -> the question's first word with it
        light = _MAKE.search(text) is not None  # "How do I make X Y?" asks for X to be Y: "make" is the asking
        #: two words of the question a name writes as one ("line length": `g:black_linelength`, "time out": `timeout`)
        self.compounds = {stem(a + b): (stem(a), stem(b)) for a, b in _word_pairs(text)}
        for token in content(identifiers(said(_FRAME.sub(" ", text)))):
            if token in ASKING or (light and token == "make"):
                continue
            key = stem(token)
            self.words.setdefault(key, token)
            self.weights[key] = max(self.weights.get(key, 0.0), idf.get(token, unseen))
        for name, joined in _snake(text):  # a name weighs as its weightiest word: naming it is what adds
            parts = [self.weights[w] for w in map(stem, content(name.replace("_", " "))) if w in self.weights]
            if parts:
                key = stem(joined)
                self.words.setdefault(key, name)
                self.weights[key] = max(self.weights.get(key, 0.0), max(parts))
        self.total = sum(self.weights.values())
        #: the words of what it asks that what it states first does not say (:func:`_premise`): a sentence saying
        #: none of them restates the asker's situation -- the docs answer it a sentence or two later
        stated = stems(said(_premise(text)))
        self.asked: set[str] = (self.weights.keys() - stated) if stated & self.weights.keys() else set()
        self.quantity = bool(_HOW_MANY.search(text))
        #: does it ask how two things differ (a sentence contrasting them answers: "Unlike `Any`, ...")
        self.compares = _COMPARES.search(text) is not None
        #: does it ask what happens (a sentence saying what it leads to answers: it raises, fails, is ignored ...)
        self.happens = _HAPPENS.search(text) is not None
        #: does it ask which version (a version number answers)
        self.version = _WHICH_VERSION.search(text) is not None
        #: does it ask where something is ("Where does it look for its configuration file?"): a place answers
        self.where = _WHERE.search(text) is not None
        which = _WHICH.search(text)
        #: does it ask what something is by default -- not which default thing ("Which default Python Markdown
        #: extension does ... replace?" asks for an extension)
        asked = [m for m in _DEFAULT.finditer(text) if not (which and which.start() <= m.start() < which.end())]
        self.default = len(asked) > len(_ASIDE.findall(text)) or (
            _OMITTED.search(text) is not None and _WHAT.search(text) is not None and not _HOW.search(text))
        #: ... and whether it asks for the default value itself (:data:`_VALUE`)
        self.value = self.default and _VALUE.search(text) is not None
        self.how = bool(_HOW.search(text)) or (_SHOW.search(text) is not None and not self.quantity
                                               and not self.default)
        self.history = bool(_HISTORY.search(text))
        #: does it ask which thing ("Which exception does it raise ...?"): a name answers
        self.which = which is not None
        #: does it ask whether there is a means ("Is there a setting for that?"): a name answers it too
        self.means = _MEANS.search(text) is not None
        #: the names in code it asks about ("Which extension does `pymdownx.betterem` replace?")
        self.names = [m.group() for m in _CODE_NAME.finditer(text)]
        #: does it ask about doing without something (then a sentence saying what is not there may answer it)
        self.without = _WITHOUT.search(text) is not None
        #: does it ask of a case of something not so (:data:`_NEGATION`)
        self.negated = _NEGATION.search(text) is not None
        #: does it ask how to change what happens ("..., and which parameter changes that?")
        self.changes = self.how or (not self.history and _CHANGE.search(text) is not None)
        #: does it ask what to do about what it describes ("... and how do I fix it?", "what should I do about it?")
        self.remedy = _REMEDY.search(text) is not None

    def covered(self, found: set[str]) -> float:
        """The weighted share of the question's words among ``found`` stems (two of them written as one count)."""
        if not self.total:
            return 0.0
        joined = [pair for key, pair in self.compounds.items() if key in found]
        found = found.union(*joined) if joined else found
        return sum(w for key, w in self.weights.items() if key in found) / self.total


#: What a sentence says is not there ("... parsed without a format string"): it answers nothing of a question asking
#: for it ("How do I parse a string with a custom format?") -- unless the question asks what happens without it.
_WITHOUT = re.compile(r"(?i)\bwithout\b(?:\s+[\w`'-]+){1,4}")
#: A case of something not so ("when zope.event isn't installed", "if no username is given"): a question asking what
#: holds then is answered by the sentence saying it of that case, not by its neighbour on the other case ("If
#: zope.event is installed, ... an alias for zope.event. If zope.event isn't installed, then ZODB.event is a noop.").
_NEGATION = re.compile(r"(?i)\b(?:if|when|whenever|once|while|unless)\b(?:[^,;:?.!]|\.(?=\w))*?"
                       r"(?:n't\b|\b(?:not|never|no)\b)")


def _present(question: Question, said: str) -> str:
    """A sentence less what it says is not there (:data:`_WITHOUT`), unless the question asks about doing without."""
    return said if question.without else _WITHOUT.sub(" ", said)


#: A Sphinx info field (":param int inflight_hours: ...", ":raises TypeError: ..."): each documents one parameter,
#: return value or exception -- not a generic field list (":Exit code 5: ..."), whose lines may read as one.
_FIELD = (r":(?:param|parameter|arg|argument|key|keyword|kwarg|type|returns?|rtype|raises?|except|exception|var|ivar"
          r"|cvar|vartype|yields?)\b[^:\n]*:(?=[ \t]|$)")
#: A line that starts a unit of its own: a list item, a table row, a quote, an info field, or a heading (skipped).
_LINE_START = re.compile(rf"[ \t]*([-*+][ \t]|\d{{1,3}}[.)][ \t]|\||>|#|{_FIELD})")
#: A list item's line.
ITEM = re.compile(r"[ \t]*([-*+]|\d{1,3}[.)])[ \t]")
#: A pointer to another page ("See also: pythonpath.", Sphinx's "Seealso:", "See the hook's documentation for
#: details.", "See multi_line_exclude.", "Also see the pytest:firstresult section in the `pytest` docs."): it
#: answers nothing itself.
_POINTER = re.compile(r"(?i)[ \t]*(?:also,?[ \t]+)?see(?:[ \t]*also\b|\b[^\n]*\bfor[ \t]+(?:more[ \t]+)?(?:details|information)\b"
                      r"|\b[^\n]*\b(?:section|docs|documentation|chapter|page)s?\b|[ \t]+[^\s]+\.(?:\s|$))")
#: A thing of code's name: with "_", ".", an inner capital or a leading "--", in backticks, or a setting's name under
#: its section's ("core/cache_dir", "http/allowed_origins").
_NAME = r"(`[^`\n]+`|--?[\w-]+|[A-Za-z_]\w*(?:[_.]|[a-z][A-Z])[\w.]*|[a-z][\w-]*/[a-z_][\w.-]*)"
#: A line naming one that the lines after it define, as reference pages do ("PERMANENT_SESSION_LIFETIME:",
#: "`max_retries`:", "--no-cache-dir:", a signature: "enable_stats(huey, db[, **options]):").
_TERM = re.compile(rf"{_NAME}(?:\([^()\n]*\))?:")
#: A list item defining a term ("* `max_age` - Sets a maximum time ... Defaults to `600`.", "- **timeout**: ...",
#: Sphinx's "- compare_type (bool) – ..."):
#: its later sentences are about that term.
_ITEM_TERM = re.compile(rf"[ \t]*(?:[-*+]|\d{{1,3}}[.)])[ \t]+(?:\*\*)?{_NAME}(?:\*\*)?(?:[ \t]*\([^)\n]{{1,60}}\))?"
                        r"[ \t]*(?:[-:\u2013\u2014])")


def release_notes(section: str) -> bool:
    """Is a passage under a heading naming a release, or release notes by name ("Changelog", "What's New in
    Pyramid 1.10") -- its heading path, headings joined by " › "?"""
    return any(named.match(heading) for heading in map(str.strip, section.split("›")) for named in (_RELEASE, _RELEASES))


def _named(text: str, quoted: bool = False) -> list[str]:
    """What ``text`` names: in inline code, as the reference entry it starts ("StreamReader.total_raw_bytes: The number
    of ..."), and with ``quoted`` in double quotes or as what something is called (:data:`_CALLED`)."""
    term = _TERM.match(text.lstrip())
    return [*INLINE_CODE.findall(text), *([term.group(1)] if term else []),
            *((a or b for a, b in _QUOTED.findall(text)) if quoted else ()),
            *(_CALLED.findall(text) if quoted else ())]


def names_code(question: Question, text: str) -> bool:
    """Does ``text`` name in inline code (or as the reference entry it starts) something of the question and more
    ("pass `required=True`" for "How do I make an option required?") -- not only repeat the question's words
    ("`git blame`", "`'.html'`"), which names the subject, not how?"""
    return any(code & question.weights.keys() and code - question.weights.keys() for code in map(stems, _named(text)))


def names_new(question: Question, text: str) -> bool:
    """Does ``text`` name something the question does not -- in code, as a reference entry or in quotes ("Griffe will
    raise a `CyclicAliasError`", "searching for "AirPlay Receiver"") -- as the answer to a "which ..." question does?
    Two words of the question written as one name ("connection pool": `connection_pool`) are nothing new."""
    return any(_new(question, name) for name in _named(text, quoted=True))


def names_any(question: Question, text: str) -> bool:
    """Does ``text`` name something new (:func:`names_new`), write one as code ("the SOURCE_DATE_EPOCH environment
    variable", ":param int inflight_hours:") or as a hyphenated proper name ("The Flask-Talisman extension")?"""
    written = (m.group() for pattern in (_CODE_NAME, _PROPER) for m in pattern.finditer(text))
    return any(_new(question, name) for name in (*_named(text, quoted=True), *written))


def _new(question: Question, name: str) -> bool:
    """Does ``name`` hold a word the question does not -- two of its words written as one are not new?"""
    return bool(stems(name) - question.weights.keys() - question.compounds.keys())


def names_asked(question: Question, text: str) -> bool:
    """Does ``text`` name what the question names in code, and something more, in code or as a name written as code
    ("`pymdownx.betterem` replaces `markdown.extensions.smartstrong`." for "Which extension does pymdownx.betterem
    replace ...?"; "`structlog.get_logger()` is typed as returning typing.Any")?"""
    return any(name.lower() in text.lower() for name in question.names) and (names_new(question, text) or any(
        stems(name.group()) - question.weights.keys() for name in _CODE_NAME.finditer(text)))


def states_version(text: str) -> bool:
    """Does ``text`` name a version number ("in version 21.8b0", "Python 3.13 or later")?"""
    return _VERSION_NUMBER.search(text) is not None


def states_number(text: str) -> bool:
    """Does ``text`` state a quantity (a numeral or a number word)? A link's digits state none ("See
    https://github.com/Pylons/pyramid/pull/3300")."""
    return _NUMBER.search(_LINK.sub(" ", text)) is not None


#: A place: a path ("/etc/invoke.yaml", "~/.config", "./build", "%APPDATA%", "$HOME/x", "C:\\Users"), or a directory
#: or folder named.
_PLACE = re.compile(r"(?i)(?:^|[\s`(\"'])(?:~|\.{0,2}/[\w.-]|%\w+%|\$\{?[A-Z_]+|[a-z]:\\)|\b(?:directory|directories"
                    r"|folders?)\b")


def states_place(text: str) -> bool:
    """Does ``text`` say where something is: a path, or a directory or folder? A link is no place on disk."""
    return _PLACE.search(_LINK.sub(" ", text)) is not None


#: Saying what holds unless one says otherwise, without the word "default" ("With no other configuration, simply
#: calling `invoke` will look for ...", "If omitted, ...", "... unless otherwise specified", "As a fallback the value
#: `__token__` is applied.").
_UNLESS_SAID = re.compile(r"(?i)\b(?:as\s+a\s+fallback|falls?\s+back\s+(?:to|on)|with\s+no\s+other\s+configuration"
                          r"|out\s+of\s+the\s+box|unless\s+otherwise\s+"
                          r"(?:specified|configured|set|given|stated)|if\s+(?:it\s+is\s+|they\s+are\s+)?(?:omitted|not\s+"
                          r"(?:specified|given|set|provided|passed|configured))|when\s+(?:omitted|not\s+(?:specified|given"
                          r"|set|provided|passed)))\b")


def states_default(text: str) -> bool:
    """Does ``text`` say what something's default is (the word, in any form, or what holds unless one says
    otherwise)?"""
    return _DEFAULT.search(text) is not None or _UNLESS_SAID.search(text) is not None


def gives_default(question: Question, text: str) -> bool:
    """Does ``text`` say what a default is and give it ("Default: `timedelta(days=31)`"), in code or a number? Code
    naming only the question's words names what the default is of ("The default timeout ... sent to the
    `RemoteControl` `/execute` endpoint"), not a value."""
    return states_default(text) and (states_number(text) or any(
        not (said := stems(code)) or said - question.weights.keys() for code in INLINE_CODE.findall(text)))


def _units(text: str) -> list[tuple[int, int, bool]]:
    """The passage's sentences and code blocks as ``(start, end, is_code)``, in order.

    Fenced code is one unit. Prose is read as written: a paragraph's wrapped lines are one run of
    text, a list item, table row or quote starts a new one, and each run splits at sentence ends --
    but a table row, whose cells are not sentences, is one unit ("| `-w` | Workers. Default 1. |").
    Heading lines (``#`` kept for merged sections) are context, not sentences.
    """
    out: list[tuple[int, int, bool]] = []
    at = 0
    for fence in [*FENCE.finditer(text), None]:
        stop = fence.start() if fence else len(text)
        runs: list[list[int]] = []  # [start, end] of each run of prose lines
        for line in re.finditer(r"[^\n]+|\n(?=\n)", text[at:stop]):
            a, b = at + line.start(), at + line.end()
            if not line.group().strip():
                runs.append([])  # a blank line ends the run
            elif _LINE_START.match(line.group()) or not runs or not runs[-1]:
                runs.append([a, b] if not line.group().lstrip().startswith("#") else [])
            else:
                runs[-1][1] = b
        for run in filter(None, runs):
            piece = text[run[0]:run[1]]
            marker = ITEM.match(piece)  # "1. Rewrite ..." is one item, not a sentence "1."
            cuts = [0, len(piece)] if piece.lstrip().startswith("|") else \
                [0, *(m.end() for m in sentence_ends(piece, marker.end() if marker else 0)), len(piece)]
            for x, y in zip(cuts, cuts[1:]):
                part = piece[x:y]
                lead = len(part) - len(part.lstrip())
                if part.strip() and any(c.isalnum() for c in part):
                    out.append((run[0] + x + lead, run[0] + x + len(part.rstrip()), False))
        if fence:
            out.append((fence.start(), fence.end(), True))
            at = fence.end()
    return out


def _defined(text: str, units: list[tuple[int, int, bool]],
             items: list[int | None]) -> tuple[list[set[str]], list[int | None]]:
    """The stems of the term each unit stands under (a unit may start with the term's line), and the unit that
    names it: a reference entry's sentences ("Default: `timedelta(days=31)`") say nothing of the name they are
    about, but stand under it -- until the next term or heading; and a list item's later sentences under the term
    it defines."""
    out, term, named, heads = [], set(), None, []
    for i, (a, b, code) in enumerate(units):
        if i and _parted(text, units, i):
            term, named = set(), None
        line = text[a:b].split("\n", 1)[0]
        if not code and _TERM.fullmatch(line):
            term, named = stems(line), i
        head = items[i]
        defines = _ITEM_TERM.match(text, text.rfind("\n", 0, units[head][0]) + 1) if head is not None else None
        out.append(term | stems(defines.group(1)) if defines else term)
        heads.append(named)
    return out, heads


def _under(text: str, units: list[tuple[int, int, bool]], named: list[int | None], i: int) -> str:
    """Unit ``i`` read with the term it stands under (a reference entry's line), when it does."""
    head = named[i]
    said = text[units[i][0]:units[i][1]]
    return said if head is None or head == i else f"{text[units[head][0]:units[head][1]]}\n{said}"


def _item(text: str, units: list[tuple[int, int, bool]], items: list[int | None], i: int) -> str:
    """Unit ``i`` read with the later sentences of the list item it starts, when it starts one."""
    return "\n".join(text[a:b] for j, (a, b, _) in enumerate(units) if j == i or (items[j] == i and j > i))


def _bare(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Is unit ``i`` a term's line ("AUTOTHROTTLE_MAX_DELAY:") with nothing under it -- a heading or the passage's
    end next? It defines nothing: it says nothing of what the question asks."""
    return _TERM.fullmatch(text[units[i][0]:units[i][1]]) is not None and (
        i + 1 == len(units) or _parted(text, units, i + 1))


def _parted(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Does a heading stand between unit ``i`` and the one before it (a new section: what follows is not its)?"""
    return _HEADING.search(text, units[i - 1][1], units[i][0]) is not None


def _goes_on(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Does unit ``i`` go on from the one before it -- neither is code, no blank line parts them, and it does not start
    a line of its own kind (a new item, row or quote)?"""
    return (i > 0 and not units[i][2] and not units[i - 1][2] and "\n\n" not in text[units[i - 1][1]:units[i][0]]
            and not _entry(text, units, i))


def _reads_back(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Does unit ``i`` refer back to the sentence before it: in its paragraph, opening on a word that refers back or
    with a demonstrative and a noun (:func:`_refers_back`); or with the latter opening the next paragraph of its
    section, past no code, heading or new item ("Enable the `reverse_proxy` configuration option if you do this."
    then "Technically, this option lets ...")?"""
    named = _refers_back(text, *units[i][:2])
    if _goes_on(text, units, i):
        return named or REFERS_BACK.match(text, units[i][0]) is not None
    return (named and i > 0 and not units[i][2] and not units[i - 1][2] and not _parted(text, units, i)
            and not _entry(text, units, i))


def _entry(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Does unit ``i`` open a line of its own kind -- a list item, a table row, a field: one of parallel entries?"""
    line = text.rfind("\n", 0, units[i][0]) + 1
    return not text[line:units[i][0]].strip() and _LINE_START.match(text, line) is not None


def _items(text: str, units: list[tuple[int, int, bool]]) -> list[int | None]:
    """For each unit, the first unit of the list item whose later sentence it is, or ``None``: one pass, a unit going
    on from the one before unless code, a blank line or its own line's start (a new item, row or quote) parts them."""
    first: list[int] = []
    for i in range(len(units)):
        first.append(first[-1] if _goes_on(text, units, i) else i)
    return [f if f != i and ITEM.match(text, text.rfind("\n", 0, units[f][0]) + 1) else None
            for i, f in enumerate(first)]


def _listing(text: str, start: int) -> bool:
    """Is the code block at ``start`` commands or their output (its fence names no language, or a shell, text or
    console), whose lines stand alone -- not a program, which reads from its head?"""
    return _FENCE_INFO.match(text, start).group(1).lower() in _LISTINGS


def _lines_covering(question: Question, text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the code block ``text[start:end]``'s :data:`CODE_LINES` consecutive lines (fences
    aside) that cover most of ``question``; of equals, the one whose first line covers most (an option's
    line, then its description's), then the first."""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text[start:end])][1:]  # the opening fence
    if lines and text[start + lines[-1][0]:start + lines[-1][1]].lstrip().startswith(("```", "~~~")):
        lines.pop()  # the closing one (a block the passage cuts has none)
    own = [stems(text[start + a:start + b]) for a, b in lines]
    runs = [(question.covered(set().union(*own[i:i + CODE_LINES])), question.covered(own[i]) if own else 0.0, -i)
            for i in range(max(1, len(lines) - CODE_LINES + 1))]
    first = -max(runs)[2]
    window = lines[first:first + CODE_LINES] or [(0, end - start)]
    return start + window[0][0], start + window[-1][1]


#: Saying what to do: a clause opening with a verb of doing ("..., set `x=True`", "Use `host.loop` ..."), what you
#: can or should do, what can be done or used, doing it by setting or passing something, what a project provides
#: for it ("... provides a directive known as `depends_on`") -- not what must hold ("every producer must use ...").
_VERB = r"(?:use|set|pass|call|try|install|add|enable|disable|define|specify)"
_DOES = re.compile(rf"(?i)(?:^|[,;]\s*|\bthen\s+|\binstead,?\s+){_VERB}\b"
                   rf"|\b(?:you|we|one)\s+(?:can|could|should|may|might|must|need\s+to|have\s+to)\s+"
                   rf"(?:also\s+|simply\s+|just\s+)?{_VERB}\b"
                   r"|\b(?:can|may)\s+(?:also\s+)?be\s+(?:used|set|passed|done|changed|controlled|configured|disabled|enabled)\b"
                   r"|\bby\s+(?:using|setting|passing|calling|adding|enabling|disabling|defining|specifying)\b"
                   r"|\bprovides?\s+(?:a|an|the)\b[^.]*?\b(?:known\s+as|called|named)\b")


def _remedies(question: Question, say: str) -> bool:
    """Does the sentence ``say`` tell what to do (:data:`_DOES`) with something the question does not name?"""
    return _DOES.search(say) is not None and names_new(question, say)


def _near_saying(text: str, units: list[tuple[int, int, bool]], last: int, says: Callable[[str], bool],
                 past_code: bool) -> int | None:
    """The first of the :data:`NEAR` sentences after ``last``, in its section, that ``says`` what is sought -- past
    code (an example) when ``past_code``, else before it -- or ``None``. The docs state a problem or a situation, then
    what to do about it, a sentence or two later and a paragraph later if need be."""
    seen = 0
    for at in range(last + 1, len(units)):
        if _parted(text, units, at) or seen >= NEAR:
            break
        if units[at][2]:
            if past_code:
                continue
            break
        seen += 1
        if says(text[units[at][0]:units[at][1]]):
            return at
    return None


def _remedy_after(text: str, units: list[tuple[int, int, bool]], last: int, items: list[int | None]) -> list[int]:
    """For a question asking what to do about a problem: the first sentence within :data:`NEAR` after ``last``, in its
    section and past an example, that says what to do (:data:`_DOES`) -- with what it introduces. The docs describe
    the problem, then the remedy ("999 is a custom response status code used by some sites to throttle requests." then
    "Try slowing down the crawling speed by using a download delay ...")."""
    at = _near_saying(text, units, last, _DOES.search, past_code=True)
    return [] if at is None else [at, *_introduced(text, units, at, False, items)]


#: A sentence announcing what follows without a colon: "There are several common reasons why obviously wrong code is
#: not flagged as an error." -- the reasons are the answer.
_ANNOUNCES = re.compile(r"(?i)(?:there|here)\s+are\s+(?:several|a\s+few|a\s+number\s+of|many|some|various|two|three|four"
                        r"|five)\b[^.:]*\.$")


def _introduces(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Does the sentence ``i`` end in ":" or announce what follows (:data:`_ANNOUNCES`) -- introducing it (an
    example, code, a list, the first of several reasons)?"""
    said = text[units[i][0]:units[i][1]].rstrip()
    return said.endswith(":") or _ANNOUNCES.match(said) is not None


def _is_item(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Does the unit ``i`` start a list item ("- `Never` - all ANSI escape sequences ...")?"""
    return not units[i][2] and bool(ITEM.match(text, text.rfind("\n", 0, units[i][0]) + 1))


def _label(text: str, units: list[tuple[int, int, bool]], i: int) -> bool:
    """Is the unit ``i`` a short label ending in ":" -- a tab's or platform's ("pyproject.toml:", "Unix/macOS:")?"""
    return not units[i][2] and units[i][1] - units[i][0] <= MAX_LABEL and _introduces(text, units, i)


def _list_intro(text: str, units: list[tuple[int, int, bool]], last: int) -> int | None:
    """The sentence introducing the list whose item ``last`` is ("This setting can be one of three values:"), or
    ``None`` (``last`` is no list item, or its list follows no sentence ending in ":")."""
    at = last
    while at > 0 and _is_item(text, units, at):
        at -= 1
    return at if at < last and not units[at][2] and _introduces(text, units, at) else None


def _introduced(text: str, units: list[tuple[int, int, bool]], last: int, how: bool,
                items: list[int | None]) -> list[int]:
    """What the sentence ``last`` introduces: after a sentence ending in ":" ("We implement this in two
    steps:", "use the following command:") the answer is what follows -- the code block, the list's
    items, or the line after a short label ("Unix/macOS:") -- so it comes along, up to
    :data:`MAX_CODE_CHARS`. A "how" question's best sentence brings the code block that follows it too.
    ``items``: each unit's list item (:func:`_items`), which the caller has found once for the passage."""
    def say(i: int) -> str:
        return text[units[i][0]:units[i][1]]

    at = last + 1
    if at + 1 < len(units) and _label(text, units, at):
        at += 1  # a tab or platform label between the sentence and what it introduces
    if at >= len(units) or not (_introduces(text, units, last) or (how and units[at][2])) \
            or any(_parted(text, units, i) for i in range(last + 1, at + 1)):
        return []  # nothing introduced, or it is under the next heading
    out = list(range(last + 1, at + 1))
    size = len(say(at))
    while _is_item(text, units, at):
        after = at + 1
        while after < len(units) and items[after] == at:
            after += 1  # an item's later sentences: its first says what it is ("- 'oldState' -- The state ...")
        if after >= len(units) or not _is_item(text, units, after) or size + len(say(after)) > MAX_CODE_CHARS:
            break
        at = after  # a list: its further items, while they fit
        out.append(at)
        size += len(say(at))
    if (not units[at][2] and _introduces(text, units, at) and at + 1 < len(units) and units[at + 1][2]
            and size + len(say(at + 1)) <= MAX_CODE_CHARS):
        out.append(at + 1)  # what is introduced introduces code in turn ("... will follow this template:")
    return out


def _shown_code(text: str, units: list[tuple[int, int, bool]], last: int) -> list[int]:
    """For a "how" question: the first code block within :data:`CODE_AFTER` units after ``last``, in the
    same section, with the sentence just before it (what introduces it) -- "Gunicorn is easy to install."
    is about the task; "then install gunicorn:" and its command are how. When that is a tab's label, the sentence
    introducing the tabs comes too ("..., then you could use the `exclude_package_data` option:" "pyproject.toml:"
    and its block). Nothing when a heading comes first."""
    for at in range(last + 1, min(last + 1 + CODE_AFTER, len(units))):
        if _parted(text, units, at):
            return []
        if units[at][2]:
            lead = at - 1
            if lead - 1 > last and _label(text, units, lead) and _introduces(text, units, lead - 1) \
                    and not _label(text, units, lead - 1):
                lead -= 1  # a tab's label: the sentence introducing the tabs comes with it
            return [*range(lead, at), at] if lead > last and not units[lead][2] else [at]
    return []


def _read_on(text: str, units: list[tuple[int, int, bool]], last: int, room: int,
             says: Callable[[str], bool]) -> list[int]:
    """The sentences after ``last`` in its paragraph, up to ``room`` of them, through the first that ``says`` what
    was asked -- documentation states the task, then says how a sentence or two later ("This behavior can be changed
    by passing `invoke_without_command=True`"), or sets the scene, then names the thing ("... the chain goes in a
    loop. Griffe will raise a `CyclicAliasError` ..."). None when no such sentence follows."""
    after: list[int] = []
    for at in range(last + 1, min(last + 1 + room, len(units))):
        if units[at][2] or "\n\n" in text[units[at - 1][1]:units[at][0]]:
            break  # the paragraph ends (a blank line, a heading, code)
        after.append(at)
    ends = next((n for n, i in enumerate(after) if says(text[units[i][0]:units[i][1]])), None)
    return [] if ends is None else after[:ends + 1]


def _leads_to(question: Question, text: str, units: list[tuple[int, int, bool]], last: int) -> list[int]:
    """For a question asking how (or what changes a behaviour, :attr:`Question.changes`): the sentence right after
    its answer's last (``last``) -- past one code block, their example -- that refers back to it, says how
    (:data:`_HOW_TO`) and names code beyond the question's words, inline or in the block it introduces ("By default,
    `load` will raise ..." [example] "This behavior can be modified with the `unknown` option"; "... The
    `get_parameter_source` method can be used to find this out."): the docs state what happens, then how to change or
    find it -- the example of what happens is not how."""
    if _introduces(text, units, last):
        return []  # it introduces what follows: that is its answer
    at = last + 1 + (last + 1 < len(units) and units[last + 1][2])
    if at >= len(units) or units[at][2] or any(_parted(text, units, i) for i in range(last + 1, at + 1)):
        return []
    say = text[units[at][0]:units[at][1]]
    refers = (REFERS_BACK.match(say) is not None or _THIS.search(say) is not None) and _HOW_TO.search(say) is not None
    named = INLINE_CODE.findall(say)
    if _introduces(text, units, at) and at + 1 < len(units) and units[at + 1][2]:
        named.append(text[units[at + 1][0]:units[at + 1][1]])  # the code it introduces names it
    return [at] if refers and any(stems(code) - question.weights.keys() for code in named) else []


def _named_after(question: Question, text: str, units: list[tuple[int, int, bool]], own: list[set[str]],
                 chosen: list[int]) -> list[int]:
    """For a "which ..." answer naming nothing, whose paragraph names nothing either: of the sentences in its section
    within :data:`CODE_AFTER` units after it, the one naming something (:func:`names_new`) that says most of the
    question its sentences do not -- the docs introduce the things, then give each its paragraph ("Kombu exposes
    multiple environment variables that control debug logging ..." then one paragraph each for
    `KOMBU_LOG_CONNECTION`, `KOMBU_LOG_CHANNEL` and, "for both connections and channels", `KOMBU_LOG_DEBUG`). None
    when no such sentence adds a word of the question. The caller has room for it (its branch asks that)."""
    seen = set().union(*(own[i] for i in chosen))
    last, found = max(chosen), []
    for at in range(last + 1, min(last + 1 + CODE_AFTER, len(units))):
        if _parted(text, units, at):
            break
        if not units[at][2] and names_new(question, text[units[at][0]:units[at][1]]):
            gain = question.covered(seen | own[at]) - question.covered(seen)
            if gain > 0:
                found.append((gain, -at))
    return [-max(found)[1]] if found else []


def _places(text: str, units: list[tuple[int, int, bool]], shows: int | None = None) -> dict[int, int]:
    """Each sentence's place, counted in sentences: a code block between two is the first one's example, read
    past -- unless a sentence introduces it ("Bash: add this to ~/.bashrc:"), or it follows the sentence ``shows``
    (a "how" question's best: its code is how), which puts the next beyond :data:`NEAR`: an answer does not skip
    what it introduces."""
    place, n = {}, 0
    for i, (_, _, code) in enumerate(units):
        if not code:
            place[i], n = n, n + 1
        elif i and not units[i - 1][2] and (i - 1 == shows or _introduces(text, units, i - 1)):
            n += NEAR + 1
    return place


def _headings(text: str, units: list[tuple[int, int, bool]]) -> list[tuple[int, int] | None]:
    """The span of the heading's title each unit stands under inside the passage (a merged passage's later
    sections), or ``None``: a sentence under "#### Name formatting" says what it says of name formatting. Units under
    one span are one section. The passage's own heading path is its context, counted for the passage as a whole."""
    blocks = [(a, b) for a, b, code in units if code]
    found = [m.span(1) for m in _HEADING.finditer(text)
             if not any(a <= m.start() < b for a, b in blocks)]  # "# a comment" in code is no heading
    out: list[tuple[int, int] | None] = []
    at, head = 0, None
    for a, _, _ in units:
        while at < len(found) and found[at][0] < a:
            head = found[at]
            at += 1
        out.append(head)
    return out


def _grown(question: Question, units: list[tuple[int, int, bool]], own: list[set[str]], place: dict[int, int],
           best: int, section: list[tuple[int, int] | None]) -> list[int]:
    """The unit ``best`` and what answers with it: a code block's introducing sentence, or up to two more
    sentences within :data:`NEAR` (counted by :func:`_places`), in its section, that each add :data:`MIN_GAIN` of the
    question -- a sentence under the next heading is about something else ("By default this option is set to
    `{value}`." is not answered further by "#### Default environment / If the `default` environment ...")."""
    chosen = [best]
    if units[best][2]:  # a code block answers: with the sentence just before it, its introduction
        if best > 0 and not units[best - 1][2]:
            chosen.append(best - 1)
        return chosen
    seen = set(own[best])
    while len(chosen) < MAX_SENTENCES:
        gains = [(question.covered(seen | own[i]) - question.covered(seen), -abs(place[i] - place[best]), i)
                 for i in place if i not in chosen and abs(place[i] - place[best]) <= NEAR
                 and section[i] == section[best]]
        if not gains or max(gains)[0] < MIN_GAIN:
            break
        i = max(gains)[2]
        chosen.append(i)
        seen |= own[i]
    return chosen


#: A sentence referring back to the one before it -- opening on it (:data:`hoprag.text.REFERS_BACK`) or with a
#: demonstrative and a noun anywhere in it ("Setuptools maintainers recommend strongly against this
#: precautionary approach.", "At Stripe, this concept is called ...", "A larger value is clamped to that maximum") --
#: not "that" joining a clause ("so that the value ...").
_BACK = re.compile(r"\b(?:this|these|that|those|such)\s+(?:(?!(?:the|a|an)\b)[\w-]+\s+)?"
                   r"(?:approach|concept|practice|behaviou?r|case|feature|method|option|setting|argument|parameter"
                   r"|value|variable|attribute|flag|field|limit|maximum|minimum|pattern|technique|idea|way|kind|mode"
                   r"|problem|issue|situation)s?\b", re.IGNORECASE)


def _refers_back(text: str, start: int, end: int) -> bool:
    """Does ``text[start:end]`` refer back with a demonstrative and a noun (:data:`_BACK`) that it has not stated
    itself before ("Request bodies are limited to 5 MiB; use `--max-body-size` to change that limit" refers to its own
    start, not to the sentence before it)?"""
    return any(not stems(m.group().split()[-1]) & stems(text[start:m.start()])
               for m in _BACK.finditer(text, start, end))


#: A sentence saying what to do in place of what the sentences before it describe ("Instead, use ..."), or about what
#: they describe ("To fix this, you need to re-enable the GIL using the `--enable-threads` switch."), or what holds
#: when what they describe is not done ("... by providing the `table_id` argument:" its code, then "Otherwise, the first
#: table found will be imported.").
_INSTEAD = re.compile(r"(?:Instead|Otherwise)\b|To (?:fix|avoid|solve|prevent|work around|remedy|resolve|address"
                      r"|circumvent|mitigate|get around) (?:this|that|these|it)\b")
#: ... or to what it states, later in it ("... can be used to find this out").
_THIS = re.compile(r"\bthis\b")
#: A sentence limiting what the one before it says ("Import/export using the LaTeX format." then "This format is
#: export-only."): without it the answer says more than the docs do.
_LIMITS = re.compile(r"(?i)\b(?:only|not|never|cannot|no\s+longer)\b|n't\b")
#: Saying how to do something: what can be done ("can be modified with", "can be used to"), or using, setting,
#: passing, calling, enabling it -- not describing it ("It should be a long random `bytes`").
_HOW_TO = re.compile(r"(?i)\b(?:can|may)\s+(?:also\s+)?be\s+\w+ed\b|\b(?:use|pass|set|call|enable|disable)\b")


#: Advising: "it is best to use distinct names", "you should ...", "we recommend ...", "you need to ...".
_ADVISES = re.compile(r"(?i)\b(?:(?:is|are)\s+(?:best|better|recommended|advised)|should|recommend(?:s|ed)?"
                      r"|advise[sd]?|you\s+(?:must|need\s+to))\b")


def _resolves(question: Question, say: str) -> bool:
    """Does ``say`` answer what a question asks beyond its premise (:attr:`Question.asked`): saying one of those
    words, naming something new (:func:`names_new`), saying how (:data:`_HOW_TO`) or advising (:data:`_ADVISES`)?"""
    return bool(stems(say) & question.asked) or names_new(question, say) or _HOW_TO.search(say) is not None \
        or _ADVISES.search(say) is not None


def _room(units: list[tuple[int, int, bool]], chosen: list[int]) -> int:
    """How many more sentences an answer of units ``chosen`` may quote (:data:`MAX_SENTENCES`; code does not count)."""
    return MAX_SENTENCES - sum(not units[i][2] for i in chosen)


def _context(text: str, units: list[tuple[int, int, bool]], chosen: list[int]) -> list[int]:
    """What an answer needs to read on its own, up to :data:`MAX_SENTENCES` sentences (code aside): the sentences
    before each of its sentences that it refers back to, in its paragraph ("This will keep the request context active"
    shown with its code reads with "... use the `stream_with_context` wrapper."), and the "Instead, ..." sentence after
    its last or opening the paragraph after it (the docs say what not to do, then what to do: "Using `@celery_app.task`
    ... won't be available ... It also means ...", "Instead, use `@shared_task`"), and before that the sentence right
    after its last that limits what it says (:data:`_LIMITS`: "This format is export-only.")."""
    out: list[int] = []

    def room() -> bool:
        return _room(units, [*chosen, *out]) > 0

    for first in sorted(i for i in chosen if not units[i][2]):
        while room() and first - 1 not in chosen and first - 1 not in out and _reads_back(text, units, first):
            first -= 1
            out.append(first)
    after = max(chosen) + 1
    if (room() and after < len(units) and not units[after][2] and _goes_on(text, units, after)
            and REFERS_BACK.match(text, units[after][0]) and _LIMITS.search(text, units[after][0], units[after][1])):
        out.append(after)
        after += 1
    while after < len(units) and _goes_on(text, units, after) and not _INSTEAD.match(text, units[after][0]):
        after += 1  # "Instead, ..." may open the next paragraph: it answers the one before as a whole
    if (room() and after < len(units) and not units[after][2]
            and _INSTEAD.match(text, units[after][0])
            and not _parted(text, units, after)):
        out.append(after)
    return out


def _gaps(text: str, units: list[tuple[int, int, bool]], chosen: list[int]) -> list[int]:
    """The sentence between two of the answer's in one section, while there is room: an answer reads without a hole
    (the problem, then "If you want item delivery to start earlier ..., use `FEED_EXPORT_BATCH_ITEM_COUNT` ...", then
    "That way, ..." -- the middle one is what the last refers to), when it shares a paragraph with one of them: a
    paragraph or label standing alone between an entry and its "Default: ..." line is no hole."""
    prose = sorted(i for i in chosen if not units[i][2])
    out = [i + 1 for i, j in zip(prose, prose[1:])
           if j == i + 2 and (_goes_on(text, units, i + 1) or _goes_on(text, units, j))
           and not _parted(text, units, i + 1) and not _parted(text, units, j)]
    return out[:max(0, _room(units, chosen))]


def _follow_up(question: Question, text: str, units: list[tuple[int, int, bool]], own: list[set[str]],
               chosen: list[int], items: list[int | None]) -> list[int]:
    """The sentence right after the answer's last, in its section, that refers back to it (:func:`_refers_back`) and
    says a word of the question its sentences do not -- or, for a "which ..." or "is there a ...?" question, names
    something (:func:`names_new`) -- while there is room, with the code it introduces: the docs state a thing, then
    what is said of it ("Some may be tempted to ... pin to a specific version ..." then "Setuptools maintainers
    recommend strongly against this precautionary approach." for "... What do the maintainers say?"), what it is
    called ("At Stripe, this concept is called Canonical Log Lines."), or how to do it here ("In kombu you can specify
    this argument on the `Queue`, like this:" and its code)."""
    after = max(chosen) + 1
    if (after >= len(units) or _room(units, chosen) <= 0 or units[after][2]
            or _parted(text, units, after) or not _refers_back(text, *units[after][:2])):
        return []
    seen = set().union(*(own[i] for i in chosen))
    names = (question.which or question.means) and names_new(question, text[units[after][0]:units[after][1]])
    if not names and not (own[after] - seen) & question.weights.keys():
        return []
    return [after, *_introduced(text, units, after, False, items)]  # "..., like this:" brings its code


#: A heading that is a name in code: a setting, option, field or object a reference page describes under it
#: ("FEED_STORAGE_FTP_ACTIVE", "`max_age`", "--log-config", "Request.json_body", "LoopAgent", "_bg"), or a command
#: named in lower case, as it is typed ("clean", "dry-run": a heading in words starts with a capital).
_ITEM_HEADING = re.compile(r"`?(?:--?[\w-]+|_+[A-Za-z]\w*|[A-Za-z_][\w.]*(?:_|\.[A-Za-z_]|[a-z][A-Z])[\w.]*"
                           r"|[a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?:\(\))?`?")


def _names_item(heading: str, said: list[str]) -> bool:
    """Is ``heading`` a name in code the sentences ``said`` under it do not name? Then they describe it without
    saying what it is ("Whether to use the active connection mode ..." under "FEED_STORAGE_FTP_ACTIVE")."""
    name = heading.strip().strip("`")
    return bool(_ITEM_HEADING.fullmatch(heading.strip())) and not any(name.lower() in x.lower() for x in said)


#: A sentence whose subject is a pronoun ("It only works with the basic lexers.") is about what its section is about:
#: it reads with its heading's words -- not an "It is ..." or "It would ...", which may refer to nothing ("It is
#: possible to ...").
_SUBJECT = re.compile(r"(?:It|They)\s(?!is\b|was\b|would\b)")


def assess(question: Question, text: str, context: str = "") -> Assessment:
    """Coverage of ``question`` by a passage (its ``text`` plus ``context``: title and heading path),
    its highlights, and how much of the question the answering sentences alone cover.

    The highlights are the best-covering unit -- a sentence, or for a "how" question (or one no sentence
    touches) a code block (documentation answers "how" in code, comments and identifiers included), then
    with the sentence that introduces it --
    and up to two more sentences near it that each add :data:`MIN_GAIN` of the question, in text order --
    then what the last of them introduces (:func:`_introduced`), read with it but not counted in ``focus``:
    an introduction does not answer more for what follows it, it only reads complete -- except the code a "how"
    answer shows, which is the answer."""
    found = stems(f"{context}\n{text}")
    coverage = question.covered(found)
    matched = tuple(word for key, word in question.words.items() if key in found)
    units = _units(text)
    lines = {i: _lines_covering(question, text, a, b) for i, (a, b, code) in enumerate(units)
             if code and b - a > MAX_CODE_CHARS}  # what a block too long to quote answers with
    items = _items(text, units)
    terms, named = _defined(text, units, items)
    own = [set() if not code and (_POINTER.match(text, a) or _bare(text, units, i))
           else stems(text[slice(*lines.get(i, (a, b)))] if code else _present(question, text[a:b])) | term
           for i, ((a, b, code), term) in enumerate(zip(units, terms))]
    # for a "how" question a sentence followed by code is read with it: the code is how it answers
    # ... and every unit with the heading it stands under inside the passage, which says what it is about
    titles = _headings(text, units)  # each unit's section, by its heading
    said_under = {t: stems(text[slice(*t)]) for t in set(titles) if t}
    heads = [said_under.get(t, set()) for t in titles]
    subject = stems(context.rsplit("\n", 1)[-1]) if context else set()  # the heading the passage stands under
    heads = [head | subject if not code and _SUBJECT.match(text, a) else head
             for (a, _, code), head in zip(units, heads)]
    shown = [head | (own[i] | own[i + 1] if not code and i + 1 < len(units) and units[i + 1][2]
                     and not _parted(text, units, i + 1) and (question.how or _introduces(text, units, i)) else own[i])
             for i, ((_, _, code), head) in enumerate(zip(units, heads))]
    # a list item's later sentence reads with the item's start (it is quoted with it): it is scored with what that says
    # too -- "Defaults to `500`." under "* `minimum_size` - Do not GZip responses smaller than this minimum size."
    shown = [s | own[items[i]] if items[i] not in (None, i) else s for i, s in enumerate(shown)]
    # a sentence saying what to do with something named in code ("If your stubs are the authoritative documentation,
    # set `stub_docs_first=True`.") answers the situation the sentences just before it describe, back to one saying
    # what to do in turn: it is chosen as read with them -- the passage's fit still counts what it says itself
    near = _places(text, units) if question.how or question.which or question.means or question.changes else {}
    told = [i for i in near if _remedies(question, text[units[i][0]:units[i][1]])]
    read = {i: shown[i].union(*(own[j] for j in near if j < i and near[i] - near[j] <= NEAR
                                and titles[j] == titles[i] and not any(j <= k < i for k in told))) for i in told}
    # of units covering as much, for a question asking how or which, one saying what to do (read with the situation
    # before it: "Cross-origin browser requests are rejected by default." then "..., pass one or more
    # `--cors-allow-origin` options" over "`blackd` will then print an access log similar to most web servers" for
    # "... the requests get refused. Which flag lets my site's domain through?") -- a question asking whether one can
    # is answered by what holds -- then the one covering most in its own words (a sentence saying it before one only
    # introducing code that shows it), then of parallel entries (list items, table rows, reference entries) the one
    # saying least else -- the most to the point: "Add all files under directories matching `dir-pattern`" over the
    # same "... that match any of the listed patterns" -- then the first (prose defines before it goes on: "... runs in
    # single-user mode: one principal ..." before "Single-user mode serves stdio only"); one covering it with what it
    # introduces or with the sentences before it comes after those that stand alone
    said = [read.get(i, shown[i]) for i in range(len(units))]  # what each unit is scored with
    scored = [(question.covered(said[i]), not code, (question.how or question.which) and i in read,
               question.covered(own[i]),
               (-len(own[i]) if _entry(text, units, i) or named[i] is not None else 0)
               if said[i] <= own[i] | heads[i] else -math.inf, -i)
              for i, (_, _, code) in enumerate(units)]
    if not scored or max(scored)[0] <= 0:
        return Assessment(round(coverage, 3), (), matched)
    # a question that does not ask how is answered by a statement: a code block answers it only when no sentence
    # holds a word of it (a console transcript echoing the question's words states nothing)
    stated = [x for x in scored if x[1] and x[0] > 0]
    # "Which ... does `pymdownx.betterem` replace?": of the sentences about it, those naming that and more; "How many
    # ...": those stating a number; "Since which version ...": those naming a version; "Where ...": those naming a
    # place; "What happens ...": those saying what it leads to; "What is the default ...": those saying what it is by
    # default, and of these the ones giving it (in code or a number)
    # -- a unit under a reference entry names what the entry names ("Which enable_stats option ...?": its field)
    for asks, states, entry in ((question.which and bool(question.names), partial(names_asked, question), True),
                                (question.quantity, states_number, False), (question.version, states_version, False),
                                (question.where, states_place, False), (question.happens, _EFFECT.search, False),
                                (question.default, states_default, False),
                                (question.default, partial(gives_default, question), False),
                                (question.negated, _NEGATION.search, False)):
        if asks:
            stated = [x for x in stated if states(_under(text, units, named, -x[-1]) if entry
                                                  else text[units[-x[-1]][0]:units[-x[-1]][1]])] or stated
    best = -max(scored if question.how or not stated else stated)[-1]  # each score ends on its unit, negated
    place = _places(text, units, best if question.how else None)
    chosen = _grown(question, units, own, place, best, titles)
    for head in {items[i] for i in chosen} - {None, *chosen}:
        chosen.append(head)  # a list item's later sentence reads with the item's start ("`max_age` - ...")
    for head in {named[i] for i in chosen} - {None, *chosen}:
        chosen.append(head)  # ... and a reference entry's with its term ("`--unix-socket=PATH`: Path of ...")
    if question.how and not units[best][2] and not _shown_code(text, units, max(chosen)):
        # a sentence covering about as much, answering as much with its neighbours, that goes on to show how
        reach = question.covered(set().union(*(own[i] for i in chosen)))
        for i, (c, prose, *_) in enumerate(scored):
            grown = _grown(question, units, own, place, i, titles) if prose and c >= scored[best][0] - TIED else []
            if grown and question.covered(set().union(*(own[j] for j in grown))) >= reach and _shown_code(
                    text, units, max(grown)):
                best, chosen = i, grown
                break
    # what follows an intro is for reading -- except the code the best sentence was read with (:data:`shown`)
    focus = question.covered(set().union(shown[best], *(own[i] for i in chosen)))
    if not units[best][2]:
        if question.asked and _room(units, chosen) > 0 and not set().union(*(own[i] for i in chosen)) & question.asked:
            # it only restates what the asker said ("Routes assumes UTF-8 encoding on incoming URLs ..." for
            # "Routes assumes incoming URLs are UTF-8. How do I switch it to latin-1?"): read on to the sentence
            # saying what was asked, naming something new ("You can change the encoding with `map.charset`"), or
            # saying what to do, within NEAR sentences ("... you can get a `KeyError` ... This is mostly likely a
            # problem in test cases ..." then, past one sentence, "For this reason, it is best to use distinct names")
            # -- not past code: the code the answer introduces comes with it, below
            at = _near_saying(text, units, max(chosen), partial(_resolves, question), past_code=False)
            chosen += [] if at is None else [at]
        # a "how" answer shows code -- unless its sentences already name it in code ("pass `required=True`"
        # for "How do I make an option required?": inline code holding a word of the question and more -- code
        # only repeating the question's words, "`git blame`", "`'.html'`", names the subject, not how)
        # -- and unless the sentence it leads on to says how (:func:`_leads_to`)
        led = _leads_to(question, text, units, max(chosen)) if question.changes and len(chosen) < MAX_SENTENCES else []
        show = question.how and not led and not any(names_code(question, text[units[i][0]:units[i][1]])
                                                    for i in chosen)
        # a list the answer's sentence introduces comes whole (while it fits), though its first item was chosen for
        # its own words: "This setting can be one of three values:" then `Never`, `Terminal` and `Always`
        last = max(chosen + led)
        intro = _list_intro(text, units, last)
        opens = intro if intro is not None and intro in chosen else last
        chosen += [*led, *(i for i in _introduced(text, units, opens, show, items) if i not in chosen + led)]
        if show and not any(units[i][2] for i in chosen):
            chosen += [i for i in _shown_code(text, units, max(chosen)) if i not in chosen]
        if show and not any(units[i][2] for i in chosen) and len(chosen) < MAX_SENTENCES:
            # a "how" answer naming no code and showing none: read on to code naming a word of the question (code
            # naming none of its words may be about something else)
            chosen += _read_on(text, units, max(chosen), MAX_SENTENCES - len(chosen),
                               lambda say: bool(stems(" ".join(INLINE_CODE.findall(say))) & question.weights.keys()))
        elif (question.which or question.means) and not question.how and len(chosen) < MAX_SENTENCES and not any(
                names_new(question, text[units[i][0]:units[i][1]]) for i in chosen):
            # a "which ..." answer (or one to "is there a ...?") naming nothing: read on to the sentence naming it
            naming = _read_on(text, units, max(chosen), MAX_SENTENCES - len(chosen), partial(names_new, question))
            chosen += naming  # through the sentence naming it, or none
            if not naming:
                # ... or to the code right after it, which names it ("$ tox -e mapfiles"), with the sentence
                # introducing it if one does ("An experienced user can enable this feature by providing:" then it)
                after = max(chosen) + 1
                led = [after] if (after < len(units) and not units[after][2] and _introduces(text, units, after)
                                  and len(chosen) < MAX_SENTENCES) else []
                block = after + len(led)
                if (block < len(units) and units[block][2]
                        and not any(_parted(text, units, i) for i in range(after, block + 1))
                        and stems(text[units[block][0]:units[block][1]]) - question.weights.keys()):
                    chosen += [*led, block]
                else:
                    chosen += _named_after(question, text, units, own, chosen)
            if not any(names_any(question, _item(text, units, items, i)) for i in chosen):
                # ... and when nothing after it names anything either, the sentence naming something and saying what
                # it leaves out of the question that covers most comes along, wherever it stands ("After installation,
                # failures ... are reported to Sentry" for "Which package do I pip install to report my Flask app's
                # errors to Sentry?": "To use Sentry you need to install the `sentry-sdk` client with extra `flask`
                # dependencies")
                lacks = question.weights.keys() - set().union(*(own[i] for i in chosen))
                naming = [x for x in stated if own[-x[-1]] & lacks
                          and names_any(question, _item(text, units, items, -x[-1]))]
                chosen += [-max(naming)[-1]] if naming and len(chosen) < MAX_SENTENCES else []
        if question.compares and not any(_CONTRAST.search(text[units[i][0]:units[i][1]]) for i in chosen):
            # "What is the difference between X and Y?": a sentence naming the two says nothing of how they differ --
            # read on to the one that does ("The difference between these two is that the former ...")
            chosen += _read_on(text, units, max(chosen), _room(units, chosen), _CONTRAST.search)
        if (question.remedy and _room(units, chosen) > 0
                and not any(_DOES.search(text[units[i][0]:units[i][1]]) for i in chosen)):
            chosen += _remedy_after(text, units, max(chosen), items)
        if question.how:  # a how answer's code is its answer ("If you want to send JSON data:" then the call): it counts
            focus = question.covered(set().union(heads[best], *(own[i] for i in chosen)))
    if question.default:
        # a list item answering for its term gives the default in a later sentence of its own ("- `max_parts` - Stop
        # parsing ... The default is 1000."): that sentence comes along
        for i in [i for i in chosen if not units[i][2] and items[i] is None
                  and not states_default(text[units[i][0]:units[i][1]])]:
            later = next((j for j in range(i + 1, len(units)) if items[j] == i
                          and states_default(text[units[j][0]:units[j][1]])), None)
            if later is not None and later not in chosen:
                chosen.append(later)
    chosen += _context(text, units, chosen)
    chosen += _follow_up(question, text, units, own, chosen, items)
    chosen += _gaps(text, units, chosen)
    if not units[max(chosen)][2]:
        # an answer does not end on a sentence introducing what it leaves out ("To avoid this issue you can at the
        # very minimum do the following:", brought by what comes before, then its code): what it introduces comes too
        chosen += [i for i in _introduced(text, units, max(chosen), False, items) if i not in chosen]
    spans = []
    if titles[best] and (heads[best] & question.weights.keys() - set().union(*(own[i] for i in chosen))
                         or _names_item(text[slice(*titles[best])], [text[slice(*units[i][:2])] for i in chosen])):
        # what it counted of its heading is not in its sentences ("Default: `5.0`" under "AUTOTHROTTLE_START_DELAY"):
        # the heading reads with them, or nothing says what they are about
        spans.append(Highlight(text[slice(*titles[best])], *titles[best], False))
    for i in sorted(chosen):
        a, b, is_code = units[i]
        if i in lines:  # its first lines when they hold the lines that answer, else those lines
            cut = a + text[a:a + MAX_CODE_CHARS].rfind("\n")
            a, b = (a, cut) if lines[i][1] <= cut and not _listing(text, a) else lines[i]
        spans.append(Highlight(text[a:b], a, b, is_code))
    return Assessment(round(coverage, 3), tuple(spans), matched, round(focus, 3))
