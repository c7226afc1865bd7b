"""The directive detector the agent uses to *report* instructions found in retrieved text.

:func:`directives` is for reporting only ("directive detected in X, not executed"). Safety never
depends on it: no decision of the product is taken from document text, so a directive the
detector misses is exactly as inert as one it flags. It is tuned to be generous (a false alarm
costs one line in a trace) and knows no corpus: no document id, entity or payload is named here.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
import urllib.parse
from typing import Iterator


#: The chapter's directive detector; still the first rule of :data:`_CLAUSE_RULES`.
INJECT = re.compile(r"(?i)ignore .*instructions|email .* to \s*\S+@\S+")
_CLAUSE = re.compile(r"[.\n]")
_REPORT_CHARS = 300  # a report names the directive; the trace need not carry a whole hostile page

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


def _views(clause: str) -> tuple[list[str], list[str]]:
    """Readings of one clause that obfuscation tries to hide: all of them, and the letter-level
    ones (folded, tags stripped, de-leeted) worth squashing."""
    low = clause.lower()
    folded = _unmarked(low.translate(_HOMOGLYPHS))
    untagged = _HTML_TAG.sub("", folded)
    letters = [folded, untagged, *(untagged.translate(t) for t in _LEET)]
    encoded = [codecs.decode(low, "rot13"), low[::-1], *([urllib.parse.unquote(low)] if "%" in low else [])]
    return [low, *letters, *encoded], letters


def _squashed(text: str) -> tuple[str, list[int]]:
    """Letters, digits and ``@`` only, with each kept character's offset in ``text``: defeats
    s p a c i n g, d.o.t.s and hy-phen-ation."""
    kept = [(c, i) for i, ch in enumerate(text) for c in ch.lower()[:1] if c.isalnum() or c == "@"]
    return "".join(c for c, _ in kept), [i for _, i in kept]


# --- rules -------------------------------------------------------------------------------------

def _alt(*words: str) -> str:
    return "|".join(words)


#: "Ignore previous instructions" in many languages: an ignore-verb near an instruction-noun
#: (either order: SOV languages put the verb last). Latin-script words are accent-free (matched
#: on the unmarked view) and bounded by ``\b``; CJK has no word boundaries.
_IGNORE_LATIN = _alt(
    "ignore", "ignoring", "disregard", "forget", "override", "overrule", "bypass", "neglect", "circumvent",
    r"ignorier\w*", "vergiss", "vergessen", r"missacht\w*", r"ignore[rz]", r"oublie[rz]?", "ne tenez pas compte",
    r"ignora[rd]?", r"olvida[rd]?", "haz caso omiso", "dimentica", "trascura", "esqueca", "esquece",
    "desconsidere", "negeer", "vergeet", "zignoruj", "ignoruj", "zapomnij", "ignorera", "glom", "ignorer",
    "glem", "yok say", "gormezden gel", "unut", "abaikan", "lupakan", "bo qua", "zapomen", "ohita", "unohda")
_IGNORE_OTHER = _alt(r"игнорир\w*", r"проигнорир\w*", r"забуд\w*", r"ігнор\w*", "忽略", "忽视", "忽視", "无视",
                     "無視", "忘记", "忘記", "不要理会", "忘れ", "무시", "잊어", "تجاهل", "انس", "अनदेखा",
                     "नजरअंदाज", "भूल", "התעלם")
_ORDERS_LATIN = _alt(
    r"instructions?", r"prompts?", "rules", "guidelines", "directions", "directives", "guardrails", "constraints",
    "system message", r"anweisung\w*", "regeln", "vorgaben", r"befehl\w*", "richtlinien", "consignes", "regles",
    "ordres", "instrucciones", "reglas", "indicaciones", "ordenes", "istruzioni", "regole", "direttive",
    "instrucoes", "regras", "orientacoes", "instructies", "regels", r"instrukcj\w*", r"polecen\w*", r"zasad\w*",
    "instruktioner", "regler", r"talimat\w*", r"kural\w*", "instruksi", "perintah", "aturan", "huong dan",
    "chi dan", "chi thi", "pokyny", "instrukce", "ohjeet", "ohjeita")
_ORDERS_OTHER = _alt(r"инструкци\w*", r"указани\w*", r"правил\w*", r"команд\w*", "指令", "指示", "说明", "說明",
                     "规则", "規則", "提示", "命令", "ルール", "プロンプト", "지시", "지침", "명령", "프롬프트",
                     "التعليمات", "تعليمات", "الأوامر", "निर्देश", "הוראות")
_IGNORE = rf"(?:\b(?:{_IGNORE_LATIN})\b|{_IGNORE_OTHER})"
_ORDERS = rf"(?:\b(?:{_ORDERS_LATIN})\b|{_ORDERS_OTHER})"
_AI = r"(?:ai|llm|gpt|assistant|agent|model|language model|chatbot|bot|copilot)s?"
_TOOLS = r"(?:fetch|search|grep|graph_walk|graph_overview|exit_loop|send_e?mail|http_get|http_post|browse|open_url|exec|eval|run_code|shell)"
_EXFIL_LATIN = _alt(r"e-?mail", "send", "forward", "upload", "post", "transmit", "leak", "share", "copy", "submit",
                    "mail", "paste", "deliver", "cc", "bcc", r"exfiltrat\w*", r"envo\w+", r"envi\w+", r"sende\w*",
                    r"schick\w*", r"invia\w*", r"отправ\w*", r"перешл\w*")
_EXFIL_VERB = rf"(?:\b(?:{_EXFIL_LATIN})\b|发送|發送|送信|送って|보내|أرسل|भेज)"

#: Matched against every view of every clause.
_CLAUSE_RULES = [re.compile(p, re.I | re.M) for p in (
    INJECT.pattern.removeprefix("(?i)"),
    # instruction overrides, in many languages
    rf"{_IGNORE}.{{0,60}}?{_ORDERS}|{_ORDERS}.{{0,60}}?{_IGNORE}",
    r"\b(ignore|disregard|forget) (all |everything )?(the )?(above|previous|prior|preceding|earlier|what you were told)\b|\bforget everything\b",
    r"\bstop (researching|searching|following|checking|verifying|reading)\b",
    r"\byour (real|true|actual|new|only|next) (task|goal|job|purpose|mission|objective)\b",
    r"\b(supersedes|overrides|replaces) (all|every|any) (other|previous|prior)\b",
    r"\bobey\b|\b(comply with|follow) (these|my|the new|new|the hidden) (instructions|orders|commands|directives|rules)\b",
    # role-play and persona switches
    r"\byou are (now|no longer)\b|\bfrom now on\b|\bstay in character\b|\blet'?s play a game\b|\bdo anything now\b",
    rf"\bpretend (to be|you are|you're|that you)\b|\brole-?\s?play\b|\bact as (an? |the )?(\w+ ){{0,2}}({_AI}|administrator|admin|auditor|hacker|attacker)\b",
    r"\b(developer|god|debug|admin|jailbreak|unrestricted|unfiltered) mode\b|\bjailbr(eak|oken)\b",
    # text addressed to the model
    rf"\b(note|message|attention|instructions?|memo|notice|reminder) (to|for) (the |all )?{_AI}\b",
    rf"\bif you are an? {_AI}\b|\b(dear|hey|hi|attention),? {_AI}\b|^\s*{_AI}\s*[,:]",
    # fake roles, chat templates, prompt delimiters, ledger blocks
    r"^[\s\[(<#*]*(system|developer|assistant|tool|function|admin|administrator)( (message|prompt|note|override|instruction|update|notice))?[\])>*\s]*:",
    r"<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>|^\s*#{2,}\s*(system|instructions?|response|assistant|user)\b",
    r"</?\s*(system|instructions?|tool_calls?|tool_results?|tool_use|function_calls?|function_results?|assistant|user|documents?|context|untrusted|retrieved|search_results?)\s*>",
    r"<<<\s*[a-z_]+|\b[a-z_]+\s*>>>",
    r'"(tool_calls?|tool_name|tool_use|tool_result|function_call|functioncall|structuredcontent|iserror)"\s*:',
    r"\[\s*(tool_results?|tool_calls?|tool_use|function_calls?|function_results?|search_results?|observation)\b",
    r'\{\s*"(name|tool|function|action|status|role)"\s*:\s*"(fetch|search|grep|graph_walk|graph_overview|exit_loop|sufficient|abstain|system|assistant|tool)"',
    r"\b(end|begin|beginning|start) of (the )?(document|context|retrieved (text|data|content)|data|input|system prompt)\b",
    r"\bbegin (system|new|admin) (prompt|instructions?|message)\b|\bnew (system )?(instructions?|task|persona|role)\b|\bnew system (message|prompt|policy)\b",
    r"\btrusted\"?\s*[:=]\s*(true|yes|1)\b|\btreat (this|it|the following)( \w+)? as (trusted|evidence|verified|authoritative)\b",
    # tool-call requests
    rf"\b{_TOOLS}\s*\(|\b(exit_loop|graph_walk|graph_overview|tool_call|function_call)\b",
    r"\b(call|invoke|trigger|execute|use) (the )?([\w-]+ ){0,2}(tool|function|plugin)s?\b",
    r"\b(fetch|retrieve|open|download|look up|grep)\s+(the )?(document |doc |record |file )?#?\s*[a-z]{1,4}-?\d{1,4}\b",
    r"\b(fetch|grep|search|scan|list|enumerate|dump|print|read)\b.{0,40}\b(every|all)\b.{0,20}\b(documents?|ids?|records?|files?|principals?|tokens?|users?|match(es)?)\b",
    r"\b(before|instead of) (you )?(answer|answering|respond|responding|reply|replying)\b",
    # exfiltration and disclosure
    rf"{_EXFIL_VERB}.{{0,80}}?([\w.+-]{{1,64}}@[\w-]|https?://|www\.)",
    r"\bexfiltrat\w*|\bwebhook\b|\b(curl|wget)\b|\bhttp (get|post)\b",
    r"\b(repeat|print|output|reveal|show) (the |all )?(text|words|content|everything|lines?) (above|before this)\b",
    r"\b(reveal|print|repeat|show|output|leak|dump|display|disclose|list)\b.{0,40}\b(system prompt|your prompt|instructions|api[ _-]?keys?|tokens?|passwords?|credentials|secrets?|ledger|access file|principals|conversation|chat history)\b",
    # answer manipulation
    r"\bthe (correct|real|true|right|actual|official|only) answer (is|to)\b",
    r"(^|\b(and|then)\b|[,;:])\s*(please )?(always |now |just |only )?(answer|respond|reply|say|tell|output|print|write)\s+(only|that|with|to the user|the user|exactly|every|'|\"|“)",
    r"\b(do not|don't|never) (mention|cite|reveal|disclose|tell|show|report|include|reference|flag|warn|verify|check|search)\b|\bwithout (citing|citations?|checking|verifying|verification)\b",
    r"\breplace (every|all|each|the) (citations?|sources?|answers?|references?)\b",
    # claimed authority, disabling controls, decode-and-obey
    r"\b(priority|admin|administrator|system|security|emergency|root) (override|instruction|command|directive)\b",
    rf"\b(authori[sz]es?|authori[sz]ed|permits?|allows?) (you|the {_AI}) to\b",
    r"\b(bypass|disable|turn off|skip|circumvent|deactivate) (the )?([\w-]+ ){0,2}(gate|filter|budget|checks?|guard|guardrails|safety|verification|restrictions?|limits?|controls?)\b",
    r"\b(decode|decrypt|deobfuscate|unscramble|reverse|translate|rot13|base64)\b.{0,40}\b(follow|obey|execute|comply|apply|act on)\b",
)]

#: Matched against squashed views (no spaces or punctuation), so only distinctive phrases.
_SQUASHED_RULES = [re.compile(p) for p in (
    r"(ignore|disregard|forget|override|bypass)(all|any|the|your|my|every|of|these)*"
    r"(previous|prior|above|earlier|preceding|former|past|system|original|existing|safety)*"
    r"(instructions?|prompts?|rules|guidelines|directions|directives|guardrails|constraints)",
    r"youarenow|fromnowonyou|newinstructions|systemprompt|developermode|jailbr[eo]a?k|doanythingnow",
    r"exfiltrat|(email|send|forward|upload|leak|post)\w{0,60}?to\w{0,30}@",
)]

#: Matched against the whole normalised text: artefacts that ``.``-splitting would cut apart.
_SPAN_RULES = [re.compile(p, re.I) for p in (
    r"!\[[^\]\n]{0,200}\]\(\s*(https?:)?//[^)\n]{0,500}\)",  # a remote markdown image loads (and leaks) on render
    r"!?\[[^\]\n]{0,200}\]\(\s*(https?:)?//[^)\s]{0,500}(\{|\$\(|%7b|<|[?&](data|secret|token|key|payload|leak|exfil|conversation|history|ledger|answer|prompt|context|chat|c|d|q)=)[^)\n]{0,500}\)",
    r"!\[[^\]\n]{0,200}\]\[[^\]\n]{0,200}\]|\]\(\s*(javascript|data):[^)\n]{0,500}\)",  # reference-style images, script links
    r"<\s*(img|iframe|script|object|embed|link|meta)\b[^>]{0,500}>",
    r"https?://\S{0,500}?(\{[a-z_]+\}|\$\([a-z_]+\))",
)]

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


def _flagged(clause: str) -> bool:
    """Whether any reading of one clause looks like an instruction to the model."""
    views, letters = _views(clause)
    if any(rule.search(view) for view in views for rule in _CLAUSE_RULES):
        return True
    return any(rule.search(_squashed(view)[0]) for view in letters for rule in _SQUASHED_RULES)


def _clauses(text: str) -> Iterator[tuple[int, int, str]]:
    start = 0
    for m in _CLAUSE.finditer(text + "\n"):
        yield start, m.start(), text[start:m.start()]
        start = m.end()


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """Whole-text matches: span rules, and squashed rules across clause boundaries (d.o.t.t.e.d)."""
    for rule in _SPAN_RULES:
        yield from (m.span() for m in rule.finditer(text))
    low = text.lower().translate(_HOMOGLYPHS)
    for view in (low, *(low.translate(t) for t in _LEET)):
        squashed, offsets = _squashed(view)
        for rule in _SQUASHED_RULES[:2]:  # exfiltration needs its clause: "post ... to" spans sentences
            yield from ((offsets[m.start()], offsets[m.end() - 1] + 1) for m in rule.finditer(squashed))


def directives(text: str) -> list[str]:
    """Clauses of retrieved text that look like instructions (to flag as detected, not executed).

    Clauses are split on ``.`` and newlines, as in the chapter; each is reported once, normalised
    (see :func:`normalise`), with any hidden base64/hex text it carries appended as ``[decoded: …]``.
    Matches that clause splitting would cut apart (spaced-out letters, URLs) are reported as spans.
    Reports longer than 300 characters are cut and end in ``…``.
    """
    text = normalise(text)
    found: list[tuple[int, int, str]] = []
    for start, end, clause in _clauses(text):
        hidden = [d for d in _decoded(clause) if _readable(d) and _flagged(d)]
        if clause.strip() and (hidden or _flagged(clause)):
            found.append((start, end, clause.strip() + "".join(f" [decoded: {d}]" for d in hidden)))
    for start, end in sorted(set(_spans(text))):
        if not any(start < e and s < end for s, e, _ in found):
            found.append((start, end, text[start:end].strip()))
    return [r if len(r) <= _REPORT_CHARS else r[:_REPORT_CHARS - 1] + "…" for _, _, r in sorted(found)]
