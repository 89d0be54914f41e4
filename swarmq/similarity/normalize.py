"""Lexical normalisation shared by consolidation and injection: terms, not surface words.

A lesson becomes a list of terms: identifiers split at camelCase, snake_case, dots, slashes and
hyphens (``mockEnv`` → ``mockenv mock env``, ``sql.init.mode`` → ``sql init mode``), lower-cased,
English stop words dropped, each word reduced to its Snowball stem (``validates`` and
``validation`` → ``valid``). Numbers and versions stay whole and distinctive (``0.2.83``,
``v2``, ``404``), so "web-llm v0.2.83" never matches "v0.3.0". Stems are cached per word, so a
100k-lesson store costs one stemmer call per distinct word.
"""

from __future__ import annotations

import functools
import re

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


def term_text(text: str) -> str:
    """The terms joined by spaces (what the similarity join tokenises)."""
    return " ".join(terms(text))


Vector = dict[str, float]


def cosine(a: Vector, b: Vector) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())
