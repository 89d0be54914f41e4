"""Fixtures for the knowledge store: real files under tmp_path, same-host locks, fixed clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks


class Clock:
    """A settable clock so timestamps in assertions are exact."""

    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def locks(tmp_path: Path) -> LocalLocks:
    return LocalLocks(tmp_path / "locks")


@pytest.fixture
def make_knowledge(
    tmp_path: Path, locks: LocalLocks, clock: Clock
) -> Iterator[Callable[..., KnowledgeStore]]:
    def make(**config: object) -> KnowledgeStore:
        return KnowledgeStore(
            tmp_path / "project" / ".swarm",
            locks=locks,
            config=KnowledgeConfig(**config),  # type: ignore[arg-type]
            data_dir=tmp_path / "data",
            project_name="proj",
            clock=clock,
        )

    yield make


@pytest.fixture
def knowledge(make_knowledge: Callable[..., KnowledgeStore]) -> KnowledgeStore:
    return make_knowledge()
