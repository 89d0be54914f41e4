"""Transactions through the persisted index: a store this process has not loaded is read by id
and rewritten by copying the file, never loaded whole; the result is the mirror path's, byte for
byte, whatever state the index is in."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmq.knowledge._ftsindex import FileIndex, sidecar_path, term_token
from swarmq.knowledge._loaded import forget
from swarmq.knowledge.inject import record_shown
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.store import TierStore
from swarmq.storage.jsonl import BOM
from swarmq.storage.locking import LocalLocks
from tests.knowledge.conftest import Clock
from tests.knowledge.test_ftsindex import CONFIG, lines

ROOT = Path(__file__).resolve().parents[2]
CORRUPT = b'{"id": "broken", "lesson": '
"""A line that does not parse (quarantined by a rewrite)."""

Make = Callable[..., KnowledgeStore]


def _write(path: Path, rows: list[str], *, bom: bool = False, extra: bool = False) -> bytes:
    body = [r.encode() for r in rows]
    if extra:  # a corrupt line and a blank one, which a rewrite moves out and drops
        body[5:5] = [CORRUPT, b""]
    data = (BOM if bom else b"") + b"\n".join(body) + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def _store_maker(root: Path, clock: Clock) -> Make:
    def make(**config: object) -> KnowledgeStore:
        forget(root / "project" / ".swarm" / "knowledge.jsonl")
        return KnowledgeStore(
            root / "project" / ".swarm",
            locks=LocalLocks(root / "locks"),
            config=CONFIG.model_copy(update=config),
            data_dir=root / "data",
            project_name="proj",
            clock=clock,
        )

    return make


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Make:
    """A 300-entry swarm store, as a fresh process sees it (``forget`` drops the mirror)."""
    _write(tmp_path / "project" / ".swarm" / "knowledge.jsonl", lines(300, Tier.SWARM, 1))
    return _store_maker(tmp_path, clock)


def _indexed(make: Make, **config: object) -> KnowledgeStore:
    """The store in a fresh process, with its index built (as the first search builds it)."""
    knowledge = make(**config)
    index = FileIndex.open(knowledge.swarm.files.knowledge)
    assert index is not None
    index.close()
    return knowledge


def _ids(store: TierStore) -> list[str]:
    """The entries' ids in file order (corrupt and blank lines skipped)."""
    out = []
    for line in store.files.knowledge.read_text("utf-8-sig").splitlines():
        try:
            out.append(json.loads(line)["id"])
        except ValueError:
            continue
    return out


def _not_loaded(store: TierStore) -> bool:
    return store.tier_file.mirror.state is None and not store.tier_file.mirror.slots


def test_a_recorded_injection_does_not_load_the_store(store: Make) -> None:
    knowledge = _indexed(store)
    swarm = knowledge.swarm
    before = swarm.files.knowledge.read_bytes().split(b"\n")
    ids = _ids(swarm)
    shown = [ids[3], ids[150], ids[299]]
    out = record_shown(swarm, shown)
    assert [e.id for e in out] == shown
    assert _not_loaded(swarm), "recording three entries loaded the whole store"
    after = swarm.files.knowledge.read_bytes().split(b"\n")
    assert len(after) == len(before)
    for number, (old, new) in enumerate(zip(before, after, strict=True)):
        if number not in (3, 150, 299):
            assert old == new  # untouched lines keep their bytes
        else:
            data = json.loads(new)
            assert data["retrieval_outcomes"]["shown_count"] == 1
            assert data["revision"] == json.loads(old).get("revision", 0) + 1
    # a reader loading the store afterwards sees the counts
    assert all(swarm.get(i).outcomes["shown_count"] == 1 for i in shown)  # type: ignore[union-attr]


def _script(knowledge: KnowledgeStore, new_line: str) -> None:
    """The same changes, whichever path the transaction takes (under a cap the first commit
    evicts the oldest entries, the first one just changed among them)."""
    ids = _ids(knowledge.swarm)
    record_shown(knowledge.swarm, [ids[0], ids[-7]])
    knowledge.swarm.update(ids[-20], {"confidence": 0.9}, remove=["tags"])
    new = json.loads(new_line)
    new["id"] = "appended-one"
    new["lesson"] += " token=ghp_" + "a" * 36  # redacted on the way in
    with knowledge.swarm.transaction() as txn:
        changed = txn.get(ids[-40])
    assert changed is not None
    knowledge.swarm.rewrite(
        [{**changed.data, "confidence": 0.2}],
        removed={ids[-7]: "test_removed", ids[-41]: "test_removed"},
        appended=[new],
    )
    with knowledge.swarm.transaction() as txn:
        assert txn.get(ids[-60]) is not None
        txn.remove(ids[-60], reason=None)
        txn.append({**new, "id": "appended-two"})
    with knowledge.swarm.transaction() as txn:
        txn.append({**new, "id": "appended-three"})  # an append alone


