"""Hostile rosters: alias bombs, 5,000-deep nesting, a huge file. Each gets one located error,
fast, in little memory, with no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmq.roster._yamlsafe import MAX_ROSTER_BYTES
from swarmq.roster.loader import load_report
from tests.support import REPO

LAUGHS = "\n".join(
    [
        "swarm: s",
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]"
            for p, x in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "workers: [{id: w1, role: builder, queues: [missions]}]",
    ]
)
"""The classic billion laughs: a few hundred bytes standing for 9^9 strings."""

PROBE = """
import json, resource, sys, time
from swarmq.roster.loader import load_report
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
report = load_report(sys.argv[1])
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "growth_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline,
                  "problems": [str(p) for p in report.problems], "usable": report.roster is not None}))
"""


def probe(path: Path) -> dict[str, object]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("laughs.yaml", LAUGHS, "alias bomb"),
        ("flow.yaml", "swarm: s\nx: " + "[" * 5000 + "]" * 5000 + "\n", "nesting"),
        (
            "block.yaml",
            "swarm: s\nx:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 5000)),
            "nesting",
        ),
        (
            "mixed.yaml",
            "swarm: s\nx:\n" + "".join(" " * i + "-\n" for i in range(1, 90)),
            "nesting deeper than 64",
        ),
    ],
    ids=["laughs", "flow", "block", "mixed"],
)
def test_hostile_yaml_is_a_located_error_fast_and_small(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = probe(path)
    problems = result["problems"]
    assert isinstance(problems, list) and len(problems) == 1, problems
    assert expected in problems[0] and problems[0].startswith(f"{path}:"), problems
    assert not result["usable"]
    assert float(str(result["seconds"])) < 1.0, result
    assert int(str(result["growth_kib"])) < 100 * 1024, result  # peak memory growth


def test_a_roster_past_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_ROSTER_BYTES + 1)
    report = load_report(path)
    assert report.roster is None
    assert "larger than the 16,777,216-byte limit" in str(report.problems[0])


def test_a_plain_alias_still_works(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(
        "swarm: s\nworkers:\n  - {id: w1, role: builder, queues: &q [missions, curator]}\n"
        "  - {id: w2, role: builder, queues: *q}\n"
    )
    report = load_report(path)
    assert report.roster is not None, report.problems
    assert [w.queues for w in report.roster.workers] == [["missions", "curator"]] * 2
