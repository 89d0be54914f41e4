"""``swarmq demo``: a scratch swarm that visibly learns within a minute, then stops.

What it does, in order (each step is the product's own code path, nothing is faked):

1. a scratch workspace with a ``swarm.yaml`` whose every root lives inside it, an empty
   opencode-swarm store (``.swarm/``) and an embedded Redis on a free port;
2. ``swarmq up``'s supervisor starts two workers (tmux sessions when tmux exists) and a beat;
3. missions 1 and 2 run in parallel on the two workers with the bundled EXAMPLE agent
   (``swarmq/demo/example_agent.py``); their transcripts go to ``forge.extract``;
4. ``forge.close_loop`` ingests the forged lessons into the AgentOps pool;
5. mission 3's agent looks the topic up (``swarmq lookup`` cites the pool candidates it finds)
   and teaches one more lesson; the next close loop promotes the cited candidates to learnings
   and publishes them as swarm-tier knowledge entries;
6. mission 4 gets those entries injected into its prompt and acknowledges them
   (``KNOWLEDGE_APPLIED``); a last close loop measures the flywheel.

The only departure from the defaults: the roster sets ``flywheel.promotion_age_hours: 0`` so
a lesson does not wait the usual 24 hours before it can be promoted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from swarmq.demo import example_agent

Say = Callable[[str], None]

MISSIONS = (
    ("ada", "Fix duplicate invoices after a worker crash",
     "Customers got duplicate invoices when a worker crashed mid-export. Make the export safe."),
    ("grace", "Fix the flaky invoice total test",
     "The invoice total test fails one run in twenty. Find the root cause and fix it."),
    ("ada", "Resume the invoice export without partial files",
     "After a worker crash the invoice export must resume and never trust a half-written file."),
    ("grace", "Add a retry to the invoice export",
     "Retry the invoice export when the worker crashes, without duplicate invoices."),
)


class DemoError(RuntimeError):
    """A step did not happen in time; the message says which and where to look."""


@dataclass
class DemoReport:
    workspace: Path
    config: Path
    seconds: float = 0.0
    missions: list[dict[str, Any]] = field(default_factory=list)
    forged: list[str] = field(default_factory=list)
    """Titles of the lessons forge extracted into pending files."""
    pooled: int = 0
    """Candidates the close loops ingested into the pool."""
    promoted: list[str] = field(default_factory=list)
    """Learning artifacts the pool promoted."""
    published: list[str] = field(default_factory=list)
    """Knowledge entry ids the promotions became."""
    injected: list[str] = field(default_factory=list)
    """Entry ids injected into the last mission's prompt."""
    acknowledged: list[str] = field(default_factory=list)
    """Entry ids whose acknowledgement (``KNOWLEDGE_APPLIED``) landed."""
    flywheel_before: dict[str, Any] = field(default_factory=dict)
    flywheel_after: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    stopped: bool = False
    attach: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["workspace"], data["config"] = str(self.workspace), str(self.config)
        return data


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(workspace: Path, swarm: str, port: int) -> Path:
    agent = [sys.executable, str(Path(example_agent.__file__).resolve()), "{prompt_file}"]
    queues = ["missions", "forge", "maturity"]
    worker = {"role": "builder", "queues": queues, "pool": "solo",
              "agent": {"command": agent, "timeout_seconds": 120}}
    data = {
        "swarm": swarm,
        "workspace": str(workspace),
        "paths": {name: str(workspace / sub) for name, sub in
                  (("profiles", "profiles"), ("runtime", ".runtime"), ("shared", "shared"), ("hive", "hive"))},
        "redis_url": f"redis://127.0.0.1:{port}/0",
        "flywheel": {"promotion_age_hours": 0},
        "workers": [{"id": "ada", "name": "Ada (example agent)", **worker},
                    {"id": "grace", "name": "Grace (example agent)", **worker}],
    }
    path = workspace / "swarm.yaml"
    header = ("# Written by `swarmq demo`: a scratch swarm with the bundled EXAMPLE agent.\n"
              "# promotion_age_hours: 0 lets a lesson be promoted at once (default 24 h).\n")
    path.write_text(header + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def scratch(directory: Path | None) -> Path:
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="swarmq-demo-")).resolve()
    directory = directory.expanduser().resolve()
    if directory.exists() and any(directory.iterdir()):
        raise DemoError(f"{directory}: not empty; give an empty or new directory for the demo workspace")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, where: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise DemoError(f"timed out after {timeout:.0f}s waiting for {what}; see {where}")


def run_demo(directory: Path | None = None, *, keep: bool = False, say: Say = print,
             use_tmux: bool | None = None, timeout: float = 120.0) -> DemoReport:
    """Run the whole demo; returns what happened. Stops what it started unless ``keep``."""
    from swarmq.demo.steps import DemoSwarm

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
