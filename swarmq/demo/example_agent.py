"""EXAMPLE agent: a scripted stand-in for Claude Code or Codex, used by ``swarmq demo``.

It is not an AI. It follows the agent contract a real agent follows (README, "The agent
contract"), so a swarm can be watched learning without an API key:

1. read the prompt file (``{prompt_file}``: mission, memory, knowledge directives);
2. acknowledge every directive it was shown:
   ``KNOWLEDGE_APPLIED:<trace_id>:<entry id> reason=…`` (what closes the loop: using a lesson
   is what confirms it, provisional or not);
3. report with markers (``CHECKPOINT:``, ``DECISION:``, ``FILE:``, ``RESULT:``, ``STATE: DONE``)
   and say in plain sentences what it learned — the lines forge mines from the transcript;
4. print a handoff between ``BEGIN HANDOFF`` / ``END HANDOFF`` and exit 0 (non-zero = failed).

Like Claude Code or Codex, it never calls ``swarmq lookup``: nothing in the loop depends on it.

The work itself is scripted: each scenario below matches words of the mission objective.
``EXAMPLE_AGENT_EXIT=N`` makes it fail with exit status N after reporting (to see a failure).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Scenario:
    keywords: tuple[str, ...]
    steps: tuple[str, ...]
    lessons: tuple[str, ...]
    """Plain sentences a real agent would say; forge mines them from the transcript."""
    files: tuple[str, ...]
    result: str


SCENARIOS = (
    Scenario(
        keywords=("duplicate", "crash"),
        steps=(
            "reproduced the duplicate invoice by killing the worker mid-export",
            "keyed each export by invoice id so a second delivery finds the first result",
        ),
        lessons=(
            "I learned that the invoice export task must be idempotent, because Celery redelivers "
            "the message when a worker dies mid-task and the export then runs a second time.",
            "Decision: we will key every invoice export by its invoice id since a redelivered "
            "message must find the result of the first delivery instead of writing a duplicate.",
        ),
        files=("billing/export.py", "tests/test_export.py"),
        result="no duplicate invoices after killing the worker 20 times",
    ),
    Scenario(
        keywords=("flaky", "total"),
        steps=(
            "found the invoice total test comparing floats",
            "moved the money arithmetic to cents",
        ),
        lessons=(
            "Root cause: the invoice total test compared floats, so 0.1 + 0.2 drifted; fixed by "
            "computing invoice money in integer cents and rounding with `Decimal` only for display.",
        ),
        files=("billing/money.py", "tests/test_totals.py"),
        result="the invoice total test passed 500 runs in a row",
    ),
    Scenario(
        keywords=("resume", "partial", "half"),
        steps=(
            "stopped the worker in the middle of an export",
            "export to a temporary name, then rename",
        ),
        lessons=(
            "Lesson learned: write each invoice export file to a temporary name and rename it when "
            "complete, because a crash mid-write left half a file that the next export trusted.",
        ),
        files=("billing/export.py",),
        result="stopping the worker mid-export leaves no partial invoice file",
    ),
)

GENERIC = Scenario(
    keywords=(),
    steps=("read the mission and the swarm's knowledge", "made the change the objective asks for"),
    lessons=(),
    files=("billing/export.py",),
    result="the objective is met",
)

DIRECTIVES = re.compile(r"<swarm_knowledge_directives>(.*?)</swarm_knowledge_directives>", re.S)


def say(line: str = "") -> None:
    print(line, flush=True)


def mark(line: str) -> None:
    """A marker line as a paragraph of its own: forge mines paragraphs, and a run of markers
    read as one paragraph could pass for a lesson."""
    print(line + "\n", flush=True)


def section(prompt: str, title: str) -> str:
    """The body of ``## <title>`` in the prompt."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", prompt, re.M | re.S)
    return match.group(1).strip() if match else ""


def pick(objective: str) -> Scenario:
    words = objective.lower()
    best = max(SCENARIOS, key=lambda s: sum(k in words for k in s.keywords))
    return best if any(k in words for k in best.keywords) else GENERIC


def acknowledge(prompt: str) -> list[tuple[str, str]]:
    """Every directive shown: (entry id, lesson); each acknowledged as applied."""
    block = DIRECTIVES.search(prompt)
    if block is None:
        return []
    trace = re.search(r"^trace_id: (\S+)$", block.group(1), re.M)
    shown = re.findall(r"^- id: (\S+)\n(?:  .*\n)*?  lesson: (.*)$", block.group(1), re.M)
    for entry_id, _lesson in shown:
        mark(f"NOTE: applying directive {entry_id}")
        if trace:
            mark(f"KNOWLEDGE_APPLIED:{trace.group(1)}:{entry_id} reason=followed it in this change")
    return [(entry_id, lesson) for entry_id, lesson in shown]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: example_agent.py PROMPT_FILE", file=sys.stderr)
        return 2
    prompt = Path(argv[1]).read_text(encoding="utf-8")
    objective = section(prompt, "Objective")
    scenario = pick(objective)
    say()
    mark("CHECKPOINT: read the mission, its memory and the knowledge directives")
    applied = acknowledge(prompt)
    for step in scenario.steps:
        mark(f"CHECKPOINT: {step}")
    for path in scenario.files:
        mark(f"FILE: {path}")
    for lesson in scenario.lessons:  # separate paragraphs, as a chat transcript has them
        say(lesson)
        say()
    mark(f"RESULT: {scenario.result}")
    say("BEGIN HANDOFF")
    say("## Completed")
    for step in scenario.steps:
        say(f"- {step}")
    say("## Files touched")
    for path in scenario.files:
        say(f"- {path}")
    say("## Next exact action")
    say(
        "Nothing: done."
        + (f" Applied {len(applied)} directive(s) from the swarm." if applied else "")
    )
    say("END HANDOFF")
    code = int(os.environ.get("EXAMPLE_AGENT_EXIT", "0") or 0)
    if code:
        say(f"example agent: exiting with status {code} as EXAMPLE_AGENT_EXIT asks")
        return code
    say("STATE: DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
