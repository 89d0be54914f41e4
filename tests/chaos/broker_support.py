"""What the broker chaos tests share: pings as `swarmq status` sends them, agent starts, waits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from celery import Celery

from swarmq.roster.schema import Roster
from swarmq.workers import remote
from swarmq.workers.app import create_app

RECONNECT_BAR_SECONDS = 30.0


PING_ERRORS: Counter[str] = Counter()
"""Why pings could not be sent (counted, for the message of a failure)."""


def answering(roster: Roster, nodes: list[str]) -> set[str]:
    """Who answers a ping from a new app in this process (as `swarmq status` asks)."""
    app = create_app(roster)
    try:
        replies = remote.ping(app, destination=nodes, timeout=0.5)
    except Exception as exc:  # Redis still away: nobody answers yet
        PING_ERRORS[f"{type(exc).__name__}: {exc}"[:200]] += 1
        time.sleep(0.2)
        return set()
    finally:
        app.close()
    return {node for reply in replies for node in reply}


FRESH_PING = """
import json, sys
from swarmq.roster.loader import load_roster
from swarmq.workers.app import create_app
app = create_app(load_roster(sys.argv[1], env={}))
try:
    replies = app.control.ping(destination=sys.argv[2:], timeout=1.0) or []
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:200]}))
else:
    print(json.dumps({"answered": sorted({node for reply in replies for node in reply})}))
"""


def answering_fresh(config: Path, nodes: list[str]) -> set[str]:
    """Who answers a ping from a new process, as `swarmq status` asks: a client that lived
    through the restarts holds pooled connections the restarts left behind."""
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PING, str(config), *nodes],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    try:
        out = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        out = {"error": f"exit {done.returncode}: {done.stderr.strip()[-200:]}"}
    if "error" in out:
        PING_ERRORS[str(out["error"])] += 1
        return set()
    return set(out["answered"])


def wait(condition: Callable[[], object], timeout: float, what: str) -> float:
    """Seconds until ``condition()`` held; fails the test after ``timeout`` with its last value."""
    started = time.monotonic()
    last: object = None
    while time.monotonic() - started < timeout:
        last = condition()
        if last is True:
            return time.monotonic() - started
        time.sleep(0.1)
    pytest.fail(f"{what} not within {timeout:.0f}s (last: {last})")


def reconnect(config: Path, nodes: list[str]) -> tuple[float | None, list[str]]:
    """Seconds until every worker answered a ping from a new process after Redis returned, or
    None and the silent ones when the bar passed first."""
    started = time.monotonic()
    answered: set[str] = set()
    while time.monotonic() - started < RECONNECT_BAR_SECONDS:
        answered = answering_fresh(config, nodes)
        if answered == set(nodes):
            return time.monotonic() - started, []
        time.sleep(0.1)
    return None, sorted(set(nodes) - answered)


def starts(path: Path) -> Counter[str]:
    """Agent starts per mission (the fake agent appends one line per start)."""
    text = path.read_text("utf-8") if path.exists() else ""
    return Counter(line.split()[0] for line in text.splitlines() if line.strip())


def in_process(roster: Roster, app: Celery, nodes: list[str]) -> tuple[float | None, float | None]:
    """Seconds until every worker answered a ping sent from this process, which lived through
    the restarts, as swarmq's long-lived processes send it (:mod:`swarmq.workers.remote`):
    first from a new app (kombu's connection pool is per process and keyed by URL, so a new
    app shares it), then from ``app``, which also sent the missions; None past the bar."""
    answered: list[float | None] = []
    for ask in (lambda: answering(roster, nodes), lambda: _answering_app(app, nodes)):
        began = time.monotonic()
        took: float | None = None
        while time.monotonic() - began < RECONNECT_BAR_SECONDS:
            if ask() == set(nodes):
                took = time.monotonic() - began
                break
        answered.append(took)
    return answered[0], answered[1]


def _answering_app(app: Celery, nodes: list[str]) -> set[str]:
    try:
        return remote.answering(app, destination=nodes, timeout=0.5)
    except Exception as exc:
        PING_ERRORS[f"long-lived app: {type(exc).__name__}: {exc}"[:200]] += 1
        time.sleep(0.2)
        return set()
