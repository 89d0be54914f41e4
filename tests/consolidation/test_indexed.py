"""A nightly run through the store's persisted index acts as the full pass does on the new
entries, and parses only the entries that can pair with them."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.lesson_corpus import generate
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Plan
from swarmq.consolidation.knowledge import CRASH_ENV, consolidate_tier
from swarmq.knowledge import _ftsindex, _loaded
from swarmq.knowledge._ftsindex import FileIndex
from swarmq.knowledge._loaded import forget, loaded
from swarmq.knowledge.postings import RUN, IndexReader, open_reader
from swarmq.similarity.normalize import term_text
from swarmq.similarity.sets import encode
from swarmq.similarity.text import jaccard, word_bigrams
from tests.consolidation.support import entry, open_store, write_store

CONFIG = ConsolidationConfig(dense_duplicates=False)
"""The dense pass needs every lesson's vector: a store it runs on is loaded, not indexed."""

ODD = [
    "Upgrade to v1.2.3-rc1 before running the migration on the staging cluster",
    "Pin python 3.11.4 in the ci image, 3.12 breaks the build of the native wheels",
    "Upgrading to v1.2.3 fixed the migration crash on staging",
    "Files src/app/core/handlers/payment_gateway.py and tests/unit/test_payment_gateway_retry.py "
    "co-change with NPMI=0.812 but have no import relationship.",
    "Files tests/unit/test_payment_gateway_retry.py and src/app/core/handlers/payment_gateway.py "
    "co-change with NPMI=0.644 but have no import relationship.",
    "Réutiliser le cache des dépendances — npm ci sans réseau",
    "Kubernetes",
    "kubernetes",
    "Use\u00a0the\u2003cache\u200bkey with   ÜNÏCODE whitespace",
]


def _lessons(seed: int, n: int) -> list[str]:
    return generate(n, seed=seed, dup_rate=0.02, odd_rate=0.0, dark_rate=0.0).lessons


def _actions(plan: Plan) -> set[tuple[str, str, str]]:
    return {(a.kind.value, a.keep, a.other) for a in plan.actions}


def _add(root: Path, entries: list[tuple[str, str]]) -> None:
    with open_store(root).swarm.transaction() as txn:
        for entry_id, lesson in entries:
            txn.append(entry(entry_id, lesson, created="2026-02-01T00:00:00.000Z"))


def _index(root: Path) -> None:
    index = FileIndex.open(open_store(root).swarm.files.knowledge)
    assert index is not None
    index.close()


def _night(root: Path, seed: int, n: int) -> list[str]:
    """A consolidated store with its index, then new near-duplicates, new lessons and odd ones."""
    rng = random.Random(seed)
    lessons = _lessons(seed, n) + ODD[:3] + ODD[3:4] + ODD[6:7]
    write_store(root, [entry(f"e{k}", text) for k, text in enumerate(lessons)])
    consolidate_tier(open_store(root).swarm, CONFIG, scope="swarm")
    _index(root)
    fresh = _lessons(seed + 100, 12)
    new = [lessons[rng.randrange(n)] + " again" for _ in range(12)] + fresh + ODD[2:]
    _add(root, [(f"n{k}", text) for k, text in enumerate(new)])
    return lessons


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_the_indexed_night_acts_like_the_full_pass(tmp_path: Path, seed: int) -> None:
    _night(tmp_path, seed, 1200)
    full = consolidate_tier(
        open_store(tmp_path).swarm, CONFIG, scope="swarm", full=True, dry_run=True
    )
    dry = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm", dry_run=True)
    assert dry.indexed and dry.parsed is not None
    nightly = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert nightly.indexed and nightly.focus == 31
    assert _actions(nightly.plan) == _actions(full.plan) == _actions(dry.plan)
    assert ("merge", "e1203", "n26") in _actions(full.plan)  # co-change fields swapped
    after = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm", full=True)
    assert not after.plan.actions  # a fixpoint the full pass agrees with


def test_a_quiet_night_parses_only_the_new_entries_and_their_partners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lessons = _lessons(41, 3000)
    write_store(tmp_path, [entry(f"e{k}", text) for k, text in enumerate(lessons)])
    consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    _index(tmp_path)
    _add(tmp_path, [("n0", lessons[7] + " again"), ("n1", "Cache the docker layers in ci")])
    path = open_store(tmp_path).swarm.files.knowledge
    forget(path)  # as in the fresh process of a nightly run
    parsed: list[int] = []
    for module in (_ftsindex, _loaded):
        real = module.parse_line

        def counting(line_no: int, data: bytes, real: Any = real) -> object:
            parsed.append(line_no)
            return real(line_no, data)

        monkeypatch.setattr(module, "parse_line", counting)
    report = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm", dry_run=True)
    assert report.indexed and report.focus == 2
    assert loaded(path).state is None  # the store was never loaded
    assert report.parsed is not None and report.parsed < 60
    assert len(parsed) < 60 + 2  # the index's own sync parsed only the two appended lines
    assert ("merge", "e7", "n0") in _actions(report.plan)


