"""The quota gate while Redis loses every key: during a 64-process burst, and right after a
process started a call and was killed. Never more calls started than the day allows."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest
import redis

from swarmq.coord.quota import QuotaGate
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_types import LeaseLost, QuotaExhausted, QuotaUnavailable
from tests.coord.redis_server import RedisServer

MAX = 30
QUOTAS = {"enrichment": QuotaConfig(max_calls_per_day=MAX)}


def _gate(url: str, mirror: Path) -> QuotaGate:
    return QuotaGate(
        redis.Redis.from_url(url, socket_timeout=5), "chaos", QUOTAS, mirror_dir=mirror
    )


def _burster(url: str, mirror: str, go: object, out: object) -> None:
    """Up to two calls, as fast as the gate allows; reports how many it started."""
    gate = _gate(url, Path(mirror))
    go.wait()  # type: ignore[attr-defined]
    started = 0
    for _ in range(6):
        try:
            with gate.slot("enrichment") as slot:
                slot.start()
                started += 1
        except QuotaExhausted:
            break
        except (LeaseLost, QuotaUnavailable):
            continue  # the wipe took our reservation: try again
        if started == 2:
            break
    out.put(started)  # type: ignore[attr-defined]


def _context() -> mp.context.BaseContext:
    """Children forked from a fresh server process that has imported the gate: cheap like fork,
    but without the test process's threads (a fork of those can deadlock on a held lock)."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


@pytest.fixture
def server(tmp_path: Path) -> RedisServer:
    with RedisServer(tmp_path) as running:
        yield running


def test_flushall_during_a_64_process_burst_never_overspends(
    server: RedisServer, tmp_path: Path
) -> None:
    ctx = _context()
    client = redis.Redis.from_url(server.url)
    totals = []
    for run in range(5):
        mirror = tmp_path / f"run{run}"
        mirror.mkdir()
        client.flushall()
        go, out = ctx.Event(), ctx.Queue()
        procs = [
            ctx.Process(target=_burster, args=(server.url, str(mirror), go, out)) for _ in range(64)
        ]
        for p in procs:
            p.start()
        go.set()
        time.sleep(0.01 * (run + 1))  # mid-burst, at a different moment each run
        client.flushall()
        total = sum(out.get(timeout=120) for _ in procs)
        for p in procs:
            p.join(timeout=30)
        totals.append(total)
        # What the day still grants after the burst: nothing beyond the max.
        gate = _gate(server.url, mirror)
        extra = 0
        while True:
            try:
                with gate.slot("enrichment") as slot:
                    slot.start()
                    extra += 1
            except QuotaExhausted:
                break
        # Never more than the day allows. A start in flight at the wipe may be counted by the
        # re-seed and then refused by Redis: one call lost to the day, never one granted twice.
        assert total + extra <= MAX, (run, total, extra)
        assert total + extra >= MAX - 8, (run, total, extra)
    assert all(t <= MAX for t in totals), totals


def _start_then_die(url: str, mirror: str) -> None:
    gate = _gate(url, Path(mirror))
    with gate.slot("enrichment") as slot:
        slot.start()
    os.kill(os.getpid(), signal.SIGKILL)  # before the write-behind mirror had a chance


def test_kill_then_wipe_right_after_start_never_overspends(
    server: RedisServer, tmp_path: Path
) -> None:
    ctx = _context()
    client = redis.Redis.from_url(server.url)
    for run in range(5):
        mirror = tmp_path / f"run{run}"
        mirror.mkdir()
        client.flushall()
        dead = 0
        for _ in range(4):
            proc = ctx.Process(target=_start_then_die, args=(server.url, str(mirror)))
            started = time.monotonic()
            proc.start()
            proc.join(timeout=30)
            assert proc.exitcode == -signal.SIGKILL
            client.flushall()  # within a few ms of the start and the kill
            assert time.monotonic() - started < 5
            dead += 1
        gate = _gate(server.url, mirror)
        granted = 0
        while True:
            try:
                with gate.slot("enrichment") as slot:
                    slot.start()
                    granted += 1
            except QuotaExhausted:
                break
        assert dead + granted == MAX, (run, dead, granted)
