"""Render the latest issue-2 benchmark results (bench/results/*.json) as Markdown tables."""

from __future__ import annotations

import json

from bench.common import RESULTS


def quota_table() -> str:
    data = json.loads((RESULTS / "quota_throughput.json").read_text())
    rows = [
        "| clients | raw EVALSHA/s | reserve→start cycles/s | gate round trips/s | ratio | cycles/s with disk mirror | ratio with mirror |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label in ("1 client", f"{data['procs']} processes"):
        r = data[label]
        rows.append(
            f"| {label} | {r['raw_evalsha_per_s']:,.0f} | {r['cycles_per_s']:,.0f} | {r['round_trips_per_s']:,.0f} | "
            f"{r['ratio_per_round_trip']:.2f}× | {r['cycles_per_s_with_mirror']:,.0f} | {r['ratio_with_mirror']:.2f}× |"
        )
    floor = data.get("c_client_floor")
    if floor:
        rows += [
            "",
            "| same scripts from a C client (`redis-benchmark -c 1`) | per second | ratio |",
            "| --- | ---: | ---: |",
            f"| raw `EVALSHA` (`return 1`) | {floor['raw_evalsha_per_s']:,.0f} | 1.00× |",
            f"| `quota_reserve` | {floor['reserve_per_s']:,.0f} | {floor['reserve_ratio']:.2f}× |",
            f"| `quota_release` | {floor['release_per_s']:,.0f} | {floor['release_ratio']:.2f}× |",
        ]
    return "\n".join(rows)


def task_table() -> str:
    data = json.loads((RESULTS / "task_overhead.json").read_text())
    return "\n".join(
        [
            "| task | tasks/s (median) | ratio |",
            "| --- | ---: | ---: |",
            f"| bare Celery no-op | {data['bare_tasks_per_s']:,.0f} | 1.00× |",
            f"| SwarmTask no-op (attempt counter only) | {data['base_tasks_per_s']:,.0f} | {data['base_tasks_per_s'] / data['bare_tasks_per_s']:.2f}× |",
            f"| quota-gated, store-locked no-op | {data['gated_tasks_per_s']:,.0f} | {data['ratio']:.2f}× |",
        ]
    )


if __name__ == "__main__":
    print(quota_table())
    print()
    print(task_table())
