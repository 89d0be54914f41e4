"""Where forge loses a tool-error lesson, and where its false candidates come from.

Forge runs over labelled sessions with a tracing :class:`SequenceMiner` (it records every tool
result, every failure the miner opened or refused to open, what it gave up, and every sequence it
closed), and each ``tool-error`` lesson it did not keep is placed at the first stage it fails:

* ``no failing call``: no failed call's text (the call and its output) holds any of the label's
  words; sub-cases say whether they are in a call that was not flagged as failing
  (``not flagged``) or in no tool traffic at all (``not in tool traffic``);
* ``not opened``: a failed call holding the words was seen, but the miner opened no failure for
  it; the gate is named by the line of ``_failed`` that returned (or ``repeated`` when the same
  signature was opened before);
* ``given up``: a failure was opened, nothing fixed it and ``_give_up`` found no fact in it;
* ``dropped later``: a sequence was closed for it, but no kept candidate holds its failed call
  (the confidence threshold, the same-cause merge, dedup);
* ``words missing``: a kept tool candidate is about the failure (holds its call), but not every
  word of the label; the missing words are counted.

The lesson's failing call is the failed call whose text holds the most of the label's word
entries (ties: the first). False candidates are counted by where they came from: the miner
(``sequence``, with or without a fix), the agent's prose, or the user's words.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from swarmq.eval.forge import LabelledSession, Lesson, load_labels, score
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge import extract
from swarmq.forge.config import ForgeConfig
from swarmq.forge.trace import Trace, traced
from swarmq.storage.locking import LocalLocks
from swarmq.transcripts.reader import open_transcript

STAGES = ("kept", "no failing call", "not opened", "given up", "dropped later", "words missing")


class Candidate(Protocol):
    """What this module reads of a forged candidate."""

    @property
    def content(self) -> str: ...
    @property
    def extractor(self) -> str: ...
    @property
    def role(self) -> str: ...


@dataclass
class Stages:
    lessons: int = 0
    stages: Counter[str] = field(default_factory=Counter)
    by_format: dict[str, Counter[str]] = field(default_factory=dict)
    detail: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(stage, gate / sub-case / missing word) → lessons."""
    false: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(format, origin) → false candidates."""
    examples: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(session, stage, detail, lesson) of every lesson not kept."""


def _entries(lesson: Lesson, text: str) -> int:
    return sum(1 for entry in lesson.words if Lesson("", (entry,)).matches(text))


def _origin(candidate: Candidate) -> str:
    if candidate.extractor == "sequence":
        fixed = "`" in candidate.content and (
            "worked instead" in candidate.content or "the same call worked" in candidate.content
        )
        return "sequence (fixed)" if fixed else "sequence (fact / unfixed)"
    return f"{candidate.extractor} {candidate.role}"


def _place(
    lesson: Lesson, trace: Trace, kept: Iterable[Candidate], messages_text: str
) -> tuple[str, str]:
    failing = [s for s in trace.results if s.failed]
    best = max(failing, key=lambda s: _entries(lesson, f"{s.call}\n{s.output}"), default=None)
    if best is None or _entries(lesson, f"{best.call}\n{best.output}") == 0:
        if any(_entries(lesson, f"{s.call}\n{s.output}") for s in trace.results):
            return "no failing call", "not flagged"
        if lesson.matches(messages_text) or _entries(lesson, messages_text):
            return "no failing call", "only in prose"
        return "no failing call", "not in tool traffic"
    head = best.call[:60]
    tools = [c for c in kept if c.extractor == "sequence"]
    about = [c for c in tools if head and head in c.content]
    if about:
        missing = [
            "|".join(entry)
            for entry in lesson.words
            if not any(Lesson("", (entry,)).matches(c.content) for c in about)
        ]
        return "words missing", ", ".join(missing)
    if not best.opened:
        return "not opened", best.gate
    if any(s.failed_call[:60] == head for s in trace.sequences):
        return "dropped later", ""
    if best.call[:60] in (c[:60] for c in trace.given_up):
        return "given up", "no cure seen, no fact in its error"
    return "given up", "(opened, never closed)"


def stages(labels: list[Path], *, config: ForgeConfig | None = None) -> Stages:
    """Place every tool-error lesson of every session of ``labels`` (see the module docstring);
    each labels file is forged in its own scratch workspace, as ``eval forge`` does."""
    config = config or ForgeConfig()
    out = Stages()
    for path in labels:
        sessions = sorted(load_labels(path), key=lambda s: s.file.name)
        with tempfile.TemporaryDirectory(prefix="swarmq-forge-stages-") as scratch:
            layout = AgentsLayout(Path(scratch) / "project" / ".agents")
            locks = LocalLocks(Path(scratch) / "locks")
            for session in sessions:
                _session(session, layout, locks, config, out)
    return out


def _session(
    session: LabelledSession,
    layout: AgentsLayout,
    locks: LocalLocks,
    config: ForgeConfig,
    out: Stages,
) -> None:
    trace = Trace()
    with traced(trace):
        result = extract.forge_transcript(session.file, layout, locks, config, force=True)
    found = list(result.found)
    outcome = score(session, (c.as_dict() | {"content": c.content} for c in found))
    for candidate in found:
        if not any(lesson.matches(candidate.content) for lesson in session.lessons):
            out.false[(session.format, _origin(candidate))] += 1
    texts = "\n".join(m.text for m in open_transcript(session.file).messages())
    counter = out.by_format.setdefault(session.format, Counter())
    for lesson in session.lessons:
        if lesson.kind != "tool-error":
            continue
        out.lessons += 1
        if lesson.text in outcome.hits:
            stage, detail = "kept", ""
        else:
            stage, detail = _place(lesson, trace, found, texts)
            out.examples.append((session.file.name, stage, detail, lesson.text))
        out.stages[stage] += 1
        counter[stage] += 1
        out.detail[(stage, detail)] += 1


def render(s: Stages, *, examples: bool = False) -> str:
    lines = [f"{s.lessons} tool-error lessons"]
    for stage in STAGES:
        lines.append(f"  {stage:<16} {s.stages[stage]:3}")
    for fmt, counter in sorted(s.by_format.items()):
        lines.append(
            f"  {fmt}: " + ", ".join(f"{st} {counter[st]}" for st in STAGES if counter[st])
        )
    lines.append("details (stage / gate, sub-case or missing words):")
    lines += [
        f"  {n:3} {stage}: {detail}"
        for (stage, detail), n in s.detail.most_common()
        if stage != "kept"
    ]
    lines.append("false candidates (format, origin):")
    lines += [f"  {n:3} {fmt}: {origin}" for (fmt, origin), n in sorted(s.false.items())]
    if examples:
        lines += [f"  {f} [{st}: {d}] {t[:150]!r}" for f, st, d, t in s.examples]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """``python -m swarmq.eval.forge_stages [--examples] LABELS...``"""
    args = list(sys.argv[1:] if argv is None else argv)
    show = "--examples" in args
    paths = [Path(a) for a in args if a != "--examples"]
    print(render(stages(paths), examples=show))


if __name__ == "__main__":
    main()
