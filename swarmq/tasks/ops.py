"""Operational tasks: liveness checks that go through the same path as real jobs."""

from __future__ import annotations

import os
import socket
from typing import Any

from swarmq.names import OPS_PING
from swarmq.workers.app import app
from swarmq.workers.base import worker_id


@app.task(name=OPS_PING)
def ping() -> dict[str, Any]:
    """Answer from the worker that consumed the message (send it to ``worker.<id>``)."""
    return {"worker_id": worker_id(), "hostname": socket.gethostname(), "pid": os.getpid()}
