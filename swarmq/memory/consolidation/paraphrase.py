"""Paraphrased duplicates: same rule, different words.

Candidates come from the exact similarity join over each lesson's normalised *terms*
(:mod:`swarmq.memory.similarity.normalize`) at a low Jaccard threshold; each candidate is then
scored by the TF-IDF cosine of its two term vectors (IDF over the entries being consolidated, so
a word every lesson uses counts for little). Templated entries and pairs the planner may not
touch (different projects, kept apart) are never candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from swarmq.memory.similarity.join import similarity_join
from swarmq.memory.similarity.normalize import cosine, idf_table, terms, tfidf
from swarmq.memory.similarity.sets import Measure, encode
from swarmq.memory.similarity.text import bigram_jaccard

if TYPE_CHECKING:
    from swarmq.memory.consolidation.config import ConsolidationConfig
    from swarmq.memory.consolidation.plan import Item

Candidate = tuple[float, str, str, dict[str, float | str]]


def paraphrases(items: Sequence[Item], config: ConsolidationConfig,
                seen: set[tuple[str, str]]) -> list[Candidate]:
    """``(cosine, id, id, score breakdown)`` of every comparable pair at or above
    ``paraphrase_threshold`` that the word-bigram pass did not already judge."""
    from swarmq.memory.consolidation.plan import comparable

    if config.paraphrase_threshold >= 1.0:
        return []
    eligible = [item for item in items if item.template is None]
    if len(eligible) < 2:
        return []
    docs = [terms(item.text) for item in eligible]
    sets = encode([" ".join(doc) for doc in docs], Measure.TOKENS)
    result = similarity_join(sets, config.paraphrase_candidate_threshold)
    if not len(result.left):
        return []
    idf, _ = idf_table(docs)
    default = max(idf.values(), default=1.0)
    vectors: dict[int, dict[str, float]] = {}
    found: list[Candidate] = []
    for i, j, overlap in zip(result.left.tolist(), result.right.tolist(),
                             result.similarity.tolist(), strict=True):
        a, b = eligible[i], eligible[j]
        key = (min(a.id, b.id), max(a.id, b.id))
        if key in seen or not comparable(a, b):
            continue
        for k in (i, j):
            if k not in vectors:
                vectors[k] = tfidf(docs[k], idf, default)
        score = cosine(vectors[i], vectors[j])
        if score >= config.paraphrase_threshold:
            found.append((score, key[0], key[1], {
                "tfidf_cosine": round(score, 4), "term_jaccard": round(overlap, 4),
                "bigram_jaccard": round(bigram_jaccard(a.text, b.text), 4)}))
    return found
