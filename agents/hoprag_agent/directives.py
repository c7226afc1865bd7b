"""The directive detector the agent uses to *report* instructions found in retrieved text.

:func:`directives` is for reporting only ("directive detected in X, not executed"). Safety never
depends on it: no decision of the product is taken from document text, so a directive the
detector misses is exactly as inert as one it flags. It knows no corpus: no document id, entity
or payload is named here.

An alarm is only worth reporting if a reader can trust it, so ordinary documentation must not
raise one. The text is read in two layers:

* **markup** -- fenced and inline code, Markdown image and link syntax, HTML tags -- is not a
  directive. It is checked only for unmistakable overrides ("ignore all previous instructions",
  also encoded or spaced out) and for real exfiltration machinery: a rendered image or link whose
  URL carries a placeholder for data, a hidden tracking pixel, a ``javascript:`` link, an inline
  event handler, code that posts a local file or the environment to a server;
* **prose** (everything else) is also checked for text that addresses the model or overrides its
  instructions: persona switches, notes "to the AI", fake roles and prompt formats, tool calls with
  arguments, exfiltration of the conversation, answer manipulation and claimed authority. Tutorial
  imperatives ("use the search tool", "send the email in the background", "the user") are not.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass
from typing import Iterable, Iterator


_CLAUSE = re.compile(r"[.\n]")
_REPORT_CHARS = 300  # a report names the directive; the trace need not carry a whole hostile page


@dataclass(frozen=True)
class Finding:
    """One reported directive: the name of the first rule that matched, and the report text."""

    rule: str
    text: str


# --- normalisation ---------------------------------------------------------------------------

_COMMENT = re.compile(r"<!--|-->")
_TAG_CHARS = {cp: chr(cp - 0xE0000) for cp in range(0xE0020, 0xE007F)}  # "ASCII smuggling" tag block
_HOMOGLYPHS = str.maketrans("аеорсухіјѕԁһӏԛԝɡıαοικνρτυχεѵ", "aeopcyxijsdhlqwgiaoikvptuxev")
_LEET = (str.maketrans("0134578@$!|+", "oieastbasilt"), str.maketrans("0134578@$!|+", "oleastbasllt"))
_HTML_TAG = re.compile(r"<[^<>\n]{1,200}>")


def normalise(text: str) -> str:
    """The text as a reader would see it: entities decoded, tag characters made visible, NFKC,
    invisible format characters (zero-width, bidi controls, soft hyphens) removed, and HTML
    comment markers opened so hidden comment text is read like any other clause."""
    text = html.unescape(text).translate(_TAG_CHARS)
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf" and not 0xFE00 <= ord(ch) <= 0xFE0F)
    return _COMMENT.sub("\n", text)


def _unmarked(text: str) -> str:
    """Combining marks dropped (accents, Zalgo): accent-free patterns match accented text."""
    return unicodedata.normalize("NFC", "".join(ch for ch in unicodedata.normalize("NFD", text)
                                                if unicodedata.category(ch) != "Mn"))


# --- markup: what is code, link syntax or an HTML tag ------------------------------------------

_FENCE = re.compile(r"(?m)^[ \t]*(`{3,}|~{3,})[ \t]*([^\n`]*)$")
_INLINE_CODE = re.compile(r"(`+)[^`\n]+?\1|\{%[^\n]{0,500}?%\}|\{\{[^\n]{0,500}?\}\}")  # and template tags
#: A reStructuredText literal block: the paragraphs after a line ending in ``::`` or a
#: ``.. code-block::`` directive (and its options), up to a line that is not indented (the chunker
#: strips the indent of a paragraph's first line, so that one line is taken whatever its indent).
_RST_LITERAL = re.compile(r"(?:::[ \t]*|^\.\. (?:code-block|code|sourcecode|doctest)::[^\n]*)\n(?:[ \t]+:[\w-]+:[^\n]*\n)*"
                          r"[ \t]*\n[^\n]+(?:\n[ \t]+[^\n]*|\n[ \t]*(?=\n[ \t]))*", re.M)
_LINK = re.compile(r"(!?)\[([^\[\]\n]{0,300})\]\(\s*<?([^()\s<>]{0,800}(?:\([^()\s]{0,200}\)[^()\s<>]{0,200})*)>?"
                   r"(?:\s+(?:\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|\([^()\n]{0,200}\)))?\s*\)")
_REF_LINK = re.compile(r"(!?)\[([^\[\]\n]{0,300})\]\[[^\[\]\n]{0,200}\]")
_REF_DEF = re.compile(r"(?m)^[ \t]{0,3}\[[^\[\]\n]{1,200}\]:[ \t]*\S[^\n]*$")
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^<>\s]{1,800}>", re.I)
_HTML_NAMES = (
    "a|abbr|article|aside|audio|b|blockquote|body|br|button|caption|center|cite|col|colgroup|dd|del|details|"
    "dfn|div|dl|dt|em|embed|figcaption|figure|font|footer|form|h[1-6]|head|header|hr|html|i|iframe|img|input|"
    "ins|kbd|label|li|link|main|mark|meta|nav|noscript|object|ol|option|p|param|picture|q|s|samp|section|"
    "select|small|source|span|strike|strong|sub|summary|sup|svg|path|table|tbody|td|textarea|tfoot|th|thead|"
    "time|title|tr|track|tt|u|ul|var|video|wbr")
_HTML_ELEMENT = re.compile(rf"</?(?:{_HTML_NAMES})\b(?:[^<>\"']|\"[^\"]*\"|'[^']*'){{0,1000}}/?>", re.I)
_HTML_CODE = re.compile(r"<(script|style|pre|code)\b[^>]{0,1000}>.*?(?:</\1\s*>|\Z)", re.I | re.S)
#: A line of code, not of prose: a prompt or statement prefix, an assignment or keyword argument,
#: a statement keyword, a bare call, or a line a statement continues from (``(``, ``,``, ``):``).
_CODE_LINE = re.compile(
    r"^\s*(>>>|\.\.\.|\$ |//|@\w)|^\s+#\s|[(\[{,\\]\s*$|[)\]]:\s*$|^\s*[)\]}\"'`;,\s]+$|\s[-+*/=!<>]?=\s|\w=\S|=>|->|;\s*$"
    r"|^\s*(def|class|return|import|from \S+ import|async|await|elif|else:|try:|except|raise|const|let|var|function|"
    r"print\(|with .*:$|for .* in .*:$|if .*:$|while .*:$)|^\s*[\w.]+\(.*\)\s*$|^\s*\"[^\"]*\"\s*:")


def _code_like(text: str) -> bool:
    """Whether text without fences is a piece of a code block (the chunker cut a passage out of
    one): at least three lines, half of them code; the body of a triple-quoted string (a prompt
    template, say) counts as code."""
    lines = [line for line in text.splitlines() if line.strip()]
    code, quoted = 0, False
    for line in lines:
        toggles = (line.count('"""') + line.count("'''")) % 2
        code += quoted or bool(toggles) or bool(_CODE_LINE.search(line))
        quoted ^= bool(toggles)
    return len(lines) >= 3 and 2 * code >= len(lines)


