"""swarm.yaml loading: broken files give precise, located errors; good files resolve fully."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.coord.quota_config import QuotaWindow
from swarmq.roster.loader import RosterError, load_report, load_roster

REPO = Path(__file__).resolve().parents[2]

GOOD_WORKER = "workers:\n  - id: w1\n    role: builder\n    queues: [missions]\n"

# (name, file content, substrings the single error must contain — location first)
BROKEN: list[tuple[str, str, list[str]]] = [
    (
        "yaml syntax: unclosed flow sequence",
        "swarm: s\nworkers:\n  - id: a\n    role: [b\n",
        ["YAML syntax", "expected ',' or ']'", "began at line 4, column 11"],
    ),
    (
        "yaml syntax: bad indentation",
        "swarm: s\nworkers:\n  - id: a\n   role: b\n",
        [":4:", "YAML syntax"],
    ),
    (
        "unknown top-level key (typo)",
        "swarm: s\nworkerz: []\n" + GOOD_WORKER,
        [":2:1:", "unknown key 'workerz'", "did you mean 'workers'?"],
    ),
    (
        "unknown worker key (typo)",
        "swarm: s\nworkers:\n  - id: w1\n    role: b\n    queus: [forge]\n",
        [":5:5:", "workers[0](w1).queus", "did you mean 'queues'?"],
    ),
    (
        "worker id escaping a path",
        "swarm: s\nworkers:\n  - id: ../../etc\n    role: b\n",
        [":3:9:", "workers[0](../../etc).id", "'../../etc'", "path tricks"],
    ),
    (
        "concurrency not an integer",
        "swarm: s\nworkers:\n  - id: w1\n    role: b\n    concurrency: two\n",
        [":5:18:", "workers[0](w1).concurrency", "got 'two'", "valid integer"],
    ),
    (
        "negative quota",
        "swarm: s\nquotas:\n  enrichment: {max_calls_per_day: -1}\n" + GOOD_WORKER,
        [":3:", "quotas.enrichment.max_calls_per_day", "got -1", "greater than or equal to 0"],
    ),
    (
        "unknown time zone",
        "swarm: s\nquotas:\n  skill_improver:\n    max_calls_per_day: 3\n    window: local\n"
        "    timezone: Mars/Olympus\n" + GOOD_WORKER,
        [":6:15:", "quotas.skill_improver.timezone", "unknown IANA time zone 'Mars/Olympus'"],
    ),
    (
        "bad window",
        "swarm: s\nquotas:\n  enrichment: {max_calls_per_day: 3, window: weekly}\n" + GOOD_WORKER,
        [":3:", "quotas.enrichment.window", "'weekly'", "'utc' or 'local'"],
    ),
    (
        "crontab out of range",
        "swarm: s\nschedule:\n  maturity.sweep: '99 3 * * *'\n" + GOOD_WORKER,
        [":3:", "schedule['maturity.sweep'].cron", "minute 99 is out of range"],
    ),
    (
        "crontab with four fields",
        "swarm: s\nschedule:\n  maturity.sweep: '0 3 * *'\n" + GOOD_WORKER,
        ["has 4 fields; expected 5"],
    ),
    (
        "duplicate worker id",
        "swarm: s\nworkers:\n  - {id: w1, role: a}\n  - {id: w1, role: b}\n",
        [":4:10:", "workers[1](w1).id", "duplicate worker id 'w1' (first used by workers[0])"],
    ),
    (
        "duplicate mapping key",
        "swarm: s\n" + GOOD_WORKER + "swarm: t\n",
        [":6:1:", "swarm: duplicate key (first defined at line 1)"],
    ),
    (
        "unknown queue",
        "swarm: s\nworkers:\n  - id: w1\n    role: b\n    queues: [forg]\n",
        [":5:14:", "workers[0](w1).queues[0]", "unknown queue 'forg'", "did you mean 'forge'?"],
    ),
    (
        "another worker's direct queue",
        "swarm: s\nworkers:\n  - {id: w1, role: a, queues: [worker.w2]}\n  - {id: w2, role: b}\n",
        ["'worker.w2' is another worker's direct queue"],
    ),
    (
        "consuming the dead letter queue",
        "swarm: s\nworkers:\n  - {id: w1, role: a, queues: [dead_letter]}\n",
        ["no worker may consume it"],
    ),
    (
        "scheduled job nobody consumes",
        "swarm: s\nschedule:\n  consolidation.nightly: '0 3 * * *'\n" + GOOD_WORKER,
        [":3:3:", "goes to queue 'consolidation', which no worker consumes"],
    ),
    (
        "scheduled task outside the job families",
        "swarm: s\nschedule:\n  consolidaton.nightly: '0 3 * * *'\n" + GOOD_WORKER,
        ["not in a job family", "did you mean 'consolidation'?"],
    ),
    (
        "no workers",
        "swarm: s\nworkers: []\n",
        [":2:10:", "workers", "at least 1 item"],
    ),
    (
        "missing role",
        "swarm: s\nworkers:\n  - id: w1\n",
        [":3:5:", "workers[0](w1).role", "required key is missing"],
    ),
    (
        "unset environment variable",
        "swarm: s\npaths:\n  profiles: ${SWARMQ_TEST_SURELY_UNSET}/p\n" + GOOD_WORKER,
        [":3:13:", "paths.profiles", "SWARMQ_TEST_SURELY_UNSET is not set"],
    ),
    (
        "redis url with the wrong scheme",
        "swarm: s\nredis_url: http://127.0.0.1:6379\n" + GOOD_WORKER,
        [":2:12:", "redis_url", "expected a redis://"],
    ),
    (
        "openai provider without a model",
        "swarm: s\nllm:\n  provider: openai\n  base_url: http://x\n" + GOOD_WORKER,
        [":3:3:", "llm", "provider 'openai' needs base_url and model"],
    ),
    (
        "top level is a list",
        "- a\n- b\n",
        [":1:1:", "expected a mapping at the top level, got list"],
    ),
]


@pytest.mark.parametrize(
    ("content", "expected"), [(c, e) for _, c, e in BROKEN], ids=[n for n, _, _ in BROKEN]
)
def test_broken_roster_gives_precise_error(
    tmp_path: Path, content: str, expected: list[str]
) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(content, encoding="utf-8")
    report = load_report(path, env={"HOME": str(tmp_path)})
    assert report.roster is None
    errors = [str(p) for p in report.errors]
    assert len(errors) == 1, errors
    for fragment in expected:
        assert fragment in errors[0], (fragment, errors[0])
    assert errors[0].startswith(str(path))
    with pytest.raises(RosterError) as info:
        load_roster(path, env={"HOME": str(tmp_path)})
    assert errors[0] in str(info.value)


def test_every_error_is_reported_not_just_the_first(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(
        "swarm: s\nworkers:\n  - {id: a, role: x, concurrency: 0}\n  - {id: 'b c', role: y, pool: gevent}\n"
    )
    report = load_report(path, env={})
    paths = sorted(p.path for p in report.errors)
    assert paths == ["workers[0](a).concurrency", "workers[1](b c).id", "workers[1](b c).pool"]


def test_missing_file(tmp_path: Path) -> None:
    report = load_report(tmp_path / "nope.yaml", env={})
    assert [str(p) for p in report.errors] == [f"{tmp_path / 'nope.yaml'}: error: file not found"]


def test_example_roster_is_valid_and_resolved() -> None:
    report = load_report(REPO / "swarm.yaml", env={"HOME": "/home/someone"})
    assert report.errors == [], [str(p) for p in report.errors]
    roster = report.roster
    assert roster is not None
    assert roster.workspace_dir == REPO
    assert roster.runtime_dir == REPO / ".runtime"
    assert roster.profiles_dir == REPO / ".swarmq-home" / "profiles"
    assert roster.quotas["enrichment"].max_calls_per_day == 30
    assert roster.quotas["skill_improver"].window is QuotaWindow.LOCAL
    assert [w.id for w in roster.workers]
    for worker in roster.workers:
        assert worker.all_queues()[0] == f"worker.{worker.id}"


def test_defaults_follow_the_seeds(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text("swarm: s\n" + GOOD_WORKER)
    roster = load_roster(path, env={"HOME": "/home/u"})
    assert roster.workspace_dir == tmp_path
    assert roster.profiles_dir == Path("/home/u/.hermes/profiles")
    assert roster.shared_dir == Path("/home/u/.openclaw/workspace/memory")
    assert roster.hive_dir == Path("/home/u/.local/share/opencode-swarm")
    assert roster.runtime_dir == tmp_path / ".runtime"
    assert roster.quotas["enrichment"].max_calls_per_day == 30
    assert roster.quotas["skill_improver"].max_calls_per_day == 10
    assert roster.effective_broker_url == roster.redis_url
    xdg = load_roster(path, env={"HOME": "/home/u", "XDG_DATA_HOME": "/data"})
    assert xdg.hive_dir == Path("/data/opencode-swarm")


def test_env_expansion_and_redis_url_override(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(
        "swarm: s\nworkspace: ${PROJ}\npaths:\n  runtime: ${RT:-rt}\n  profiles: ~/profiles\n"
        "redis_url: redis://127.0.0.1:6379/3\nbroker_url: amqp://guest:guest@127.0.0.1:5672//\n"
        + GOOD_WORKER
    )
    env = {"HOME": "/home/u", "PROJ": "/srv/project", "REDIS_URL": "redis://10.0.0.5:6380/1"}
    roster = load_roster(path, env=env)
    assert roster.workspace_dir == Path("/srv/project")
    assert roster.runtime_dir == tmp_path / "rt"
    assert roster.profiles_dir == Path("/home/u/profiles")
    assert roster.redis_url == "redis://10.0.0.5:6380/1"
    assert roster.effective_broker_url.startswith("amqp://")


def test_schedule_shorthand(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(
        "swarm: s\nschedule:\n  maturity.sweep: 6h\n  nightly:\n    task: consolidation.run\n"
        "    cron: '0 3 * * *'\n    kwargs: {scope: all}\n"
        "workers:\n  - {id: w, role: r, queues: [maturity, consolidation]}\n"
    )
    roster = load_roster(path, env={})
    assert roster.schedule["maturity.sweep"].every == 6 * 3600
    assert roster.schedule["nightly"].task == "consolidation.run"
    assert roster.schedule["nightly"].kwargs == {"scope": "all"}


def test_warnings_for_unconsumed_family_queues(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text("swarm: s\n" + GOOD_WORKER)
    report = load_report(path, env={})
    assert report.roster is not None
    warned = {p.message.split("'")[1] for p in report.warnings}
    assert warned == {"curator", "skills", "forge", "consolidation", "maturity"}
