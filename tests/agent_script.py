"""A small, real agent for mission tests: prints checkpoint markers and a handoff.

argv: agent_script.py <prompt_file> [--exit N] [--hang] [--block] [--pause-first S] [--review]
Writes ``$SWARMQ_MISSION_DIR/agent-started-<attempt>`` when it starts, so a test can act mid-run,
and, when ``$SWARMQ_AGENT_STARTS`` names a file, appends one line to it per start (mission,
assignment, attempt): the count of starts across every worker and redelivery.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def say(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str]) -> int:
    prompt_file = Path(argv[1])
    opts = argv[2:]
    attempt = os.environ.get("SWARMQ_ATTEMPT", "1")
    mission_dir = Path(os.environ["SWARMQ_MISSION_DIR"])
    (mission_dir / f"agent-started-{attempt}").write_text(str(os.getpid()))
    starts = os.environ.get("SWARMQ_AGENT_STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as log:  # one short line: one O_APPEND write
            log.write(
                f"{os.environ['SWARMQ_MISSION_ID']} {os.environ['SWARMQ_ASSIGNMENT_ID']} "
                f"{attempt} {os.getpid()}\n"
            )
    prompt = prompt_file.read_text("utf-8")
    say(f"agent running in HERMES_HOME={os.environ.get('HERMES_HOME')}")
    say(f"prompt has {len(prompt)} chars; resuming={'RESUMING' in prompt}")
    say("CHECKPOINT: read the mission objective")
    say("DECISION: keep the change small")
    say("FILE: src/example.py")
    if "--pause-first" in opts and attempt == "1":
        time.sleep(float(opts[opts.index("--pause-first") + 1]))
    if "--hang" in opts:
        time.sleep(3600)
    say("CHECKPOINT: implemented the change")
    if "--block" in opts:
        say("BLOCKED: need staging credentials")
        say("STATE: BLOCKED")
        return 0
    if "--exit" in opts:
        say("something went wrong")
        return int(opts[opts.index("--exit") + 1])
    say("NEXT: open a pull request")
    say("RESULT: 3 tests pass")
    say("BEGIN HANDOFF")
    say("## Completed")
    say("- implemented the change")
    say("## Commands run")
    say("- pytest -q")
    say("## Next exact action")
    say("Open the pull request.")
    say("END HANDOFF")
    say("STATE: REVIEW" if "--review" in opts else "STATE: DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