def _fenced(text: str) -> list[tuple[int, int]]:
    """Spans of fenced code. A passage cut out of a longer document may start inside a block, or
    lie wholly inside one: text before a first bare fence without a partner, or a passage without
    fences, is code when it reads like code."""
    fences = list(_FENCE.finditer(text))
    if not fences:
        return [(0, len(text))] if _code_like(text) else []
    spans: list[tuple[int, int]] = []
    if len(fences) % 2 and not fences[0].group(2).strip() and _code_like(text[:fences[0].start()]):
        spans.append((0, fences[0].end()))
        fences = fences[1:]
    opened: re.Match[str] | None = None
    for fence in fences:
        if opened is None:
            opened = fence
        elif fence.group(1)[0] == opened.group(1)[0] and len(fence.group(1)) >= len(opened.group(1)) \
                and not fence.group(2).strip():
            spans.append((opened.start(), fence.end()))
            opened = None
    if opened is not None:
        spans.append((opened.start(), len(text)))
    return spans


def _blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with ``spans`` replaced by spaces (same length, newlines kept, so offsets hold)."""
    out = list(text)
    for start, end in spans:
        out[start:end] = [ch if ch == "\n" else " " for ch in text[start:end]]
    return "".join(out)


def _uncoded(text: str) -> str:
    """``text`` with fenced code, literal blocks, inline code, template tags and HTML code elements
    blanked: code is not rendered, and is documentation rather than an instruction."""
    text = _blanked(text, [*_fenced(text), *(m.span() for m in _RST_LITERAL.finditer(text))])
    return _blanked(text, (m.span() for p in (_HTML_CODE, _INLINE_CODE) for m in p.finditer(text)))


def _prose(uncoded: str) -> str:
    """Code-free text with its markup blanked too: HTML tags, link and image syntax and URLs.
    Link text and image alt text stay: they are read like prose."""
    text = _blanked(uncoded, (m.span() for p in (_REF_DEF, _AUTOLINK, _HTML_ELEMENT) for m in p.finditer(uncoded)))
    links = [m for p in (_LINK, _REF_LINK) for m in p.finditer(text)]
    return _blanked(text, (span for m in links for span in ((m.start(), m.start(2)), (m.end(2), m.end()))))


#: Tags that wrap a part of a prompt. Balanced, they are a template a page documents; one without
#: its partner closes the data section of the prompt the page is pasted into (or opens a fake one).
_PROMPT_TAG = re.compile(r"<(/?)\s*(system|instructions?|user|assistant|documents?|context|untrusted|retrieved)\s*>", re.I)
#: The tags of a data section: one opened alone makes what follows data, which gains a page nothing -- and an XML
#: vocabulary's reference names its elements so ("The title directive sets the <document> element's title").
_DATA_TAG = frozenset({"document", "documents", "context", "untrusted", "retrieved"})


def _unbalanced_tags(prose: str) -> Iterator[tuple[str, int, int]]:
    """Every prompt tag of a name whose tags do not pair up (or that opens with a closing tag) -- but a data
    section's tags (:data:`_DATA_TAG`) only when one of them closes."""
    tags = list(_PROMPT_TAG.finditer(prose))
    for name in {m.group(2).lower() for m in tags}:
        same = [m for m in tags if m.group(2).lower() == name]
        if name in _DATA_TAG and not any(m.group(1) for m in same):
            continue
        if sum(1 if m.group(1) else -1 for m in same) != 0 or same[0].group(1):
            yield from (("fake format", m.start(), m.end()) for m in same)


