"""The persisted index (``knowledge.index.sqlite``): a fresh process's search through it equals
the whole-store search, and a stale or damaged index is caught and never answers for the file."""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmq.knowledge._ftsindex import (
    INDEX_VERSION,
    FileIndex,
    forget_kept,
    sidecar_path,
    term_token,
)
from swarmq.knowledge._loaded import forget
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import MirrorView, QueryContext, query_index, search
from swarmq.knowledge.reinforcement import NewLesson, new_entry
from swarmq.storage.clock import iso

CONFIG = KnowledgeConfig(swarm_max_entries=None, hive_max_entries=None, retrieval=Retrieval.LEXICAL)
"""The index serves lexical retrieval (hybrid ranks by cosine over the loaded store)."""
SUBJECTS = [
    "the vitest stubEnv helper", "Supabase migrations", "websockets.serve() max_size",
    "localStorage in Safari private mode", "ONNX sessions in dispose()", "sql.init.mode",
    "the pnpm workspace", "docker compose healthchecks", "the redis connection pool",
    "celery task retries", "FastAPI dependency overrides", "pydantic validators",
]  # fmt: skip
ADVICE = [
    "always pin the version", "wrap it in try/catch", "regenerate the types after each change",
    "bound the memory per client", "free it before dropping the reference",
    "run the checks with --run in CI", "never share it across threads", "log the request id",
]  # fmt: skip
TOOLS = ["bash", "edit", "write", "grep"]
AGENTS = ["coder", "reviewer", "architect"]
QUERIES = [
    QueryContext(text="regenerate the Supabase types after a migration"),
    QueryContext(text="vitest stubEnv env values", tool="bash"),
    QueryContext(text="free ONNX sessions before dropping the reference", agent="coder"),
    QueryContext(text="docker compose healthchecks pinned version", tool="edit", agent="reviewer"),
    QueryContext(text="celery task retries redis connection pool"),
    QueryContext(text="compose a sonnet about autumn leaves"),
    QueryContext(text="pydantic validators log request id", scopes=["global", "repo"]),
    QueryContext(text="localStorage safari wrap try catch", agent="architect", tool="grep"),
]


def lines(count: int, tier: Tier, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for n in range(count):
        lesson = f"For {rng.choice(SUBJECTS)}, {rng.choice(ADVICE)} ({rng.choice(ADVICE)}) #{n}"
        directives: dict[str, object] = {}
        if rng.random() < 0.3:
            directives = {
                "triggers": [" ".join(lesson.split()[1:3]).lower().strip(",")],
                "applies_to_tools": [rng.choice(TOOLS)],
                "applies_to_agents": [rng.choice(AGENTS)],
                "directive_priority": rng.choice(["critical", "high", "medium", "low"]),
            }
        new = NewLesson(
            lesson,
            confidence=round(rng.uniform(0.3, 1.0), 2),
            scope=rng.choice(["global", "global", "global", "repo"]),
            directives=directives,
        )
        entry = new_entry(new, tier=tier, project_name="p", phase=1, at=iso(), config=CONFIG)
        data = entry.to_dict()
        if rng.random() < 0.1:
            data["status"] = "archived"
        out.append(json.dumps(data, separators=(",", ":")))
    return out


@pytest.fixture
def stores(tmp_path: Path) -> Callable[..., KnowledgeStore]:
    """A fresh-process view of a swarm + hive fixture store (``forget`` drops the mirrors)."""
    swarm = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    hive = tmp_path / "data" / "shared-learnings.jsonl"
    for path, tier, count, seed in ((swarm, Tier.SWARM, 300, 1), (hive, Tier.HIVE, 80, 2)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines(count, tier, seed)) + "\n")

    def make(**config: object) -> KnowledgeStore:
        forget(swarm)
        forget(hive)
        from swarmq.storage.locking import LocalLocks

        return KnowledgeStore(
            tmp_path / "project" / ".swarm",
            locks=LocalLocks(tmp_path / "locks"),
            config=CONFIG.model_copy(update=config),
            data_dir=tmp_path / "data",
            project_name="proj",
        )

    return make


def answers(knowledge: KnowledgeStore, limit: int = 8) -> list[list[tuple[str, str, float]]]:
    return [
        [(r.entry.id, r.tier, round(r.score, 9)) for r in search(knowledge, q, limit=limit)]
        for q in QUERIES
    ]


def through_index(make: Callable[..., KnowledgeStore], **config: object) -> list[list[object]]:
    knowledge = make(**config)
    found = answers(knowledge)
    assert knowledge.swarm.tier_file.mirror.state is None, "the store was loaded"
    assert sidecar_path(knowledge.swarm.files.knowledge).exists()
    return found  # type: ignore[return-value]


