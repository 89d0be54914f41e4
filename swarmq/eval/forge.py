"""Forge quality on labelled real sessions: precision, recall and F1 per format and overall.

The labels file (``eval/forge/labels.yaml``) lists, per session, every lesson a careful engineer
would keep (one sentence plus its distinctive ``words``) or ``none: true``, and a fixed ``split``
(``tune`` / ``held-out``). Forge runs over the chosen sessions, in file-name order, in one scratch
AgentOps workspace (so its per-workspace memory of seen passages works as it does for a user).

**Matching rule.** A candidate matches a label when every entry of the label's ``words`` occurs in
the candidate's content, case-insensitively, as a whole token run (not inside a longer word: ``rg``
does not match ``merge``); an entry ``a|b`` is satisfied by either alternative. Each label counts
once and each candidate stands for one label at most, assigned so that as many labels as possible
are found: ``tp`` is the number of labels matched, ``fn`` the labels left, ``fp`` the candidates
that match no label of their session. A candidate that matches only labels other candidates
stand for is *redundant*: reported, but neither a hit nor a false positive.

**Kinds.** A label may say ``kind: tool-error`` (learned from a tool call that failed in the
transcript); any other is ``prose`` (stated by the user or the agent). Recall is reported per kind,
because the issue-24 bar holds tool-error lessons to their own recall.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from swarmq.errors import InvalidInput
from swarmq.eval.metrics import Counts, HitRate
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.forge.ledger import ForgeResult
from swarmq.forge.llm import Completer
from swarmq.storage.locking import LocalLocks

SPLITS = ("tune", "held-out", "all")
KINDS = ("tool-error", "prose")


class LabelsError(InvalidInput):
    """The labels file is not what :func:`load_labels` expects; the message says where."""


@dataclass(frozen=True)
class Lesson:
    text: str
    words: tuple[tuple[str, ...], ...]
    """Each entry is a set of alternatives, every entry must match."""
    kind: str = "prose"
    """``tool-error`` (learned from a failing tool call in the transcript) or ``prose``."""

    def matches(self, content: str) -> bool:
        lowered = content.lower()
        return all(any(_contains(lowered, alt) for alt in entry) for entry in self.words)


@dataclass(frozen=True)
class LabelledSession:
    file: Path
    format: str
    split: str
    lessons: tuple[Lesson, ...]
    repo: str = "?"
    """The public repository the session was committed to (``SOURCES.md``): the unit across
    which generalisation is measured (one user, one set of habits and templates)."""


def _contains(text: str, word: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", text) is not None


def load_labels(path: Path) -> list[LabelledSession]:
    """Parse and check the labels file; session files are resolved next to it (``sessions/``)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise LabelsError(f"{path}: cannot read labels: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("sessions"), list):
        raise LabelsError(f"{path}: expected a mapping with a 'sessions' list")
    out: list[LabelledSession] = []
    for i, item in enumerate(data["sessions"]):
        where = f"{path}: sessions[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("file"), str):
            raise LabelsError(f"{where}: needs a 'file'")
        split = item.get("split")
        if split not in ("tune", "held-out"):
            raise LabelsError(
                f"{where} ({item['file']}): split must be 'tune' or 'held-out', not {split!r}"
            )
        lessons_raw = item.get("lessons") or []
        if bool(item.get("none")) == bool(lessons_raw):
            raise LabelsError(f"{where} ({item['file']}): give either 'lessons' or 'none: true'")
        lessons = []
        for j, lesson in enumerate(lessons_raw):
            words = lesson.get("words") if isinstance(lesson, dict) else None
            if (
                not isinstance(words, list)
                or not words
                or not isinstance(lesson.get("lesson"), str)
            ):
                raise LabelsError(
                    f"{where}.lessons[{j}]: needs 'lesson' and a non-empty 'words' list"
                )
            kind = lesson.get("kind", "prose")
            if kind not in KINDS:
                raise LabelsError(
                    f"{where}.lessons[{j}]: kind must be one of {', '.join(KINDS)}, not {kind!r}"
                )
            lessons.append(
                Lesson(
                    lesson["lesson"],
                    tuple(
                        tuple(alt.strip().lower() for alt in str(w).split("|") if alt.strip())
                        for w in words
                    ),
                    kind,
                )
            )
        file = path.parent / "sessions" / item["file"]
        if not file.is_file():
            raise LabelsError(f"{where}: no such session file {file}")
        repo = item.get("repo", "?")
        if not isinstance(repo, str) or not repo:
            raise LabelsError(f"{where} ({item['file']}): 'repo' must be a non-empty string")
        out.append(
            LabelledSession(file, str(item.get("format") or "?"), split, tuple(lessons), repo)
        )
    return out


@dataclass
class SessionOutcome:
    session: LabelledSession
    counts: Counts = field(default_factory=Counts)
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    hits: list[str] = field(default_factory=list)
    found_kinds: dict[str, int] = field(default_factory=dict)
    """Lessons found, per kind (the session's labels give the totals)."""
    redundant: int = 0
    candidates: int = 0


@dataclass
class ForgeEvaluation:
    split: str
    sessions: list[SessionOutcome]

    def by_format(self) -> dict[str, Counts]:
        out: dict[str, Counts] = {}
        for s in self.sessions:
            out[s.session.format] = out.get(s.session.format, Counts()) + s.counts
        return dict(sorted(out.items()))

    def by_repo(self) -> dict[str, Counts]:
        """Counts per source repository: a rule that only helps one user's sessions shows here."""
        out: dict[str, Counts] = {}
        for s in self.sessions:
            out[s.session.repo] = out.get(s.session.repo, Counts()) + s.counts
        return dict(sorted(out.items()))

    @property
    def overall(self) -> Counts:
        return sum((s.counts for s in self.sessions), Counts())

    def recall_by_kind(self) -> dict[str, HitRate]:
        """Lessons found out of lessons labelled, per kind (``tool-error``, ``prose``)."""
        out = {kind: HitRate() for kind in KINDS}
        for s in self.sessions:
            for kind in KINDS:
                total = sum(1 for lesson in s.session.lessons if lesson.kind == kind)
                out[kind] = out[kind] + HitRate(s.found_kinds.get(kind, 0), total)
        return out

    def as_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "split": self.split,
            "sessions": len(self.sessions),
            "lessons": sum(len(s.session.lessons) for s in self.sessions),
            "candidates": sum(s.candidates for s in self.sessions),
            "redundant": sum(s.redundant for s in self.sessions),
            "overall": self.overall.as_dict(),
            "by_format": {k: v.as_dict() for k, v in self.by_format().items()},
            "by_repo": {k: v.as_dict() for k, v in self.by_repo().items()},
            "recall_by_kind": {k: v.as_dict() for k, v in self.recall_by_kind().items()},
        }
        if verbose:
            out["details"] = [
                {
                    "file": s.session.file.name,
                    "format": s.session.format,
                    "split": s.session.split,
                    "repo": s.session.repo,
                    **s.counts.as_dict(),
                    "hits": s.hits,
                    "misses": s.misses,
                    "false_positives": s.false_positives,
                }
                for s in self.sessions
            ]
        return out


