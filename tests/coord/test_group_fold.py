"""Group commit on real Redis locks, the folded confirmation: a group written while the next one
is already queued is confirmed by that group's validation, not by a round trip of its own, and
is acknowledged only once that validation (or, when it fails, a last confirmation) succeeds."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord.locks import RedisLocks
from swarmq.knowledge._group import group_for
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.storage.locking import CommitUnconfirmed, FencedOff, Lease

FIRST = "Always pin the pytest client version 7919 before the build step"
SECOND = "Never run the docker daemon as root on shared ci runners in production"


class Recorded:
    """A Redis lease that logs its calls. Its first validation (the first group's write) lets a
    second add queue behind the leader first; with ``steal`` set, the lock is taken over right
    before the second validation, i.e. between the first group's write and the next group's."""

    def __init__(self, lease: Lease, queue_second: Any, steal: Any) -> None:
        self.lease = lease
        self.calls: list[str] = []
        self._queue_second, self._steal = queue_second, steal

    def __getattr__(self, name: str) -> Any:  # resource, fencing_token
        return getattr(self.lease, name)

    def validate(self, recorded: int) -> int:
        self.calls.append("validate")
        if len(self.calls) == 1:
            self._queue_second()
        elif self._steal is not None:
            self._steal(self.resource)
        return self.lease.validate(recorded)

    def confirm(self) -> None:
        self.calls.append("confirm")
        self.lease.confirm()

    def start_confirm(self) -> Any:  # the confirmation overlapping the append's fsync
        self.calls.append("confirm")
        return self.lease.start_confirm()  # type: ignore[attr-defined]


def two_groups(
    tmp_path: Path, redis_client: redis.Redis, swarm_name: str, *, steal: bool
) -> tuple[dict[str, Any], list[str], KnowledgeStore]:
    """Add FIRST alone (its writer leads); SECOND queues while FIRST is being written."""
    inner = RedisLocks(redis_client, swarm_name, lease_seconds=5)
    answers: dict[str, Any] = {}
    leases: list[Recorded] = []
    knowledge: KnowledgeStore

    def add(text: str) -> None:
        try:
            answers[text] = knowledge.swarm.add(NewLesson(text), phase=1)
        except Exception as exc:
            answers[text] = exc

    second = threading.Thread(target=add, args=(SECOND,))

    def queue_second() -> None:
        second.start()
        group = group_for(knowledge.swarm.tier_file.mirror)
        deadline = time.monotonic() + 30
        while not group._queue and time.monotonic() < deadline:
            time.sleep(0.001)
        assert group._queue, "the second add did not queue behind the leader"

    def take_over(resource: str) -> None:
        redis_client.set(keys.lock(swarm_name, resource), "another", px=5000)

    class Locks:
        @contextmanager
        def hold(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
            with inner.hold(resource, timeout=timeout) as lease:
                leases.append(Recorded(lease, queue_second, take_over if steal else None))
                yield leases[-1]

    config = KnowledgeConfig(hive_enabled=False)
    knowledge = KnowledgeStore(tmp_path / ".swarm", locks=Locks(), config=config, data_dir=tmp_path)
    first = threading.Thread(target=add, args=(FIRST,))
    first.start()
    first.join(timeout=60)
    second.join(timeout=60)
    assert len(leases) == 1, "both groups ran in one lock hold"
    return answers, leases[0].calls, knowledge


@pytest.mark.usefixtures("long_hold")
def test_the_next_groups_validation_confirms_the_written_group(
    tmp_path: Path, redis_client: redis.Redis, swarm_name: str
) -> None:
    answers, calls, knowledge = two_groups(tmp_path, redis_client, swarm_name, steal=False)
    assert calls == ["validate", "validate", "confirm"]  # one confirmation for two groups
    first, second = answers[FIRST], answers[SECOND]
    assert (first.outcome, second.outcome) == ("added", "added")
    assert first.order[0] == second.order[0] and first.order[1] < second.order[1]
    assert [e.lesson for e in knowledge.swarm.read().entries] == [FIRST, SECOND]


@pytest.mark.usefixtures("long_hold")
def test_a_lease_lost_before_the_next_validation_fails_the_written_group(
    tmp_path: Path, redis_client: redis.Redis, swarm_name: str
) -> None:
    """Lost between the first group's write and the second group's validation: the second is
    refused (nothing written), the first was written but is never acknowledged: its callers
    get CommitUnconfirmed after one last confirmation, as from a failed confirmation."""
    answers, calls, knowledge = two_groups(tmp_path, redis_client, swarm_name, steal=True)
    assert calls == ["validate", "validate", "confirm"]
    assert isinstance(answers[SECOND], FencedOff)
    assert isinstance(answers[FIRST], CommitUnconfirmed)
    assert [e.lesson for e in knowledge.swarm.read().entries] == [FIRST]  # on disk, as today


def test_an_append_is_confirmed_while_its_fsync_runs(
    tmp_path: Path, redis_client: redis.Redis, swarm_name: str, monkeypatch: Any
) -> None:
    """append_lines sends the confirmation once its lines are in the file and reads the answer
    after the fsync: a lock taken over before that send fails the append (CommitUnconfirmed, the
    lines on disk as after any failed confirmation); a failed fsync fails it even when the lease
    held; either way the pooled connection is left clean for the next command."""
    import os

    from swarmq.storage.atomic import append_lines
    from swarmq.storage.locking import file_resource

    path = tmp_path / "log.jsonl"
    locks = RedisLocks(redis_client, swarm_name, lease_seconds=5)
    resource = file_resource(path)
    order: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        order.append("fsync")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with locks.hold(resource) as lease:
        start = lease.start_confirm  # type: ignore[attr-defined]

        def logged() -> Any:
            if order and order[-1] == "steal":  # taken over between the fence check and now
                redis_client.set(keys.lock(swarm_name, resource), "another", px=5000)
            order.append("confirm sent")
            return start()

        lease.start_confirm = logged  # type: ignore[attr-defined]
        append_lines(path, ["one"], lease=lease)
        assert order == ["confirm sent", "fsync"]
        assert redis_client.ping() is True  # the confirmation's answer was read, not left over

        def failing_fsync(fd: int) -> None:
            raise OSError("disk gone (test)")

        monkeypatch.setattr(os, "fsync", failing_fsync)
        with pytest.raises(OSError, match="disk gone"):
            append_lines(path, ["two"], lease=lease)
        assert redis_client.ping() is True  # not the GET's answer, left unread
        monkeypatch.setattr(os, "fsync", real_fsync)

        order.append("steal")
        with pytest.raises(CommitUnconfirmed):
            append_lines(path, ["three"], lease=lease)
    # "two" failed (its fsync): it is cut back, never left for a reader; "three" landed but
    # was not confirmed (CommitUnconfirmed says it may be overwritten): it stays
    assert path.read_text().splitlines() == ["one", "three"]