def _outcome(root: Path) -> dict[str, object]:
    swarm = root / "project" / ".swarm"
    corrupt = swarm / "knowledge-corrupt.jsonl"
    out: dict[str, object] = {"store": (swarm / "knowledge.jsonl").read_bytes()}
    for name in sorted(os.listdir(swarm)):
        if "evicted" in name:
            out[name] = (swarm / name).read_bytes()
    if corrupt.exists():
        out["corrupt"] = [
            {k: v for k, v in json.loads(line).items() if k != "quarantined_at"}
            for line in corrupt.read_text().splitlines()
        ]
    return out


@pytest.mark.parametrize(
    ("bom", "extra", "cap"),
    [(False, False, None), (True, True, None), (False, False, 280), (True, True, 250)],
)
def test_the_index_path_writes_what_the_mirror_path_writes(
    tmp_path: Path, clock: Clock, bom: bool, extra: bool, cap: int | None
) -> None:
    """Replaced, removed (recorded or not), appended, redacted, a corrupt and a blank line, a
    byte-order mark, the FIFO cap: the two paths leave the same store and sidecars."""
    outcomes = []
    rows, new_line = lines(300, Tier.SWARM, 1), lines(1, Tier.SWARM, 99)[0]
    for path in ("mirror", "index"):
        root = tmp_path / path
        _write(root / "project" / ".swarm" / "knowledge.jsonl", rows, bom=bom, extra=extra)
        make = _store_maker(root, clock)
        if path == "index":
            knowledge = _indexed(make, swarm_max_entries=cap)
        else:
            knowledge = make(swarm_max_entries=cap)
            knowledge.swarm.read()  # loaded: the transactions take the mirror path
        _script(knowledge, new_line)
        assert _not_loaded(knowledge.swarm) == (path == "index")
        outcomes.append(_outcome(root))
    mirror, index = outcomes
    assert index == mirror
    stored = mirror["store"]
    assert isinstance(stored, bytes) and stored.startswith(BOM) == bom
    assert b"ghp_" + b"a" * 36 not in stored


def test_a_damaged_index_still_gives_a_correct_commit(store: Make) -> None:
    knowledge = _indexed(store)
    ids = _ids(knowledge.swarm)
    sidecar_path(knowledge.swarm.files.knowledge).write_bytes(b"not a database" * 100)
    knowledge = store()
    record_shown(knowledge.swarm, [ids[10]])
    assert _not_loaded(knowledge.swarm)
    assert knowledge.swarm.get(ids[10]).outcomes["shown_count"] == 1  # type: ignore[union-attr]
    assert _ids(knowledge.swarm) == ids


