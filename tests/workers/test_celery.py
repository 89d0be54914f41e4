"""Real Celery workers on real Redis: routing, dead letters, gated tasks, the single beat."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from celery import Celery

from swarmq.coord import keys
from swarmq.roster.loader import load_roster
from swarmq.storage.jsonl import read_jsonl
from swarmq.workers.app import create_app
from swarmq.workers.config import route_task, visibility_timeout
from tests.support import WorkerProcess, client_app, worker_env, write_roster

SAMPLE = "tests.workers.sample_tasks"


def test_config_is_reliable_by_default(roster_file: Path) -> None:
    roster = load_roster(roster_file, env={})
    app = create_app(roster)
    conf = app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.accept_content == ["json"] and conf.task_serializer == "json"
    assert conf.enable_utc and conf.timezone == "UTC"
    assert (
        conf.worker_send_task_events
        and not conf.worker_cancel_long_running_tasks_on_connection_loss
    )
    assert conf.broker_connection_max_retries is None and conf.broker_channel_error_retry
    vt = conf.broker_transport_options["visibility_timeout"]
    short = max(v.time_limit_seconds for k, v in roster.tasks.limits.items() if k != "missions")
    assert vt == visibility_timeout(roster) > short + roster.tasks.retry_backoff_max_seconds
    # missions (hours) rely on claims, heartbeats and the reaper, not on the transport's window
    assert vt < roster.tasks.limits["missions"].time_limit_seconds
    names = {q.name for q in conf.task_queues}
    assert {
        "curator",
        "skills",
        "forge",
        "consolidation",
        "maturity",
        "missions",
        "worker.w1",
        "dead_letter",
    } <= names
    assert route_task("consolidation.nightly", (), {}, {}) == {
        "queue": "consolidation",
        "routing_key": "consolidation",
    }
    assert route_task("ops.ping", (), {}, {}) is None


@pytest.fixture
def two_worker_roster(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> Path:
    return write_roster(
        tmp_path,
        swarm_name,
        redis_url,
        workers=[
            {"id": "w1", "role": "builder", "queues": ["missions", "forge"]},
            {"id": "w2", "role": "curator", "queues": ["maturity", "curator"]},
        ],
        tasks={"max_deliveries": 2},
    )


def test_direct_and_family_routing_reach_the_right_worker(two_worker_roster: Path) -> None:
    app = client_app(two_worker_roster)
    json_logs = {"SWARMQ_LOG_FORMAT": "json"}
    workers = [
        WorkerProcess(two_worker_roster, w, extra_tasks=[SAMPLE], pool="solo", env=json_logs).start(
            app
        )
        for w in ("w1", "w2")
    ]
    try:
        direct = [app.send_task("ops.ping", queue="worker.w1") for _ in range(5)]
        assert {r.get(timeout=20)["worker_id"] for r in direct} == {"w1"}
        lines = [json.loads(line) for line in workers[0].log().splitlines() if line.startswith("{")]
        task_lines = [line for line in lines if line.get("task_id") == direct[0].id]
        assert task_lines and all(line["worker_id"] == "w1" for line in task_lines)
        assert any(line["message"].startswith("start ops.ping") for line in task_lines)
        family = [app.send_task("maturity.echo", args=[i]) for i in range(5)]  # routed by name
        answers = [r.get(timeout=20) for r in family]
        assert {a["worker_id"] for a in answers} == {"w2"} and [
            a["value"] for a in answers
        ] == list(range(5))
        # Bounded Redis: a finished run leaves no attempt counter; a result nobody asked for
        # (ignore_result at send) is never stored; a read result can be forgotten.
        redis_client = redis.Redis.from_url(app.conf.broker_url)
        assert all(
            not redis_client.exists(keys.attempts(app.swarmq_roster().swarm, r.id))
            for r in [*direct, *family]
        )
        quiet = app.send_task("maturity.echo", args=[99], ignore_result=True)
        read = app.send_task("maturity.echo", args=[98])
        assert read.get(timeout=20)["value"] == 98
        read.forget()
        prefix = keys.prefix(app.swarmq_roster().swarm)
        assert redis_client.exists(f"{prefix}celery-task-meta-{quiet.id}") == 0
        assert redis_client.exists(f"{prefix}celery-task-meta-{read.id}") == 0
        assert 0 < redis_client.ttl(f"{prefix}celery-task-meta-{family[0].id}") <= 3600
        redis_client.close()
    finally:
        for w in workers:
            w.stop()
        app.close()


def test_a_poison_message_lands_in_the_dead_letter_queue(
    two_worker_roster: Path, redis_client: redis.Redis, swarm_name: str
) -> None:
    app = client_app(two_worker_roster)
    worker = WorkerProcess(two_worker_roster, "w1", extra_tasks=[SAMPLE], pool="prefork").start(app)
    try:
        result = app.send_task("ops.suicide", queue="worker.w1")
        with pytest.raises(Exception, match=r"DeadLettered|started 2 times without finishing"):
            result.get(timeout=60)
        roster = load_roster(two_worker_roster, env={})
        records = [
            line.value for line in read_jsonl(roster.runtime_dir / "dead-letter.jsonl").lines
        ]
        assert len(records) == 1
        assert records[0]["task"] == "ops.suicide" and records[0]["task_id"] == result.id
        assert records[0]["deliveries"] == 2 and records[0]["queue"] == "worker.w1"
        parked = redis_client.lrange(keys.prefix(swarm_name) + "dead_letter", 0, -1)
        assert len(parked) == 1
        message = json.loads(parked[0])
        assert message["headers"]["task"] == "ops.suicide"
        assert message["headers"]["x-swarmq-dead-letter"]["deliveries"] == 2
        assert not redis_client.exists(keys.attempts(swarm_name, result.id))  # cleared when parked
    finally:
        worker.stop()
        app.close()


def test_quota_gated_store_locked_task(two_worker_roster: Path, tmp_path: Path) -> None:
    app = client_app(two_worker_roster)
    workers = [
        WorkerProcess(two_worker_roster, w, extra_tasks=[SAMPLE], concurrency=2).start(app)
        for w in ("w1", "w2")
    ]
    target = tmp_path / "log.jsonl"
    try:
        redis.Redis.from_url(load_roster(two_worker_roster, env={}).redis_url).script_flush()
        # Declarative and ad hoc tasks share the quota and the lock; the first ones run on an
        # empty script cache (the pipelined prelude falls back and reloads).
        results = [
            app.send_task(
                "ops.gated_append" if i % 3 else "ops.adhoc_append",
                args=[str(target), i],
                queue=f"worker.w{1 + i % 2}",
            )
            for i in range(40)
        ]
        outcomes = []
        for r in results:
            try:
                outcomes.append(r.get(timeout=60))
            except Exception as exc:
                outcomes.append(f"{type(exc).__name__}: {exc}")
        used = sorted(o for o in outcomes if isinstance(o, int))
        assert used == list(range(1, 31))  # enrichment: 30 a day, never 31
        refusals = [o for o in outcomes if isinstance(o, str)]
        assert len(refusals) == 10 and all("exhausted" in o for o in refusals), refusals
        lines = read_jsonl(target)
        assert lines.corrupt == [] and len(lines.lines) == 30
    finally:
        for w in workers:
            w.stop()
        app.close()


def test_exactly_one_beat(
    roster_file: Path, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    env = worker_env(roster_file, "beat")
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "swarmq.workers.app",
        "beat",
        "-s",
        str(tmp_path / "sched"),
        "-l",
        "INFO",
    ]
    first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while redis_client.get(keys.beat_lock(swarm_name)) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert redis_client.get(keys.beat_lock(swarm_name)) is not None
        holder = redis_client.get(keys.beat_lock(swarm_name))
        log = tmp_path / "beat2.log"
        with log.open("ab") as out:
            second = subprocess.Popen(
                [*argv[:-4], "-s", str(tmp_path / "sched2"), "-l", "INFO"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while (
            "standby; another beat holds the lease" not in log.read_text()
            and time.monotonic() < deadline
        ):
            assert second.poll() is None, log.read_text()  # a standby waits, it does not exit
            time.sleep(0.2)
        assert "standby; another beat holds the lease" in log.read_text()
        assert redis_client.get(keys.beat_lock(swarm_name)) == holder
        second.terminate()
        second.wait(timeout=20)
    finally:
        first.terminate()
        first.wait(timeout=20)
    assert redis_client.get(keys.beat_lock(swarm_name)) is None  # released on a clean stop


def test_celery_client_app_is_lazy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Importing the app reads no roster: a broken swarm.yaml only fails when config is needed."""
    monkeypatch.setenv("SWARMQ_CONFIG", str(tmp_path / "missing.yaml"))
    code = "import swarmq.workers.app as m; print(type(m.app).__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "Celery"


_ = (Celery, Callable)
