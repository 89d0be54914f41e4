"""Knowledge entries (opencode-swarm v1 and v2) as they sit on disk, with typed read access.

An :class:`Entry` keeps the parsed JSON object *and* the exact line it was read from. Writing an
entry that no operation changed puts back that line byte for byte (unknown keys, key order,
``0.43999999999999995``, ``1`` vs ``1.0``, literal Chinese text, timestamps). A change produces a
new entry without a raw line, serialised in ``JSON.stringify`` form with the original key order
and new keys appended, as JavaScript would. Read-time normalisation (v1 counters → v2) is a view:
it never rewrites the disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeGuard

from swarmq.errors import InvalidInput
from swarmq.knowledge.serialize import dumps_js


class Category(StrEnum):
    PROCESS = "process"
    ARCHITECTURE = "architecture"
    TOOLING = "tooling"
    SECURITY = "security"
    TESTING = "testing"
    DEBUGGING = "debugging"
    PERFORMANCE = "performance"
    INTEGRATION = "integration"
    TODO = "todo"
    OTHER = "other"


class Status(StrEnum):
    """Lifecycle of an entry: candidate → established → promoted; the rest are inactive."""

    CANDIDATE = "candidate"
    ESTABLISHED = "established"
    PROMOTED = "promoted"
    ARCHIVED = "archived"
    QUARANTINED = "quarantined"
    QUARANTINED_UNACTIONABLE = "quarantined_unactionable"


ACTIVE_STATUSES = frozenset({Status.CANDIDATE, Status.ESTABLISHED, Status.PROMOTED})
INACTIVE_STATUSES = frozenset(
    {Status.ARCHIVED, Status.QUARANTINED, Status.QUARANTINED_UNACTIONABLE}
)
ALLOWED_TRANSITIONS: Mapping[Status, frozenset[Status]] = MappingProxyType(
    {
        Status.CANDIDATE: frozenset({Status.ESTABLISHED, Status.ARCHIVED, Status.QUARANTINED}),
        Status.ESTABLISHED: frozenset({Status.PROMOTED, Status.ARCHIVED, Status.QUARANTINED}),
        Status.PROMOTED: frozenset({Status.QUARANTINED, Status.ARCHIVED}),
        Status.ARCHIVED: frozenset({Status.CANDIDATE, Status.ESTABLISHED, Status.PROMOTED}),
        Status.QUARANTINED: frozenset({Status.CANDIDATE, Status.ESTABLISHED, Status.PROMOTED}),
        Status.QUARANTINED_UNACTIONABLE: frozenset({Status.CANDIDATE}),
    }
)
"""The transitions swarmq performs (restore returns to the prior status)."""

PRE_ARCHIVE_KEY = "pre_archive_status"
"""The entry field recorded when an entry is archived, so restore can return it to that status."""


class Tier(StrEnum):
    SWARM = "swarm"
    HIVE = "hive"


class DirectivePriority(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class ReportedBy(StrEnum):
    ARCHITECT = "architect"
    USER = "user"
    AUTO = "auto"


class RetrievalMode(StrEnum):
    PHASE_START = "phase_start"
    DELEGATION = "delegation"
    TOOL_BEFORE = "tool_before"
    PHASE_COMPLETE = "phase_complete"
    MANUAL_RECALL = "manual_recall"
    CURATOR = "curator"
    FAILURE_RECALL = "failure_recall"
    """swarmq: lessons recalled by the failure signature of a failing tool call."""
    SESSION_START = "session_start"
    """swarmq: a project's facts at the start of a session, whatever the task."""


SWARM_KEY_ORDER: tuple[str, ...] = (
    "id",
    "tier",
    "lesson",
    "category",
    "tags",
    "scope",
    "confidence",
    "status",
    "confirmed_by",
    "retrieval_outcomes",
    "schema_version",
    "created_at",
    "updated_at",
    "project_name",
    "auto_generated",
)
"""Key order of entries the opencode-swarm curator writes."""

HIVE_KEY_ORDER: tuple[str, ...] = (
    "id",
    "tier",
    "lesson",
    "category",
    "tags",
    "scope",
    "confidence",
    "status",
    "confirmed_by",
    "retrieval_outcomes",
    "schema_version",
    "created_at",
    "updated_at",
    "source_project",
    "encounter_score",
)

DIRECTIVE_LIST_FIELDS: tuple[str, ...] = (
    "triggers",
    "required_actions",
    "forbidden_actions",
    "verification_checks",
    "applies_to_agents",
    "applies_to_tools",
    "source_refs",
    "source_knowledge_ids",
)
"""v2 list fields; normalisation drops any of them that is present but not a list."""

