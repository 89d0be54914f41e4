"""Tokenisation and Jaccard exactly as the systems swarmq interoperates with compute them.

opencode-swarm (``knowledge-store.ts``) lower-cases, replaces every character that is neither a
JavaScript ``\\w`` (ASCII ``[A-Za-z0-9_]``: the regex has no ``u`` flag) nor whitespace by a
space, collapses whitespace and trims; similarity is Jaccard over the *set* of word bigrams, and
two empty sets are identical (1.0). Because non-ASCII letters become spaces, every Chinese-only
lesson normalises to the empty string.
"""

from __future__ import annotations

import re
from collections.abc import Set
from itertools import pairwise

_NOT_WORD_OR_SPACE = re.compile(r"[^\w\s]", re.ASCII)
_SPACES = re.compile(r"\s+", re.ASCII)
_WORD_TOKEN = re.compile(r"\w+")


def normalize_opencode(text: str) -> str:
    """opencode-swarm's ``normalize`` for near-duplicate detection."""
    return _SPACES.sub(" ", _NOT_WORD_OR_SPACE.sub(" ", text.lower())).strip(" \t\n\r\f\v")


def opencode_words(text: str) -> list[str]:
    return [w for w in normalize_opencode(text).split(" ") if w]


def word_bigrams(text: str) -> frozenset[str]:
    """The set of ``"w1 w2"`` bigrams of opencode-swarm's normalised text (empty for 0-1 words)."""
    words = opencode_words(text)
    return frozenset(f"{a} {b}" for a, b in pairwise(words))


def word_tokens(text: str) -> frozenset[str]:
    """openknowledge-style lexical tokens: lower-cased Unicode ``\\w+`` runs, as a set."""
    return frozenset(_WORD_TOKEN.findall(text.lower()))


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|A ∩ B| / |A ∪ B|; 1.0 when both are empty, 0.0 when exactly one is."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def bigram_jaccard(left: str, right: str) -> float:
    """opencode-swarm's ``jaccardBigram`` on two lessons."""
    return jaccard(word_bigrams(left), word_bigrams(right))