@pytest.mark.parametrize(
    "config",
    [{}, {"lexical_min_relevance": 0.0}, {"hive_enabled": False}, {"scope_filter": ["repo"]}],
)
def test_a_fresh_search_through_the_index_equals_the_whole_store_search(
    stores: Callable[..., KnowledgeStore], config: dict[str, object]
) -> None:
    indexed = through_index(stores, **config)
    whole = answers(stores(persistent_index=False, **config))
    assert indexed == whole
    assert sum(1 for found in indexed if found) >= 5  # the comparison is not of empty answers


def test_hive_near_duplicates_are_found_through_the_index_as_in_the_store(
    stores: Callable[..., KnowledgeStore],
) -> None:
    knowledge = stores()
    lessons = [e.lesson for e in knowledge.hive.read().entries]
    lessons += [e.lesson for e in knowledge.swarm.read().entries][:40]
    lessons += ["a lesson about nothing in the store at all", ""]
    expected = [knowledge.swarm.find_duplicate(lesson) is not None for lesson in lessons]
    assert any(expected) and not all(expected)
    with FileIndex.open(knowledge.swarm.files.knowledge) as index:  # type: ignore[union-attr]
        got = [index.has_near_duplicate(lesson, CONFIG.dedup_threshold) for lesson in lessons]
    assert got == expected


def _append(store: Path, lesson: NewLesson) -> None:
    """``lesson`` added to the end of ``store`` as a writer appends it (one whole line)."""
    entry = new_entry(lesson, tier=Tier.SWARM, project_name="p", phase=1, at=iso(), config=CONFIG)
    with store.open("a") as handle:
        handle.write(json.dumps(entry.to_dict(), separators=(",", ":")) + "\n")


def test_a_near_duplicate_answer_follows_the_store_it_was_asked_of(
    stores: Callable[..., KnowledgeStore],
) -> None:
    """The process keeps each answer for the index's version: a change to the store, whether
    an append or a rewrite, is answered afresh."""
    swarm = stores().swarm.files.knowledge
    lesson = "Pin the wheel of the markdown renderer before upgrading the docs site theme"
    threshold = CONFIG.dedup_threshold

    def asked() -> bool:
        with FileIndex.open(swarm) as index:  # type: ignore[union-attr]
            return index.has_near_duplicate(lesson, threshold)

    assert asked() is False
    assert asked() is False  # the kept answer
    kept = swarm.read_text()
    _append(swarm, NewLesson(lesson))
    assert asked() is True
    swarm.write_text(kept)
    assert asked() is False


def test_the_entry_count_follows_the_store_it_was_asked_of(
    stores: Callable[..., KnowledgeStore],
) -> None:
    """The process keeps the count for the index's version: an append or a rewrite of the
    store is counted afresh, and every count is the table's."""
    swarm = stores().swarm.files.knowledge

    def counted() -> tuple[int, int]:
        with FileIndex.open(swarm) as index:  # type: ignore[union-attr]
            table = int(index.db.execute("SELECT count(*) FROM entries").fetchone()[0])
            return index.count(), table

    first, table = counted()
    assert first == table > 0
    assert counted() == (first, first)  # the kept count
    kept = swarm.read_text()
    _append(swarm, NewLesson("Count the lessons again after every append to the store"))
    assert counted() == (first + 1, first + 1)
    swarm.write_text(kept)
    assert counted() == (first, first)


def _read_afresh(index: FileIndex, terms: list[str], words: list[str], haystack: str) -> object:
    """The postings and trigger phrases as the index's tables hold them (nothing kept)."""
    postings = {
        term: [
            slot
            for (slot,) in index.db.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid",
                (f'"{term_token(term)}"',),
            )
        ]
        for term in terms
    }
    marks = ",".join("?" * len(words))
    triggers = index.db.execute(
        "SELECT slot, phrase FROM keys WHERE kind = 'trigger' "
        f"AND key IN ({marks}) AND instr(?, phrase) > 0",
        (*words, haystack),
    ).fetchall()
    return postings, triggers


def test_kept_postings_and_trigger_phrases_follow_the_store_they_were_asked_of(
    stores: Callable[..., KnowledgeStore],
) -> None:
    """A process keeps a term's postings and a word's trigger phrases for the index's version:
    asked again they are the tables' own, and after an append or a rewrite of the store the new
    version's."""
    swarm = stores().swarm.files.knowledge
    terms = ["supabas", "vitest", "stubenv", "nothingatall", "pin", "the"]
    haystack = "for the vitest stubenv helper, wrap it in try/catch; for supabase migrations pin"
    words = sorted(set(haystack.split()))

    def asked() -> tuple[object, object]:
        with FileIndex.open(swarm) as index:  # type: ignore[union-attr]
            found = (
                {term: index.slots_with(term) for term in terms},
                index.triggers(words, haystack),
            )
            return found, _read_afresh(index, terms, words, haystack)

    forget_kept()
    first, table = asked()
    assert first == table
    postings, triggers = first  # type: ignore[misc]
    assert triggers and any(postings.values()) and not postings["nothingatall"]
    assert asked() == (first, table)  # kept
    kept = swarm.read_text()
    _append(
        swarm,
        NewLesson(
            "For the vitest stubEnv helper, always reset the env after each test",
            directives={"triggers": ["the vitest"]},
        ),
    )
    grown, table = asked()
    assert grown == table and grown != first
    swarm.write_text(kept)
    again, table = asked()
    assert again == table and again != grown