DIRECTIVE_KEY_ORDER: tuple[str, ...] = (
    "hive_eligible",
    "phases_alive",
    "max_phases",
    "triggers",
    "required_actions",
    "forbidden_actions",
    "verification_checks",
    "applies_to_agents",
    "applies_to_tools",
    "verification_predicate",
    "source_refs",
    "source_knowledge_ids",
    "generated_skill_slug",
    "generated_skill_path",
    "directive_priority",
    "enforcement_mode",
)
"""Order of optional keys after the base keys when swarmq creates an entry."""

V2_OUTCOME_DEFAULTS: tuple[tuple[str, str | None], ...] = (
    ("shown_count", "applied_count"),
    ("acknowledged_count", None),
    ("applied_explicit_count", None),
    ("ignored_count", None),
    ("violated_count", None),
    ("contradicted_count", None),
    ("succeeded_after_shown_count", "succeeded_after_count"),
    ("failed_after_shown_count", "failed_after_count"),
)
"""``normalizeEntry``: each missing v2 counter and the v1 counter it is seeded from."""


_PRIORITIES = frozenset(p.value for p in DirectivePriority)


class EntryShapeError(InvalidInput):
    """A JSON line that cannot be a knowledge entry (kept as a corrupt line, never dropped)."""


def v1_outcomes() -> dict[str, Any]:
    return {"applied_count": 0, "succeeded_after_count": 0, "failed_after_count": 0}


