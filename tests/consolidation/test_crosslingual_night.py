"""A night finds translations as the full pass does, from the vectors kept beside the store."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from swarmq.consolidation._crosslingual import crosslingual_pairs
from swarmq.consolidation._mlvectors import PersistedVectors, vectors_file
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Plan
from swarmq.consolidation.knowledge import consolidate_tier
from swarmq.similarity.embedding import Vectors, content_key
from swarmq.similarity.multilingual import available, multilingual_embedder
from swarmq.similarity.vectorfile import read_vectors
from tests.consolidation.support import entry, open_store, write_store

XLANG = Path(__file__).resolve().parents[2] / "eval" / "knowledge" / "xlang" / "stores"
needs_model = pytest.mark.skipif(not available(), reason="the multilingual extra is not installed")

ONE_HOME_EN = "0cb789d5-7a30-5c0d-a58f-150d7d0247e8"
RELOCATE_EN = "7fe1e2ec-d35c-5757-b8ac-aa17124c33e1"
RELOCATE_ZH = "914dd04d-d618-5aa4-81f2-6d74a860ceb1"
"""go-spring's "Relocate, don't summarize" rule in English and Chinese; "One home per rule" in
English is its labelled near-miss (``translated_same_topic``)."""


def _real(name: str) -> list[dict[str, Any]]:
    lines = (XLANG / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


class _Counting:
    """A stand-in model: a fixed random unit vector per text, counting what it embeds."""

    def __init__(self, name: str = "fake") -> None:
        self.count = 0
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return 8

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.count += len(texts)
        rows = [
            np.random.default_rng(int.from_bytes(content_key(t)[:4], "big")).normal(size=8)
            for t in texts
        ]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), 8)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_the_vector_file_embeds_only_what_it_lacks_and_is_never_trusted_blindly(
    tmp_path: Path,
) -> None:
    store = tmp_path / "knowledge.jsonl"
    model = _Counting()
    first = PersistedVectors(lambda: model, store).embed(["a", "b", "c"])
    assert model.count == 3
    path = vectors_file(store, "fake")
    assert set(read_vectors(path, "fake", 8)) == {content_key(t) for t in "abc"}

    again = PersistedVectors(lambda: model, store).embed(["c", "a", "d", "b"])
    assert model.count == 4  # only "d"
    np.testing.assert_array_equal(again[[1, 3, 0]], first)
    PersistedVectors(lambda: model, store).embed(["a", "d"])
    assert model.count == 4
    assert set(read_vectors(path, "fake", 8)) == {content_key("a"), content_key("d")}  # pruned

    assert read_vectors(path, "another", 8) == {}  # another model's vectors
    assert read_vectors(path, "fake", 16) == {}
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # damaged: read as empty, rebuilt
    assert read_vectors(path, "fake", 8) == {}
    PersistedVectors(lambda: model, store).embed(["a", "d"])
    assert model.count == 6
    assert len(read_vectors(path, "fake", 8)) == 2


@needs_model
def test_focused_pairs_are_the_full_passes_restricted_to_the_focus() -> None:
    entries = _real("go-spring__go-spring") + _real("town-os__town-os")
    texts = [e["lesson"] for e in entries]
    groups = [e["project_name"] for e in entries]
    config = ConsolidationConfig()
    full = crosslingual_pairs(texts, config, multilingual_embedder, groups)
    assert len(full) > 40
    for k in range(len(texts)):  # each lesson alone new tonight, English ones included
        night = crosslingual_pairs(texts, config, multilingual_embedder, groups, [k])
        assert night == [p for p in full if k in p[:2]]
    rng = random.Random(26)
    for _ in range(20):
        focus = rng.sample(range(len(texts)), 6)
        night = crosslingual_pairs(texts, config, multilingual_embedder, groups, focus)
        assert night == [p for p in full if {p[0], p[1]} & set(focus)]
    assert crosslingual_pairs(texts, config, multilingual_embedder, groups, []) == []


def _actions(plan: Plan) -> set[tuple[str, str, str]]:
    return {(a.kind.value, a.keep, a.other) for a in plan.actions}


@needs_model
def test_a_night_finds_old_translations_of_new_lessons_as_the_full_pass(tmp_path: Path) -> None:
    """New tonight: an English rule whose Chinese translation is old, and a Chinese rule whose
    English translation is old and shares no word with it, while an English rule on the same
    subject (a near-miss) is in the store. The night proposes the full pass's pairs."""
    lessons = {e["id"]: e["lesson"] for e in _real("go-spring__go-spring")}
    full_pairs = crosslingual_pairs(
        list(lessons.values()), ConsolidationConfig(), multilingual_embedder
    )
    ids = list(lessons)
    merged = {frozenset((ids[i], ids[j])) for i, j, _ in full_pairs}
    assert frozenset((RELOCATE_EN, RELOCATE_ZH)) in merged
    english_new = next(  # an English lesson whose Chinese translation the full pass finds
        ids[i] for i, j, _ in full_pairs if ids[i] not in (RELOCATE_EN, ONE_HOME_EN)
    )
    new = [english_new, RELOCATE_ZH]
    base = [entry(i, text) for i, text in lessons.items() if i not in new]
    store = write_store(tmp_path, base)
    first = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert first.focus is None and first.plan.actions  # the old translations merged
    assert vectors_file(store.swarm.files.knowledge, multilingual_embedder().name).exists()
    with open_store(tmp_path).swarm.transaction() as txn:
        for i in new:
            txn.append(entry(i, lessons[i], created="2026-02-01T00:00:00.000Z"))
    full = consolidate_tier(
        open_store(tmp_path).swarm, ConsolidationConfig(), scope="swarm", dry_run=True, full=True
    )
    night = consolidate_tier(open_store(tmp_path).swarm, ConsolidationConfig(), scope="swarm")
    assert night.focus == 2
    assert _actions(night.plan) == _actions(full.plan)
    pairs = {frozenset((a.keep, a.other)) for a in night.plan.actions}
    assert frozenset((RELOCATE_EN, RELOCATE_ZH)) in pairs
    assert not any(ONE_HOME_EN in pair and RELOCATE_ZH in pair for pair in pairs)
    assert any(english_new in pair for pair in pairs)
    assert all("multilingual_cosine" in a.scores for a in night.plan.actions)


