"""The labels of replayed histories (``eval/replay/labels.yaml``; its header states the rule).

Per project: its sessions in time order, the mistakes that recur in a later session (where each
is first made, and the failing tool call of every later session that repeats it), and the facts
that hold for every session. A mistake or fact ``matches`` an entry when the entry's text holds
every part of one of its groups as a whole token run (not inside a longer word),
case-insensitively.

A mistake may also carry ``cure``: groups of the same kind naming its right cause or cure, as
the label's own text states it. Match groups accept any entry that repeats the error's words, so
a wrong diagnosis quoting the error counts as a catch ("`dashboard` is not installed here" for
PowerShell reading an unquoted ``(dashboard)`` path); a catch *with the cure* must also match
``cure``. A mistake without ``cure`` is scored as before under both readings, so no label needs
rewriting for the stricter figure to exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from swarmq.errors import InvalidInput

SPLITS = ("held-apart", "development", "all")


class ReplayLabelsError(InvalidInput):
    """The labels file is not what :func:`load_labels` expects; the message says where."""


def _pattern(part: str) -> re.Pattern[str]:
    """``part`` as a whole token run: not inside a longer word (``ping`` is not in ``mapping``)."""
    head = r"(?<![a-z0-9_])" if re.match(r"[a-z0-9_]", part) else ""
    tail = r"(?![a-z0-9_])" if re.search(r"[a-z0-9_]$", part) else ""
    return re.compile(head + re.escape(part) + tail)


@dataclass(frozen=True, slots=True)
class Match:
    groups: tuple[tuple[str, ...], ...]

    def matches(self, text: str) -> bool:
        lowered = text.lower()
        return any(all(_pattern(part).search(lowered) for part in group) for group in self.groups)


@dataclass(frozen=True, slots=True)
class Occurrence:
    session: str
    line: int


@dataclass(frozen=True, slots=True)
class Fact:
    id: str
    what: str
    match: Match


@dataclass(frozen=True, slots=True)
class Mistake:
    id: str
    what: str
    match: Match
    first: Occurrence
    recurrences: tuple[Occurrence, ...]
    cure: Match | None = None
    """Groups naming the right cause or cure; None: any matching entry counts as cured."""

    def cured_by(self, text: str) -> bool:
        """``text`` matches this mistake and states its cure (when the label names one)."""
        return self.match.matches(text) and (self.cure is None or self.cure.matches(text))


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    split: str
    sessions: tuple[str, ...]
    mistakes: tuple[Mistake, ...]
    facts: tuple[Fact, ...]

    def matching(self, text: str) -> tuple[str, ...]:
        """Ids of the mistakes and facts ``text`` matches (empty: not relevant here)."""
        items: tuple[Mistake | Fact, ...] = (*self.mistakes, *self.facts)
        return tuple(item.id for item in items if item.match.matches(text))

    def curing(self, text: str) -> tuple[str, ...]:
        """Ids of the mistakes ``text`` matches with their cure (see :class:`Mistake`)."""
        return tuple(m.id for m in self.mistakes if m.cured_by(text))


@dataclass(frozen=True, slots=True)
class ReplayLabels:
    path: Path
    projects: tuple[Project, ...]

    def select(self, split: str) -> tuple[Project, ...]:
        if split not in SPLITS:
            raise ReplayLabelsError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
        return tuple(p for p in self.projects if split == "all" or p.split == split)


def _where(path: Path, where: str, problem: str) -> ReplayLabelsError:
    return ReplayLabelsError(f"{path}: {where}: {problem}")


def _text(path: Path, where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _where(path, where, "must be a non-empty string")
    return value


def _match(path: Path, where: str, value: Any, key: str = "match") -> Match:
    if not isinstance(value, list) or not value:
        raise _where(path, where, f"{key} must be a non-empty list of groups of substrings")
    groups: list[tuple[str, ...]] = []
    for n, group in enumerate(value):
        if not isinstance(group, list) or not group:
            raise _where(path, f"{where}.{key}[{n}]", "must be a non-empty list of substrings")
        groups.append(tuple(_text(path, f"{where}.{key}[{n}]", p).lower() for p in group))
    return Match(tuple(groups))


def _occurrence(path: Path, where: str, value: Any, sessions: tuple[str, ...]) -> Occurrence:
    if not isinstance(value, dict):
        raise _where(path, where, "must be a mapping with session and line")
    session = _text(path, f"{where}.session", value.get("session"))
    line = value.get("line")
    if session not in sessions:
        raise _where(path, where, f"session {session!r} is not one of the project's sessions")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise _where(path, f"{where}.line", "must be a positive line number")
    return Occurrence(session, line)


def _mistake(path: Path, where: str, value: Any, sessions: tuple[str, ...]) -> Mistake:
    if not isinstance(value, dict):
        raise _where(path, where, "must be a mapping")
    first = _occurrence(path, f"{where}.first", value.get("first"), sessions)
    raw = value.get("recurrences")
    if not isinstance(raw, list) or not raw:
        raise _where(path, f"{where}.recurrences", "must be a non-empty list")
    recurrences = tuple(
        _occurrence(path, f"{where}.recurrences[{n}]", item, sessions) for n, item in enumerate(raw)
    )
    for n, item in enumerate(recurrences):
        if sessions.index(item.session) <= sessions.index(first.session):
            raise _where(
                path, f"{where}.recurrences[{n}]", "a recurrence must be in a later session"
            )
    return Mistake(
        _text(path, f"{where}.id", value.get("id")),
        _text(path, f"{where}.what", value.get("what")),
        _match(path, where, value.get("match")),
        first,
        recurrences,
        None if value.get("cure") is None else _match(path, where, value["cure"], "cure"),
    )


def _project(path: Path, where: str, value: Any) -> Project:
    if not isinstance(value, dict):
        raise _where(path, where, "must be a mapping")
    pid = _text(path, f"{where}.id", value.get("id"))
    split = value.get("split")
    if split not in SPLITS[:2]:
        raise _where(path, f"{where}.split", f"must be one of {', '.join(SPLITS[:2])}")
    raw_sessions = value.get("sessions")
    if not isinstance(raw_sessions, list) or not raw_sessions:
        raise _where(path, f"{where}.sessions", "must be a non-empty list of file names")
    sessions = tuple(_text(path, f"{where}.sessions", s) for s in raw_sessions)
    if len(set(sessions)) != len(sessions):
        raise _where(path, f"{where}.sessions", "lists a session twice")
    mistakes = tuple(
        _mistake(path, f"{where}.mistakes[{n}]", item, sessions)
        for n, item in enumerate(value.get("mistakes") or [])
    )
    facts: list[Fact] = []
    for n, item in enumerate(value.get("facts") or []):
        at = f"{where}.facts[{n}]"
        if not isinstance(item, dict):
            raise _where(path, at, "must be a mapping")
        facts.append(
            Fact(
                _text(path, f"{at}.id", item.get("id")),
                _text(path, f"{at}.what", item.get("what")),
                _match(path, at, item.get("match")),
            )
        )
    ids = [m.id for m in mistakes] + [f.id for f in facts]
    if len(set(ids)) != len(ids):
        raise _where(path, where, "mistake and fact ids must be unique")
    return Project(pid, str(split), sessions, mistakes, tuple(facts))


def load_labels(path: Path) -> ReplayLabels:
    """Read and check ``path``; every problem names the file and the item."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ReplayLabelsError(f"{path}: cannot read labels: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("projects"), list):
        raise ReplayLabelsError(f"{path}: expected a mapping with a 'projects' list")
    projects = tuple(_project(path, f"projects[{n}]", p) for n, p in enumerate(data["projects"]))
    if len({p.id for p in projects}) != len(projects):
        raise ReplayLabelsError(f"{path}: project ids must be unique")
    return ReplayLabels(path, projects)