def test_an_index_pointing_at_the_wrong_line_is_rebuilt_not_trusted(
    store: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """The index passes its own checks (same file) but names the wrong line for an id: the
    line read back is checked, the index rebuilt, and the right entry changed."""
    knowledge = _indexed(store)
    path = knowledge.swarm.files.knowledge
    ids = _ids(knowledge.swarm)
    db = sqlite3.connect(sidecar_path(path))
    offset, length, line_no = db.execute(
        "SELECT offset, length, line_no FROM entries JOIN offsets USING (slot) WHERE id = ?",
        (ids[2],),
    ).fetchone()
    db.execute(
        "UPDATE entries SET length = ?, line_no = ? WHERE id = ?", (length, line_no, ids[100])
    )
    db.execute(
        "UPDATE offsets SET offset = ? WHERE slot = (SELECT slot FROM entries WHERE id = ?)",
        (offset, ids[100]),
    )
    db.commit()
    db.close()
    before = path.read_bytes().split(b"\n")
    knowledge = store()
    with caplog.at_level(logging.WARNING, logger="swarmq.knowledge._indextxn"):
        record_shown(knowledge.swarm, [ids[100]])
    assert "stale" in caplog.text
    assert _not_loaded(knowledge.swarm)
    after = path.read_bytes().split(b"\n")
    assert [n for n, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [100]
    assert json.loads(after[100])["retrieval_outcomes"]["shown_count"] == 1


def test_a_mirror_loaded_inside_the_transaction_sees_the_commit(store: Make) -> None:
    knowledge = _indexed(store)
    ids = _ids(knowledge.swarm)
    entry = knowledge.swarm.get(ids[5])
    assert entry is not None
    forget(knowledge.swarm.files.knowledge)
    knowledge = store()
    with knowledge.swarm.transaction() as txn:
        assert txn.put({**entry.data, "confidence": 0.11}).confidence == 0.11
        # a near-duplicate check inside the transaction loads the (committed) store
        assert knowledge.swarm.find_duplicate(entry.lesson) is not None
    assert knowledge.swarm.get(ids[5]).confidence == 0.11  # type: ignore[union-attr]
    assert len(knowledge.swarm.read().entries) == 300


def test_an_unterminated_last_line_takes_the_mirror_path(store: Make) -> None:
    knowledge = _indexed(store)
    ids = _ids(knowledge.swarm)
    with knowledge.swarm.files.knowledge.open("a") as handle:
        handle.write(lines(1, Tier.SWARM, 5)[0])  # a write in progress
    knowledge = store()
    record_shown(knowledge.swarm, [ids[1]])
    assert not _not_loaded(knowledge.swarm)
    assert knowledge.swarm.get(ids[1]).outcomes["shown_count"] == 1  # type: ignore[union-attr]


RECORDER = """
import json, sys
from pathlib import Path
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.inject import record_shown
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks
root, ids, rounds = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
knowledge = KnowledgeStore(root / "project" / ".swarm", locks=LocalLocks(root / "locks"),
    config=KnowledgeConfig(swarm_max_entries=None, hive_max_entries=None, retrieval="lexical"),
    data_dir=root / "data", project_name="proj")
for _ in range(rounds):
    record_shown(knowledge.swarm, ids)
print(json.dumps(knowledge.swarm.tier_file.mirror.state is None))
"""


def test_concurrent_recorders_through_the_index_lose_no_update(store: Make, tmp_path: Path) -> None:
    knowledge = _indexed(store)
    ids = _ids(knowledge.swarm)
    shown = [ids[0], ids[150], ids[299]]
    rounds = 12
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RECORDER, str(tmp_path), json.dumps(shown), str(rounds)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
        assert json.loads(out) is True, "a recorder loaded the whole store"
    knowledge = store()
    for entry_id in shown:
        entry = knowledge.swarm.get(entry_id)
        assert entry is not None and entry.outcomes["shown_count"] == 3 * rounds
    assert _ids(knowledge.swarm) == ids


def _index_state(path: Path) -> dict[str, object]:
    """The index's content, slots aside (a rebuild numbers them afresh)."""
    db = sqlite3.connect(sidecar_path(path))
    try:
        columns = "offset, length, line_no, digest, id, status, category, scope, priority, "
        columns += "confidence, active, static, grams, body"
        meta = dict(db.execute("SELECT key, value FROM meta"))
        return {
            "entries": db.execute(
                f"SELECT {columns} FROM entries JOIN offsets USING (slot) ORDER BY offset"
            ).fetchall(),
            "keys": sorted(
                db.execute(
                    "SELECT kind, key, phrase, o.offset FROM keys k JOIN offsets o USING (slot)"
                )
            ),
            "df": sorted(db.execute("SELECT token, n FROM df")),
            "meta": {k: meta[k] for k in ("end", "lines", "size", "head_crc", "tail_crc", "ino")},
            "postings": sorted(
                (e, t)
                for t in (term_token("redis"), term_token("docker"))
                for (e,) in db.execute(
                    "SELECT o.offset FROM fts JOIN offsets o ON o.slot = fts.rowid "
                    "WHERE fts MATCH ?",
                    (f'"{t}"',),
                )
            ),
        }
    finally:
        db.close()


def test_the_writer_keeps_the_index_as_a_fresh_build_would(store: Make) -> None:
    """Lines grown, kept the same length, shrunk, removed, appended: the index the writer
    updated is the one a rebuild of the new file gives, and the next reader finds it current."""
    knowledge = _indexed(store)
    path = knowledge.swarm.files.knowledge
    ids = _ids(knowledge.swarm)
    record_shown(knowledge.swarm, [ids[3], ids[200]])  # grown: new keys
    record_shown(knowledge.swarm, [ids[3], ids[200]])  # the same length
    new = json.loads(path.read_text().splitlines()[10])
    with knowledge.swarm.transaction() as txn:
        current = txn.get(ids[50])
        assert current is not None
        txn.put({**current.data, "lesson": "Pin the redis image tag in docker compose files"})
        txn.remove(ids[120], reason="test_removed")
        txn.append({**new, "id": "appended-one", "lesson": "Redis pools need a max size set"})
    assert _not_loaded(knowledge.swarm)
    in_step = _index_state(path)
    index = FileIndex.open(path)
    assert index is not None
    generation = index.db.execute("SELECT value FROM meta WHERE key = 'gen'").fetchone()
    index.close()
    after_open = _index_state(path)
    assert after_open == in_step  # nothing to synchronise: the writer kept it current
    index = FileIndex.open(path, rebuild=True)
    assert index is not None
    index.close()
    rebuilt = _index_state(path)
    assert in_step == rebuilt
    assert generation is not None


def test_an_index_built_without_the_id_lookup_gets_it_on_its_first_transaction(
    store: Make,
) -> None:
    knowledge = _indexed(store)
    sidecar = sidecar_path(knowledge.swarm.files.knowledge)
    db = sqlite3.connect(sidecar)
    db.execute("DROP INDEX entries_id")
    db.commit()
    db.close()
    ids = _ids(knowledge.swarm)
    record_shown(knowledge.swarm, [ids[42]])
    assert _not_loaded(knowledge.swarm)
    db = sqlite3.connect(sidecar)
    found = db.execute("SELECT name FROM sqlite_master WHERE name = 'entries_id'").fetchall()
    db.close()
    assert found == [("entries_id",)]
    assert knowledge.swarm.get(ids[42]).outcomes["shown_count"] == 1  # type: ignore[union-attr]


KILLED = """
import json, os, sys
from pathlib import Path
import swarmq.knowledge._linecopy as linecopy
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.inject import record_shown
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks
root, ids, step = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
if step == "copying":
    copy = linecopy._Out.copy
    def dying(self, *args):
        copy(self, *args)
        os._exit(86)  # the temp file half written
    linecopy._Out.copy = dying
else:
    def dying(*args, **kwargs):
        os._exit(86)  # renamed, the index not yet in step
    linecopy.adopt_rewrite = dying
knowledge = KnowledgeStore(root / "project" / ".swarm", locks=LocalLocks(root / "locks"),
    config=KnowledgeConfig(swarm_max_entries=None, hive_max_entries=None, retrieval="lexical"),
    data_dir=root / "data", project_name="proj")
record_shown(knowledge.swarm, ids)
"""


@pytest.mark.parametrize("step", ["copying", "renamed"])
def test_a_writer_killed_mid_commit_leaves_the_old_or_the_new_store(
    store: Make, tmp_path: Path, step: str
) -> None:
    knowledge = _indexed(store)
    path = knowledge.swarm.files.knowledge
    ids = _ids(knowledge.swarm)
    shown = [ids[10], ids[250]]
    before = path.read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(tmp_path), json.dumps(shown), step],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 86, done.stderr.decode()
    after = path.read_bytes()
    temps = [p for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.tmp-")]
    if step == "copying":
        assert after == before and temps  # the old store, and the dead writer's temp
    else:
        assert after != before and not temps
    knowledge = store()
    record_shown(knowledge.swarm, shown)  # the next writer: through the index, which catches up
    assert _not_loaded(knowledge.swarm)
    assert not [p for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.tmp-")]
    count = 1 if step == "copying" else 2
    assert all(knowledge.swarm.get(i).outcomes["shown_count"] == count for i in shown)  # type: ignore[union-attr]
    index = FileIndex.open(path)
    assert index is not None
    index.close()
    in_step = _index_state(path)
    index = FileIndex.open(path, rebuild=True)
    assert index is not None
    index.close()
    assert _index_state(path) == in_step


def test_a_nightly_consolidation_commits_through_the_index_without_loading_the_store(
    tmp_path: Path,
) -> None:
    """The indexed night (planned through the index) commits through this transaction: the
    store is never loaded, the merge lands, the index stays as a rebuild gives it, and the full
    pass afterwards finds nothing left to do."""
    from bench.lesson_corpus import generate
    from swarmq.consolidation.config import ConsolidationConfig
    from swarmq.consolidation.knowledge import consolidate_tier
    from tests.consolidation.support import entry, open_store, write_store

    config = ConsolidationConfig(dense_duplicates=False)
    lessons = generate(600, seed=41, dup_rate=0.02, odd_rate=0.0, dark_rate=0.0).lessons
    write_store(tmp_path, [entry(f"e{k}", text) for k, text in enumerate(lessons)])
    consolidate_tier(open_store(tmp_path).swarm, config, scope="swarm")
    path = open_store(tmp_path).swarm.files.knowledge
    index = FileIndex.open(path)
    assert index is not None
    index.close()
    with open_store(tmp_path).swarm.transaction() as txn:
        txn.append(entry("n0", lessons[7] + " again", created="2026-02-01T00:00:00.000Z"))
    forget(path)  # the nightly run's fresh process
    report = consolidate_tier(open_store(tmp_path).swarm, config, scope="swarm")
    assert report.indexed and report.plan.actions
    assert open_store(tmp_path).swarm.tier_file.mirror.state is None, "the commit loaded it"
    in_step = _index_state(path)
    rebuilt = FileIndex.open(path, rebuild=True)
    assert rebuilt is not None
    rebuilt.close()
    assert _index_state(path) == in_step
    after = consolidate_tier(open_store(tmp_path).swarm, config, scope="swarm", full=True)
    assert not after.plan.actions