def score(session: LabelledSession, candidates: Iterable[dict[str, Any]]) -> SessionOutcome:
    """Match one session's candidates (dicts with ``content``) against its labels: each
    candidate stands for at most one label, and the labels found are as many as any such
    assignment allows (a maximum bipartite matching, so a candidate matching two labels never
    hides one of them behind the other)."""
    outcome = SessionOutcome(session)
    options: list[list[int]] = []
    for cand in candidates:
        outcome.candidates += 1
        content = str(cand.get("content", ""))
        matched = [i for i, lesson in enumerate(session.lessons) if lesson.matches(content)]
        options.append(matched)
        if not matched:
            outcome.false_positives.append(
                {
                    "type": cand.get("type"),
                    "confidence": cand.get("confidence"),
                    "content": content[:400],
                }
            )
    owner = _matching(options)
    found = set(owner)
    outcome.redundant = sum(1 for m in options if m) - len(found)
    outcome.hits = [session.lessons[i].text for i in sorted(found)]
    for i in found:
        kind = session.lessons[i].kind
        outcome.found_kinds[kind] = outcome.found_kinds.get(kind, 0) + 1
    outcome.misses = [lesson.text for i, lesson in enumerate(session.lessons) if i not in found]
    fp = len(outcome.false_positives)
    outcome.counts = Counts(len(found), fp, len(session.lessons) - len(found))
    return outcome


def _matching(options: list[list[int]]) -> dict[int, int]:
    """Label → candidate of a maximum matching (Kuhn's augmenting paths; a session has tens of
    candidates at most)."""
    owner: dict[int, int] = {}

    def place(cand: int, seen: set[int]) -> bool:
        for label in options[cand]:
            if label in seen:
                continue
            seen.add(label)
            if label not in owner or place(owner[label], seen):
                owner[label] = cand
                return True
        return False

    for cand in range(len(options)):
        if options[cand]:
            place(cand, set())
    return owner


def evaluate(
    labels: Path,
    *,
    split: str = "held-out",
    config: ForgeConfig | None = None,
    workspace: Path | None = None,
    completer: Completer | None = None,
) -> ForgeEvaluation:
    """Forge the sessions of ``split`` in one scratch workspace, in file order (so forge's memory
    of passages seen in earlier sessions builds up as in real use), and score each one. With a
    ``completer`` and ``config.llm.enabled`` the optional LLM pass runs too and is scored alike."""
    if split not in SPLITS:
        raise LabelsError(f"unknown split {split!r}; one of {', '.join(SPLITS)}")
    sessions = load_labels(labels)
    chosen = sorted(
        (s for s in sessions if split == "all" or s.split == split), key=lambda s: s.file.name
    )
    outcomes = [
        score(session, (c.as_dict() | {"content": c.content} for c in result.found))
        for session, result in forged(
            chosen, config=config, workspace=workspace, completer=completer
        )
    ]
    return ForgeEvaluation(split, outcomes)


def forged(
    sessions: Iterable[LabelledSession],
    *,
    config: ForgeConfig | None = None,
    workspace: Path | None = None,
    completer: Completer | None = None,
) -> Iterator[tuple[LabelledSession, ForgeResult]]:
    """Forge ``sessions`` in the order given, in one scratch workspace (``workspace``, or a
    temporary one), as a user's swarm forges them: each with what forge kept of the ones
    before it."""
    with tempfile.TemporaryDirectory(prefix="swarmq-eval-forge-") as scratch:
        root = workspace or Path(scratch)
        layout = AgentsLayout(root / "project" / ".agents")
        locks = LocalLocks(root / "locks")
        for session in sessions:
            result = forge_transcript(
                session.file,
                layout,
                locks,
                config or ForgeConfig(),
                force=True,
                completer=completer,
            )
            yield session, result
