"""The quota gate against a real Redis: exact counts under contention, leases, windows, recovery."""

from __future__ import annotations

import json
import multiprocessing as mp
import threading
import time
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import redis

from swarmq.coord import keys
from swarmq.coord._windows import day_start, window_for
from swarmq.coord.quota import QuotaGate
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_types import LeaseLost, QuotaExhausted, QuotaUnavailable
from tests.coord.redis_server import RedisServer


def make_gate(
    client: redis.Redis, swarm: str, mirror: Path | None, **quotas: QuotaConfig
) -> QuotaGate:
    return QuotaGate(
        client,
        swarm,
        quotas or {"enrichment": QuotaConfig(max_calls_per_day=30)},
        mirror_dir=mirror,
    )


def _contender(url: str, swarm: str, mirror: str, threads: int, go: object, out: object) -> None:
    client = redis.Redis.from_url(url)
    gate = QuotaGate(
        client, swarm, {"enrichment": QuotaConfig(max_calls_per_day=30)}, mirror_dir=Path(mirror)
    )
    started: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        go.wait()  # type: ignore[attr-defined]
        try:
            with gate.slot("enrichment") as slot:
                slot.start()
                with lock:
                    started.append(1)
        except QuotaExhausted:
            pass

    pool = [threading.Thread(target=one) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    gate.flush_mirror()
    out.put(len(started))  # type: ignore[attr-defined]


def test_64_concurrent_reservers_in_4_processes_get_exactly_30(
    redis_url: str, swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_contender, args=(redis_url, swarm_name, str(tmp_path), 16, go, out))
        for _ in range(4)
    ]
    for p in procs:
        p.start()
    time.sleep(0.5)
    go.set()
    total = sum(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=30)
    assert total == 30
    gate = make_gate(redis_client, swarm_name, tmp_path)
    status = gate.status("enrichment")
    assert (status.used, status.held, status.remaining) == (30, 0, 0)
    mirrored = json.loads((tmp_path / "knowledge-enrichment-quota.json").read_text())
    assert (
        mirrored["calls_used"] == 30 and mirrored["max_calls"] == 30 and mirrored["window"] == "utc"
    )
    assert list(mirrored) == ["date", "calls_used", "max_calls", "last_run_at", "window"]
    with pytest.raises(QuotaExhausted, match="used=30 held=0 max=30"):
        gate.reserve("enrichment")


def test_release_returns_a_slot_and_is_idempotent(
    redis_client: redis.Redis, swarm_name: str
) -> None:
    gate = make_gate(redis_client, swarm_name, None, enrichment=QuotaConfig(max_calls_per_day=2))
    first, second = gate.reserve("enrichment"), gate.reserve("enrichment")
    with pytest.raises(QuotaExhausted):
        gate.reserve("enrichment")
    assert gate.release(first) is True
    assert gate.release(first) is False
    third = gate.reserve("enrichment")
    assert gate.start(second) == 1
    assert gate.release(second) is False  # a started slot is never refunded
    assert gate.status("enrichment").used == 1
    gate.start(third)
    with pytest.raises(QuotaExhausted):
        gate.reserve("enrichment")


def test_slot_context_releases_unless_started(redis_client: redis.Redis, swarm_name: str) -> None:
    gate = make_gate(redis_client, swarm_name, None, enrichment=QuotaConfig(max_calls_per_day=1))
    with pytest.raises(RuntimeError), gate.slot("enrichment"):
        raise RuntimeError("inventory failed before any network I/O")
    assert gate.status("enrichment").held == 0
    with pytest.raises(ConnectionError), gate.slot("enrichment") as slot:
        slot.start()
        raise ConnectionError("the LLM call failed after it started")
    assert gate.status("enrichment").used == 1  # consumed: the request went out


def test_an_expired_lease_returns_its_slot(redis_client: redis.Redis, swarm_name: str) -> None:
    cfg = QuotaConfig(max_calls_per_day=1, lease_seconds=0.3)
    gate = make_gate(redis_client, swarm_name, None, enrichment=cfg)
    stale = gate.reserve("enrichment")
    with pytest.raises(QuotaExhausted):
        gate.reserve("enrichment")
    time.sleep(0.4)
    fresh = gate.reserve("enrichment")  # the dead holder's slot came back
    with pytest.raises(LeaseLost, match=r"lease expired|no longer held"):
        gate.start(stale)
    assert gate.start(fresh) == 1


def test_renew_extends_a_lease(redis_client: redis.Redis, swarm_name: str) -> None:
    gate = make_gate(
        redis_client,
        swarm_name,
        None,
        enrichment=QuotaConfig(max_calls_per_day=1, lease_seconds=0.4),
    )
    held = gate.reserve("enrichment")
    for _ in range(3):
        time.sleep(0.2)
        held = gate.renew(held)
    assert gate.start(held) == 1


