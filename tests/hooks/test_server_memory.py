"""The hook server hands the heap memory its requests freed back between requests
(``HookService.release_memory``, :mod:`swarmq.hooks._freed`), once per quiet spell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import redis

from swarmq.hooks import _freed, server
from swarmq.hooks.server import HookService
from tests.support import write_roster


@pytest.fixture
def roster_file(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    return write_roster(tmp_path, swarm_name, redis_url)


def test_freed_memory_is_handed_back_once_after_requests_and_never_during_one(
    roster_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[int] = []
    monkeypatch.setattr(server, "release_freed", lambda: released.append(1) or True)
    service = HookService(roster_file)
    assert not service.release_memory(), "nothing was asked yet"
    assert service.answer({"op": "ping"})["ok"]
    service.busy += 1  # a request being answered
    assert not service.release_memory()
    service.busy -= 1
    assert service.release_memory()
    assert not service.release_memory(), "no request since the last release"
    assert service.answer({"op": "ping"})["ok"]
    assert service.release_memory()
    assert released == [1, 1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_the_c_heap_is_trimmed_where_glibc_is_the_c_library() -> None:
    assert _freed.release_freed() is (_freed._malloc_trim() is not None)
