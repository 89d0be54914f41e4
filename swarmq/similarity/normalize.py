"""Lexical normalisation shared by consolidation and injection: terms, not surface words.

A lesson becomes a list of terms: identifiers split at camelCase, snake_case, dots, slashes and
hyphens (``mockEnv`` → ``mockenv mock env``, ``sql.init.mode`` → ``sql init mode``), lower-cased,
English stop words dropped, each word reduced to its Snowball stem (``validates`` and
``validation`` → ``valid``). Numbers and versions stay whole and distinctive (``0.2.83``,
``v2``, ``404``), so "web-llm v0.2.83" never matches "v0.3.0". Stems are cached per word, so a
100k-lesson store costs one stemmer call per distinct word.

Retrieval (search, injection, recall, lookup; the persisted index and the query alike) adds
the text's other scripts, which :func:`terms` leaves out (:func:`retrieval_terms`): Chinese,
Japanese and Korean runs as overlapping character bigrams (a one-character run as itself), the
standard terms of CJK full-text search, since these scripts do not separate words; any other
word holding a non-ASCII letter (Cyrillic, Greek, Latin with diacritics…) lower-cased whole.
Consolidation's word passes keep :func:`terms`: they leave non-Latin lessons to the
multilingual pass on purpose.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import snowballstemmer

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "either",
        "etc",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "however",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "like",
        "may",
        "me",
        "might",
        "more",
        "most",
        "must",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "via",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "yet",
        "you",
        "your",
        "e",
        "g",
        "ie",
        "eg",
    ]
)
"""Function words (``not``/``no``/``never`` excepted where they matter: ``never`` stays)."""

_TOKEN = re.compile(r"v?\d+(?:\.\d+)+[a-z0-9-]*|\d+[a-z]*|[A-Za-z]+[0-9]*")
_IDENT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    stemmed: str = _STEMMER.stemWord(word)
    return stemmed


def terms(text: str) -> list[str]:
    """The lesson's terms in order (duplicates kept, for term frequencies)."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        if token[0].isdigit() or (token[0] in "vV" and len(token) > 1 and token[1].isdigit()):
            out.append(token.lower())
            continue
        parts = _IDENT.findall(token) if not token.islower() else [token]
        if len(parts) > 1 and token.lower() not in STOP_WORDS:
            out.append(stem(token.lower()))  # the whole identifier too: "SQLite", "useCallback"
        for part in parts:
            word = part.lower()
            if word not in STOP_WORDS and (len(word) > 1 or word.isdigit()):
                out.append(stem(word))
    return out


_CJK = (
    "\u1100-\u11ff\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
"""Hangul, kana and Han (with the iteration marks and halfwidth katakana): bigrammed."""
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf-\u05c7\u0610-\u061a\u064b-\u065f"
    "\u0670\u06d6-\u06ed\u0900-\u0963\u0966-\u0dff\u0e00-\u0eff\u0f00-\u0fff"
)
"""Combining marks ``\\w`` leaves out (and the Indic, Thai and Tibetan blocks whole, dandas
excepted), so a word in those scripts is not cut at its vowel signs."""
_SCRIPT_RUN = re.compile(f"([{_CJK}]+)|((?:[^\\W\\d_{_CJK}]|[{_MARKS}])+)")


def retrieval_terms(text: str) -> list[str]:
    """:func:`terms`, then the terms of the text's non-ASCII words: bigrams of each CJK run (a
    one-character run itself), and each other word with a non-ASCII letter lower-cased (of
    two letters or more). ASCII text has exactly its :func:`terms`."""
    out = terms(text)
    if text.isascii():
        return out
    for run, word in _SCRIPT_RUN.findall(text):
        if run:
            out.extend(_bigrams(run))
        elif not word.isascii() and len(word) > 1:
            out.append(word.lower())
    return out


def cjk_runs(text: str) -> list[list[str]]:
    """The CJK terms of :func:`retrieval_terms`, run by run, in order (a run's bigrams overlap,
    so neighbours share a character)."""
    if text.isascii():
        return []
    return [_bigrams(run) for run, _ in _SCRIPT_RUN.findall(text) if run]


def script(term: str) -> str | None:
    """The script of a term of :func:`retrieval_terms`: ``None`` for :func:`terms`' (ASCII),
    ``"CJK"`` for a bigram (Han, kana and Hangul together: Japanese mixes them), else the
    Unicode name's first word of its first non-ASCII letter (``CYRILLIC``, ``GREEK``,
    ``LATIN``…)."""
    if term.isascii():
        return None
    if _SCRIPT_RUN.match(term)[1]:  # type: ignore[index]
        return "CJK"
    letter = next(ch for ch in term if not ch.isascii())
    return unicodedata.name(letter, "?").split(" ")[0]


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[k : k + 2] for k in range(len(run) - 1)]


def term_text(text: str) -> str:
    """The terms joined by spaces (what the similarity join tokenises)."""
    return " ".join(terms(text))


Vector = dict[str, float]


def cosine(a: Vector, b: Vector) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())