def test_without_an_index_the_night_loads_the_store(tmp_path: Path) -> None:
    _night(tmp_path, 51, 300)
    store = open_store(tmp_path).swarm
    store.files.knowledge.with_name("knowledge.index.sqlite").unlink()
    report = consolidate_tier(store, CONFIG, scope="swarm", dry_run=True)
    assert not report.indexed and report.focus == 31  # no index built by the night
    assert not store.files.knowledge.with_name("knowledge.index.sqlite").exists()
    dense = consolidate_tier(open_store(tmp_path).swarm, ConsolidationConfig(), scope="swarm")
    assert not dense.indexed  # small enough for the dense pass: loaded


def _reader(root: Path, lessons: list[str]) -> IndexReader:
    write_store(root, [entry(f"e{k}", text) for k, text in enumerate(lessons)])
    _index(root)
    reader = open_reader(open_store(root).swarm.files.knowledge)
    assert reader is not None
    return reader


def test_the_index_proposes_every_partner(tmp_path: Path) -> None:
    """Brute force: every pair reaching the planner's thresholds is among the candidates."""
    rng = random.Random(61)
    base = _lessons(61, 400) + ODD
    lessons = base + [base[rng.randrange(len(base))] + " again" for _ in range(60)]
    reader = _reader(tmp_path, lessons)
    try:
        slot_of = {e.id: s for s, e in reader.entries(range(len(reader.grams))).items()}
        grams = [word_bigrams(text) for text in lessons]
        words = [set(RUN.findall(term_text(text))) for text in lessons]
        idf = reader.word_idf({w for found in words for w in found})
        t, pt, pc = CONFIG.complement_threshold, 0.3, CONFIG.paraphrase_threshold
        for k, text in enumerate(lessons):
            bigram = set(reader.bigram_candidates(text, t).tolist())
            para = set(reader.paraphrase_candidates(text, pt, pc).tolist())
            for j in range(len(lessons)):
                if j == k:
                    continue
                if jaccard(grams[k], grams[j]) >= t:
                    assert slot_of[f"e{j}"] in bigram, (text, lessons[j])
                shared = words[k] & words[j]
                if not words[k] or not words[j]:
                    continue
                overlap = len(shared) / len(words[k] | words[j])
                norms = math.sqrt(sum(idf[w] ** 2 for w in words[k])) * math.sqrt(
                    sum(idf[w] ** 2 for w in words[j])
                )
                cosine = sum(idf[w] ** 2 for w in shared) / norms
                if overlap >= pt and cosine >= pc:
                    assert slot_of[f"e{j}"] in para, (text, lessons[j])
    finally:
        reader.index.close()


def test_the_index_tokenises_lessons_as_the_planner_does() -> None:
    """The index's bigrams (``word_bigrams``) and the planner's (``encode``) are one set per
    lesson, odd text included, and the paraphrase words are the join's."""
    texts = [*ODD, *_lessons(71, 200)]
    sets = encode(texts, CONFIG.measure)
    assert sets.sizes.tolist() == [len(word_bigrams(text)) for text in texts]
    terms = encode([term_text(text) for text in texts], "tokens")
    assert terms.sizes.tolist() == [len(set(RUN.findall(term_text(t)))) for t in texts]


def test_a_templated_lesson_finds_its_fields_twin(tmp_path: Path) -> None:
    """Same template key, whatever the words around the fields (fields without terms too)."""
    odd = "Files - and _ co-change with NPMI=0.5 but have no import relationship."
    swapped = "Files _ and - co-change with NPMI=0.9 but have no import relationship."
    reader = _reader(tmp_path, [*_lessons(81, 50), ODD[3], ODD[4], odd, swapped])
    try:
        assert 51 in reader.template_candidates(ODD[3]).tolist()
        assert 53 in reader.template_candidates(odd).tolist()
        assert reader.template_candidates(_lessons(81, 1)[0]).tolist() == []
    finally:
        reader.index.close()


KILLED = """
import sys
from pathlib import Path
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import CRASH_ENV, consolidate_tier
from tests.consolidation.support import open_store
config = ConsolidationConfig(dense_duplicates=False)
consolidate_tier(open_store(Path(sys.argv[1])).swarm, config, scope="swarm")
"""


@pytest.mark.parametrize("step", ["journaled", "committed"])
def test_an_indexed_night_killed_mid_commit_is_recovered(tmp_path: Path, step: str) -> None:
    _night(tmp_path, 91, 300)
    store_file = open_store(tmp_path).swarm.files.knowledge
    before = store_file.read_bytes()
    want = _actions(
        consolidate_tier(
            open_store(tmp_path).swarm, CONFIG, scope="swarm", full=True, dry_run=True
        ).plan
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(tmp_path)],
        env={**os.environ, CRASH_ENV: step, "PYTHONPATH": str(root)},
        cwd=root,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 86, done.stderr.decode()
    assert (store_file.read_bytes() == before) is (step == "journaled")
    again = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert again.recovered and not again.indexed  # an open run: recovered on the loaded path
    if step == "journaled":
        assert _actions(again.plan) == want
    after = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm", full=True)
    assert not after.plan.actions
