"""A process that spends quota calls, for the clock-skew chaos test.

``python -m tests.chaos.quota_spender URL MIRROR CALLS MODE [OFFSET_SECONDS [MAX_SKEW]]`` starts
up to ``CALLS`` calls of the ``enrichment`` quota and prints how many it started (``refused``
when the gate refused to decide). ``MODE`` is ``exit`` (a normal exit) or ``crash`` (``os._exit``
right after the last start: no atexit, so the write-behind quota mirror is never written).
``OFFSET_SECONDS`` shifts the gate's clock when the test could not run this process under
faketime, which shifts the whole process's clock instead.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis

from swarmq.coord.quota import QuotaGate
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_types import QuotaExhausted, QuotaUnavailable

MAX = 10


def main(argv: list[str]) -> int:
    url, mirror, calls, mode = argv[0], Path(argv[1]), int(argv[2]), argv[3]
    offset = float(argv[4]) if len(argv) > 4 else 0.0
    skew = float(argv[5]) if len(argv) > 5 else 86_400.0
    config = QuotaConfig(max_calls_per_day=MAX, max_clock_skew_seconds=skew)
    clock = (lambda: datetime.now(UTC) + timedelta(seconds=offset)) if offset else None
    gate = QuotaGate(
        redis.Redis.from_url(url, socket_timeout=5),
        "skew",
        {"enrichment": config},
        mirror_dir=mirror,
        clock=clock,
    )
    started = 0
    try:
        for _ in range(calls):
            with gate.slot("enrichment") as slot:
                slot.start()
                started += 1
    except QuotaExhausted:
        pass
    except QuotaUnavailable:
        print("refused", flush=True)
        return 0
    print(started, flush=True)
    if mode == "crash":
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
