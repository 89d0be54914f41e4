"""Promoted learnings become swarm-tier knowledge entries, so injection sees them.

The knowledge store (``swarmq.knowledge``) is reached through :class:`LessonSink`, the
one call it offers other jobs (``KnowledgeStore.add_lesson``); the flywheel never touches
``.swarm/`` files itself. A lesson there is at most 280 characters, so the learning's body is
condensed at a sentence (else word) boundary; the artifact path goes in ``source_refs``. The
store's own validation and near-duplicate reinforcement decide what is kept; a refusal is
reported, never retried in a loop.

A promoted learning has passed the flywheel's gates (scored, tiered, cited by a later session),
so it is validated in ``flywheel.knowledge_bridge_validation`` mode (default ``strict``: inline
code such as `` `pytest -x` `` is normal in a technical lesson, real dangerous commands are still
refused), and the promotion is recorded as what it is, a confirmation: a phase confirmation for
the project's current phase (``0`` when no plan tracks phases), which reinforces a near-duplicate
lesson already in the store. Tags are de-duplicated, in order.

A high-confidence candidate is published before it graduates, **provisionally**
(:func:`publish_provisional`): tagged ``provisional`` (the directives block marks it so), its
``source_refs`` naming its pool file, and not confirmed. What follows decides: when the candidate
graduates, :func:`confirm_provisional` drops the tag, points ``source_refs`` at the artifact
and records the confirmation; when it is refuted or nobody confirms it in time,
:func:`retire_provisional` archives the entry (restorable; the candidate stays in the pool).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from swarmq.flywheel.content import canonical_content_body
from swarmq.knowledge.render import PROVISIONAL_TAG
from swarmq.knowledge.signature import SIGNATURE_FIELD as SIGNATURE_KEY
from swarmq.knowledge.signature import failure_signature

MAX_LESSON_CHARS = 280

CATEGORY_BY_CLASS = {
    "architecture": "architecture",
    "workflow": "process",
    "timeline": "process",
    "decision": "architecture",
}
CATEGORY_BY_TYPE = {
    "failure": "debugging",
    "solution": "debugging",
    "decision": "architecture",
    "reference": "other",
    "learning": "process",
}


class LessonTier(Protocol):
    """What the swarm tier offers (``TierStore``): read, change and confirm one entry."""

    def get(self, entry_id: str) -> Any: ...

    def update(
        self,
        entry_id: str,
        updates: Mapping[str, Any],
        *,
        remove: Iterable[str] = ...,
        expected_revision: int | None = ...,
    ) -> Any: ...

    def reinforce(self, entry_id: str, phase: int, *, project_name: str | None = ...) -> Any: ...

    def now(self) -> str: ...


class LessonSink(Protocol):
    """What the knowledge store offers (``KnowledgeStore.add_lesson`` and its swarm tier)."""

    @property
    def swarm(self) -> LessonTier: ...

    def add_lesson(
        self,
        lesson: str,
        *,
        category: str | None = ...,
        tags: Sequence[str] | None = ...,
        confidence: float | None = ...,
        auto_generated: bool = ...,
        source_refs: Iterable[str] = ...,
        phase: int | None = ...,
        validation_mode: Any = ...,
        extra: Mapping[str, Any] | None = ...,
    ) -> Any: ...

    def current_phase(self) -> int | None: ...


NO_PLAN_PHASE = 0
"""The confirming phase recorded when no plan tracks phases."""
DEFAULT_VALIDATION = "strict"


@dataclass(frozen=True, slots=True)
class BridgeOutcome:
    artifact_path: str
    outcome: str
    reason: str | None = None
    entry_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "artifact_path": self.artifact_path,
            "outcome": self.outcome,
            "reason": self.reason,
            "entry_id": self.entry_id,
        }


_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MARKUP = re.compile(r"^\s*(?:[-*>#]+|\*\*[^*]+\*\*:?)\s*", re.MULTILINE)
_SPANS = re.compile(r"`([^`]+)`|\(([^()`]+)\)")
"""Quoted calls and paths, and parenthesised errors: what makes a forged lesson long."""
_SHORTEST_SPAN = 36
"""A quoted call or path is never shortened below this: it must still say what it names."""


_WRAPPER = re.compile(
    r"^(?P<program>(?:\S*[\\/])?(?:pwsh|powershell)(?:\.exe)?)\s(?:.*?\s)?(?P<flag>-c(?:ommand)?)"
    r"\s+(?P<inner>\S.*)$"
    r"|^(?P<shell>(?:\S*/)?(?:bash|zsh|sh|dash))\s+(?P<shell_flag>-[li]?c)\s+(?P<shell_inner>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
"""A call run through PowerShell or a shell (``powershell.exe -NoProfile -ExecutionPolicy
Bypass -Command "…"``, ``bash -lc '…'``)."""


def _unwrapped(call: str) -> str:
    """A wrapped call with the wrapper's options dropped and the command's quotes removed
    (``powershell.exe -Command apply_patch << 'PATCH' …``): the options are what every call of
    such an agent starts with, so a call shortened in its middle kept them and lost the command.
    The program stays: which shell ran the command is often the lesson (PowerShell has no
    heredoc; ``pwsh`` is not installed)."""
    match = _WRAPPER.match(call)
    if not match:
        return call
    program = match.group("program") or match.group("shell")
    flag = match.group("flag") or match.group("shell_flag")
    inner = (match.group("inner") or match.group("shell_inner")).strip()
    if len(inner) > 1 and inner[0] in "\"'" and inner[-1] == inner[0]:
        inner = inner[1:-1].strip()
    return f"{program} {flag} {inner}" if inner else call


def _word_head(text: str, size: int) -> str:
    """The first ``size`` characters of ``text``, ended at a word end when one is in the
    second half."""
    if len(text) <= size or text[size] == " ":
        return text[:size].rstrip()
    space = text.rfind(" ", 0, size)
    return (text[:space] if space > size // 2 else text[:size]).rstrip()


def _middle_cut(inner: str, keep: int) -> str:
    """``inner`` cut to about ``keep`` characters in its middle, at word ends where a word end
    is near: a cut inside a word leaves fragments (``-NoProfil…ontributors``) that name
    nothing and match nothing. A span forge clipped already keeps only its head: its end is a
    fragment."""
    if inner.endswith("…"):
        return _word_head(inner, keep) + "…"
    head_len = (keep * 2) // 3
    tail_len = keep - head_len
    tail = inner[len(inner) - tail_len :]
    if inner[len(inner) - tail_len - 1] != " ":
        space = tail.find(" ")
        if 0 <= space < tail_len // 2:
            tail = tail[space + 1 :]
    return f"{_word_head(inner, head_len)}…{tail.lstrip()}"


def _shorten_spans(text: str, limit: int) -> str:
    """Shorten the longest quoted spans (`` `command` ``, `` `path` ``, ``(error output)``) in
    their middle until the text fits: a forged lesson's calls and error are what is long, and
    its fact and fix follow them, so cutting the text's end would keep the failing call and
    lose the lesson."""
    for _ in range(12):
        over = len(text) - limit
        if over <= 0:
            break
        spans = [m for m in _SPANS.finditer(text) if len(m.group(1) or m.group(2)) > _SHORTEST_SPAN]
        if not spans:
            break
        span = max(spans, key=lambda m: len(m.group(1) or m.group(2)))
        inner = span.group(1) or span.group(2)
        if span.group(1):
            inner = _unwrapped(inner)
        over = len(text) - limit - (len(span.group(1) or span.group(2)) - len(inner))
        keep = max(_SHORTEST_SPAN, len(inner) - over - 1)
        short = inner if len(inner) <= keep else _middle_cut(inner, keep)
        opening, closing = ("`", "`") if span.group(1) else ("(", ")")
        text = f"{text[: span.start()]}{opening}{short}{closing}{text[span.end() :]}"
    return text


def _sentences(text: str) -> list[str]:
    """Sentences, never split inside a quoted span or parentheses (``(File does not exist.
    Note: …)`` is one clause of a forged lesson, not the lesson's end)."""
    out: list[str] = []
    start = 0
    for match in _SENTENCE.finditer(text):
        before = text[start : match.start()]
        if before.count("`") % 2 or before.count("(") > before.count(")"):
            continue
        out.append(before)
        start = match.end()
    out.append(text[start:])
    return out


def condense(body: str, limit: int = MAX_LESSON_CHARS) -> str:
    """One line of at most ``limit`` characters: quoted spans shortened first, then ending at a
    sentence or word boundary."""
    text = " ".join(_MARKUP.sub("", canonical_content_body(body)).split())
    if len(text) <= limit:
        return text
    text = _shorten_spans(text, limit)
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in _sentences(text):
        candidate = f"{kept} {sentence}".strip()
        if len(candidate) > limit:
            break
        kept = candidate
    if len(kept) >= 40:
        return kept
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(",;:") + "…"


def category_for(knowledge_type: str, knowledge_class: str | None) -> str:
    if knowledge_class and knowledge_class in CATEGORY_BY_CLASS:
        return CATEGORY_BY_CLASS[knowledge_class]
    return CATEGORY_BY_TYPE.get(knowledge_type, "other")


def unique_tags(tags: Iterable[str]) -> list[str]:
    """Non-empty tags, first occurrence kept (``decision`` as type and class is one tag)."""
    return list(dict.fromkeys(t.strip() for t in tags if t and t.strip()))


PROVISIONAL_ENTRY = "provisional_entry_id"
"""The candidate ``metadata`` key naming its provisional knowledge entry."""


def _metadata(candidate: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = candidate.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _kept_signature(candidate: Mapping[str, Any], lesson: str) -> dict[str, str] | None:
    """The signature read from the whole lesson at ingest, when condensing turned it into
    another (a shortened call names ``cd`` as its program, a cut error keeps half a word): the
    store would key the entry on a failure nobody has. A condensed lesson with no signature
    keeps none (its entry is reached by meaning, as before)."""
    signature = _metadata(candidate).get(SIGNATURE_KEY)
    if not isinstance(signature, str) or not signature:
        return None
    condensed = failure_signature(lesson)
    return {SIGNATURE_KEY: signature} if condensed and condensed != signature else None


def publish(
    sink: LessonSink,
    artifact_path: str,
    candidate: dict[str, Any],
    *,
    validation_mode: str = DEFAULT_VALIDATION,
    provisional: bool = False,
) -> BridgeOutcome:
    """Add one promoted learning to the swarm tier, confirmed in the current phase, or with
    ``provisional`` a candidate not yet confirmed (tagged, no confirmation, ``artifact_path``
    its pool file); exceptions become a ``failed`` outcome."""
    kclass = _metadata(candidate).get("knowledge_class")
    ktype = str(candidate.get("type") or "learning")
    lesson = condense(str(candidate.get("content") or ""))
    if len(lesson) < 15:
        return BridgeOutcome(artifact_path, "skipped", "body too short for a lesson")
    tags = ["agentops", ktype, str(candidate.get("tier") or "")] + ([str(kclass)] if kclass else [])
    confidence = candidate.get("confidence")
    extra = _kept_signature(candidate, lesson)
    try:
        phase = None if provisional else sink.current_phase()
        result = sink.add_lesson(
            lesson,
            category=category_for(ktype, str(kclass) if kclass else None),
            tags=unique_tags([*tags, PROVISIONAL_TAG] if provisional else tags),
            confidence=(
                float(confidence)
                if isinstance(confidence, int | float) and not provisional
                else None
            ),
            auto_generated=True,
            source_refs=[artifact_path],
            phase=None if provisional else (NO_PLAN_PHASE if phase is None else phase),
            validation_mode=validation_mode,
            extra=extra,
        )
    except Exception as exc:  # the store's errors must not undo a promotion that already landed
        return BridgeOutcome(artifact_path, "failed", f"{type(exc).__name__}: {exc}")
    entry = getattr(result, "entry", None)
    outcome = str(getattr(result, "outcome", "added"))
    if provisional and outcome == "duplicate" and _is_own_provisional(entry, artifact_path):
        outcome = "added"  # published before, its pool file never heard: adopt it
    return BridgeOutcome(
        artifact_path,
        PROVISIONAL_TAG if provisional and outcome == "added" else outcome,
        getattr(result, "reason", None),
        getattr(entry, "id", None),
    )


def _is_own_provisional(entry: Any, ref: str) -> bool:
    return (
        entry is not None
        and entry.is_active
        and PROVISIONAL_TAG in entry.tags
        and entry.strings("source_refs") == [ref]
    )


def publish_provisional(
    sink: LessonSink,
    pool_ref: str,
    candidate: dict[str, Any],
    *,
    validation_mode: str = DEFAULT_VALIDATION,
) -> BridgeOutcome:
    """Publish a candidate before it graduates, marked provisional (outcome ``provisional``;
    ``duplicate`` when the store already holds the lesson, ``rejected`` when it refuses it)."""
    return publish(sink, pool_ref, candidate, validation_mode=validation_mode, provisional=True)


def _live_provisional(sink: LessonSink, entry_id: str) -> Any:
    entry = sink.swarm.get(entry_id)
    if entry is None or not entry.is_active or PROVISIONAL_TAG not in entry.tags:
        return None
    return entry


def confirm_provisional(
    sink: LessonSink,
    artifact_path: str,
    candidate: dict[str, Any],
    *,
    validation_mode: str = DEFAULT_VALIDATION,
) -> BridgeOutcome:
    """The candidate graduated: its provisional entry (when it still stands) keeps its id,
    loses the mark, names the artifact and is confirmed in the current phase; otherwise the
    learning is published as any promotion is."""
    entry_id = _metadata(candidate).get(PROVISIONAL_ENTRY)
    try:
        entry = _live_provisional(sink, str(entry_id)) if entry_id else None
        if entry is None:
            published = publish(sink, artifact_path, candidate, validation_mode=validation_mode)
            # a near-duplicate that is still provisional (its pool file lost the id) is settled
            entry = _live_provisional(sink, published.entry_id) if published.entry_id else None
            if entry is None:
                return published
        tags = [t for t in entry.tags if t != PROVISIONAL_TAG]
        sink.swarm.update(entry.id, {"tags": tags, "source_refs": [artifact_path]})
        phase = sink.current_phase()
        sink.swarm.reinforce(entry.id, NO_PLAN_PHASE if phase is None else phase)
    except Exception as exc:  # the promotion already landed; report, never undo it
        return BridgeOutcome(artifact_path, "failed", f"{type(exc).__name__}: {exc}")
    return BridgeOutcome(artifact_path, "confirmed", None, entry.id)


def retire_provisional(sink: LessonSink, entry_id: str, reason: str) -> BridgeOutcome:
    """Archive a provisional entry nobody confirmed (``archived`` restores it); an entry
    already gone, inactive or confirmed meanwhile is left as it is (``skipped``)."""
    try:
        entry = _live_provisional(sink, entry_id)
        if entry is None:
            return BridgeOutcome("", "skipped", "no longer a live provisional entry", entry_id)
        sink.swarm.update(
            entry.id,
            {
                "status": "archived",
                "updated_at": sink.swarm.now(),
                "pre_archive_status": entry.status,
                "retired_reason": reason,
            },
        )
    except Exception as exc:
        return BridgeOutcome("", "failed", f"{type(exc).__name__}: {exc}", entry_id)
    return BridgeOutcome("", "retired", reason, entry_id)
