"""A process whose clock is two days off, a crashed process and a Redis key loss: the day's
total never exceeds the quota (issue 31 item 5).

Skewed processes run under real faketime (the whole process's clock, as a broken host's) when
it is installed, else with the gate's clock shifted. Each run: a process starts 6 of 10 calls
and crashes before its write-behind mirror lands; processes two days ahead and behind try to
spend; Redis loses every key; a healthy process then spends what the day still grants.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tests.chaos.quota_spender import MAX
from tests.coord.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
TWO_DAYS = 2 * 86_400
FAKETIME = shutil.which("faketime")


def _spend(
    url: str, mirror: Path, calls: int, mode: str, *, offset: int = 0, skew: float = 86_400
) -> str:
    command = [sys.executable, "-m", "tests.chaos.quota_spender", url, str(mirror), str(calls)]
    command.append(mode)
    env = dict(os.environ)
    if offset and FAKETIME:
        command = [FAKETIME, "-f", f"{offset:+d}s", *command, "0", str(skew)]
        env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
    else:
        command += [str(offset), str(skew)]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> RedisServer:
    with RedisServer(tmp_path_factory.mktemp("redis")) as running:
        yield running


@pytest.mark.parametrize("offset", [TWO_DAYS, -TWO_DAYS], ids=["ahead", "behind"])
@pytest.mark.parametrize("skew_bound", [86_400.0, 3 * 86_400.0], ids=["refused", "tolerated"])
def test_a_skewed_clock_then_a_key_loss_never_exceeds_the_day(
    server: RedisServer, tmp_path: Path, offset: int, skew_bound: float
) -> None:
    client = redis.Redis.from_url(server.url)
    client.flushall()
    mirror = tmp_path / "swarm"
    mirror.mkdir()
    total = int(_spend(server.url, mirror, 6, "crash"))
    assert total == 6
    skewed = _spend(server.url, mirror, 2, "exit", offset=offset, skew=skew_bound)
    if skew_bound < abs(offset):
        assert skewed == "refused"  # the bound: a clock two days off reserves nothing
    else:
        total += int(skewed)  # tolerated: it spends in the day Redis's clock is in
        assert int(skewed) == 2
    assert _spend(server.url, mirror, 1, "exit", offset=-offset, skew=skew_bound) in (
        "refused",
        "1",
    )
    total += 0 if skew_bound < abs(offset) else 1
    client.flushall()  # Redis loses every key: the day is re-seeded from disk
    total += int(_spend(server.url, mirror, 2 * MAX, "exit"))
    assert total == MAX