# --- exfiltration machinery in markup ----------------------------------------------------------

#: A query value the model is meant to fill in: ``USER_QUESTION``, ``CONVERSATION`` (not hex ``FFFFFF``).
_PLACEHOLDER = re.compile(r"(?![A-F0-9_]+$)(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{5,})")
_DATA_PARAM = re.compile(r"[?&](?:data|secret|secrets|payload|leak|exfil|conversation|history|answer|prompt|context|chat|"
                         r"summary|reply|password|passwd|cookie|cookies|creds|credentials|transcript)=", re.I)
_URL_ATTR = re.compile(r"\b(?:src|href|action|data|poster|srcset|formaction)\s*=\s*[\"']?([^\"'\s>]{1,1000})", re.I)
_HIDDEN = re.compile(r"\b(?:width|height)\s*=\s*[\"']?0*[01](?:px)?[\"'\s/>]|display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_SCRIPT_URL = re.compile(r"^\s*(?:javascript|vbscript)\s*:|^\s*data\s*:\s*text/html", re.I)
#: Handlers that run without a click (``<img src=x onerror=...>``); ``onclick`` is ordinary UI.
_HANDLER = re.compile(r"<[a-z][\w-]*\b[^<>]{0,500}?\son(error|load|mouseover|focus|animationstart|toggle|pageshow|"
                      r"beforeprint|afterprint)\s*=", re.I)
_ANY_TAG = re.compile(r"<[a-z][\w-]*\b(?:[^<>\"']|\"[^\"]*\"|'[^']*'){0,1000}>", re.I)
_CODE_EXFIL = re.compile(
    r"\b(?:post|put|patch|request|send|sendall|sendbeacon|urlopen|fetch|upload)\s*\((?:[^()]|\([^()]{0,200}\)){0,300}?"
    r"(?:\bopen\s*\([^()]{0,200}\)\s*\.\s*read|\bos\.environ|\bgetenv\s*\(|\bdocument\.cookie|\blocalstorage|\bprocess\.env)",
    re.I)


def _leaky(url: str) -> bool:
    """Whether a rendered or clickable URL carries conversation data out: a template or an
    upper-case placeholder in its query (``?q={answer}``, ``?u=USER_QUESTION``), or a parameter
    named for the data it sends (``?data=``, ``?conversation=``)."""
    if _SCRIPT_URL.match(url):
        return True
    query = urllib.parse.unquote(url.partition("?")[2].partition("#")[0])
    return bool(query and (_DATA_PARAM.search("?" + query) or re.search(r"\{[^{}]{0,80}\}|\$\(|<[^<>]{1,80}>", query)
                           or any(_PLACEHOLDER.fullmatch(v) for _, v in urllib.parse.parse_qsl(query))))


def _markup_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Exfiltration machinery in rendered markup, as ``(rule, start, end)``."""
    for m in _LINK.finditer(text):
        if _leaky(m.group(3)):
            yield ("leaky image" if m.group(1) else "leaky link"), m.start(), m.end()
    for m in _AUTOLINK.finditer(text):
        if _leaky(m.group(0)[1:-1]):
            yield "leaky link", m.start(), m.end()
    for m in _ANY_TAG.finditer(text):
        tag = m.group(0)
        urls = _URL_ATTR.findall(tag)
        remote = [u for u in urls if re.match(r"(?:https?:)?//", u, re.I)]
        if any(_leaky(u) for u in urls) or (_HIDDEN.search(tag) and any("?" in u for u in remote)) \
                or _HANDLER.match(tag):
            yield "leaky html", m.start(), m.end()


# --- rules -------------------------------------------------------------------------------------

def _alt(*words: str) -> str:
    return "|".join(words)


#: "Ignore previous instructions" in many languages. English needs the verb first with only
#: determiners between ("ignore all previous instructions", not "ignore version constraints");
#: other languages take an ignore-verb near an instruction-noun in either order (SOV languages
#: put the verb last). Latin-script words are accent-free (matched on the unmarked view) and
#: bounded by ``\b``; CJK has no word boundaries.
_IGNORE_EN = _alt("ignore", "ignoring", "disregard", "forget", "override", "overrule", "bypass", "neglect",
                  "circumvent")
_IGNORE_LATIN = _alt(
    r"ignorier\w*", "vergiss", "vergessen", r"missacht\w*", r"ignore[rz]", r"oublie[rz]?", "ne tenez pas compte",
    r"ignora[rd]?", r"olvida[rd]?", "haz caso omiso", "dimentica", "trascura", "esqueca", "esquece",
    "desconsidere", "negeer", "vergeet", "zignoruj", "ignoruj", "zapomnij", "ignorera", "glom", "ignorer",
    "glem", "yok say", "gormezden gel", "unut", "abaikan", "lupakan", "bo qua", "zapomen", "ohita", "unohda")
_IGNORE_OTHER = _alt(r"игнорир\w*", r"проигнорир\w*", r"забуд\w*", r"ігнор\w*", "忽略", "忽视", "忽視", "无视",
                     "無視", "忘记", "忘記", "不要理会", "忘れ", "무시", "잊어", "تجاهل", "انس", "अनदेखा",
                     "नजरअंदाज", "भूल", "התעלם")
_ORDERS_EN = _alt(r"instructions?", r"prompts?", "rules", "guidelines", "directions", "directives", "guardrails",
                  "constraints", "system message", "programming", "orders", "commands")
_ORDERS_LATIN = _alt(
    r"anweisung\w*", "regeln", "vorgaben", r"befehl\w*", "richtlinien", "consignes", "regles",
    "ordres", "instrucciones", "reglas", "indicaciones", "ordenes", "istruzioni", "regole", "direttive",
    "instrucoes", "regras", "orientacoes", "instructies", "regels", r"instrukcj\w*", r"polecen\w*", r"zasad\w*",
    "instruktioner", "regler", r"talimat\w*", r"kural\w*", "instruksi", "perintah", "aturan", "huong dan",
    "chi dan", "chi thi", "pokyny", "instrukce", "ohjeet", "ohjeita")
_ORDERS_OTHER = _alt(r"инструкци\w*", r"указани\w*", r"правил\w*", r"команд\w*", "指令", "指示", "规则", "規則",
                     "命令", "ルール", "プロンプト", "지시", "지침", "명령", "프롬프트",
                     "التعليمات", "تعليمات", "الأوامر", "निर्देश", "הוראות")
_FILLER = _alt("all", "any", "the", "your", "my", "every", "of", "these", "those", "previous", "prior", "above",
               "earlier", "preceding", "former", "past", "system", "original", "safety", "other", "given", "initial",
               "old", "current", "everything", "foregoing", "said", "developer")
_NOT_AFTER = r"(?<!\bmay )(?<!\bmight )(?<!\bcan )(?<!\bcould )(?<!\bwill )(?<!\bwould )(?<!\bdoes )(?<!\bdid )"
_IGNORE_ML = rf"(?:\b(?:{_IGNORE_LATIN})\b|{_IGNORE_OTHER})"
_ORDERS_ML = rf"(?:\b(?:{_ORDERS_LATIN})\b|{_ORDERS_OTHER})"
_IGNORE_ANY = rf"(?:\b(?:{_IGNORE_EN}|{_IGNORE_LATIN})\b|{_IGNORE_OTHER})"
_ORDERS_ANY = rf"(?:\b(?:{_ORDERS_EN}|{_ORDERS_LATIN})\b|{_ORDERS_OTHER})"

#: Unmistakable anywhere, code and markup included: matched on every view of every clause.
_STRONG_RULES = [(name, re.compile(p, re.I | re.M)) for name, p in (
    ("override", rf"{_NOT_AFTER}\b(?:{_IGNORE_EN})[\s:,]+(?:(?:{_FILLER})\W+){{0,4}}(?:{_ORDERS_EN})\b"),
    ("override", rf"{_IGNORE_ML}.{{0,60}}?{_ORDERS_ANY}|{_ORDERS_ANY}.{{0,60}}?{_IGNORE_ML}"
                 rf"|{_IGNORE_ANY}.{{0,60}}?{_ORDERS_ML}|{_ORDERS_ML}.{{0,60}}?{_IGNORE_ANY}"),
    ("override", rf"{_NOT_AFTER}\b(ignore|disregard|forget) (all |everything )?(the )?"
                 r"(above|previous|prior|preceding|earlier|what you were told)\b|\bforget everything (above|before)\b"),
)]

_AI = r"(?:ai|llm|gpt|assistant|agent|model|language model|chatbot|bot|copilot)s?"
_LEAD = r"(?:^|\b(?:and|then|please|now|just|also|always)\b|[,;:])\s*(?:please\s+)?"
_ADDRESS = r"[\w.+-]{1,64}@[\w-]+"
_EXFIL_EN = _alt(r"e-?mail", "send", "forward", "upload", "post", "transmit", "leak", "share", "copy", "submit",
                 "mail", "paste", "deliver", "cc", "bcc", "exfiltrate", "mirror", "relay")
_EXFIL_ML = _alt(r"envo(?:ie[sz]?|yez|yer|yons)", r"envi(?:a|e|ar|en|ad|ame)", "sende", "senden", "sendet",
                 r"schick\w*", r"invia\w*", r"отправ\w*", r"перешл\w*", r"перешли")
_EXFIL_OTHER = rf"(?:(?<![\w-])(?:{_EXFIL_ML})\b|发送|發送|送信|送って|보내|أرسل|भेज)"
_EXFIL_VERB = rf"(?:(?<![\w-])(?:{_EXFIL_EN})\b|{_EXFIL_OTHER})"
#: Objects that make "send ... to <address>" a contact line, not exfiltration.
_CONTACT = _alt(r"e-?mails?", "mails?", "messages?", "letters?", "questions?", "feedback", "comments?", "reports?",
                "bug reports?", r"patch(?:es)?", "pull requests?", "prs?", r"inquir(?:y|ies)", "requests?",
                "suggestions?", "concerns?", "us", "me", "applications?", "resumes?", "invitations?")
#: What a model holds and an attacker wants: the objects of exfiltration to a URL.
_DATA = _alt("conversation", "chat", "history", "transcript", "context", "prompt", "system prompt", "instructions",
             "answers?", "responses?", "summar(?:y|ies)", "results?", "documents?", "docs", "files", "data",
             "database", "evidence", "contents?", "text", "notes", "records", "secrets?", "api keys?", "keys",
             "credentials", "passwords?", "tokens", "information", "details", "everything")

#: Matched against the prose views of a clause (markup blanked): text that addresses the model.
_PROSE_RULES = [(name, re.compile(p, re.I | re.M)) for name, p in (
    # overrides and new orders
    ("override", r"\bstop following (your|the|these|all|any|previous|prior)\b"
                 r"|\bstop (researching|searching|checking|verifying|reading)\b.{0,30}\b(and )?(answer|respond|reply)\b"),
    ("override", r"\byour (real|true|actual|new|only|next) (task|goal|job|purpose|mission|objective)\b\s*(is|now|will|:)"),
    ("override", r"\b(supersedes|overrides|replaces) (all|every|any) (other|previous|prior) "
                 r"(instructions|sources|documents|rules|guidelines|directives|prompts|messages|information)\b"),
    ("override", r"\b(ignore|disregard|forget) (what|anything|everything) (the |you )?(earlier|previous|prior|other|above|preceding)\b"),
    ("override", r"\bobey (this|these|my|the following|the new|new|the hidden|all|me)\b"
                 r"|\b(comply with|follow) (my|the new|new|the hidden|these new) (instructions|orders|commands|directives|rules)\b"),
    ("override", r"^\W*(begin |start )?(new|updated|revised) (system )?(instructions?|task|persona|role|"
                 r"system (message|prompt|policy))\s*(:|follow|below)"
                 r"|\bbegin (system|new|admin) (prompt|instructions?|message)\b"),
    # role-play and persona switches
    ("persona", rf"\byou are (now|no longer) (an? |the |my )?((?!to\b)\w+[ ,]+){{0,2}}?"
                rf"({_AI}|persona|character|dan|unrestricted|unfiltered|uncensored|jailbroken)\b"
                r"|\bfrom now on,? you (are|must|only|always|never|act|answer|respond|reply|ignore|obey|pretend|will (always|only|never|"
                r"answer|respond|reply|act|ignore|obey))\b|\bstay in character\b|\blet'?s play a game\b|\bdo anything now\b"),
    ("persona", rf"\bpretend (to be|you are|you're|that you are) (an? |the )?(\w+ ){{0,2}}"
                rf"({_AI}|administrator|admin|root|developer|system|hacker|attacker|auditor)\b"
                r"|\brole-?\s?play (as|the role)\b"
                rf"|(^\W*|\byou (will |must |should |now )?)act as (an? |the )?(\w+ ){{0,2}}({_AI}|administrator|admin|auditor|hacker|attacker)\b"),
    ("persona", r"\b(god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|dan) mode\b"
                r"|\b(you are|you're) (now )?in (\w+ )?(developer|debug|admin|maintenance|test) mode\b"),
    # text addressed to the model
    ("addressed", rf"^\W*(note|message|attention|memo|notice|reminder|instructions?) (to|for) (the |all |any )?(\w+ ){{0,2}}"
                  rf"{_AI}\b(\s+(reading|processing|parsing|summari[sz]ing|that|who|which)\b[^:\n]{{0,40}})?\s*[:,]"),
    ("addressed", rf"\bif you are an? (\w+ ){{0,2}}{_AI}\b\s*(,|:|reading|processing|parsing|summari[sz]ing|that|who)"
                  rf"|\b(dear|hey|hi|hello|attention),? (the )?{_AI}\b"),
    ("addressed", rf"^\W*(the )?{_AI}\s*,\s+(please\s+)?(you\b|ignore|disregard|forget|fetch|send|e-?mail|forward|call|"
                  r"run|use|search|reveal|print|output|tell|say|answer|respond|reply|stop|list|show|include|append|"
                  r"write|delete|remove|open|visit|read|summari[sz]e|translate|execute|invoke|return|do|don't|never|"
                  r"always|make|give|provide|repeat|confirm)\b"),
    # fake roles, chat templates, prompt delimiters, blocks in a prompt's format
    ("fake format", r"^[\s\[(<#*]*(system|developer|admin|administrator|assistant|tool)"
                    r" (override|instructions?|update|notice|alert|command)s?[\])>*\s]*:"),
    ("fake format", r"<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>"
                    r"|^\s*#{2,}\s*(system|instructions?|response|assistant|user|input)\s*:\s*$"),
    ("fake format", r"</?\s*(tool_calls?|tool_results?|tool_use|function_calls?|function_results?|search_results?)\s*>"),
    ("fake format", r'"(tool_calls?|tool_name|tool_use|tool_result|function_call|functioncall|structuredcontent|iserror)"\s*:'
                    r"|\[\s*(tool_results?|tool_calls?|tool_use|function_calls?|function_results?|search_results?|observation)\b"),
    ("fake format", r"(^|(?<![=\-#*_<\[])[=\-#*_<\[]{2,})\s*(end|begin|beginning|start) of (the )?(document|context|retrieved (text|data|content)|"
                    r"data|input|user input|system prompt|instructions)\s*([=\-#*_>\]]{2,}|$)"),
    ("fake format", r"\btrusted\"?\s*[:=]\s*(true|yes|1)\b"
                    r"|\btreat (this|it|the following)( \w+)? as (trusted|evidence|verified|authoritative)\b"),
    # tool-call requests
    ("tool call", r"\b(call|invoke|run|execute|trigger|use)\s+(the\s+)?[a-z_][\w.]*\s*\(\s*([\"'“]|\w+\s*=)"),
    ("tool call", r"\b(call|invoke|use|run|trigger|execute) (the )?([\w-]+ ){0,2}(tool|function)s? "
                  r"((with|using|passing) (the )?(query|argument|arguments|input|parameters?|ids?|args)\b\s*[:=]?\s*[\"'“]"
                  r"|(on|for|over|across) (every|all|each)( of)?( the)?( \w+)? (ids?|docs?|documents?|records?|files?|pages?"
                  r"|results?|hits?|entry|entries|items?|passages?|users?|customers?|accounts?|rows?|sources?|matches)\b)"),
    ("tool call", r"\b(fetch|retrieve|open|download|look up|grep)\s+(the )?(document |doc |record |file )?#?\s*[a-z]{1,4}-?\d{1,4}\b"),
    ("tool call", rf"(\b(and|then|please|now)\b|[,;:])\s*(please\s+)?(fetch|grep|search|scan|list|enumerate|dump|print|read|"
                  rf"retrieve|collect|export)\b.{{0,40}}"
                  r"\b(every|all)\b.{0,20}\b(documents?|ids?|records?|files?|principals?|tokens?|users?|match(es)?|"
                  r"secrets?|passwords?|credentials)\b"),
    ("tool call", r"\b(before|instead of) you (answer|respond|reply)\b"
                  r"|^\W*(before|instead of) (answering|responding|replying)\s*,\s*(please )?(search|fetch|call|run|look up|"
                  r"retrieve|open|grep|use|send|e-?mail|forward|include|add|print|list)\b"),
    ("tool call", rf"{_LEAD}(call|invoke|use|run|trigger|execute) (the )?[a-z]*_?(send|e-?mail|mail|post|upload|forward|leak|"
                  r"exfil|delete|drop|remove|transfer|pay|wipe|purge)[a-z]*_[a-z_]+\b|"
                  rf"{_LEAD}(call|invoke|use|run|trigger|execute) (the )?[a-z]+_[a-z_]*(send|e-?mail|mail|post|upload|forward|"
                  r"leak|exfil|delete|drop|remove|transfer|pay|wipe|purge)[a-z_]*\b"),
    # exfiltration and disclosure
    ("exfiltration", rf"(?<![\w-])(?:{_EXFIL_EN})\b(?![\"']?\s*[:=])((?!\b(?:{_CONTACT})\b).){{0,80}}?\b(to|cc|bcc)\s+{_ADDRESS}"
                     rf"|{_EXFIL_OTHER}.{{0,80}}?{_ADDRESS}"),
    ("exfiltration", rf"{_EXFIL_VERB}\s+((all|the|every|any|your|this|these|my|our|its|their|full|complete|entire|whole|"
                     rf"retrieved|above|following|current|previous|user'?s?|so far)\s+){{0,4}}({_DATA})\b.{{0,60}}?(https?://|www\.)"),
    ("exfiltration", rf"{_EXFIL_OTHER}.{{0,80}}?(https?://|www\.)"),
    ("exfiltration", rf"{_LEAD}exfiltrate\b"),
    ("disclosure", r"\b(repeat|print|output|reveal|show) (the |all )?(text|words|content|everything|lines?) (above|before this)\b"),
    ("disclosure", r"(?<!\bnot )(?<!\bnever )(?<!n't )\b(reveal|print|repeat|show|output|leak|dump|display|disclose|list|tell me)\s+(me\s+|us\s+)?"
                   r"((all|the|any|every|full|entire|complete|exact)\s+){0,2}"
                   r"(((your|its|hidden|secret|internal|original|initial|system)\s+){1,3}"
                   r"(system prompt|prompt|instructions|rules|guidelines|api[ _-]?keys?|keys|tokens?|passwords?|credentials|"
                   r"secrets?|conversation|chat history|context)|api[ _-]?keys|passwords|credentials|secrets)\b"),
    # answer manipulation
    ("answer override", r"\bthe (correct|real|true|right|actual|official|only) answer (is|to)\b"),
    ("answer override", rf"{_LEAD}(always |now |just |only )?(answer|respond|reply|say|output|write)\s+"
                        r"((only|exactly|just|simply)\s+)?(with\s+)?(only\s+)?((the (word|phrase|string|text|sentence)\b)|[\"'“‘])"),
    ("answer override", r"\b(answer|respond to|reply to) (every|all|any|each) (questions?|query|queries|requests?|prompts?|messages?) with\b"),
    ("answer override", rf"\b(tell|inform|let|notify) (the |all )?(users?|readers?|customers?|them|everyone)\b.{{0,160}}?"
                        rf"({_ADDRESS}|https?://)"),
    ("answer override", r"\b(do not|don't|never) (mention|cite|reveal|disclose|tell|report|reference|flag) "
                        r"(that|this|the (other |original |real |true )?(sources?|documents?|citations?|note|instructions?|upload)|"
                        r"any (sources?|citations?|documents?))\b"),
    ("answer override", r"\b(answer|respond|reply|say so|say it|summari[sz]e|write)\b.{0,40}\bwithout "
                        r"(citing|citations?|sources|references|checking|verifying|verification)\b"),
    ("answer override", r"\b(do not|don't|never) (verify|check|question|doubt|double-check) (this|these|the|that) "
                        r"(claims?|facts?|statements?|information|note|answers?)\b"),
    ("answer override", r"\b(include|add|append|insert|put|paste) (the following|this|these)( \w+){0,2} "
                        r"(in|into|to|at the (end|top|start|beginning) of) (your|the|every|each) "
                        r"(answer|reply|response|summary|output)s?\b(?!\s*(model|object|class|type|schema))"),
    ("answer override", r"\breplace (every|all|each|the) (citations?|sources?|answers?|references?)\b"),
    # claimed authority, disabling controls, decode-and-obey
    ("authority", r"\b(priority|admin|administrator|system|security|emergency|root) override\b"
                  r"|\b(admin|administrator|emergency|root|priority) (instructions?|directives?)\b"),
    ("authority", rf"\b(authori[sz]es?|authori[sz]ed|permits?|instructs?) (you|the {_AI}) to "
                  r"(bypass|ignore|skip|disable|reveal|disclose|override|share|send|leak|forward|email|circumvent)\b"
                  r"|\byou are (now )?(authori[sz]ed|permitted|allowed) to (bypass|ignore|skip|disable|reveal|disclose|override|leak)\b"),
    ("authority", r"\b(bypass|disable|turn off|circumvent|deactivate|ignore) your (\w+ ){0,2}"
                  r"(safety|guardrails?|filters?|restrictions?|guidelines|content polic(y|ies)|rules|checks)\b"),
    ("encoded", r"\b(decode|decrypt|deobfuscate|unscramble|rot13|base64)\b.{0,40}\b(follow|obey|execute|comply|act on)\b"
                r"|\b(translate|reverse)\b.{0,40}\b(and |then )+(follow|obey|execute|comply with|act on) (it|this|them|the result)\b"),
)]

#: Matched against the prose of a clause as written: a role label in capitals is a fake turn of a
#: chat ("SYSTEM: ..."), where "System: Linux" in a requirements table is not; a block named in
#: capitals on a line of its own (``<<<PLAN`` ... ``PLAN>>>``) fakes a section of a prompt.
_CASED_RULES = [(name, re.compile(p, re.M)) for name, p in (
    ("fake format", r"^[\s\[(<#*]*(SYSTEM|DEVELOPER|ADMIN|ADMINISTRATOR|ROOT)"
                    r"( (MESSAGE|PROMPT|NOTE|OVERRIDE|INSTRUCTIONS?|UPDATE|NOTICE))?[\])>*\s]*:"),
    ("fake format", r"^\s*<<<\s*[A-Z][A-Z_]*\s*$|^\s*[A-Z][A-Z_]*\s*>>>\s*$"),  # a named block of a prompt
)]

#: Matched against squashed views of the whole text (letters, digits and ``@`` only) where the
#: letters are spaced or dotted out: distinctive phrases hidden from word-level rules.
_SQUASHED_RULES = [(name, re.compile(p)) for name, p in (
    ("override", r"(ignore|disregard|forget|override|bypass)(all|any|the|your|my|every|of|these)*"
                 r"(previous|prior|above|earlier|preceding|former|past|system|original|existing|safety)*"
                 r"(instructions?|prompts?|rules|guidelines|directions|directives|guardrails|constraints)"),
    ("persona", r"youarenow|fromnowonyou|newinstructions|systemprompt|developermode|jailbr[eo]a?k|doanythingnow"),
    ("exfiltration", r"exfiltrat|(email|send|forward|upload|leak|post)\w{0,60}?to\w{0,30}@"),
)]


def _spaced_out(view: str, start: int, end: int) -> bool:
    """Whether ``view[start:end]`` is written apart (i g n o r e, i.g.n, ig-no-re): the match
    starts a word (not "gitignore rules") and has three pieces of one or two characters in a row,
    which either open it or hold 40% of its letters (not a regular expression's ``a-z0-9``
    beside ordinary words)."""
    if start and view[start - 1].isalnum():
        return False
    region = view[start:end]
    run = re.search(r"(?<![^\W_])[^\W_]{1,2}(?:[\W_]+[^\W_]{1,2}){2}(?![^\W_])", region)
    if not run:
        return False
    pieces = re.findall(r"[^\W_]+", region)
    return run.start() == 0 or 5 * sum(len(p) for p in pieces if len(p) <= 2) >= 2 * sum(map(len, pieces))


# --- reading -----------------------------------------------------------------------------------

def _strong_views(clause: str) -> list[str]:
    """Readings of one clause that obfuscation tries to hide: folded, tags stripped, de-leeted,
    rot13, reversed, URL-decoded."""
    low = clause.lower()
    folded = _unmarked(low.translate(_HOMOGLYPHS))
    untagged = _HTML_TAG.sub("", folded)
    encoded = [codecs.decode(low, "rot13"), low[::-1], *([urllib.parse.unquote(low)] if "%" in low else [])]
    return [low, folded, untagged, *(untagged.translate(t) for t in _LEET), *encoded]


def _prose_views(prose: str) -> list[str]:
    low = prose.lower()
    folded = _unmarked(low.translate(_HOMOGLYPHS))
    return [low] if folded == low else [low, folded]


def _rule(clause: str, prose: str) -> str | None:
    """The first rule one clause matches: strong rules on every reading of the whole clause,
    prose rules on its prose (markup blanked)."""
    views = _strong_views(clause)
    for name, rule in _STRONG_RULES:
        if any(rule.search(view) for view in views):
            return name
    if prose.strip():
        for name, rule in _CASED_RULES:
            if rule.search(prose):
                return name
        views = _prose_views(prose)
        for name, rule in _PROSE_RULES:
            if any(rule.search(view) for view in views):
                return name
    return None


_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){8,}\b")


def _decoded(clause: str) -> Iterator[str]:
    """Readable text hidden in base64 or hex tokens of a clause."""
    for token in _B64.findall(clause):
        for altchars in (None, b"-_"):  # standard, then URL-safe alphabet
            try:
                yield base64.b64decode(token + "=" * (-len(token) % 4), altchars, validate=True).decode("utf-8")
                break
            except (binascii.Error, ValueError):
                continue
    for token in _HEX.findall(clause):
        try:
            yield bytes.fromhex(token).decode("utf-8")
        except ValueError:
            continue


def _readable(text: str) -> bool:
    return " " in text and sum(ch.isprintable() for ch in text) >= 0.9 * len(text)


def _clauses(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in _CLAUSE.finditer(text + "\n"):
        yield start, m.start()
        start = m.end()


def _squashed(text: str) -> tuple[str, list[int]]:
    """Letters, digits and ``@`` only, with each kept character's offset in ``text``: defeats
    s p a c i n g, d.o.t.s and hy-phen-ation."""
    kept = [(c, i) for i, ch in enumerate(text) for c in ch.lower()[:1] if c.isalnum() or c == "@"]
    return "".join(c for c, _ in kept), [i for _, i in kept]


def _spans(text: str, uncoded: str, prose: str) -> Iterator[tuple[str, int, int]]:
    """Whole-text matches: exfiltration machinery, unbalanced prompt tags, and phrases spelled
    apart (across clause boundaries too: d.o.t.t.e.d)."""
    yield from _markup_spans(uncoded)
    yield from (("code exfiltration", *m.span()) for m in _CODE_EXFIL.finditer(text))
    yield from _unbalanced_tags(prose)
    low = text.lower().translate(_HOMOGLYPHS)
    for view in (low, _HTML_TAG.sub(lambda m: " " * len(m.group(0)), low), *(low.translate(t) for t in _LEET)):
        squashed, offsets = _squashed(view)
        for name, rule in _SQUASHED_RULES:
            for m in rule.finditer(squashed):
                start, end = offsets[m.start()], offsets[m.end() - 1] + 1
                if _spaced_out(view, start, end):
                    yield name, start, end


def findings(text: str) -> list[Finding]:
    """Directives in retrieved text, each with the rule that found it (see :func:`directives`)."""
    text = normalise(text)
    uncoded = _uncoded(text)
    prose = _prose(uncoded)
    found: list[tuple[int, int, Finding]] = []
    for start, end in _clauses(text):
        clause = text[start:end]
        if not clause.strip():
            continue
        hidden = [(d, r) for d in _decoded(clause) if _readable(d) for r in [_rule(d, d)] if r]
        rule = _rule(clause, prose[start:end]) or (hidden[0][1] if hidden else None)
        if rule:
            report = clause.strip() + "".join(f" [decoded: {d}]" for d, _ in hidden)
            found.append((start, end, Finding(rule, report)))
    for rule, start, end in sorted(set(_spans(text, uncoded, prose)), key=lambda s: s[1:]):
        if not any(start < e and s < end for s, e, _ in found):
            found.append((start, end, Finding(rule, text[start:end].strip())))
    return [Finding(f.rule, f.text if len(f.text) <= _REPORT_CHARS else f.text[:_REPORT_CHARS - 1] + "…")
            for _, _, f in sorted(found, key=lambda x: x[:2])]


def directives(text: str) -> list[str]:
    """Clauses of retrieved text that look like instructions (to flag as detected, not executed).

    Clauses are split on ``.`` and newlines, as in the chapter; each is reported once, normalised
    (see :func:`normalise`), with any hidden base64/hex text it carries appended as ``[decoded: …]``.
    Matches that clause splitting would cut apart (spaced-out letters, image and link URLs, HTML
    tags) are reported as spans. Reports longer than 300 characters are cut and end in ``…``.
    """
    return [f.text for f in findings(text)]
