"""What building the injected block costs when learnings are longer than the block: five
learnings (three over 2,000 characters) rendered by ``swarmq.federated.inject.render`` under the
default budget, fresh texts every pass (a cached text would hide the per-text work), interleaved
pass by pass with the same render of another checkout (``--baseline``, e.g. an extracted
``main``) so load moves both alike.

    python -m bench.federated_render [--passes 300] [--baseline /tmp/main/swarmq/federated/inject.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import save, table
from swarmq.federated import inject
from swarmq.federated.finding import Finding, Fused, Store
from swarmq.knowledge.render import Budget

LONG = "Run the formatter before pushing, because CI checks formatting first. " * 30
MEDIUM = "Measure each overlay box from the rendered page at capture time. " * 14
BUDGET = Budget("full", 5, 2000)

Render = Callable[..., tuple[str | None, list[Fused]]]


def learnings(tag: str) -> list[Fused]:
    """Five learnings whose texts no earlier pass saw."""
    return [
        Fused(
            Finding(
                Store.LEARNING,
                f"learning-{i}",
                f"{tag} " + (LONG if i % 2 == 0 else MEDIUM),
                i + 1,
                0.9,
                f"/w/.agents/learnings/l{i}.md",
            ),
            1.0 / (i + 1),
        )
        for i in range(5)
    ]


def load_render(path: Path) -> Render:
    """``render`` of another checkout's ``swarmq/federated/inject.py``."""
    spec = importlib.util.spec_from_file_location("baseline_inject", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--baseline {path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_inject"] = module
    spec.loader.exec_module(module)
    found: Render = module.render
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passes", type=int, default=300)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    renders: dict[str, Render] = {"this checkout": inject.render}
    if args.baseline is not None:
        renders["baseline"] = load_render(args.baseline)
    times: dict[str, list[float]] = {name: [] for name in renders}
    shown: dict[str, int] = {}
    for n in range(args.passes):
        for name, render in renders.items():
            items = learnings(f"{name} {n}")
            start = time.perf_counter()
            _, records = render(items, trace_id="t", budget=BUDGET, max_display=2000)
            times[name].append((time.perf_counter() - start) * 1000)
            shown[name] = len(records)
    load = [round(x, 1) for x in os.getloadavg()]
    base = statistics.median(times["baseline"]) if "baseline" in times else None
    rows: list[list[Any]] = [
        [
            name,
            statistics.median(v),
            sorted(v)[int(0.95 * len(v))],
            "" if base is None else f"{statistics.median(v) / base:.2f}",
            shown[name],
        ]
        for name, v in times.items()
    ]
    table(
        f"federated render, load average {load}",
        ["render", "p50 ms", "p95 ms", "p50 / baseline", "shown"],
        rows,
    )
    save(
        "federated_render",
        {"load_average": load, "passes": args.passes, "rows": rows},
    )


if __name__ == "__main__":
    main()
