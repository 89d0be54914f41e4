"""The script a text is written in, as the English-trained parts of retrieval need to know it.

The lexical passes keep ASCII word characters only and the packaged embedding models
(WordLlama, MiniLM) were trained on English: a text in another script is one they read only by
its ASCII residue (identifiers, dates). Measured on the translated rules of eval/knowledge/xlang
and the Chinese and Japanese workspaces of eval/knowledge/workspaces, their cosine between two
such texts sits as high for unrelated ones as for related ones (docs/QUALITY.md, "Issue 26:
why silent CJK tasks are answered"). Pure Python, no numpy: the knowledge store's query path
asks it.
"""

from __future__ import annotations

import functools
import unicodedata

LATIN_SHARE = 0.5
"""The words one ideograph counts for when a lesson's script is judged."""


def _ideographic(c: str) -> bool:
    """Kana, CJK ideographs, Hangul syllables: a character is about half a word."""
    o = ord(c)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF


def _latin(c: str) -> bool:
    """ASCII once diacritics are stripped (Vietnamese "ư", German "ü" are Latin)."""
    return unicodedata.normalize("NFD", c)[0].isascii()


@functools.lru_cache(maxsize=262_144)
def non_latin(text: str) -> bool:
    """The lesson is written in a non-Latin script: no more of its words are Latin than not.

    Its words are not what the lexical passes compare (they keep ASCII word characters only),
    so two such lessons sharing a date or an identifier must not look alike to them. Words are
    counted so that a Chinese rule quoting ``make test-full`` and ``context.TODO`` stays Chinese:
    a run of Latin letters is one word, a run of another alphabet one word, an ideograph half.
    """
    if text.isascii():
        return False
    latin = other = 0.0
    kind = ""
    for c in text:
        now = "" if not c.isalpha() else "I" if _ideographic(c) else "L" if _latin(c) else "O"
        if now == "I":
            other += LATIN_SHARE
        elif now and now != kind:
            if now == "L":
                latin += 1
            else:
                other += 1
        kind = now
    return other > 0 and other >= latin
