"""`swarmq memory search` over real profile and shared memory files."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from swarmq.cli import app
from tests.support import write_roster

runner = CliRunner()


def test_search_finds_phrases_with_file_and_line(tmp_path: Path) -> None:
    config = write_roster(tmp_path, "memcli", "redis://127.0.0.1:6379/15")
    memory = tmp_path / "profiles" / "w1" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(
        "# Memory\n\n- Always renew the Redis lock lease\n- other note\n"
    )
    shared = tmp_path / "shared" / "swarm"
    shared.mkdir(parents=True)
    (shared / "notes.md").write_text("lease renewal matters\n")

    done = runner.invoke(
        app, ["--config", str(config), "memory", "search", "renew the Redis lock", "--json"]
    )
    assert done.exit_code == 0, done.output
    hits = json.loads(done.output)["results"]
    assert hits[0]["path"].endswith("w1/memory/MEMORY.md") and hits[0]["line"] == 3
    assert hits[0]["match"] == "phrase"

    table = runner.invoke(
        app, ["--config", str(config), "memory", "search", "lease", "--scope", "shared"]
    )
    assert (
        table.exit_code == 0
        and "1 hit(s)" in table.output
        and "lease renewal matters" in table.output
    )

    for bad in (["--worker", "../etc"], ["--worker", "ghost"], ["--scope", "worker"]):
        refused = runner.invoke(app, ["--config", str(config), "memory", "search", "x", *bad])
        assert refused.exit_code == 1, bad
