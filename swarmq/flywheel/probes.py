"""Probe observations: a path a session looked for where it is not, and what it then learned.

An agent that runs ``sed -n 1,200p vite.config.js`` and reads "No such file or directory",
then finds ``apps/web/vite.config.mjs``, has learned something about the project, yet forge
keeps no lesson of it: one failing look followed by another is, in most sessions, just the
next look (the forge labels call it no lesson, and forge's precision depends on leaving it
out). The same wrong look in a *later* session is another matter: it is a mistake the swarm
has seen before. So the look is kept here, apart from the lessons, as an observation: never a
pool candidate, never promoted, never published to the knowledge store, never injected at a
session's start or for a task's words. It is shown at one moment only: a failing probe of the
same missing path (:func:`swarmq.knowledge.missing.same_path`) in another session of the same
project, where it says what the first session learned ("`vite.config.js` does not exist here;
the file is `apps/web/vite.config.mjs`").

Recurrence does not promote it. Shown at the failing call it already answers the recurrence
at the moment it matters, for the price of the one failed look; promoted, it would be
injected by its words or at every session start, where most such facts (a guessed file name,
a folder that moved) are noise to a session that never looks there.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from swarmq.flywheel.model import parse_time, rfc3339
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.missing import MissingPath, names_file, path_key, same_path
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.jsonl import CorruptLine, JsonlLine, iter_jsonl, read_jsonl, rewrite_jsonl
from swarmq.storage.locking import StoreLocks

FOUND = "found"
"""The session found what it looked for under another path."""
ABSENT = "absent"
"""The session established that the path is not there (a listing of its folder without it)."""


@dataclass(frozen=True, slots=True)
class ProbeObservation:
    """A failed probe of a missing path and how the session resolved it."""

    session_id: str
    call: str
    """The failed probe (clipped)."""
    missing: str
    """The path it looked for, as the error wrote it."""
    resolution: str
    """:data:`FOUND` or :data:`ABSENT`."""
    found: str
    """Where it is (``FOUND``), or the listing that showed it absent (``ABSENT``)."""
    observed_at: datetime | None = None
    source: str = ""
    """The transcript, and the line of the failing result (``path:line``)."""

    @property
    def key(self) -> str:
        return path_key(self.missing)

    @property
    def id(self) -> str:
        digest = hashlib.sha1(
            f"{self.session_id}\0{self.missing.lower()}\0{self.found.lower()}".encode()
        ).hexdigest()
        return f"probe-{digest[:12]}"

    def statement(self) -> str:
        """What the session learned, for the agent that is about to look again."""
        name = self.missing.strip()
        if self.resolution == FOUND:
            kind = "the file is" if names_file(self.found) else "it is"
            fact = f"`{name}` does not exist here; {kind} `{self.found}`"
        else:
            fact = f"`{name}` does not exist here (`{self.found}` does not list it)"
        return f"`{self.call}` failed: {fact}."

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "key": self.key,
            "session_id": self.session_id,
            "call": self.call,
            "missing": self.missing,
            "resolution": self.resolution,
            "found": self.found,
            "observed_at": rfc3339(self.observed_at) if self.observed_at else None,
            "source": self.source,
        }


def _parsed(value: Any) -> ProbeObservation | None:
    if not isinstance(value, dict):
        return None
    if not all(isinstance(value.get(f), str) and value.get(f) for f in FIELDS):
        return None
    return ProbeObservation(
        value["session_id"],
        value["call"],
        value["missing"],
        value["resolution"],
        value["found"],
        parse_time(value.get("observed_at")),
        str(value.get("source") or ""),
    )


def observations(layout: AgentsLayout) -> Iterator[ProbeObservation]:
    """Every recorded observation (damaged lines skipped: :func:`read_observations` names
    them)."""
    yield from read_observations(layout).items


FIELDS = ("session_id", "call", "missing", "resolution", "found")
"""What a line must carry, each a non-empty string, to be an observation."""


@dataclass(frozen=True, slots=True)
class ObservationsRead:
    """Every observation of a workspace, in file order, and the lines that are none: a person
    auditing what the swarm will show must see the damage too, not a shorter list."""

    items: list[ProbeObservation]
    problems: list[str]
    """``path:line: why`` of each line that is not JSON or not an observation."""


def _problem(layout: AgentsLayout, line: JsonlLine) -> str:
    return (
        f"{layout.probes}:{line.line_no}: not an observation (each of "
        f"{', '.join(FIELDS)} must be a non-empty string); recall skips it"
    )


def read_observations(layout: AgentsLayout) -> ObservationsRead:
    """The observations and the damaged lines of ``.agents/ao/probes.jsonl`` (reads only)."""
    out = ObservationsRead([], [])
    for item in iter_jsonl(layout.probes):
        if isinstance(item, CorruptLine):
            out.problems.append(f"{item.describe(layout.probes)}; recall skips it")
            continue
        parsed = _parsed(item.value)
        if parsed is None:
            out.problems.append(_problem(layout, item))
        else:
            out.items.append(parsed)
    return out


@dataclass(frozen=True, slots=True)
class Forgotten:
    """What :func:`forget_probes` did: the observations removed (none when a name matched
    nothing: then nothing is written), the names that matched nothing, and how many damaged
    lines the rewrite moved to the quarantine file beside it."""

    removed: list[ProbeObservation]
    unmatched: list[str]
    quarantined: int = 0


def _named(item: ProbeObservation, name: str) -> bool:
    """Whether ``name`` (an observation id, or a missing path as the listing shows it) names
    ``item``: an id names one observation, a path every observation of that path (the same
    path by the rule recall matches it with, so forgetting it silences what recall showed)."""
    return item.id == name or same_path(name, item.missing)


def forgotten_ids(layout: AgentsLayout) -> set[str]:
    """The ids of the observations a person forgot (:func:`forget_probes`)."""
    return {
        str(item.value["id"])
        for item in iter_jsonl(layout.probes_forgotten)
        if isinstance(item, JsonlLine) and isinstance(item.value, dict) and item.value.get("id")
    }


def forget_probes(
    layout: AgentsLayout,
    locks: StoreLocks,
    names: Iterable[str],
    *,
    now: datetime | None = None,
) -> Forgotten:
    """Remove the observations ``names`` name (ids or missing paths) from the file, under its
    lock, by an atomic rewrite that puts every other line back byte for byte. A name that
    matches nothing removes nothing at all (the caller reports it); a line that is not JSON is
    moved to ``probes.corrupt.jsonl`` by the rewrite, as every JSONL store does, never lost.
    Each removed observation is kept in ``probes-forgotten.jsonl``, so forging its transcript
    again (grown, or forced) does not record it again."""
    now = now or datetime.now(UTC)
    wanted = [n.strip() for n in names if n.strip()]
    if not wanted:
        return Forgotten([], [])
    with locks.hold(layout.probes_lock) as lease:
        read = read_jsonl(layout.probes)
        keep: list[str] = []
        removed: list[ProbeObservation] = []
        hit: set[str] = set()
        for line in read.lines:
            parsed = _parsed(line.value)
            names_it = [n for n in wanted if parsed is not None and _named(parsed, n)]
            if parsed is not None and names_it:
                removed.append(parsed)
                hit.update(names_it)
            else:
                keep.append(line.raw)
        unmatched = [n for n in wanted if n not in hit]
        if unmatched or not removed:
            return Forgotten([], unmatched)
        # the tombstones first: a crash before the rewrite leaves the observation, which the
        # same command forgets again; after it, a forge never records it again
        forgotten = [{**o.as_dict(), "forgotten_at": rfc3339(now)} for o in removed]
        layout.probes_forgotten.parent.mkdir(parents=True, exist_ok=True)
        append_jsonl(layout.probes_forgotten, forgotten, lease=lease)
        rewrite_jsonl(layout.probes, keep, lease=lease, corrupt=read.corrupt)
    return Forgotten(removed, [], len(read.corrupt))


def _keyed(layout: AgentsLayout, keys: set[str]) -> Iterator[ProbeObservation]:
    """The observations whose line names one of ``keys``: a line is parsed only when its
    ``"key"`` field, as :func:`record_probes` writes it, is one of them (a hook asks this at
    every failing probe)."""
    marks = tuple(f'"key":{json.dumps(k, ensure_ascii=False)}' for k in keys)
    try:
        with layout.probes.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not any(mark in line for mark in marks):
                    continue
                try:
                    parsed = _parsed(json.loads(line))
                except ValueError:
                    continue
                if parsed is not None:
                    yield parsed
    except FileNotFoundError:
        return


def record_probes(
    layout: AgentsLayout, locks: StoreLocks, found: Iterable[ProbeObservation]
) -> int:
    """Append the observations not recorded before (by id: forging a transcript again adds
    nothing); returns how many were added."""
    items = list(found)
    if not items:
        return 0
    with locks.hold(layout.probes_lock) as lease:
        known = {o.id for o in observations(layout)} | forgotten_ids(layout)
        fresh = list({o.id: o for o in items if o.id not in known}.values())
        if fresh:
            layout.probes.parent.mkdir(parents=True, exist_ok=True)
            append_jsonl(layout.probes, [o.as_dict() for o in fresh], lease=lease)
    return len(fresh)


def _other_session(recorded: str, asking: str | None) -> bool:
    """Whether the asking session is not the one that recorded the observation (session ids
    are written whole by one side and inside a file name by the other: a rollout's stem holds
    its id)."""
    if not asking:
        return True
    return not (recorded == asking or recorded in asking or asking in recorded)


def recalled(
    layout: AgentsLayout,
    missing: Iterable[MissingPath],
    *,
    session_id: str | None = None,
    limit: int = 3,
) -> list[ProbeObservation]:
    """The observations of other sessions about the paths a failing probe just missed, the
    most recent first: per missing path, every place it was found (one line each), else the
    latest listing that showed it absent (where it is says more than where it is not)."""
    wanted = [m for m in missing if m.key]
    if not wanted or limit <= 0 or not layout.probes.is_file():
        return []
    keys = {m.key for m in wanted}
    found: dict[tuple[str, str], ProbeObservation] = {}
    absent: dict[str, ProbeObservation] = {}
    for item in _keyed(layout, keys):
        if item.key not in keys or not _other_session(item.session_id, session_id):
            continue
        if not any(same_path(m.path, item.missing) for m in wanted):
            continue
        if item.resolution == FOUND:
            found.pop((item.key, item.found.lower()), None)
            found[(item.key, item.found.lower())] = item  # a later one replaces an earlier
        else:
            absent.pop(item.key, None)
            absent[item.key] = item
    located = {key for key, _ in found}
    out = [*found.values(), *(a for key, a in absent.items() if key not in located)]
    out.sort(key=lambda o: o.observed_at or datetime.min.replace(tzinfo=UTC), reverse=True)
    return out[:limit]


__all__ = [
    "ABSENT",
    "FIELDS",
    "FOUND",
    "Forgotten",
    "ObservationsRead",
    "ProbeObservation",
    "forget_probes",
    "forgotten_ids",
    "observations",
    "read_observations",
    "recalled",
    "record_probes",
]
