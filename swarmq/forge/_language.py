"""A user's choice of the language the agent speaks or writes in.

"schreibe alles auf deutsch", "puedes hablarme en español", "用繁中回覆我", "한글로 답변해줘",
"readmeなどの文書は全て日本語にして": a short message that names a language together with a verb
of answering, speaking or writing holds for every later turn of the session, and the next
session needs it before its first reply. None of these has the classifier's cue words, most
are under its length floor, and each is said in the language it asks for, so the rule is one
pattern per language family: the language named in that family's construction ("auf deutsch",
"en español", "用中文", "日本語で", "한국어로", "на русском", "in English") and a verb of that
family nearby.

What is not such a choice: a translation of one text ("translate the README into German", a
one-off task on content), a question about a language ("why did it not answer in French",
"how do I get answers in French"), a long message that mentions a language among other
work (a task description), and program text in a language ("the code in Chinese characters").
"""

from __future__ import annotations

import re

from swarmq.forge._standing import short_request

MAX_CHARS = 120
"""The choices seen are 9–98 characters; past this a message is a task that mentions a
language, not a choice of one."""
MAX_RAW_CHARS = 2000

_NAMES_EN = (
    r"english|german|spanish|french|portuguese|italian|russian|ukrainian|polish|dutch|czech|"
    r"swedish|turkish|arabic|hebrew|hindi|indonesian|vietnamese|thai|japanese|korean|"
    r"(?:traditional |simplified )?chinese|mandarin|cantonese"
)
_CHOICES = (
    # English: "answer in German", "reply to me in Korean", "write everything in English"
    re.compile(
        r"\b(?:answer|reply|respond|speak|talk|write|communicate|chat|work)\w*\b"
        r"[^.!?\n]{0,40}?\bin (?:" + _NAMES_EN + r")\b",
        re.IGNORECASE,
    ),
    # German: "schreibe alles auf deutsch", "antworte auf Englisch"
    re.compile(
        r"\b(?:schreib|antwort|sprich|rede|kommunizier|formulier)\w*\b[^.!?\n]{0,40}?"
        r"\bauf (?:deutsch|englisch|spanisch|französisch|italienisch)\b",
        re.IGNORECASE,
    ),
    # Spanish and French: "háblame en español", "réponds en français"
    re.compile(
        r"\b(?:habl|háblame|respond|respónd|contest|contést|escrib|répon|repon|écri|ecri|parl)\w*\b"
        r"[^.!?\n]{0,40}?\ben (?:español|espanol|castellano|inglés|ingles|français|francais|"
        r"anglais|espagnol|allemand|alemán|aleman)\b",
        re.IGNORECASE,
    ),
    # Portuguese and Italian: "responda em português", "rispondi in italiano"
    re.compile(
        r"\b(?:fal|respond|escrev|rispond|scriv|parl)\w*\b[^.!?\n]{0,40}?"
        r"\b(?:em (?:português|portugues|inglês|ingles|espanhol)|in (?:italiano|inglese))\b",
        re.IGNORECASE,
    ),
    # Russian and Ukrainian: "отвечай на русском", "работать со мной на русском", "по-русски"
    re.compile(
        r"(?:отвеча|ответь|пиши|напиши|говори|общай|работа|відповіда|пиши)\w*[^.!?\n]{0,40}?"
        r"(?:на (?:русском|английском|украинском|українській|англійській)|по-русски|"
        r"по-английски|по-українськи)",
        re.IGNORECASE,
    ),
    # Chinese: "用繁中回覆我", "以后都用中文回答", "回复请用英文"
    re.compile(
        r"用(?:中文|繁中|简中|繁體中文|繁体中文|简体中文|簡體中文|英文|英语|英語|日文|日语|韩文|韓文)"
        r"[^。！？\n]{0,12}?(?:回复|回覆|回答|答复|交流|沟通|溝通|对话|對話|说|說|写|寫|输出|輸出)|"
        r"(?:回复|回覆|回答|答复|交流|沟通|溝通|对话|對話|输出|輸出)[^。！？\n]{0,6}?"
        r"用(?:中文|繁中|简中|繁體中文|繁体中文|简体中文|簡體中文|英文|英语|英語)"
    ),
    # Japanese: "日本語で答えて", "文書は全て日本語にして"
    re.compile(r"(?:日本語|英語|中国語|韓国語)(?:で|に)(?:して|答え|返答|回答|書い|話し|お願い)"),
    # Korean: "한글로 답변해줘", "영어로 말해줘"
    re.compile(r"(?:한글|한국어|영어|일본어|중국어)로\s*(?:답변|대답|말해|써|작성|해\s*줘|응답)"),
)
_NOT_A_CHOICE = re.compile(
    r"translat|traduc|übersetz|翻译|翻譯|翻訳|번역|перев[оеі]д|"
    r"\b(?:why|how|what|pourquoi|comment|por ?qu[ée]|c[óo]mo|warum|wieso|wie|perch[ée]|"
    r"почему|как)\b|为什么|為什麼|怎么|怎麼|如何|なぜ|なんで|どう|왜|어떻게|"
    r"\b(?:code|characters|variable|identifiers?|comments? in the code)\b",
    re.IGNORECASE,
)
"""A translation is a one-off task on a text; a question asks about the language, it does not
choose it; program text in a language is the product, not the conversation."""


_ESCAPE = re.compile(r"\\[A-Za-z]")
_LETTERS = re.compile(r"[a-z]+")
_ASCII_WORDS = frozenset(
    word
    for choice in _CHOICES
    for word in _LETTERS.findall(_ESCAPE.sub(" ", choice.pattern).lower())
    if len(word) >= 4
)
"""Every run of four or more ASCII letters in the patterns above (escapes removed). Each pattern
needs a language's name as a whole word (the shortest, "thai", has four letters; the
prepositions before the names are shorter and left out, or every message would pass), so an
ASCII message sharing no word with this set cannot match any of them and the eight searches are
skipped: they were a fifth of forge's time on a long session. A superset (verbs and stems come
along), so it only ever skips what would not have matched."""


def _may_name_a_language(said: str) -> bool:
    """False only where no pattern can match; non-ASCII text (accented, Cyrillic and CJK names)
    always goes to the patterns."""
    if not said.isascii():
        return True
    return not _ASCII_WORDS.isdisjoint(_LETTERS.findall(said.lower()))


def language_choice(text: str) -> str | None:
    """The user's choice of language in ``text`` (whitespace joined), or None. The cheap tests
    come first: this runs on every message the user types."""
    said = short_request(text, MAX_CHARS, MAX_RAW_CHARS)
    if said is None or len(said) > MAX_CHARS or not _may_name_a_language(said):
        return None
    if not any(choice.search(said) for choice in _CHOICES):
        return None
    if _NOT_A_CHOICE.search(said):
        return None
    return said


__all__ = ["language_choice"]
