"""Group commit of adds: concurrent adds share a lock hold and a write, decide exactly as the
same adds one by one in commit order, and a failed write acknowledges none of its group."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from swarmq.knowledge._group import group_for
from swarmq.knowledge._loaded import forget
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.storage.locking import FencedOff, Lease, LocalLocks

TOPICS = ["pytest", "docker", "postgres", "redis", "celery", "ruff", "mypy", "vite", "nginx"]
VERBS = ["pin", "cache", "retry", "lock", "flush", "validate", "profile", "restart"]


def lesson(n: int) -> str:
    topic, verb, other = TOPICS[n % 9], VERBS[n % 8], TOPICS[(n * 7 + 3) % 9]
    return f"Always {verb} the {topic} client before calling {other} in step {n} of the build"


def near(n: int) -> str:
    return lesson(n).replace("Always", "Please always")


def workload() -> list[tuple[NewLesson, int]]:
    """New lessons, near-duplicates of stored ones (some reinforce: new phase), near-duplicates
    of lessons other writers add concurrently, and a rejection."""
    out = []
    for n in range(64):
        kind = n % 4
        if kind == 0:
            item = NewLesson(near(n // 4), id=f"w{n}")  # twin of a stored lesson
        elif kind == 1:
            item = NewLesson(near(100 + n - 1), id=f"w{n}")  # twin of another writer's lesson
        elif kind == 2:
            item = NewLesson(lesson(100 + n - 2), id=f"w{n}")
        else:
            item = NewLesson(
                "rm -rf / to clean the build" if n == 7 else lesson(200 + n), id=f"w{n}"
            )
        out.append((item, 2 + n % 3))
    return out


@contextmanager
def queued_behind_lock(
    knowledge: KnowledgeStore, locks: LocalLocks, writers: int
) -> Iterator[None]:
    """Hold the store lock until ``writers`` adds wait for the committer (which waits for it)."""
    group = group_for(knowledge.swarm.tier_file.mirror)
    with locks.hold(knowledge.swarm.files.resource):
        yield
        deadline = time.monotonic() + 30
        while group.pending < writers and time.monotonic() < deadline:
            time.sleep(0.005)
        assert group.pending == writers, "the adds did not queue behind the committer"


def test_concurrent_adds_are_grouped_and_decide_as_one_by_one(
    tmp_path: Path, make_knowledge: Callable[..., KnowledgeStore], locks: LocalLocks
) -> None:
    knowledge = make_knowledge(swarm_max_entries=None)
    knowledge.swarm.add_many([NewLesson(lesson(n), id=f"s{n}") for n in range(16)], phase=1)
    initial = knowledge.swarm.files.knowledge.read_bytes()
    work = workload()
    results: dict[int, object] = {}

    def writer(items: list[int]) -> None:
        for index in items:
            new, phase = work[index]
            results[index] = knowledge.swarm.add(new, phase=phase)

    threads = [threading.Thread(target=writer, args=(list(range(w, 64, 8)),)) for w in range(8)]
    with queued_behind_lock(knowledge, locks, 8):
        for thread in threads:
            thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 64
    orders = sorted((r.order, i) for i, r in results.items())  # type: ignore[attr-defined]
    tokens = [order[0] for order, _ in orders]
    assert max(tokens.count(t) for t in set(tokens)) > 1, "no two adds shared a group"
    assert len(set(tokens)) < 64

    # The same adds one by one, in commit order, on a copy of the initial store.
    replay_dir = tmp_path / "replay" / ".swarm"
    replay_dir.mkdir(parents=True)
    (replay_dir / "knowledge.jsonl").write_bytes(initial)
    replay = KnowledgeStore(
        replay_dir,
        locks=LocalLocks(tmp_path / "replay-locks"),
        config=knowledge.config,
        data_dir=tmp_path / "replay-data",
        project_name="proj",
        clock=knowledge.clock,
    )
    outcomes = {r.outcome for r in results.values()}  # type: ignore[attr-defined]
    assert {"added", "reinforced", "already_confirmed_phase", "rejected"} <= outcomes
    for _, index in orders:
        new, phase = work[index]
        expected = replay.swarm.add_many([new], phase=phase)[0]
        got = results[index]
        assert (got.outcome, got.entry.id if got.entry else None) == (  # type: ignore[attr-defined]
            expected.outcome,
            expected.entry.id if expected.entry else None,
        ), f"add {index}"
    assert knowledge.swarm.files.knowledge.read_bytes() == replay.swarm.files.knowledge.read_bytes()
    forget(replay_dir / "knowledge.jsonl")


class RefusingLocks:
    """Same-host locks whose leases refuse to commit while ``refuse`` is set."""

    def __init__(self, inner: LocalLocks) -> None:
        self.inner = inner
        self.refuse = threading.Event()

    @contextmanager
    def hold(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
        with self.inner.hold(resource, timeout=timeout) as lease:
            outer = self

            class Refusing:
                resource = lease.resource
                fencing_token = lease.fencing_token

                def validate(self, recorded: int) -> int:
                    if outer.refuse.is_set():
                        raise FencedOff("lease lapsed (test)")
                    return lease.validate(recorded)

                def confirm(self) -> None:
                    lease.confirm()

            yield Refusing()


def test_a_failed_write_acknowledges_no_add_of_its_group(
    tmp_path: Path, make_knowledge: Callable[..., KnowledgeStore]
) -> None:
    locks = RefusingLocks(LocalLocks(tmp_path / "refusing"))
    knowledge = make_knowledge()
    knowledge = KnowledgeStore(
        knowledge.swarm.files.root,
        locks=locks,
        config=knowledge.config,
        data_dir=tmp_path / "data",
        project_name="proj",
    )
    knowledge.swarm.add(NewLesson(lesson(1)), phase=1)
    before = knowledge.swarm.files.knowledge.read_bytes()
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            knowledge.swarm.add(NewLesson(lesson(300 + n)), phase=1)
        except FencedOff as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    locks.refuse.set()
    with queued_behind_lock(knowledge, locks.inner, 6):  # type: ignore[arg-type]
        for thread in threads:
            thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(errors) == 6
    assert knowledge.swarm.files.knowledge.read_bytes() == before
    locks.refuse.clear()
    assert [e.lesson for e in knowledge.swarm.read().entries] == [lesson(1)]
    assert knowledge.swarm.add(NewLesson(lesson(400)), phase=1).outcome == "added"


def test_an_add_that_cannot_be_written_fails_alone_in_its_group(
    knowledge: KnowledgeStore, locks: LocalLocks
) -> None:
    outcomes: dict[int, str] = {}

    def writer(n: int) -> None:
        extra = {"bad": object()} if n == 2 else {}
        try:
            outcomes[n] = knowledge.swarm.add(NewLesson(lesson(500 + n), extra=extra)).outcome
        except TypeError:
            outcomes[n] = "error"

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    with queued_behind_lock(knowledge, locks, 4):  # the bad one queues too (prepared in the group)
        for thread in threads:
            thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes == {0: "added", 1: "added", 2: "error", 3: "added"}
    stored = sorted(e.lesson for e in knowledge.swarm.read().entries)
    assert stored == sorted(lesson(500 + n) for n in (0, 1, 3))


class LapsingLocks:
    """Same-host locks whose leases lapse after their first commit: a hold that goes on to a
    second group must have that group refused."""

    def __init__(self, inner: LocalLocks) -> None:
        self.inner = inner

    @contextmanager
    def hold(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
        with self.inner.hold(resource, timeout=timeout) as lease:
            validated = [0]

            class Lapsing:
                resource = lease.resource
                fencing_token = lease.fencing_token

                def validate(self, recorded: int) -> int:
                    validated[0] += 1
                    if validated[0] > 1:
                        raise FencedOff("lease lapsed mid-hold (test)")
                    return lease.validate(recorded)

                def confirm(self) -> None:
                    lease.confirm()

            yield Lapsing()


def test_a_lease_lost_mid_hold_fails_the_next_group_and_ends_the_hold(
    tmp_path: Path, make_knowledge: Callable[..., KnowledgeStore]
) -> None:
    base = make_knowledge(swarm_max_entries=None)
    knowledge = KnowledgeStore(
        base.swarm.files.root,
        locks=LapsingLocks(LocalLocks(tmp_path / "lapsing")),
        config=base.config,
        data_dir=tmp_path / "data",
        project_name="proj",
    )
    acked: dict[str, tuple[int, int]] = {}
    added: list[str] = []
    refused: list[str] = []

    def writer(w: int) -> None:
        for n in range(w, 96, 8):
            text = lesson(600 + n)
            try:
                result = knowledge.swarm.add(NewLesson(text), phase=1)
            except FencedOff:
                refused.append(text)
                continue
            assert result.order is not None
            acked[text] = result.order
            if result.outcome == "added":  # else a near-duplicate of an acknowledged add
                added.append(text)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(acked) + len(refused) == 96
    assert refused, "no hold went on to a second group"
    stored = [e.lesson for e in knowledge.swarm.read().entries]
    assert sorted(stored) == sorted(added)  # every acknowledged add, nothing refused
    assert len(set(acked.values())) == len(acked)  # (token, position) orders are distinct