def test_frequencies_asked_at_once_equal_those_asked_one_by_one(
    stores: Callable[..., KnowledgeStore],
) -> None:
    knowledge = stores()
    terms = ["supabas", "vitest", "stubenv", "nothingatall", "pin", "the"]
    with FileIndex.open(knowledge.swarm.files.knowledge) as index:  # type: ignore[union-attr]
        one_by_one = {term: index.frequency(term) for term in terms}
        assert index.frequencies(terms) == one_by_one
    assert one_by_one["nothingatall"] == 0 and sum(one_by_one.values()) > 0
    store = knowledge.swarm
    mirror = store.tier_file.mirror
    with mirror.mutex:
        mirror.refresh()
        view = MirrorView(query_index(store))
        assert view.frequencies(terms) == {term: view.frequency(term) for term in terms}
        assert view.frequencies(terms) == one_by_one


def _count(path: Path) -> int:
    with FileIndex.open(path) as index:  # type: ignore[union-attr]
        return index.count()


def test_an_append_is_indexed_from_the_tail(stores: Callable[..., KnowledgeStore]) -> None:
    through_index(stores)
    swarm = stores().swarm.files.knowledge
    before = _count(swarm)
    extra = lines(5, Tier.SWARM, 9)
    with swarm.open("a") as handle:
        handle.write("\n".join(extra) + "\n")
    assert _count(swarm) == before + 5
    assert through_index(stores) == answers(stores(persistent_index=False))


