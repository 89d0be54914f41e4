"""A fresh reading process imports no write path: searching, injecting or recalling (previews)
and listing a workspace with a swarm.yaml load neither the store's adds, reinforcement,
quarantine and transactions (and the validation they bring) nor filelock (a cluster's reader
takes no same-host lock and commits nothing), and ``--json`` builds no rich table. Each of those
is imported by the code that writes or prints one (speed lives in bench/read_locks.py). The
first read after an add brings the store's index up to date, a write: the second is checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import REPO, write_roster

LESSONS = (
    "Run the database migration before the integration tests, or they fail on missing tables.",
    "`python -c 'import yaml'` failed (bash: python: command not found); `python3` worked.",
)
TASK = "run the integration tests after the database migration"
FAILURE = "$ python manage.py test\nzsh:1: command not found: python"

WRAPPED = """
import atexit, json, runpy, sys
OUT = sys.argv[1]
def imported():
    with open(OUT, "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(imported)
sys.argv = ["swarmq", *sys.argv[2:]]
runpy.run_module("swarmq.cli", run_name="__main__")
"""

WRITE_PATH = (
    "filelock",
    "swarmq.knowledge.batch",
    "swarmq.knowledge._prepare",
    "swarmq.knowledge._group",
    "swarmq.knowledge.reinforcement",
    "swarmq.knowledge._quarantine",
    "swarmq.knowledge.transaction",
    "swarmq.knowledge.acks",
    "swarmq.flywheel.promotion",
)
"""Modules only a write needs: no read below may import them."""

INDEXING = ("swarmq.knowledge._recallkeys", "swarmq.knowledge.signature")
"""What an entry's index row needs (its recall keys, failure signatures), a search not."""

READS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # name: (arguments, modules it must not import beyond WRITE_PATH)
    "search --json": (
        ("knowledge", "search", "--json", TASK),
        ("rich.table", "swarmq.knowledge.validation", *INDEXING),
    ),
    "search": (("knowledge", "search", TASK), ("swarmq.knowledge.validation", *INDEXING)),
    "inject --preview": (("knowledge", "inject", "--preview", TASK), ()),
    "recall --preview": (("knowledge", "recall", "--preview", "--error", FAILURE), ()),
    "list --json": (
        ("knowledge", "list", "--json"),
        ("rich.table", "swarmq.knowledge.validation", "snowballstemmer"),
    ),
    "list": (("knowledge", "list"), ("swarmq.knowledge.validation", "snowballstemmer")),
}


def imported_by(tmp_path: Path, roster: Path, *args: str) -> tuple[str, set[str]]:
    """Stdout of one fresh ``swarmq`` process computing its own answer, and every module it
    imported."""
    out = tmp_path / "imported.json"
    env = {k: v for k, v in os.environ.items() if k != "SWARMQ_CONFIG"}
    env.update(
        SWARMQ_LOCAL="1",
        COLUMNS="200",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")])),
    )
    done = subprocess.run(
        [sys.executable, "-c", WRAPPED, str(out), "-c", str(roster), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, set(json.loads(out.read_text()))


@pytest.mark.parametrize("name", list(READS))
def test_a_read_imports_no_write_path(
    name: str, tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    # lexical: with hybrid retrieval the model's cache (swarmq.similarity.quantized) takes a lock
    roster = write_roster(tmp_path, swarm_name, redis_url, knowledge={"retrieval": "lexical"})
    for lesson in LESSONS:
        added = CliRunner().invoke(app, ["-c", str(roster), "knowledge", "add", "--plain", lesson])
        assert added.exit_code == 0, added.output
    args, also = READS[name]
    imported_by(tmp_path, roster, *args)  # the first read after an add writes its index
    stdout, modules = imported_by(tmp_path, roster, *args)
    shown = " ".join(stdout.split())
    assert "missing tables" in shown or "python3" in shown  # the read found a lesson
    assert "swarmq.knowledge.project" in modules
    assert sorted(m for m in modules if m.split(".")[0] in WRITE_PATH or m in WRITE_PATH) == []
    assert sorted(set(also) & modules) == []
