"""The nightly run read through the store's persisted index instead of a parse of every line.

:mod:`._nightly` joins only the entries changed since the last run, but it still takes them
from the whole store parsed into memory, and every round encodes every lesson. Here the store
is read through its SQLite index (:mod:`swarmq.knowledge._ftsindex`): the changed entries are
the lines whose digest the watermark does not hold (lines hashed, not parsed), and the planner
is given only the changed entries and the entries that *can* pair with them, read at their
offsets. Its own exact joins then run on that small population, so the pairs are the full
join's pairs involving the focus, by this argument:

* **Word-bigram pairs** (merges, supersessions, links; Jaccard ``>= t``, ``t`` the complement
  threshold, the lowest the planner uses). ``J(x, y) >= t`` needs an overlap of at least
  ``ceil(t |x|)`` bigrams; the index holds each lesson's bigrams hashed (CRC-32), and ``s - d``
  of ``x``'s ``s`` bigrams may share a hash, so ``y`` holds at least ``must = ceil(t s) - (s -
  d)`` of ``x``'s ``d`` distinct hashed tokens, hence at least one of any ``d - must + 1`` of
  them: the rarest ones (prefix filtering). A hash collision with another bigram only adds a
  candidate. The index's ``grams`` column (``len(word_bigrams(lesson))``, the join's set size)
  cuts candidates outside ``[ceil(t s), s / t]``. The index tokenises the lesson with
  :func:`~swarmq.similarity.text.word_bigrams`, the same words as the planner's
  :func:`~swarmq.similarity.sets.encode` (its docstring; ``tests/consolidation`` checks it).
* **Paraphrase candidates** (Jaccard of ``term_text`` tokens ``>= paraphrase_candidate_threshold``):
  the same prefix argument over term postings. The index keeps whole terms (of the lesson, its
  triggers and tags: a superset of the lesson's), while the join splits a dotted term
  (``v1.2.3``) into its word runs; so the postings of a join token are those of the term
  itself plus those of every dotted term of the store that contains it as a run.
* **Exact groups**: an equal normalised text (two words at least) has equal bigrams, so
  Jaccard 1; an equal template key means the same fields, whose terms every such lesson holds;
  an empty bigram set meets the store's other empty ones, listed by ``grams = 0``.
* **Later rounds**: an entry an action touched joins the focus (as in :mod:`._nightly`); its
  lesson is probed before the next round, and links probe the focus's partners once more (the
  link join's second hop). A templated lesson is probed for its template key's entries only:
  no other entry is comparable with it (``consolidation.items.comparable``).

The paraphrase pass's IDF is taken from the index's document frequencies (over every indexed
entry's terms, triggers and tags included), not recomputed over all lessons: the one place
where this run may score a pair differently from a run over the loaded store. The dense pass
needs every lesson's vector; a store small enough for it (``dense_max_entries``) takes the
loaded path. So does one the cross-language pass may run on (``multilingual_max_entries``, a
non-Latin lesson new or kept vectors beside the store): its mutual nearest neighbours are taken
among the whole scope, which this population is not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from swarmq.consolidation._nightly import FocusedPlanner, _FocusedParaphrases
from swarmq.consolidation._pairs import comparable_join
from swarmq.consolidation._paraphrase import Pair, _terms
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Action, Contradicts, Item
from swarmq.knowledge.model import Entry
from swarmq.knowledge.postings import RUN, IndexReader
from swarmq.knowledge.storesets import StoreSets
from swarmq.knowledge.templates import template_key
from swarmq.similarity.measure import Measure
from swarmq.similarity.sets import encode


class IndexedParaphrases(_FocusedParaphrases):
    """The focus lessons' paraphrase pairs, scored with the index's document frequencies."""

    def __init__(self, config: ConsolidationConfig, focus: set[str], sets: StoreSets) -> None:
        super().__init__(config, focus, None)
        self.multilingual = None  # the population is not the scope: see TierRun.plan_indexed
        self.sets = sets

    def _find(self, texts: list[str]) -> list[Pair]:
        if len(texts) < 2:
            return []
        sets = encode([_terms(text) for text in texts], Measure.TOKENS)
        result = self.join(sets, texts)
        if not len(result.left):
            return []
        pairs = list(zip(result.left.tolist(), result.right.tolist(), strict=True))
        words = {k: set(RUN.findall(_terms(texts[k]))) for pair in pairs for k in pair}
        idf = self.sets.word_idf({w for found in words.values() for w in found})
        norm = {k: math.sqrt(sum(idf[w] ** 2 for w in found)) for k, found in words.items()}
        out: list[Pair] = []
        for (i, j), overlap in zip(pairs, result.similarity.tolist(), strict=True):
            shared = words[i] & words[j]
            cosine = sum(idf[w] ** 2 for w in shared) / max(norm[i] * norm[j], 1e-12)
            if cosine >= self.config.paraphrase_threshold:
                out.append((texts[i], texts[j], cosine, float(overlap), None))
        return out


class Inner(Protocol):
    """The slice of :class:`~._population.KnowledgePopulation` this module drives (that module
    imports this one)."""

    current: dict[str, Entry]
    order: dict[str, int]
    changed: dict[str, Entry]

    def items(self) -> list[Item]: ...

    def item(self, entry_id: str) -> Item: ...

    def apply(self, action: Action) -> bool: ...


class IndexedPopulation:
    """The focus entries and every entry that may pair with them, read from the index; grows
    as actions widen the focus (see the module's docstring)."""

    def __init__(
        self,
        reader: IndexReader,
        focus: set[str],
        config: ConsolidationConfig,
        inner: Inner,
        initial: dict[int, Entry],
        sets: StoreSets,
    ) -> None:
        self.reader, self.focus, self.config, self.sets = reader, focus, config, sets
        self.slots: dict[str, int] = {}
        self.before: dict[str, Entry] = {}
        """Each entry as read (what the journal's ``before`` holds)."""
        self.probed: set[str] = set()
        self.inner = inner
        self._add(initial)
        self._collided = set(sets.collided().tolist())
        wanted: set[int] = set(self._collided)
        joined = [s for s, e in initial.items() if e.is_active and s not in self._collided]
        if config.paraphrase_threshold < 1.0:
            wanted.update(
                sets.paraphrase_partners(
                    joined, config.paraphrase_candidate_threshold, config.paraphrase_threshold
                ).tolist()
            )
        sets.release_words()  # before the bigram join's index side is built
        wanted.update(sets.bigram_partners(joined, config.complement_threshold).tolist())
        wanted.update(sets.template_partners(joined).tolist())
        self.probed.update(initial[s].lesson for s in joined)
        for slot in set(initial) & self._collided:  # hashed sets unsafe: the postings' probes
            lesson = initial[slot].lesson
            if config.paraphrase_threshold < 1.0:
                wanted.update(
                    reader.paraphrase_candidates(
                        lesson, config.paraphrase_candidate_threshold, config.paraphrase_threshold
                    ).tolist()
                )
        self._read(wanted)

    def _add(self, found: dict[int, Entry]) -> None:
        for slot, entry in sorted(found.items(), key=lambda kv: self.reader.line_no[kv[0]]):
            if entry.id in self.slots:
                continue  # a duplicated id: the first one read counts
            self.slots[entry.id] = slot
            self.before[entry.id] = entry
            self.inner.current[entry.id] = entry
            self.inner.order[entry.id] = int(self.reader.line_no[slot])

    def _read(self, slots: set[int]) -> None:
        known = set(self.slots.values())
        fresh = [s for s in slots if s not in known]
        if fresh:
            self._add(self.reader.entries(fresh))

    def widen(self, ids: Iterable[str]) -> None:
        """Read every entry that may pair with the current lessons of ``ids``: from the
        in-memory join when the entry still holds the lesson its indexed sets describe, else
        from the postings."""
        joined: list[int] = []
        probes: list[str] = []
        for entry_id in ids:
            entry = self.inner.current.get(entry_id)
            if entry is None or not entry.is_active or entry.lesson in self.probed:
                continue
            self.probed.add(entry.lesson)
            slot = self.slots.get(entry_id)
            read = self.before.get(entry_id)
            if (
                slot is not None
                and read is not None
                and read.is_active
                and read.lesson == entry.lesson
                and slot not in self._collided
            ):
                joined.append(slot)
            else:
                probes.append(entry.lesson)
        t = self.config.complement_threshold
        wanted: set[int] = set()
        if joined:
            wanted.update(self.sets.bigram_partners(joined, t).tolist())
            wanted.update(self.sets.template_partners(joined).tolist())
        for lesson in probes:
            if template_key(lesson) is None:  # a templated lesson: only its key's entries
                wanted.update(self.reader.bigram_candidates(lesson, t).tolist())
            wanted.update(self.reader.template_candidates(lesson).tolist())
        self._read(wanted)

    @property
    def changed(self) -> dict[str, Entry]:
        return self.inner.changed

    def items(self) -> list[Item]:
        self.widen(sorted(self.focus))
        return sorted(self.inner.items(), key=lambda item: item.order)

    def item(self, entry_id: str) -> Item:
        return self.inner.item(entry_id)

    def apply(self, action: Action) -> bool:
        return self.inner.apply(action)


class IndexedPlanner(FocusedPlanner):
    """The focused planner on an :class:`IndexedPopulation`: links widen it by the second hop."""

    def __init__(
        self,
        config: ConsolidationConfig,
        contradicts: Contradicts | None,
        focus: Iterable[str],
        sets: StoreSets,
    ) -> None:
        super().__init__(config, Measure.BIGRAMS, contradicts, focus)
        self.paraphrases = IndexedParaphrases(config, self.focus, sets)
        self.population: IndexedPopulation | None = None

    def decide_links(self, items: Sequence[Item]) -> list[Action]:
        if self.population is not None and self.config.max_links_per_entry and len(items) > 1:
            sets = encode([i.text for i in items], self.measure)
            t = self.config.complement_threshold
            left, right, _ = comparable_join(sets, self._indices(items), t, items)
            reach = np.union1d(left, right).tolist()
            self.population.widen(items[k].id for k in reach)
            items = self.population.items()
        return super().decide_links(items)
