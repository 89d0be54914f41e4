"""Reading commands ask Redis for nothing until they write: a pure read neither imports the
Redis client nor connects, and a read that records (receipts, citations) connects at its first
write, which an unreachable Redis refuses (exit 3, nothing written, the URL named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from swarmq.cli.errors import EXIT_REFUSED
from tests.cli.fresh_reads import FAILURE, TASK, add_lessons, fresh_swarmq
from tests.coord.redis_server import free_port
from tests.support import write_roster

PURE_READS = (
    ("knowledge", "search", TASK),
    ("knowledge", "inject", "--preview", TASK),
    ("knowledge", "recall", "--preview", "--error", FAILURE),
    ("knowledge", "list"),
    ("knowledge", "show", "no-such-id"),  # exits 1 (no such entry), still a pure read
    ("lookup", "--no-cite", TASK),
    ("lookup", TASK),  # no .agents/: nothing to cite
)


CLIENTS = frozenset({"redis", "kombu", "celery"})


def swarmq(tmp_path: Path, roster: Path, *args: str) -> tuple[int, str, str, set[str]]:
    """One fresh ``swarmq`` process computing its own answer: status, stdout, stderr and which
    of redis, kombu, celery it imported."""
    ran = fresh_swarmq(tmp_path, roster, *args)
    return ran.returncode, ran.stdout, ran.stderr, set(ran.modules & CLIENTS)


def stored(tmp_path: Path) -> dict[str, bytes]:
    swarm = tmp_path / "project" / ".swarm"
    return {p.name: p.read_bytes() for p in sorted(swarm.glob("*.jsonl"))}


def with_lessons(tmp_path: Path, swarm_name: str, redis_url: str) -> tuple[Path, Path]:
    """The workspace with :data:`LESSONS`, and a roster of it whose Redis does not answer."""
    roster = write_roster(tmp_path, swarm_name, redis_url)
    add_lessons(roster)
    down = tmp_path / "down.yaml"
    down.write_text(
        roster.read_text().replace(redis_url, f"redis://127.0.0.1:{free_port()}/0"),
        encoding="utf-8",
    )
    return roster, down


@pytest.mark.slow  # 15-25 s of real processes: handed out first
def test_a_pure_read_imports_no_redis_and_needs_none(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    roster, down = with_lessons(tmp_path, swarm_name, redis_url)
    before = stored(tmp_path)
    for config in (roster, down):
        for args in PURE_READS:
            code, stdout, stderr, imported = swarmq(tmp_path, config, *args)
            assert code == (1 if args[1] == "show" else 0), (config.name, args, stderr)
            assert not imported, (config.name, args, imported)
            assert "refused" not in stderr and "unreachable" not in stderr, (args, stderr)
            assert "Traceback" not in stderr
            if args[1] in ("search", "inject", "recall"):
                assert stdout.strip(), (config.name, args)  # each finds a lesson
    assert stored(tmp_path) == before  # nothing recorded by a preview, a search or a list


def test_a_recorded_read_connects_at_its_write_and_is_refused_without_redis(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    roster, down = with_lessons(tmp_path, swarm_name, redis_url)
    before = stored(tmp_path)
    for args in (("knowledge", "inject", TASK), ("knowledge", "recall", "--error", FAILURE)):
        code, stdout, stderr, imported = swarmq(tmp_path, down, *args)
        flat = " ".join(stderr.split())
        assert code == EXIT_REFUSED, (args, stdout, stderr)
        assert "127.0.0.1" in flat and "is unreachable" in flat, flat
        assert "nothing was written" in flat and "locks: single-host" in flat, flat
        assert not stdout.strip(), stdout  # no block handed on as if it had been recorded
        assert "Traceback" not in stderr and imported == {"redis"}
    assert stored(tmp_path) == before

    code, stdout, stderr, imported = swarmq(tmp_path, roster, "knowledge", "inject", "--json", TASK)
    assert code == 0, stderr
    assert json.loads(stdout)["shown"] and "redis" in imported  # connected at the write
    after = stored(tmp_path)
    receipts = "knowledge-receipts-v2.jsonl"
    assert len(after[receipts]) > len(before.get(receipts, b"")), "no receipt recorded"
