"""Each entry's consolidation token sets, as the persisted index stores them.

The nightly consolidation (:mod:`swarmq.consolidation`'s ``_indexed``) must find, for the
lessons changed since its last run, every partner the full join would find, without parsing
the store. Postings answer that one lesson at a time, and a lesson of common words reaches
postings that grow with the store. So the index keeps, per entry, the *sets* the planner's
joins compare, hashed to 64 bits, and the night runs the planner's own in-memory join
(:func:`~swarmq.similarity.join.focused_join`) over all of them: the same algorithm, the same
sets up to the hash, exact IDF over the same texts.

* ``grams``: the lesson's word bigrams (:func:`~swarmq.similarity.text.word_bigrams`, the words of
  the planner's bigram measure);
* ``words``: the paraphrase pass's words (runs of :func:`~swarmq.similarity.normalize.term_text`
  as :func:`~swarmq.similarity.sets.encode` splits them under ``Measure.TOKENS``);
* ``text``: the lesson's hash (the paraphrase pass's IDF counts distinct lesson texts);
* ``tkey``: the template key's hash (machine-written notes group by their fields), 0 for none;
* ``kind``: :data:`HAND` when the lesson has no template (the paraphrase pass's population),
  :data:`COLLIDES` when two of its own bigrams or words share a hash (then the hashed set is
  smaller than the planner's and the join on it could miss a pair: such entries are always
  candidates; at 64 bits this has not been seen).

A hash collision *between* entries only adds overlap (a candidate the planner's exact join on
the read-back lessons discards), except in the paraphrase IDF, where it would count two words as
one: with 64-bit BLAKE2b over a vocabulary of ``v`` words that has probability about
``v**2 / 2**65``, the risk the watermark's line digests already take.
"""

from __future__ import annotations

import hashlib
import re

from swarmq.knowledge.model import Entry
from swarmq.knowledge.templates import template_key
from swarmq.similarity.normalize import term_text

HAND = 1
COLLIDES = 2
_ASCII_RUN = re.compile(r"[a-z0-9_]+")
_UNICODE_RUN = re.compile(r"\w+")

JoinRow = tuple[int, int, int, int, bytes, bytes]
"""``(active, kind, text, tkey, grams, words)`` as the ``sets`` table holds them."""


def paraphrase_words(lesson: str) -> frozenset[str]:
    """The words the paraphrase join compares: ``encode([term_text(lesson)], TOKENS)``'s (ASCII
    word runs of the lower-cased text, or ``\\w`` runs when it is not ASCII)."""
    text = term_text(lesson).lower()
    run = _ASCII_RUN if text.isascii() else _UNICODE_RUN
    return frozenset(run.findall(text))


def digest(value: str) -> bytes:
    return hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def signed(value: str) -> int:
    """A 64-bit hash as SQLite's signed integer."""
    return int.from_bytes(digest(value), "little", signed=True)


def join_row(entry: Entry, grams: frozenset[str]) -> JoinRow:
    """The ``sets`` row of ``entry`` (``grams``: its lesson's word bigrams, already computed)."""
    lesson = entry.lesson
    template = template_key(lesson)
    words = paraphrase_words(lesson) if template is None else frozenset()
    gram_digests = {digest(g) for g in grams}
    word_digests = {digest(w) for w in words}
    kind = HAND if template is None else 0
    if len(gram_digests) < len(grams) or len(word_digests) < len(words):
        kind |= COLLIDES
    return (
        int(entry.is_active),
        kind,
        signed(lesson),
        0 if template is None else signed(template),
        b"".join(sorted(gram_digests)),
        b"".join(sorted(word_digests)),
    )
