"""A reading command from a fresh process answered by the swarm's resident server
(``swarmq.cli.resident`` asking ``swarmq.cli.served``) prints byte for byte what the same command
computed in the process itself prints, exits the same, and imports no typer on that path (nor
``typing``, ``socket``, ``json``, ``re``, ``pathlib`` or ``contextlib``, a few milliseconds each
of every asking process: the asking process runs without ``site``, so that an editable install's
finder, which imports several of them, hides none); a server whose environment differs declines
and the command runs locally."""

from __future__ import annotations

import json
import os
import re
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.cli.resident import answered
from swarmq.hooks._wire import socket_path
from swarmq.hooks.resident import exists
from swarmq.storage.statedir import swarm_state_dir
from tests.support import REPO, write_roster

LESSONS = (
    "Run the database migration before the integration tests, or they fail on missing tables.",
    "Never commit the lock file by hand; regenerate it with the package manager.",
    "`python -c 'import yaml'` failed (bash: python: command not found); `python3` worked.",
    "Pin the CI image by digest: a moved tag broke every build overnight.",
)
FAILURE = "$ python manage.py test\nzsh:1: command not found: python"

ASKED = """
import sys
started = set(sys.modules)  # what the interpreter and its site imported before the command
from swarmq.cli.resident import answered
code = answered(sys.argv[1:])
assert code is not None, "no resident answer"
heavy = {"typer", "numpy", "hashlib"} & set(sys.modules)  # hashlib: OpenSSL, 3.7 MB
assert not heavy, f"heavy imports: {heavy}"
slow = {"typing", "socket", "selectors", "swarmq.storage.spool", "json", "re", "pathlib",
        "contextlib"} & (set(sys.modules) - started)
assert not slow, f"slow imports: {slow}"  # 2-3 ms each of every fresh command
sys.exit(code)
"""


@pytest.fixture
def served(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> Iterator[tuple[Path, dict[str, str]]]:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    runner = CliRunner()
    for lesson in LESSONS:
        added = runner.invoke(app, ["-c", str(roster), "knowledge", "add", "--plain", lesson])
        assert added.exit_code == 0, added.output
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG", "SWARMQ_LOCAL")}
    env.update(
        SWARMQ_STATE=str(tmp_path / "state"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")])),
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "swarmq.cli.served", "--config", str(roster), "--idle", "120"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        state = tmp_path / "state" / "hooks" / swarm_state_dir(roster).name
        deadline = time.monotonic() + 60
        while not exists(state):
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.1)
        yield roster, env
    finally:
        server.terminate()
        server.wait(timeout=30)


def _run(
    argv: list[str], env: dict[str, str], *, local: bool
) -> subprocess.CompletedProcess[bytes]:
    code = ["-m", "swarmq.cli"] if local else ["-S", "-c", ASKED]  # -S: PYTHONPATH finds swarmq
    return subprocess.run(
        [sys.executable, *code, *argv],
        env={**env, "SWARMQ_LOCAL": "1"} if local else env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )


COMMANDS = (
    ["knowledge", "search", "--json", "migration before the tests"],
    ["knowledge", "search", "lock file package manager"],
    ["knowledge", "inject", "--preview", "run the integration tests after the migration"],
    ["knowledge", "recall", "--preview", "--json", "--error", FAILURE],
    ["lookup", "--no-cite", "--json", "--session", "s1", "CI image tag"],
)


def test_the_resident_answer_is_the_local_one_byte_for_byte(
    served: tuple[Path, dict[str, str]],
) -> None:
    roster, env = served
    for command in COMMANDS:
        argv = ["-c", str(roster), *command]
        asked, local = _run(argv, env, local=False), _run(argv, env, local=True)
        assert asked.returncode == local.returncode == 0, (command, asked.stderr.decode())
        assert _traceless(asked.stdout) == _traceless(local.stdout), command
        assert asked.stdout.strip() and asked.stderr == local.stderr, command


def test_a_recorded_injection_is_recorded_by_the_server(
    served: tuple[Path, dict[str, str]],
) -> None:
    roster, env = served
    argv = ["-c", str(roster), "knowledge", "inject", "--json", "run the migration first"]
    asked = _run(argv, env, local=False)
    assert asked.returncode == 0, asked.stderr.decode()
    trace = json.loads(asked.stdout)["trace_id"]
    receipts = (roster.parent / "project" / ".swarm").glob("*receipt*")
    assert any(trace in path.read_text(encoding="utf-8") for path in receipts)


def _traceless(out: bytes) -> bytes:
    """``out`` with its injection's trace id (new on every injection) said as TRACE."""
    found = re.search(rb"trace_id: ([0-9a-f-]{36})", out)
    return out.replace(found.group(1), b"TRACE") if found else out


def test_a_server_with_another_environment_declines(
    served: tuple[Path, dict[str, str]],
) -> None:
    roster, env = served
    argv = ["-c", str(roster), "knowledge", "search", "--json", "lock file"]
    declined = _run(argv, {**env, "SWARMQ_EXTRA_SETTING": "1"}, local=False)
    assert declined.returncode != 0 and b"no resident answer" in declined.stderr
    # ... and the command itself then runs here, with the same answer
    whole = subprocess.run(
        [sys.executable, "-m", "swarmq.cli", *argv],
        env={**env, "SWARMQ_EXTRA_SETTING": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert whole.stdout == _run(argv, env, local=True).stdout


def test_a_usage_error_reads_the_same(served: tuple[Path, dict[str, str]]) -> None:
    roster, env = served
    argv = ["-c", str(roster), "knowledge", "search", "--no-such-option", "x"]
    asked = subprocess.run(
        [sys.executable, "-m", "swarmq.cli", *argv],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )
    local = _run(argv, env, local=True)
    assert asked.returncode == local.returncode == 2
    assert asked.stderr == local.stderr and asked.stdout == local.stdout


class _Mute(socketserver.StreamRequestHandler):
    """A server that takes the request and answers what the test says (None: nothing)."""

    reply: bytes | None = None

    def handle(self) -> None:
        self.rfile.readline()
        if self.reply is not None:
            self.wfile.write(self.reply)


def test_a_lost_answer_is_not_recomputed_when_the_command_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SWARMQ_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("SWARMQ_LOCAL", raising=False)
    config = tmp_path / "swarm.yaml"
    config.write_text("swarm: s\n", encoding="utf-8")
    path = socket_path(swarm_state_dir(config))
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socketserver.UnixStreamServer(str(path), _Mute)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        records = ["-c", str(config), "knowledge", "inject", "the task"]
        assert answered(records) == 1  # taken, no answer: it may have been recorded
        assert "not run again here" in capsys.readouterr().err
        assert answered(["-c", str(config), "knowledge", "search", "x"]) is None  # reads only
        _Mute.reply = b'{"declined": "environment differs: HOME"}\n'
        assert answered(records) is None  # declined: it never ran there
        _Mute.reply = b'{"out": [[1, "shown\\n"], [2, "said\\n"]], "exit": 3}\n'
        assert answered(records) == 3
        assert capsys.readouterr() == ("shown\n", "said\n")
    finally:
        _Mute.reply = None
        server.shutdown()
        server.server_close()
        path.unlink(missing_ok=True)
