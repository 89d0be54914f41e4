"""The beat scheduler in-process: lease handover and last runs shared through Redis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis

from swarmq.coord import keys
from swarmq.roster.loader import load_roster
from swarmq.storage.clock import iso, parse_iso
from swarmq.workers.app import create_app
from swarmq.workers.beat import SingleBeatScheduler, last_runs_key
from tests.coord.reply_loss import ReplyLoss
from tests.support import write_roster


def test_a_new_holder_adopts_last_runs_and_records_its_own(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    # Due half a day from now: a run 5 minutes ago is the latest, whenever the test runs (a
    # fixed 03:00 made it fail when run in the five minutes after 03:00 UTC).
    due = (datetime.now(UTC) + timedelta(hours=12)).hour
    config = write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        schedule={"nightly": {"task": "maturity.sweep", "cron": f"0 {due} * * *"}},
    )
    app = create_app(load_roster(config, env={}))
    ran_elsewhere = datetime.now(UTC) - timedelta(minutes=5)
    redis_client.hset(last_runs_key(swarm_name), "nightly", iso(ran_elsewhere))
    redis_client.set(keys.beat_lock(swarm_name), "other-host:1:x", ex=60)
    standby = SingleBeatScheduler(app=app, schedule_filename=str(tmp_path / "sched-a"), lazy=False)
    try:
        assert not standby._held  # another beat holds the lease: stand by, do not exit
        assert standby.tick() == standby.poll_seconds
        redis_client.delete(keys.beat_lock(swarm_name))  # the holder died and its lease expired
        standby.tick()
        assert (
            standby._held
            and redis_client.get(keys.beat_lock(swarm_name)).decode() == standby._holder
        )
        entry = standby.schedule["nightly"]
        assert (
            abs((entry.last_run_at - ran_elsewhere).total_seconds()) < 1
        )  # adopted, not re-run now
        standby.apply_entry(entry)
        recorded = parse_iso(redis_client.hget(last_runs_key(swarm_name), "nightly").decode())
        assert recorded > ran_elsewhere
    finally:
        standby.close()
        app.close()
    assert redis_client.get(keys.beat_lock(swarm_name)) is None  # released on close


def test_a_lease_whose_answer_was_lost_is_held_at_once(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    """Before, the beat's next tick found its own lease "held by another beat" and stood by
    for a whole lease (60 s) with no schedule running anywhere."""
    with ReplyLoss() as proxy:
        through = proxy.url(int(redis_url.rsplit("/", 1)[1]))
        app = create_app(load_roster(write_roster(tmp_path, swarm_name, through), env={}))
        redis_client.set(keys.beat_lock(swarm_name), "other-host:1:x", ex=60)
        beat = SingleBeatScheduler(app=app, schedule_filename=str(tmp_path / "sched"), lazy=False)
        try:
            assert not beat._held
            redis_client.delete(keys.beat_lock(swarm_name))
            proxy.arm(b"SET", keys.beat_lock(swarm_name).encode(), beat._holder.encode())
            assert beat.tick() == beat.poll_seconds  # the SET ran; its answer was lost
            assert len(proxy.lost) == 1
            assert redis_client.get(keys.beat_lock(swarm_name)).decode() == beat._holder
            beat.tick()
            assert beat._held
        finally:
            beat.close()
            app.close()
    assert redis_client.get(keys.beat_lock(swarm_name)) is None
