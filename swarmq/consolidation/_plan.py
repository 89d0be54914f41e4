"""The consolidation plan: which entries merge, which supersede which, which get linked.

The planner sees a population only through :class:`Item` (id, compared text, age, strength)
and changes it only through :class:`Population.apply`, so the same rules drive knowledge tiers
and AgentOps learnings. Rules, per pair found by the exact similarity join:

* similarity ``>= duplicate_threshold`` → **merge** the weaker into the stronger (ties: the
  older survives); exact-content groups merge into one survivor at once;
* ``>= conflict_threshold``, or ``>= complement_threshold`` and contradictory by the negation
  pairs → the **newer supersedes** the older;
* ``>= complement_threshold`` → **link** (both ways), at most ``max_links_per_entry`` each;
* a paraphrase: normalised terms (identifiers split, stems, stop words out) whose Jaccard is at
  least ``paraphrase_candidate_threshold`` (the same exact join generates the candidates) and
  whose TF-IDF cosine is at least ``paraphrase_threshold`` → **merge**.

Structure and scope come first: a templated (machine-generated) entry only ever merges with one
of identical fields, and entries of two different projects are never merged, superseded or
linked (cross-project knowledge goes to the hive, by promotion). Every action carries its score
breakdown.

Merging changes a survivor's lesson, so new pairs can appear: rounds repeat until a round finds
nothing (a fixpoint), which is what makes a second run change nothing. Within a round actions
are chosen greedily by descending similarity and applied at once; an entry takes part in one
action, except a merge's survivor whose lesson the merge kept, which goes on absorbing its other
duplicates (a star of k near-duplicates takes one round, not k). So every action is justified by
the pair's similarity at the time it is applied: no lesson it compared has changed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from swarmq.consolidation._pairs import RoundPairs, every_pair, round_pairs
from swarmq.consolidation._paraphrase import Paraphrases
from swarmq.consolidation.config import ConsolidationConfig, EmptyLessons
from swarmq.consolidation.items import (
    Action,
    ActionKind,
    Contradicts,
    Item,
    Plan,
    Population,
    Reason,
    comparable,
    newer,
    stronger,
)
from swarmq.similarity.embedding import Embedder
from swarmq.similarity.join import JoinResult
from swarmq.similarity.measure import Measure
from swarmq.similarity.script import non_latin
from swarmq.similarity.sets import TokenSets, encode
from swarmq.similarity.text import bigram_jaccard

_SPACES = re.compile(r"\s+")


def _text_key(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


class Planner:
    def __init__(
        self,
        config: ConsolidationConfig,
        measure: Measure,
        contradicts: Contradicts | None = None,
        embedder: Callable[[], Embedder] | None = None,
    ) -> None:
        self.config = config
        self.measure = measure
        self.contradicts = contradicts if config.contradictions else None
        self.paraphrases = Paraphrases(config, embedder)
        self._rounds: RoundPairs | None = None
        self._sets: TokenSets | None = None
        self._rows: dict[str, int] = {}

    def encode(self, items: Sequence[Item]) -> TokenSets:
        """The token sets of ``items``' texts. A later round's lessons are earlier lessons (a
        merge keeps one of its two; nothing else changes a lesson), so their sets are taken from
        the last encoding, whose token order is as good for the exact join as a fresh one's;
        a text never encoded (a population that grew) encodes them all afresh."""
        texts = [item.text for item in items]
        if self._sets is not None:
            rows = [self._rows.get(text, -1) for text in texts]
            if -1 not in rows:
                return self._sets.take(np.asarray(rows, dtype=np.int64))
        sets = self._sets = encode(texts, self.measure)
        self._rows = {text: k for k, text in enumerate(texts)}
        return sets

    def run(
        self, population: Population, *, on_round: Callable[[int, int], None] | None = None
    ) -> Plan:
        """Rounds of merges and supersessions until a fixpoint, then the links."""
        plan = Plan()
        self._rounds, self._sets, self._rows = None, None, {}
        for round_no in range(1, self.config.max_rounds + 1):
            items = population.items()
            for item in items:
                plan.texts.setdefault(item.id, item.text)
            plan.rounds, plan.compared = round_no, len(items)
            chosen = self.decide_round(items, round_no, population)
            if on_round is not None:
                on_round(round_no, len(chosen))
            if not chosen:
                break
            plan.actions.extend(chosen)
        else:
            plan.converged = False
        plan.actions.extend(a for a in self.decide_links(population.items()) if population.apply(a))
        return plan

    # -- one round of merges and supersessions ---------------------------------------------------

    def decide_round(
        self, items: Sequence[Item], round_no: int, population: Population
    ) -> list[Action]:
        """Choose and apply one round's merges and supersessions; the actions applied.

        Greedy by descending similarity; an entry merged away or superseded, or whose lesson an
        action changed, takes no further part in the round. A merge's survivor whose lesson
        the merge kept goes on (its pairs' similarities still hold, and its strength is looked
        up again), so a survivor absorbs all its duplicates in one round, not one a round."""
        used: set[str] = set()
        actions: list[Action] = []

        def act(action: Action, *, survivor_continues: bool) -> None:
            if not population.apply(action):
                return
            actions.append(action)
            kept = action.kind is ActionKind.MERGE and survivor_continues
            if kept and population.item(action.keep).text == by_id[action.keep].text:
                used.discard(action.keep)

        by_id = {item.id: item for item in items}
        sets = self.encode(items)
        for group in self._exact_groups(items, np.flatnonzero(sets.sizes == 0).tolist()):
            survivor = group[0]
            for item in group[1:]:
                survivor = stronger(survivor, item)
            for item in group:
                if item.id != survivor.id and comparable(item, survivor):
                    scores: dict[str, float | str] = {"exact": 1.0}
                    if item.template is not None:
                        scores["template"] = item.template
                    used.update((item.id, survivor.id))
                    act(
                        Action(
                            ActionKind.MERGE,
                            survivor.id,
                            item.id,
                            1.0,
                            Reason.EXACT,
                            round_no,
                            scores,
                        ),
                        survivor_continues=False,
                    )
        low = (
            self.config.complement_threshold if self.contradicts else self.config.conflict_threshold
        )
        if not items:
            return actions
        candidates: list[tuple[float, str, str, Reason, dict[str, float | str]]] = []
        seen: set[tuple[str, str]] = set()
        for i, j, similarity in self.round_pairs(sets, low, items):
            a, b = items[i], items[j]
            if not comparable(a, b) or non_latin(a.text) or non_latin(b.text):
                continue  # a non-Latin lesson's bigrams are its ASCII residue, not its words
            reason = self._reason(a, b, similarity)
            x, y = min(a.id, b.id), max(a.id, b.id)
            seen.add((x, y))
            if reason is not None:
                candidates.append(
                    (similarity, x, y, reason, {"bigram_jaccard": round(similarity, 4)})
                )
        candidates.extend(
            (score, x, y, Reason.PARAPHRASE, why)
            for score, x, y, why in self.paraphrases.candidates(items, seen)
            if not ({"dense_cosine", "multilingual_cosine"} & why.keys())
            or not self._opposed(by_id[x], by_id[y])
        )
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        for similarity, x, y, reason, scores in candidates:
            if x in used or y in used:
                continue
            a, b = population.item(x), population.item(y)  # as this round's merges left them
            used.update((x, y))
            if reason in (Reason.DUPLICATE, Reason.PARAPHRASE):
                keep = stronger(a, b)
                kind = ActionKind.MERGE
            else:
                keep = newer(a, b)
                kind = ActionKind.SUPERSEDE
            other = b if keep is a else a
            if reason is Reason.PARAPHRASE:  # the word-bigram figure too, for the reviewer
                scores["bigram_jaccard"] = round(bigram_jaccard(a.text, b.text), 4)
            dense = self.paraphrases.dense_cosine(a.text, b.text)
            if dense is not None:  # every action records its dense score beside the lexical
                scores.setdefault("dense_cosine", round(dense, 4))
            act(
                Action(kind, keep.id, other.id, similarity, reason, round_no, scores),
                survivor_continues=True,
            )
        return actions

    def _opposed(self, a: Item, b: Item) -> bool:
        """A pair proposed by meaning alone is never merged if the lessons contradict."""
        return self.contradicts is not None and self.contradicts(a.text, b.text)

    def _reason(self, a: Item, b: Item, similarity: float) -> Reason | None:
        if self.contradicts is not None and self.contradicts(a.text, b.text):
            return Reason.CONTRADICTION
        if similarity >= self.config.duplicate_threshold:
            return Reason.DUPLICATE
        if similarity >= self.config.conflict_threshold:
            return Reason.CONFLICT
        return None

    def _exact_groups(self, items: Sequence[Item], empty: list[int]) -> list[list[Item]]:
        """Entries with the same content (fingerprint), and empty-token entries by policy."""
        groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
        for item in items:
            if item.fingerprint is not None:
                groups[("hash", item.fingerprint)].append(item)
        for index in empty:
            item = items[index]
            if item.fingerprint is not None:
                continue
            key = (
                "" if self.config.empty_lessons is EmptyLessons.REFERENCE else _text_key(item.text)
            )
            groups[("empty", key)].append(item)
        # Only groups of two or more are sorted (by their unique keys: the same order as sorting
        # them all, without comparing a store's worth of long keys every round).
        return [group for _, group in sorted((k, g) for k, g in groups.items() if len(g) > 1)]

    # -- which pairs are joined (hooks for a run restricted to the changed entries) -------------

    def round_pairs(
        self, sets: TokenSets, threshold: float, items: Sequence[Item]
    ) -> Iterable[tuple[int, int, float]]:
        """``(i, j, similarity)`` of the pairs of ``items`` a round considers: every pair the
        structure allows (:mod:`._pairs`), the previous round's carried where neither lesson
        changed."""
        found, self._rounds = round_pairs(self._rounds, sets, threshold, items)
        return found

    def link_join(self, sets: TokenSets, items: Sequence[Item]) -> JoinResult:
        """The pairs whose complement links are decided, each with all its partners."""
        t = self.config.complement_threshold
        left, right, similarity = every_pair(sets, t, items)
        return JoinResult(left, right, similarity, np.zeros(0, dtype=np.int64), t)

    def in_scope(self, a: Item, b: Item) -> bool:
        """Whether a link between two entries is this run's to decide."""
        return True

    # -- links between complementary entries -------------------------------------------------------

    def decide_links(self, items: Sequence[Item]) -> list[Action]:
        limit = self.config.max_links_per_entry
        if limit == 0 or len(items) < 2:
            return []
        result = self.link_join(self.encode(items), items)
        partners: dict[int, list[tuple[float, str, int]]] = defaultdict(list)
        for i, j, similarity in zip(
            result.left.tolist(), result.right.tolist(), result.similarity.tolist(), strict=True
        ):
            if similarity >= self.config.conflict_threshold:
                continue  # left over only when the round bound was hit
            if not comparable(items[i], items[j]) or non_latin(items[i].text):
                continue
            if non_latin(items[j].text):
                continue
            if self.contradicts is not None and self.contradicts(items[i].text, items[j].text):
                continue
            partners[i].append((-similarity, items[j].id, j))
            partners[j].append((-similarity, items[i].id, i))
        best = {i: {j for _, _, j in sorted(found)[:limit]} for i, found in partners.items()}
        links: list[Action] = []
        for i, chosen in sorted(best.items()):
            for j in sorted(chosen):
                if i < j and i in best.get(j, ()) and self.in_scope(items[i], items[j]):
                    a, b = items[i], items[j]
                    similarity = next(-s for s, _, k in partners[i] if k == j)
                    links.append(
                        Action(
                            ActionKind.LINK,
                            a.id,
                            b.id,
                            similarity,
                            Reason.COMPLEMENT,
                            0,
                            {"bigram_jaccard": round(similarity, 4)},
                        )
                    )
        return links