@needs_model
def test_a_store_with_translations_is_loaded_not_read_through_its_index(tmp_path: Path) -> None:
    """The indexed night reads only the focus's word partners, not the scope the pass needs:
    a store that holds (or is given) a non-Latin lesson within the pass's size is loaded."""
    from swarmq.knowledge._ftsindex import FileIndex

    config = ConsolidationConfig(dense_duplicates=False)  # else a small store is loaded anyway
    lessons = {e["id"]: e["lesson"] for e in _real("go-spring__go-spring")}
    store = write_store(tmp_path, [entry(i, t) for i, t in lessons.items() if i != RELOCATE_EN])
    consolidate_tier(store.swarm, config, scope="swarm")
    index = FileIndex.open(open_store(tmp_path).swarm.files.knowledge)
    assert index is not None
    index.close()
    with open_store(tmp_path).swarm.transaction() as txn:  # English, its translation old
        txn.append(entry(RELOCATE_EN, lessons[RELOCATE_EN], created="2026-02-01T00:00:00.000Z"))
    night = consolidate_tier(open_store(tmp_path).swarm, config, scope="swarm", dry_run=True)
    assert not night.indexed and night.focus == 1
    full = consolidate_tier(
        open_store(tmp_path).swarm, config, scope="swarm", dry_run=True, full=True
    )
    assert _actions(night.plan) == _actions(full.plan)
    assert {(a.keep, a.other) for a in night.plan.actions} & {
        (RELOCATE_EN, RELOCATE_ZH),
        (RELOCATE_ZH, RELOCATE_EN),
    }
