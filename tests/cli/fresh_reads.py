"""The fresh reading processes the reading-path tests run (tests/cli/test_read_imports_cli.py,
test_reading_locks_cli.py): a workspace with two lessons, and one ``swarmq`` process computing
its own answer, with every module it imported by the time it exited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import REPO

LESSONS = (
    "Run the database migration before the integration tests, or they fail on missing tables.",
    "`python -c 'import yaml'` failed (bash: python: command not found); `python3` worked.",
)
TASK = "run the integration tests after the database migration"
FAILURE = "$ python manage.py test\nzsh:1: command not found: python"

_WRAPPED = """
import atexit, json, runpy, sys
OUT = sys.argv[1]
def imported():
    with open(OUT, "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(imported)
sys.argv = ["swarmq", *sys.argv[2:]]
runpy.run_module("swarmq.cli", run_name="__main__")
"""


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
    modules: frozenset[str]


def add_lessons(roster: Path) -> None:
    """:data:`LESSONS` added to the workspace of ``roster``."""
    for lesson in LESSONS:
        added = CliRunner().invoke(app, ["-c", str(roster), "knowledge", "add", "--plain", lesson])
        assert added.exit_code == 0, added.output


def fresh_swarmq(tmp_path: Path, roster: Path, *args: str) -> Ran:
    """One fresh ``swarmq -c roster *args`` process computing its own answer (no resident
    server), run in ``tmp_path``."""
    out = tmp_path / "imported.json"
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "SWARMQ_CONFIG"}
    env.update(
        SWARMQ_LOCAL="1",
        COLUMNS="200",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")])),
    )
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPED, str(out), "-c", str(roster), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    modules = frozenset(json.loads(out.read_text())) if out.exists() else frozenset()
    return Ran(done.returncode, done.stdout, done.stderr, modules)