@pytest.mark.parametrize("change", ["rewritten", "truncated", "replaced shorter"])
def test_a_rewritten_or_truncated_file_is_synced(
    stores: Callable[..., KnowledgeStore], change: str
) -> None:
    first = through_index(stores)
    swarm = stores().swarm.files.knowledge
    kept = swarm.read_text().splitlines()
    if change == "rewritten":  # every matching lesson changed in place, order kept
        kept = [line.replace("Supabase", "Postgres").replace("vitest", "jest") for line in kept]
    elif change == "truncated":
        kept = kept[: len(kept) // 3]
    else:
        kept = kept[::2]
    temp = swarm.with_suffix(".tmp")
    temp.write_text("\n".join(kept) + "\n")
    os.replace(temp, swarm)
    indexed = through_index(stores)
    assert indexed == answers(stores(persistent_index=False))
    assert indexed != first
    ids = {json.loads(line)["id"] for line in kept}
    swarm_ids = {i for found in indexed for i, tier, _ in found if tier == "swarm"}  # type: ignore[misc]
    assert swarm_ids <= ids
    assert _count(swarm) == len(kept)


def test_a_damaged_index_is_rebuilt(stores: Callable[..., KnowledgeStore]) -> None:
    first = through_index(stores)
    sidecar = sidecar_path(stores().swarm.files.knowledge)
    sidecar.write_bytes(b"not a database" * 100)
    assert through_index(stores) == first
    sidecar.unlink()
    assert through_index(stores) == first


def test_an_index_of_the_older_layout_is_rebuilt_once(
    stores: Callable[..., KnowledgeStore],
) -> None:
    """Layout 5 had no join sets: such a sidecar is never read as the current layout but
    built afresh, once, with the same answers."""
    first = through_index(stores)
    sidecar = sidecar_path(stores().swarm.files.knowledge)
    db = sqlite3.connect(sidecar)
    db.execute("DROP TABLE sets")
    db.execute("UPDATE meta SET value = 5 WHERE key = 'version'")
    db.commit()
    db.close()
    assert through_index(stores) == first
    db = sqlite3.connect(sidecar)
    try:
        assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() == (
            INDEX_VERSION,
        )
        rows = db.execute("SELECT count(*) FROM sets").fetchone()[0]
        assert rows == db.execute("SELECT count(*) FROM entries").fetchone()[0] > 0
        built = os.stat(sidecar).st_ino
    finally:
        db.close()
    assert through_index(stores) == first
    assert os.stat(sidecar).st_ino == built, "rebuilt again"


def test_lines_swapped_in_place_are_caught_by_the_id_check(
    stores: Callable[..., KnowledgeStore], caplog: pytest.LogCaptureFixture
) -> None:
    """Same size, same mtime, first and last blocks intact: only the id check can tell."""
    first = through_index(stores)
    swarm = stores().swarm.files.knowledge
    st = swarm.stat()
    rows = swarm.read_bytes().split(b"\n")
    middle = range(len(rows) // 3, 2 * len(rows) // 3)
    pairs = [(i, j) for i in middle for j in middle if i < j and len(rows[i]) == len(rows[j])]
    assert pairs, "the fixture has no two lines of equal length to swap"
    for i, j in pairs[:20]:
        rows[i], rows[j] = rows[j], rows[i]
    with swarm.open("r+b") as handle:
        handle.write(b"\n".join(rows))
    os.utime(swarm, ns=(st.st_atime_ns, st.st_mtime_ns))
    with caplog.at_level(logging.WARNING, logger="swarmq.knowledge.query"):
        indexed = through_index(stores)
    assert indexed == answers(stores(persistent_index=False))
    assert len(first) == len(indexed)
    assert "stale" in caplog.text


def test_an_index_row_absent_from_the_file_is_never_returned(
    stores: Callable[..., KnowledgeStore], caplog: pytest.LogCaptureFixture
) -> None:
    through_index(stores)
    swarm = stores().swarm.files.knowledge
    expected = answers(stores(persistent_index=False))
    db = sqlite3.connect(sidecar_path(swarm))
    # the ghosts copy the first query's best swarm answer, so the ranking reaches for them
    model = next(i for i, tier, _ in expected[0] if tier == "swarm")
    body = db.execute("SELECT body FROM entries WHERE id = ?", (model,)).fetchone()[0]
    for slot, offset, ghost in ((10_000, 0, "ghost-at-a-real-line"), (10_001, 10**9, "ghost-eof")):
        db.execute(
            "INSERT INTO entries SELECT ?, length, line_no, digest, ?, status, category, "
            "scope, 'critical', 1.0, 1, 9.0, grams, body FROM entries WHERE id = ?",
            (slot, ghost, model),
        )
        db.execute("INSERT INTO offsets (slot, offset) VALUES (?, ?)", (slot, offset))
        db.execute("INSERT INTO fts (rowid, body) VALUES (?, ?)", (slot, body))
    db.commit()
    db.close()
    # changed behind the metadata's back: what a fresh process reads (this one kept the
    # postings of the version it read, which name no ghost)
    forget_kept()
    with caplog.at_level(logging.WARNING, logger="swarmq.knowledge.query"):
        indexed = through_index(stores)
    assert not any(i.startswith("ghost") for found in indexed for i, *_ in found)  # type: ignore[attr-defined]
    assert indexed == expected
    assert "stale" in caplog.text


def test_an_unterminated_last_line_falls_back_to_the_store(
    stores: Callable[..., KnowledgeStore],
) -> None:
    knowledge = stores()
    swarm = knowledge.swarm.files.knowledge
    with swarm.open("a") as handle:
        handle.write(lines(1, Tier.SWARM, 11)[0])  # no newline: a write in progress
    assert FileIndex.open(swarm) is None
    assert answers(stores()) == answers(stores(persistent_index=False))


def _search_fresh(root: str) -> list[list[tuple[str, str, float]]]:
    from swarmq.storage.locking import LocalLocks

    knowledge = KnowledgeStore(
        Path(root) / "project" / ".swarm",
        locks=LocalLocks(Path(root) / "locks"),
        config=CONFIG,
        data_dir=Path(root) / "data",
        project_name="proj",
    )
    found = answers(knowledge)
    assert knowledge.swarm.tier_file.mirror.state is None
    return found


def test_processes_building_and_syncing_the_index_at_once_agree(
    stores: Callable[..., KnowledgeStore], tmp_path: Path
) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    expected = answers(stores(persistent_index=False))
    forget(stores().swarm.files.knowledge)
    # spawned, not forked: a fork copies whatever lock another thread of this process (a group
    # commit's writer, left by an earlier test) holds at that moment, and the child hangs on it
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(4, mp_context=context) as pool:  # all find no index: all build
        assert list(pool.map(_search_fresh, [str(tmp_path)] * 4)) == [expected] * 4
        swarm = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
        kept = swarm.read_text().splitlines()[::2]
        temp = swarm.with_suffix(".tmp")
        temp.write_text("\n".join(kept) + "\n")
        os.replace(temp, swarm)  # all find it rewritten: one syncs, the others wait and see
        rewritten = list(pool.map(_search_fresh, [str(tmp_path)] * 4))
    assert rewritten == [answers(stores(persistent_index=False))] * 4
    assert not list(swarm.parent.glob("*.tmp"))
