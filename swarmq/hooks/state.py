"""What ``swarmq hooks status`` reports about a swarm's hook machinery on this host: the roster
the hooks find, whether its hook server answers, what waits in its spool, where its log is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarmq.hooks._wire import request
from swarmq.hooks.client import find_config
from swarmq.storage.spool import Spool
from swarmq.storage.statedir import swarm_state_dir


def describe(project: Path) -> dict[str, Any]:
    config = find_config(str(project))
    if config is None:
        return {"roster": "no swarm.yaml found: the hooks do nothing here"}
    state = swarm_state_dir(config)
    answer = request(state, {"op": "ping"}, 1.0)
    return {
        "roster": str(config.resolve()),
        "hook server": f"running (pid {answer.get('pid')})"
        if answer
        else "not running (the next hook starts it)",
        "spool": f"{len(Spool(state / 'spool'))} waiting in {state / 'spool'}",
        "log": str(state / "hooks.log"),
    }
