"""The index's join sets: every partner the planner's joins would pair a lesson with, the
paraphrase IDF of the pass itself, and rows kept in step with the file by every writer."""

from __future__ import annotations

import hashlib
import math
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from bench.lesson_corpus import generate
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.knowledge import _joinsets
from swarmq.knowledge._ftsindex import FileIndex, sidecar_path
from swarmq.knowledge._joinsets import paraphrase_words
from swarmq.knowledge.storesets import StoreSets, load
from swarmq.knowledge.templates import template_key
from swarmq.similarity.normalize import term_text
from swarmq.similarity.sets import encode
from swarmq.similarity.text import jaccard, word_bigrams
from tests.consolidation.support import entry, open_store, write_store

CONFIG = ConsolidationConfig(dense_duplicates=False)
ODD = [
    "Upgrade to v1.2.3-rc1 before running the migration on the staging cluster",
    "Upgrading to v1.2.3 fixed the migration crash on staging",
    "Files src/app/core/handlers/payment_gateway.py and tests/unit/test_payment_gateway_retry.py "
    "co-change with NPMI=0.812 but have no import relationship.",
    "Files tests/unit/test_payment_gateway_retry.py and src/app/core/handlers/payment_gateway.py "
    "co-change with NPMI=0.644 but have no import relationship.",
    "Files - and _ co-change with NPMI=0.5 but have no import relationship.",
    "Files _ and - co-change with NPMI=0.9 but have no import relationship.",
    "Réutiliser le cache des dépendances — npm ci sans réseau",
    "Kubernetes",
    "kubernetes",
    "Docker",
    "Use\u00a0the\u2003cache\u200bkey with   ÜNÏCODE whitespace",
]


def _store(root: Path) -> list[dict[str, object]]:
    rng = random.Random(7)
    base = generate(500, seed=7, dup_rate=0.05, odd_rate=0.0, dark_rate=0.0).lessons + ODD
    lessons = base + [base[rng.randrange(len(base))] + " again" for _ in range(40)]
    lessons += [base[rng.randrange(len(base))] for _ in range(30)]  # repeated texts
    entries = [
        entry(f"e{k}", text, status="archived" if k % 23 == 5 else "candidate")
        for k, text in enumerate(lessons)
    ]
    write_store(root, entries)
    index = FileIndex.open(open_store(root).swarm.files.knowledge)
    assert index is not None
    index.close()
    return entries


def _sets(root: Path) -> tuple[StoreSets, dict[str, int]]:
    db = sqlite3.connect(sidecar_path(open_store(root).swarm.files.knowledge))
    try:
        slots = dict(db.execute("SELECT id, slot FROM entries").fetchall())
        return load(db), slots
    finally:
        db.close()


def test_paraphrase_words_are_the_joins_tokens() -> None:
    texts = [*ODD, *generate(200, seed=3).lessons]
    sets = encode([term_text(t) for t in texts], "tokens")
    assert sets.sizes.tolist() == [len(paraphrase_words(t)) for t in texts]


def test_the_sets_propose_every_partner_under_the_passs_own_idf(tmp_path: Path) -> None:
    """Brute force over the active entries: comparable bigram pairs at the complement
    threshold (hand-written with hand-written, templated with its template key), same
    template key, and paraphrase pairs under the IDF of the distinct hand-written lessons (what
    the loaded pass computes), archived entries and repeated texts included in the store."""
    entries = _store(tmp_path)
    sets, slot_of = _sets(tmp_path)
    active = [e for e in entries if e["status"] != "archived"]
    lessons = [str(e["lesson"]) for e in active]
    hand = [template_key(t) is None for t in lessons]
    distinct = list(dict.fromkeys(t for t, h in zip(lessons, hand, strict=True) if h))
    words = {t: paraphrase_words(t) for t in distinct}
    df = {w: sum(w in found for found in words.values()) for w in set().union(*words.values())}
    n = len(distinct)
    idf = {w: math.log((1.0 + n) / (1.0 + d)) + 1.0 for w, d in df.items()}
    assert sets.word_idf(idf) == pytest.approx(idf, rel=1e-12)
    assert len(sets) == len(active)
    grams = [word_bigrams(t) for t in lessons]
    t, pt, pc = CONFIG.complement_threshold, CONFIG.paraphrase_candidate_threshold, 0.46
    norm = {x: math.sqrt(sum(idf[w] ** 2 for w in words[x])) for x in distinct}
    for k, e in enumerate(active):
        slot = slot_of[str(e["id"])]
        bigram = set(sets.bigram_partners([slot], t).tolist())
        template = set(sets.template_partners([slot]).tolist())
        para = set(sets.paraphrase_partners([slot], pt, pc).tolist())
        x = lessons[k]
        for j, other in enumerate(active):
            y, partner = lessons[j], slot_of[str(other["id"])]
            if j != k and jaccard(grams[k], grams[j]) >= t:
                # a templated entry is comparable only with its own template key's entries
                if hand[k] and hand[j]:
                    assert partner in bigram, (x, y)
                elif template_key(x) == template_key(y):
                    assert partner in template, (x, y)
            if template_key(x) is not None and template_key(x) == template_key(y):
                assert partner in template, (x, y)
            if not (hand[k] and hand[j]) or x == y or not words[x] or not words[y]:
                continue
            shared = words[x] & words[y]
            if len(shared) / len(words[x] | words[y]) < pt:
                continue
            if sum(idf[w] ** 2 for w in shared) / (norm[x] * norm[y]) >= pc:
                assert partner in para, (x, y)


def test_every_writer_keeps_the_sets_in_step(tmp_path: Path) -> None:
    """After a transaction through the index (its own rewrite adopted), an append and a
    reader's sync, the rows are those a fresh build makes."""
    _store(tmp_path)
    store = open_store(tmp_path).swarm
    with store.transaction() as txn:
        for entry_id in ("e3", "e40", "e41"):
            found = txn.get(entry_id)
            assert found is not None
            txn.put(found.changed({"status": "archived"}))
    with open_store(tmp_path).swarm.transaction() as txn:
        txn.append(entry("n1", "Upgrading to v1.2.3 fixed the migration crash on staging again"))
    path = store.files.knowledge

    def rows() -> dict[str, tuple[object, ...]]:
        index = FileIndex.open(path)
        assert index is not None
        try:
            return {
                str(r[0]): tuple(r[1:])
                for r in index.db.execute(
                    "SELECT e.id, s.active, s.kind, s.text, s.tkey, s.grams, s.words "
                    "FROM sets s JOIN entries e ON e.slot = s.slot"
                )
            }
        finally:
            index.close()

    kept = rows()
    sidecar_path(path).unlink()
    assert kept == rows()
    assert kept["e3"][0] == 0 and kept["n1"][0] == 1


def test_an_entry_whose_own_tokens_share_a_hash_is_always_a_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hashed set would be smaller than the planner's: the join on it could miss a pair."""

    def narrow(value: str) -> bytes:  # one hash for every token
        return hashlib.blake2b(b"", digest_size=8).digest()

    monkeypatch.setattr(_joinsets, "digest", narrow)
    write_store(tmp_path, [entry("a", "alpha beta gamma delta epsilon"), entry("b", "one")])
    index = FileIndex.open(open_store(tmp_path).swarm.files.knowledge)
    assert index is not None
    try:
        sets = load(index.db)
        assert np.array_equal(sets.collided(), sets.slots[:1])
    finally:
        index.close()