def _offset_with_midnight_in(seconds: float) -> timezone:
    """A fixed-offset zone whose local midnight comes ``seconds`` from now (whole seconds)."""
    now = datetime.now(UTC)
    since_midnight = now.hour * 3600 + now.minute * 60 + now.second + now.microsecond / 1e6
    offset = round(86_400 - seconds - since_midnight)
    if offset > 43_200:
        offset -= 86_400
    return timezone(timedelta(seconds=offset))


def test_a_start_just_after_midnight_counts_where_it_was_reserved(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    zone = _offset_with_midnight_in(2.5)
    cfg = QuotaConfig(max_calls_per_day=1, window="local")
    gate = QuotaGate(redis_client, swarm_name, {"q": cfg}, mirror_dir=tmp_path, zones={"q": zone})
    before = gate.reserve("q")
    today = before.window.key
    with pytest.raises(QuotaExhausted):
        gate.reserve("q")
    time.sleep(max(0.0, before.window.end_ms / 1000 - time.time() + 0.3))  # cross local midnight
    assert gate.start(before) == 1
    assert int(redis_client.get(keys.quota_used(swarm_name, "q", today)) or 0) == 1
    after = gate.reserve("q")  # a new day: a fresh budget
    assert after.window.key == (date.fromisoformat(today) + timedelta(days=1)).isoformat()
    assert gate.start(after) == 1
    assert gate.status("q").window == after.window.key
    gate.flush_mirror()
    mirrored = json.loads((tmp_path / "q-quota.json").read_text())
    assert mirrored["date"] == after.window.key and mirrored["window"] == "local"


def test_dst_days_have_their_real_length() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    spring = window_for(date(2026, 3, 29), berlin)
    autumn = window_for(date(2026, 10, 25), berlin)
    plain = window_for(date(2026, 6, 1), berlin)
    assert (spring.end_ms - spring.start_ms) / 3_600_000 == 23
    assert (autumn.end_ms - autumn.start_ms) / 3_600_000 == 25
    assert (plain.end_ms - plain.start_ms) / 3_600_000 == 24
    assert spring.resets_at == datetime(2026, 3, 29, 22, 0, tzinfo=UTC)


def test_a_day_whose_midnight_does_not_exist_starts_at_the_transition() -> None:
    santiago = ZoneInfo("America/Santiago")  # clocks jump 00:00 → 01:00 in September
    odd = [
        d
        for d in (date(2026, 1, 1) + timedelta(days=i) for i in range(366))
        if (window_for(d, santiago).end_ms - window_for(d, santiago).start_ms) != 86_400_000
    ]
    assert len(odd) == 2
    for day in odd:
        start = day_start(day, santiago).astimezone(santiago)
        assert start.date() == day
        before = (day_start(day, santiago) - timedelta(microseconds=1)).astimezone(santiago)
        assert before.date() == day - timedelta(days=1)
    gap_day = next(d for d in odd if d.month == 9)
    assert day_start(gap_day, santiago).astimezone(santiago).hour == 1


def test_redis_flushed_mid_day_reseeds_from_the_file(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    gate = make_gate(
        redis_client, swarm_name, tmp_path, enrichment=QuotaConfig(max_calls_per_day=6)
    )
    for _ in range(5):
        with gate.slot("enrichment") as slot:
            slot.start()
    # Redis loses every key of this swarm (a restart without persistence, a FLUSHDB).
    redis_client.delete(*redis_client.scan_iter(match=f"{keys.prefix(swarm_name)}*"))
    assert gate.status("enrichment").used == 5  # read from the file while Redis is empty
    with gate.slot("enrichment") as slot:
        assert slot.start() == 6
    with pytest.raises(QuotaExhausted, match="used=6"):
        gate.reserve("enrichment")


def test_mirror_never_moves_backwards(tmp_path: Path) -> None:
    from swarmq.coord.quota_file import read_quota_file, record_usage

    path = tmp_path / "knowledge-enrichment-quota.json"
    record_usage(path, window_key="2026-11-29", window="utc", calls_used=7, max_calls=30)
    record_usage(
        path, window_key="2026-11-29", window="utc", calls_used=5, max_calls=30
    )  # a slow writer
    state = read_quota_file(path)
    assert state is not None and state.calls_used == 7
    record_usage(path, window_key="2026-11-30", window="utc", calls_used=1, max_calls=30)
    state = read_quota_file(path)
    assert state is not None and (state.date, state.calls_used) == ("2026-11-30", 1)


def test_redis_stopped_fails_closed_naming_the_url(tmp_path: Path, swarm_name: str) -> None:
    with RedisServer(tmp_path) as server:
        client = redis.Redis.from_url(server.url, socket_timeout=1, socket_connect_timeout=1)
        gate = make_gate(client, swarm_name, tmp_path, enrichment=QuotaConfig(max_calls_per_day=3))
        gate.url = server.url
        held = gate.reserve("enrichment")
    with pytest.raises(
        QuotaUnavailable, match=rf"Redis at {server.url} is unreachable.*failing closed"
    ):
        gate.reserve("enrichment")
    with pytest.raises(QuotaUnavailable):
        gate.start(held)


def test_unknown_quota_is_named(redis_client: redis.Redis, swarm_name: str) -> None:
    gate = make_gate(redis_client, swarm_name, None)
    with pytest.raises(Exception, match="unknown quota 'enrichmnt'; configured quotas: enrichment"):
        gate.reserve("enrichmnt")


def test_redis_time_decides_the_window_when_the_host_clock_is_wrong(
    redis_client: redis.Redis, swarm_name: str
) -> None:
    zone = _offset_with_midnight_in(3600)  # local midnight in an hour
    fast = lambda: datetime.now(UTC) + timedelta(hours=2)  # noqa: E731 - this host's clock runs 2 h fast
    cfg = QuotaConfig(max_calls_per_day=5, window="local")
    gate = QuotaGate(redis_client, swarm_name, {"q": cfg}, zones={"q": zone}, clock=fast)
    today = datetime.now(UTC).astimezone(zone).date().isoformat()
    first = gate.reserve("q")
    assert first.window.key == today  # not the host's "tomorrow"
    assert gate.start(first) == 1
    second = gate.reserve("q")  # the offset is remembered: straight to the right window
    assert second.window.key == today
    assert gate.status("q").window == today


def test_a_clock_a_day_off_is_refused(redis_client: redis.Redis, swarm_name: str) -> None:
    wrong = lambda: datetime.now(UTC) + timedelta(days=3)  # noqa: E731
    gate = QuotaGate(redis_client, swarm_name, {"q": QuotaConfig(max_calls_per_day=5)}, clock=wrong)
    with pytest.raises(QuotaUnavailable, match="max_clock_skew_seconds: 86400"):
        gate.reserve("q")


def test_an_overdue_lease_keeps_its_slot_until_someone_needs_it(
    redis_client: redis.Redis, swarm_name: str
) -> None:
    cfg = QuotaConfig(max_calls_per_day=2, lease_seconds=0.2)
    gate = make_gate(redis_client, swarm_name, None, enrichment=cfg)
    slow = gate.reserve("enrichment")
    time.sleep(0.3)
    other = gate.reserve("enrichment")  # room left: nothing is purged
    assert gate.start(slow) == 1  # overdue but never given away, so still its own
    assert gate.start(other) == 2
    with pytest.raises(QuotaExhausted, match="used=2 held=0 max=2"):
        gate.reserve("enrichment")


def test_start_journal_counts_distinct_started_tokens_across_processes(tmp_path: Path) -> None:
    from swarmq.coord.quota_file import StartJournal

    journal = StartJournal(tmp_path)
    for token in ("a" * 24, "b" * 24, "c" * 24):
        journal.started("enrichment", "2026-11-30", token)
    journal.refused("enrichment", "2026-11-30", "c" * 24)  # Redis said no: not a call
    journal.started("enrichment", "2026-11-29", "d" * 24)
    other = tmp_path / "enrichment.2026-11-30.otherhost-1.log"  # another process, a torn last line
    other.write_text(f"s {'a' * 24}\ns {'e' * 24}\ns eee")
    assert journal.count("enrichment", "2026-11-30") == 3  # a, b, e
    journal.started("skill_improver", "2026-11-01", "g" * 24)  # another quota's: not touched
    assert journal.prune("enrichment", before="2026-11-30") == 1
    assert journal.count("skill_improver", "2026-11-01") == 1
    assert journal.count("enrichment", "2026-11-29") == 0
    journal.started("enrichment", "2026-11-30", "f" * 24)  # still appends after a prune
    assert journal.count("enrichment", "2026-11-30") == 4


def test_a_late_mirror_write_of_an_earlier_day_keeps_the_later_days_count(tmp_path: Path) -> None:
    from swarmq.coord.quota_file import read_quota_file, record_usage

    path = tmp_path / "q-quota.json"
    record_usage(path, window_key="2026-12-03", window="utc", calls_used=8, max_calls=10)
    record_usage(path, window_key="2026-12-02", window="utc", calls_used=3, max_calls=10)
    state = read_quota_file(path)
    assert state is not None and (state.date, state.calls_used) == ("2026-12-03", 8)
