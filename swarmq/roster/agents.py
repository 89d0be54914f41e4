"""Is each worker's agent command on this machine? Checked by ``roster validate`` and ``up``.

A mission runs ``agent.command`` with no shell; a command that is not installed makes every
mission of that worker fail. Missing commands are warnings (the roster may be meant for other
machines), each naming the worker and what to do.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from swarmq.missions.agentcli import detect
from swarmq.missions.config import TranscriptSource, WorkerConfig
from swarmq.roster.loader import RosterProblem
from swarmq.roster.schema import Roster

HELP = (
    "install it, or set agent.command to the agent CLI you use (README, 'The agent contract': "
    "Claude Code, Codex or a plain script); `swarmq demo` runs the bundled example agent"
)


def find_command(roster: Roster, worker: WorkerConfig) -> str | None:
    """Why the worker's agent command cannot run here, or None when it can (or has none)."""
    if worker.agent is None:
        return None
    program = worker.agent.command[0]
    if "{" in program:
        return None  # a placeholder: known only when the mission runs
    if os.sep in program or program.startswith("."):
        base = worker.agent.cwd or roster.workspace_dir
        path = Path(program).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            return f"{program!r} does not exist ({path})"
        if not os.access(path, os.X_OK):
            return f"{program!r} is not executable (chmod +x {path})"
        return None
    search = worker.agent.env.get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(program, path=search) is None:
        return f"{program!r} is not on this machine's PATH"
    return None


def transcript_problem(worker: WorkerConfig) -> str | None:
    """Why forge would get the stdout log instead of the agent session ``agent.transcript``
    asks for, when that is known from the roster alone (a warning: a wrapper script may well
    run the CLI it names)."""
    agent = worker.agent
    if agent is None or agent.transcript in (TranscriptSource.AUTO, TranscriptSource.STDOUT):
        if agent is not None and "--no-session-persistence" in agent.command:
            return (
                "the command turns Claude Code's session off (--no-session-persistence): forge "
                "gets its stdout only; drop the flag, or set transcript: stdout to say so"
            )
        return None
    detected = detect(agent.command)
    if detected is not agent.transcript:
        return (
            f"transcript: {agent.transcript.value} but {agent.command[0]!r} is not recognised as "
            f"that CLI ({'claude' if agent.transcript is TranscriptSource.CLAUDE_CODE else 'codex exec'}"
            "): swarmq still looks for its session after each run and forges stdout when there "
            "is none"
        )
    return None


def agent_problems(roster: Roster, file: Path | str) -> list[RosterProblem]:
    problems = []
    for index, worker in enumerate(roster.workers):
        loc = f"workers[{index}]({worker.id}).agent"
        if worker.agent is None:
            if "missions" in worker.queues:
                problems.append(
                    RosterProblem(
                        "warning",
                        loc,
                        "consumes 'missions' but has no agent; its missions fail: "
                        f"add agent.command ({HELP})",
                        str(file),
                    )
                )
            continue
        session = transcript_problem(worker)
        if session is not None:
            problems.append(RosterProblem("warning", f"{loc}.transcript", session, str(file)))
        why = find_command(roster, worker)
        if why is not None:
            problems.append(
                RosterProblem(
                    "warning",
                    f"{loc}.command[0]",
                    f"{why}: every mission sent to {worker.id!r} would fail; {HELP}",
                    str(file),
                )
            )
    return problems
