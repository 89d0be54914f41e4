"""``swarmq demo``: a scratch swarm that visibly learns within a minute, then stops.

What it does, in order (each step is the product's own code path, nothing is faked):

1. a scratch workspace with a ``swarm.yaml`` whose every root lives inside it, an empty
   opencode-swarm store (``.swarm/``) and an embedded Redis on a free port;
2. ``swarmq up``'s supervisor starts two workers (tmux sessions when tmux exists) and a beat;
3. missions 1 and 2 run in parallel on the two workers with the bundled EXAMPLE agent
   (``swarmq/demo/example_agent.py``); their transcripts go to ``forge.extract``;
4. ``forge.close_loop`` ingests the forged lessons into the AgentOps pool and publishes the
   high-confidence ones to the knowledge store, marked provisional;
5. mission 3 gets them injected into its prompt, applies them (``KNOWLEDGE_APPLIED``, which
   confirms them) and teaches one more lesson; the next close loop promotes the confirmed
   candidates to learnings (a session other than their own confirmed them, so they need not
   wait 24 hours) and their knowledge entries lose the provisional mark;
6. mission 4 gets those entries injected and acknowledges them, which reaches the learnings as
   feedback; a last close loop measures the flywheel.

Every flywheel setting is the default: nothing is looked up, no gate is opened.
"""

from __future__ import annotations

__all__ = ["run_demo"]

import contextlib
import os
import secrets
import socket
import sys
import tempfile
import time
from pathlib import Path

import yaml

from swarmq.demo import example_agent
from swarmq.demo.report import DemoError, DemoReport, Say
from swarmq.demo.steps import DemoSwarm
from swarmq.names import JOB_FAMILIES


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _PlainDumper(yaml.SafeDumper):
    """Writes every repeated value out in full: a file meant to be read and edited by people
    holds no ``&id001`` anchors or ``*id001`` aliases."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def write_config(workspace: Path, swarm: str, port: int) -> Path:
    """The demo's roster: two workers that between them consume every job family (so it
    validates with no warning; nothing schedules curator, skills or consolidation jobs here)."""
    agent = [sys.executable, str(Path(example_agent.__file__).resolve()), "{prompt_file}"]
    worker = {
        "role": "builder",
        "queues": ["missions", "forge", "maturity"],
        "pool": "solo",
        "agent": {"command": agent, "timeout_seconds": 120},
    }
    extra = [family for family in JOB_FAMILIES if family not in worker["queues"]]
    data = {
        "swarm": swarm,
        "workspace": str(workspace),
        "paths": {
            name: str(workspace / sub)
            for name, sub in (
                ("profiles", "profiles"),
                ("runtime", ".runtime"),
                ("shared", "shared"),
                ("hive", "hive"),
            )
        },
        "redis_url": f"redis://127.0.0.1:{port}/0",
        "workers": [
            {
                "id": "ada",
                "name": "Ada (example agent)",
                **worker,
                "queues": ["missions", "forge", "maturity", *extra],
            },
            {"id": "grace", "name": "Grace (example agent)", **worker},
        ],
    }
    path = workspace / "swarm.yaml"
    header = (
        "# Written by `swarmq demo`: a scratch swarm with the bundled EXAMPLE agent.\n"
        "# Every flywheel setting is the default.\n"
    )
    path.write_text(
        header + yaml.dump(data, Dumper=_PlainDumper, sort_keys=False), encoding="utf-8"
    )
    return path


def scratch(directory: Path | None) -> Path:
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="swarmq-demo-")).resolve()
    directory = directory.expanduser().resolve()
    if directory.exists() and any(directory.iterdir()):
        raise DemoError(
            f"{directory}: not empty; give an empty or new directory for the demo workspace"
        )
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def run_demo(
    directory: Path | None = None,
    *,
    keep: bool = False,
    say: Say = print,
    use_tmux: bool | None = None,
    timeout: float = 120.0,
) -> DemoReport:
    """Run the whole demo; returns what happened. Stops what it started unless ``keep``."""
    started = time.monotonic()
    workspace = scratch(directory)
    (workspace / ".swarm").mkdir(exist_ok=True)
    config = write_config(workspace, f"demo-{secrets.token_hex(3)}", free_port())
    os.environ.pop("REDIS_URL", None)  # the demo's own Redis, never the caller's
    os.environ["SWARMQ_CONFIG"] = str(config)
    report = DemoReport(workspace, config)
    swarm = DemoSwarm(config, report, say=say, use_tmux=use_tmux, timeout=timeout)
    try:
        swarm.start()
        swarm.learn()
    finally:
        report.seconds = time.monotonic() - started
        if not keep:
            with contextlib.suppress(Exception):
                swarm.stop()
        report.seconds = time.monotonic() - started
    return report