def normalize_outcomes(outcomes: Mapping[str, Any]) -> dict[str, Any]:
    """opencode-swarm's v1 → v2 counter normalisation (``normalizeEntry``), ``contradicted_count``
    defaulted to 0 as upstream does now."""
    out = dict(outcomes)
    for key, source in V2_OUTCOME_DEFAULTS:
        if key not in out:
            seed = out.get(source) if source else None
            out[key] = seed if _is_number(seed) else 0
    return out


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _str_list(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class Entry:
    """One knowledge entry: its JSON object in on-disk key order and, if unchanged, its line."""

    __slots__ = ("_bytes", "_data", "_line", "raw")

    def __init__(self, data: Mapping[str, Any], raw: str | None = None) -> None:
        if not isinstance(data, Mapping):
            raise EntryShapeError(f"an entry must be a JSON object, got {type(data).__name__}")
        entry_id = data.get("id")
        if not isinstance(entry_id, str) or not entry_id:
            raise EntryShapeError("an entry needs a non-empty string 'id'")
        if not isinstance(data.get("lesson"), str):
            raise EntryShapeError(f"entry {entry_id!r}: 'lesson' must be a string")
        self._data: dict[str, Any] = dict(data)
        self.raw = raw
        """The exact line read from disk (without newline), or ``None`` once changed."""
        self._line: str | None = raw
        self._bytes: bytes | None = None

    # -- identity and serialisation --------------------------------------------------------

    @property
    def data(self) -> Mapping[str, Any]:
        """The object as on disk (read-only: change it with :meth:`changed`)."""
        return MappingProxyType(self._data)

    def to_dict(self) -> dict[str, Any]:
        """A deep-enough copy for callers that want to edit and hand back."""
        return {
            k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
            for k, v in self._data.items()
        }

    def line(self) -> str:
        """The line to write: the original bytes when unchanged, else ``JSON.stringify`` form."""
        if self._line is None:
            self._line = dumps_js(self._data)
        return self._line

    def raw_bytes(self) -> bytes:
        """The line as UTF-8 bytes (cached: mirrors compare them on every reload)."""
        if self._bytes is None:
            self._bytes = self.line().encode("utf-8")
        return self._bytes

    @property
    def is_dirty(self) -> bool:
        return self.raw is None

    def changed(
        self,
        updates: Mapping[str, Any] | None = None,
        *,
        remove: Iterable[str] = (),
        bump_revision: bool = True,
    ) -> Entry:
        """A new entry with ``updates`` applied in place (new keys appended) and ``remove``
        deleted; ``revision`` is bumped so compare-and-swap callers see the change."""
        data = dict(self._data)
        for key in remove:
            data.pop(key, None)
        for key, value in (updates or {}).items():
            if key == "id" and value != self.id:
                raise ValueError(f"entry {self.id}: the id of an entry cannot change")
            data[key] = value
        if bump_revision:
            data["revision"] = self.revision + 1
        return Entry(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Entry) and other._data == self._data

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Entry(id={self.id!r}, status={self.status!r}, lesson={self.lesson[:40]!r})"

    # -- typed accessors (tolerant of what real files contain) ------------------------------

    @property
    def id(self) -> str:
        return str(self._data["id"])

    @property
    def lesson(self) -> str:
        return str(self._data["lesson"])

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    @property
    def tier(self) -> str:
        return str(self._data.get("tier") or "swarm")

    @property
    def category(self) -> str:
        return str(self._data.get("category") or "other")

    @property
    def tags(self) -> list[str]:
        return _str_list(self._data.get("tags"))

    @property
    def scope(self) -> str:
        value = self._data.get("scope")
        return value if isinstance(value, str) else "global"

    @property
    def confidence(self) -> float:
        value = self._data.get("confidence")
        return float(value) if _is_number(value) else 0.0

    @property
    def status(self) -> str:
        value = self._data.get("status")
        return value if isinstance(value, str) else Status.CANDIDATE.value

    @property
    def is_active(self) -> bool:
        return self.status not in INACTIVE_STATUSES

    @property
    def confirmed_by(self) -> list[dict[str, Any]]:
        value = self._data.get("confirmed_by")
        return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []

    def phase_numbers(self) -> set[int]:
        """Distinct integer phase numbers among the confirmations."""
        out: set[int] = set()
        for record in self.confirmed_by:
            phase = record.get("phase_number")
            if isinstance(phase, int) and not isinstance(phase, bool):
                out.add(phase)
            elif isinstance(phase, float) and phase.is_integer():
                out.add(int(phase))
        return out

    def confirming_projects(self) -> set[str]:
        return {
            r["project_name"] for r in self.confirmed_by if isinstance(r.get("project_name"), str)
        }

    @property
    def outcomes(self) -> dict[str, Any]:
        """``retrieval_outcomes`` normalised to v2 (a view: the disk is not rewritten)."""
        value = self._data.get("retrieval_outcomes")
        return normalize_outcomes(value if isinstance(value, dict) else v1_outcomes())

    def counter(self, key: str) -> int:
        value = self.outcomes.get(key, 0)
        return int(value) if _is_number(value) else 0

    @property
    def created_at(self) -> str:
        return str(self._data.get("created_at") or "")

    @property
    def updated_at(self) -> str:
        return str(self._data.get("updated_at") or "")

    @property
    def project_name(self) -> str:
        value = self._data.get("project_name")
        return value if isinstance(value, str) else ""

    @property
    def source_project(self) -> str:
        value = self._data.get("source_project")
        return value if isinstance(value, str) else ""

    @property
    def auto_generated(self) -> bool:
        return self._data.get("auto_generated") is True

    @property
    def phases_alive(self) -> int:
        value = self._data.get("phases_alive")
        return int(value) if _is_number(value) else 0

    def max_phases(self, default: int) -> int:
        value = self._data.get("max_phases")
        return int(value) if _is_number(value) else default

    @property
    def revision(self) -> int:
        value = self._data.get("revision")
        return int(value) if _is_number(value) else 0

    @property
    def encounter_score(self) -> float | None:
        value = self._data.get("encounter_score")
        return float(value) if _is_number(value) else None

    @property
    def priority(self) -> str:
        value = self._data.get("directive_priority")
        return value if isinstance(value, str) and value in _PRIORITIES else "medium"

    def strings(self, key: str) -> list[str]:
        """A v2 list field (``triggers``, ``applies_to_tools`` …), ``[]`` when absent or bad."""
        return _str_list(self._data.get(key))

    @property
    def generated_skill_path(self) -> str:
        value = self._data.get("generated_skill_path")
        return value if isinstance(value, str) else ""

    def normalized(self) -> dict[str, Any]:
        """The object ``normalizeEntry`` would hand to opencode-swarm code (a copy)."""
        data = self.to_dict()
        if "retrieval_outcomes" in data:
            raw = data["retrieval_outcomes"]
            data["retrieval_outcomes"] = normalize_outcomes(raw if isinstance(raw, dict) else {})
            if not _is_number(data.get("encounter_score")):
                data["encounter_score"] = 0
            for key in DIRECTIVE_LIST_FIELDS:
                if key in data and not isinstance(data[key], list):
                    del data[key]
        return data


def order_keys(data: Mapping[str, Any], tier: Tier | str) -> dict[str, Any]:
    """Lay out a new entry in opencode-swarm's key order; unknown keys keep their order after."""
    base = HIVE_KEY_ORDER if str(tier) == Tier.HIVE else SWARM_KEY_ORDER
    out: dict[str, Any] = {k: data[k] for k in base if k in data}
    out.update((k, data[k]) for k in DIRECTIVE_KEY_ORDER if k in data and k not in out)
    out.update((k, v) for k, v in data.items() if k not in out)
    return out
