"""Rules that span several roster entries: duplicates, queues and who consumes them."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from swarmq.names import DEAD_LETTER_QUEUE, JOB_FAMILIES, WORKER_QUEUE_PREFIX
from swarmq.roster.schema import Roster, Severity

_QUOTA_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True)
class CheckProblem:
    severity: Severity
    loc: tuple[str | int, ...]
    message: str
    at_key: bool = False


def task_family(task_name: str) -> str:
    """``consolidation.nightly`` → ``consolidation``."""
    return task_name.split(".", 1)[0]


def check_roster(roster: Roster) -> list[CheckProblem]:
    problems: list[CheckProblem] = []
    problems += _check_worker_ids(roster)
    problems += _check_queues(roster)
    problems += _check_schedule(roster)
    for name in roster.quotas:
        if _QUOTA_NAME.fullmatch(name) is None:
            problems.append(
                CheckProblem(
                    "error",
                    ("quotas", name),
                    f"quota name {name!r} must match [a-z][a-z0-9_]{{0,63}}",
                    at_key=True,
                )
            )
    return problems


def _check_worker_ids(roster: Roster) -> list[CheckProblem]:
    problems: list[CheckProblem] = []
    first: dict[str, int] = {}
    folded: dict[str, int] = {}
    for index, worker in enumerate(roster.workers):
        if worker.id in first:
            problems.append(
                CheckProblem(
                    "error",
                    ("workers", index, "id"),
                    f"duplicate worker id {worker.id!r} (first used by workers[{first[worker.id]}])",
                )
            )
            continue
        first[worker.id] = index
        key = worker.id.lower()
        if key in folded:
            other = roster.workers[folded[key]].id
            problems.append(
                CheckProblem(
                    "error",
                    ("workers", index, "id"),
                    f"worker id {worker.id!r} differs from {other!r} only in case; their "
                    "profile directories would collide on case-insensitive filesystems",
                )
            )
        folded.setdefault(key, index)
    return problems


def _check_queues(roster: Roster) -> list[CheckProblem]:
    problems: list[CheckProblem] = []
    for index, worker in enumerate(roster.workers):
        seen: set[str] = set()
        for q_index, queue in enumerate(worker.queues):
            loc = ("workers", index, "queues", q_index)
            if queue in seen:
                problems.append(CheckProblem("warning", loc, f"queue {queue!r} is listed twice"))
            seen.add(queue)
            if queue == worker.direct_queue or queue in JOB_FAMILIES:
                continue
            if queue == DEAD_LETTER_QUEUE:
                message = (
                    f"{DEAD_LETTER_QUEUE!r} holds poison messages for people to inspect; "
                    "no worker may consume it"
                )
            elif queue.startswith(WORKER_QUEUE_PREFIX):
                message = (
                    f"{queue!r} is another worker's direct queue; each worker consumes "
                    "only its own (worker.<id> is added automatically)"
                )
            else:
                guess = difflib.get_close_matches(queue, JOB_FAMILIES, n=1)
                hint = f"did you mean {guess[0]!r}? " if guess else ""
                message = f"unknown queue {queue!r}; {hint}known queues: {', '.join(JOB_FAMILIES)}"
            problems.append(CheckProblem("error", loc, message))
    consumed = {q for w in roster.workers for q in w.queues}
    for family in JOB_FAMILIES:
        if family not in consumed:
            problems.append(
                CheckProblem(
                    "warning",
                    ("workers",),
                    f"queue {family!r} has no consumer: {family}.* jobs would wait in the "
                    "broker until a worker lists it",
                    at_key=True,
                )
            )
    return problems


def _check_schedule(roster: Roster) -> list[CheckProblem]:
    problems: list[CheckProblem] = []
    consumed = {q for w in roster.workers for q in w.all_queues()}
    for name, entry in roster.schedule.items():
        family = task_family(entry.task)
        if entry.queue is None and family not in JOB_FAMILIES:
            guess = difflib.get_close_matches(family, JOB_FAMILIES, n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            problems.append(
                CheckProblem(
                    "error",
                    ("schedule", name),
                    f"task {entry.task!r} is not in a job family{hint}; known families: "
                    f"{', '.join(JOB_FAMILIES)}",
                    at_key=True,
                )
            )
            continue
        queue = entry.queue or family
        if queue not in consumed:
            problems.append(
                CheckProblem(
                    "error",
                    ("schedule", name),
                    f"scheduled task {entry.task!r} goes to queue {queue!r}, which no "
                    "worker consumes",
                    at_key=True,
                )
            )
    return problems
