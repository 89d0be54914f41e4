"""The CLI starts light: ``swarmq --help`` lists every command without importing any, and a
file-level command imports no Celery, Redis, HTTP client or numpy (speed lives in
bench/cli_startup.py; these check the structure that makes it fast)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.cli.lazy import COMMANDS, load_command
from tests.support import REPO

HEAVY = ("numpy", "celery", "kombu", "redis", "httpx", "fastapi", "libtmux", "snowballstemmer")
"""Third-party modules a command that does not need them must never pay for."""


def run_python(code: str, cwd: Path | None = None, home: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG", "REDIS_URL")}
    env.update(PYTHONPATH=str(REPO), COLUMNS="200")
    if home is not None:
        env.update(
            HOME=str(home),
            XDG_CACHE_HOME=str(home / ".cache"),
            XDG_DATA_HOME=str(home / ".local" / "share"),
        )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


LOADED = "import sys, json; print(json.dumps(sorted(sys.modules)))"
RUN_CLI = (
    "import sys\nfrom swarmq.cli import main\nsys.argv = ['swarmq', *{args!r}]\n"
    "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
)


def loaded_after(code: str, **kwargs: Path) -> set[str]:
    """Modules imported by ``code`` in a fresh interpreter (the last line of its output)."""
    return set(json.loads(run_python(f"{code}\n{LOADED}", **kwargs).splitlines()[-1]))


DOMAIN = tuple(
    f"swarmq.{name}"
    for name in (
        "storage",
        "knowledge",
        "flywheel",
        "forge",
        "missions",
        "profiles",
        "curation",
        "skills",
        "consolidation",
        "similarity",
        "transcripts",
        "completion",
    )
)
"""The domain packages and the storage kernel: none of them is loaded to parse a command line."""


def heavy(modules: set[str], also: tuple[str, ...] = ()) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(also))


def test_importing_the_cli_imports_no_command() -> None:
    modules = loaded_after("import swarmq.cli")
    assert heavy(modules, ("pydantic", "yaml", "swarmq.roster", *DOMAIN)) == []
    assert heavy(modules, ("swarmq.coord", "swarmq.cli.common", "swarmq.cli.knowledge")) == []


def test_help_lists_every_command_and_imports_none() -> None:
    out = loaded_after(RUN_CLI.format(args=["--help"]))
    assert heavy(out, ("swarmq.roster", *DOMAIN, "swarmq.cli.common")) == []
    shown = run_python(RUN_CLI.format(args=["--help"]))
    listed = [
        line.split()[1]
        for line in shown.splitlines()
        if line.startswith("│ ") and line.split()[1] in COMMANDS
    ]
    assert listed == list(COMMANDS)
    text = " ".join(shown.replace("│", " ").split())
    for name, spec in COMMANDS.items():
        assert f"{name} {' '.join(spec.help.split())}" in text


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_help_line_is_the_commands_own(name: str) -> None:
    """The light table cannot drift from the commands it stands for."""
    command = load_command(name, COMMANDS[name])
    assert command.name == name
    own = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0].strip()
    assert COMMANDS[name].help == own


def test_commands_still_run_and_suggest() -> None:
    runner = CliRunner()
    typo = runner.invoke(app, ["knowlege", "list"])
    assert typo.exit_code != 0 and "Did you mean 'knowledge'" in typo.output
    sub = runner.invoke(app, ["knowledge", "--help"])
    assert sub.exit_code == 0 and "verify-receipts" in sub.output


def test_file_level_command_imports_no_cluster_client(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / ".swarm").mkdir(parents=True)
    modules = loaded_after(
        RUN_CLI.format(args=["knowledge", "list", "--json"]), cwd=project, home=tmp_path / "home"
    )
    assert "swarmq.cli.knowledge" in modules
    assert heavy(modules, ("swarmq.cli.processes", "swarmq.client", "swarmq.tasks")) == []


def test_roster_schema_imports_no_domain_pipeline() -> None:
    modules = loaded_after("import swarmq.roster.loader")
    pipelines = ("swarmq.knowledge.store", "swarmq.forge.extract",
                 "swarmq.flywheel.closeloop", "swarmq.llm.factory",
                 "swarmq.consolidation._plan")  # fmt: skip
    assert heavy(modules, pipelines) == []
