"""``swarmq demo``: watch a swarm learn in under a minute, on nothing but this machine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from swarmq.cli.common import JsonOption, emit_json
from swarmq.cli.console import say

if TYPE_CHECKING:
    from swarmq.demo.report import DemoReport


def demo(
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir", help="Empty directory for the workspace (default: a new temporary one)."
        ),
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Leave Redis, the workers and the beat running.")
    ] = False,
    no_tmux: Annotated[
        bool, typer.Option("--no-tmux", help="Plain background processes even if tmux exists.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds any one step may take.")] = 120.0,
    as_json: bool = JsonOption,
) -> None:
    """Two workers, an embedded Redis and a scripted EXAMPLE agent: four missions, lessons forged,
    promoted, injected and acknowledged; then everything it started is stopped (unless --keep)."""
    from swarmq.demo.run import run_demo

    def progress(step: str) -> None:
        say(("demo:", "dim"), f" {step}", stderr=True)

    report = run_demo(
        directory, keep=keep, say=progress, use_tmux=False if no_tmux else None, timeout=timeout
    )
    if as_json:
        emit_json(report.as_dict())
        return
    tell(report)


STATUS_WORDS = {
    "COMPOUNDING": "compounding: learnings are reused faster than they age",
    "NEAR ESCAPE": "close to compounding: learnings are reused almost as fast as they age",
    "DECAYING": "decaying: learnings age faster than they are reused",
    "NO DATA": "nothing to measure yet: no learning exists",
}
"""The flywheel's status in words (σ·ρ against δ/100 is ``swarmq flywheel status``'s job)."""

NEXT = (
    ("swarmq forge ~/.claude/projects/<project>/", "mine your Claude Code sessions for lessons "
     "(Codex: ~/.codex/sessions/)"),
    ("swarmq flywheel close-loop", "score what was mined; promote what use has confirmed"),
    ("swarmq pool list", "every candidate lesson, and the gate each one waits on"),
    ("swarmq knowledge list", "what your agents will be shown"),
    ("swarmq hooks install --agent claude-code", "from now on, forge each session as it ends "
     "and hand the knowledge to the next one"),
    ("swarmq mcp install --agent claude-code", "let the agent look lessons up and record its own"),
)  # fmt: skip
"""What to run next, on the user's own sessions."""


def tell(report: DemoReport) -> None:
    """The demo's story in plain words: what was learned (each lesson whole), what became of
    each lesson and why, where it was shown and what the agent did with it, how the flywheel
    moved, where the files are and what to run next."""
    workers = sorted({str(m["worker"]) for m in report.missions})
    say(
        (f"swarmq demo: done in {report.seconds:.1f} s.", "bold"),
        f" {len(report.missions)} missions ran on {len(workers)} workers "
        f"({', '.join(workers)}) with the bundled example agent (a scripted stand-in for Claude "
        "Code or Codex):",
    )
    for number, m in enumerate(report.missions, 1):
        say(f"  {number}. {m['title']} ({m['worker']}): {m['state']}")
    say("")
    say(
        (f"What the agents learned: {len(report.lessons)} lesson(s)", "bold"),
        ", forged from the missions' transcripts:",
    )
    for number, lesson in enumerate(report.lessons, 1):
        say(f"  {number}. {lesson['lesson']}")
        say(("     → ", "dim"), _fate(lesson))
        if lesson.get("entry_id"):
            shown = (
                f'shown to the agent in the prompt of "{lesson["injected_into"]}"'
                if lesson.get("injected_into")
                else "in the knowledge store, not shown to the last mission"
            )
            answer = (
                ", which answered KNOWLEDGE_APPLIED: it used it"
                if lesson.get("acknowledged")
                else ""
            )
            say(("     → ", "dim"), shown + answer)
    say("")
    before, after = report.flywheel_before, report.flywheel_after
    say(
        ("How the flywheel moved:", "bold"),
        f" learnings {before.get('total_artifacts') or 0} → {after.get('total_artifacts') or 0};"
        f" times a learning was shown or applied {before.get('citations_this_period') or 0} → "
        f"{after.get('citations_this_period') or 0}; share of learnings in use "
        f"{(before.get('sigma') or 0):.0%} → {(after.get('sigma') or 0):.0%}. Status: "
        + STATUS_WORDS.get(str(after.get("status")), str(after.get("status"))),
    )
    say("")
    say(("Where to look:", "bold"))
    for name, path in report.files.items():
        say(f"  {name}: {path}")
    say("")
    if report.stopped:
        say(f"Everything the demo started is stopped; its files stay in {report.workspace}.")
    else:
        say(f"Still running (--keep): swarmq --config {report.config} status")
        if report.attach:
            say(f"Watch a worker: {report.attach}")
        say(f"Stop it: swarmq --config {report.config} down")
    say("")
    say(("Next, on your own project:", "bold"))
    width = max(len(command) for command, _ in NEXT)
    for command, what in NEXT:
        say(f"  {command:<{width}}  {what}")


def _fate(lesson: dict[str, Any]) -> str:
    if lesson.get("fate") == "promoted":
        return f"promoted to a learning ({Path(str(lesson['learning'])).name}): {lesson['why']}"
    return str(lesson["why"])
