"""Where forge loses recall: candidate generation or the confidence threshold.

Each labelled lesson is placed at the first stage that reaches it, best first:

* ``kept``: found by forge at default settings;
* ``below-threshold``: found only with ``min_confidence`` 0 (every candidate the classifier
  scores is kept): the threshold lost it;
* ``passage``: some passage of a mined message (user, assistant, summaries) matches it, but the
  classifier rejected that passage before scoring it (the reason is counted per speaker);
* ``message``: a mined message matches as a whole, no single passage does;
* ``tool/other``: only tool calls, tool results, reasoning or unmined text match it;
* ``nowhere``: no single message matches it (the words are spread over several).

So ``kept / lessons`` is forge's recall, ``(kept + below-threshold) / lessons`` the ceiling of
re-scoring the candidates forge generates, and ``+ passage`` the ceiling of re-scoring every
passage it reads.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from swarmq.eval.forge import Lesson, evaluate, load_labels
from swarmq.forge.classifier import classify
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import minable
from swarmq.forge.passages import passages
from swarmq.transcripts.model import MINABLE_KINDS, Message
from swarmq.transcripts.reader import open_transcript

STAGES = ("kept", "below-threshold", "passage", "message", "tool/other", "nowhere")


@dataclass
class Ceiling:
    lessons: int = 0
    stages: Counter[str] = field(default_factory=Counter)
    by_format: dict[str, Counter[str]] = field(default_factory=dict)
    rejected: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(speaker, classifier reason) of the first matching passage of each ``passage`` lesson."""
    examples: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(session file, speaker, reason, passage) for each ``passage`` lesson."""

    def recall(self, *stages: str) -> float:
        return sum(self.stages[s] for s in stages) / self.lessons if self.lessons else 0.0


def _stage(
    lesson: Lesson, messages: list[Message], config: ForgeConfig
) -> tuple[str, str, str, str]:
    """The stage, and for ``passage`` the speaker, reason and passage."""
    mined = [m for m in messages if m.kind in MINABLE_KINDS and minable(m, config)]
    for message in mined:
        for lead, passage in passages(message.text):
            if lesson.matches(passage):
                verdict = classify(
                    passage, min_confidence=0.0, lead=lead, observed=message.role != "user"
                )
                return "passage", message.role, verdict.reason, passage
    if any(lesson.matches(m.text) for m in mined):
        return "message", "", "", ""
    if any(lesson.matches(m.text) for m in messages):
        return "tool/other", "", "", ""
    return "nowhere", "", "", ""


def ceiling(labels: Path, *, split: str = "all", config: ForgeConfig | None = None) -> Ceiling:
    """Place every lesson of ``split`` (see the module docstring) under ``config`` (default
    settings when none)."""
    config = config or ForgeConfig()
    kept = {
        o.session.file.name: set(o.hits)
        for o in evaluate(labels, split=split, config=config).sessions
    }
    unscored = config.model_copy(update={"min_confidence": 0.0})
    scored = {
        o.session.file.name: set(o.hits)
        for o in evaluate(labels, split=split, config=unscored).sessions
    }
    out = Ceiling()
    for session in sorted(load_labels(labels), key=lambda s: s.file.name):
        if split != "all" and session.split != split:
            continue
        messages: list[Message] | None = None
        counter = out.by_format.setdefault(session.format, Counter())
        for lesson in session.lessons:
            out.lessons += 1
            if lesson.text in kept[session.file.name]:
                stage = "kept"
            elif lesson.text in scored[session.file.name]:
                stage = "below-threshold"
            else:
                if messages is None:
                    messages = list(open_transcript(session.file).messages())
                stage, role, reason, passage = _stage(lesson, messages, config)
                if stage == "passage":
                    out.rejected[(role, reason)] += 1
                    out.examples.append((session.file.name, role, reason, passage))
            out.stages[stage] += 1
            counter[stage] += 1
    return out


def render(c: Ceiling, *, examples: bool = False) -> str:
    lines = [f"{c.lessons} lessons"]
    running = 0
    for stage in STAGES:
        running += c.stages[stage]
        lines.append(
            f"  {stage:<16} {c.stages[stage]:3}   recall if kept up to here {running / max(1, c.lessons):.2f}"
        )
    for fmt, counter in sorted(c.by_format.items()):
        lines.append(f"  {fmt}: " + ", ".join(f"{s} {counter[s]}" for s in STAGES if counter[s]))
    lines.append(
        "rejected before scoring (speaker, reason): "
        + ", ".join(f"{role}/{reason} {n}" for (role, reason), n in c.rejected.most_common())
    )
    if examples:
        lines += [f"  {f} [{role} {reason}] {p[:160]!r}" for f, role, reason, p in c.examples]
    return "\n".join(lines)
