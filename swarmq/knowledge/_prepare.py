"""The part of a knowledge add that does not depend on the store (what the adds before it cannot
change), done by the group-commit committer (:mod:`._group`) right before it decides the add.

It used to be done by each caller before it queued, to overlap the leader's writes. Measured with
8 writer threads, that overlap cost more than it saved: the callers' prepares contended with each
other and with the leader for the GIL, each took 1.5-2x its single-thread CPU, and the leader's
every system call waited for a prepare to yield. Done by the committer, a prepare costs its CPU
and the callers only queue and sleep (8 writers: about 20 % less CPU per add)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from swarmq.knowledge.contradiction import lesson_features
from swarmq.knowledge.dedup import cached_bigrams
from swarmq.knowledge.model import Entry, ReportedBy, Status
from swarmq.knowledge.reinforcement import NewLesson, new_entry
from swarmq.knowledge.secrets import REDACTED_KEY, Redaction, redact, redact_strings
from swarmq.knowledge.validation import (
    OK,
    REASON_VAGUE,
    ValidationResult,
    check_actionability,
    check_hostile,
    check_safety,
    check_structure,
    is_vague,
    validate_directive_fields,
)

if TYPE_CHECKING:
    from swarmq.knowledge._tierfile import TierFile


@dataclass(frozen=True, slots=True)
class Prepared:
    """The part of an add that does not depend on the store (the new entry, layers 1-2,
    vagueness, actionability, the serialised line)."""

    store: TierFile
    new: NewLesson
    phase: int | None
    at: str
    entry: Entry
    check: ValidationResult
    """OK, or a layer 1-2 warning (stored, flagged for review)."""
    refused: ValidationResult | None = None
    layer3: ValidationResult | None = None
    """Vagueness verdict when layer 3 runs; the contradiction half needs the store."""
    held: Entry | None = None
    """The unactionable record when the lesson is held out for lack of predicate + scope."""
    quarantined: Entry | None = None
    """The quarantine record of a hostile lesson (:func:`check_hostile`), held for review."""


REASON_SECRET = "lesson is mostly a secret ({kinds}): nothing left to learn once redacted"


def without_secrets(new: NewLesson) -> tuple[NewLesson, Redaction | None]:
    """``new`` with every secret in its lesson, tags, directives and extra fields replaced by a
    ``[REDACTED:<kind>]`` marker; the lesson's own scan (``None`` when nothing was found)."""
    scan = redact(new.lesson)
    kinds = set(scan.kinds)

    def seen(found: Redaction) -> None:
        kinds.update(found.kinds)

    directives: Any = redact_strings(dict(new.directives), seen)
    extra: Any = redact_strings(dict(new.extra), seen)
    tags: Any = None if new.tags is None else redact_strings(list(new.tags), seen)
    if not kinds:
        return new, None
    extra[REDACTED_KEY] = sorted(kinds)
    cleaned = replace(new, lesson=scan.text, directives=directives, extra=extra, tags=tags)
    return cleaned, scan


def prepare(store: TierFile, new: NewLesson, phase: int | None) -> Prepared:
    """Everything of an add to ``store`` that the adds before it cannot change."""
    config = store.config
    at = store.now()
    new, scan = without_secrets(new)  # before anything is built from it: nothing keeps a secret
    entry = new_entry(
        new, tier=store.tier, project_name=store.project_name, phase=phase, at=at, config=config
    )
    check = ValidationResult(True)
    if scan is not None and scan.mostly_secret:
        why = REASON_SECRET.format(kinds=", ".join(scan.kinds))
        return Prepared(
            store, new, phase, at, entry, check, refused=ValidationResult(False, 2, why, "error")
        )
    hostile = check_hostile(entry.lesson)  # in every mode, even with validation disabled
    if not hostile.valid:
        record = entry.changed(
            {
                "status": Status.QUARANTINED.value,
                "original_status": entry.status,
                "quarantine_reason": hostile.reason,
                "quarantined_at": at,
                "reported_by": ReportedBy.AUTO.value,
            },
            bump_revision=False,
        )
        record.raw_bytes()
        return Prepared(store, new, phase, at, entry, hostile, quarantined=record)
    if config.validation_enabled:
        for result in (
            check_structure(
                entry.lesson, entry.get("category"), entry.get("scope"), entry.get("confidence")
            ),
            check_safety(entry.lesson, config.validation_mode),
        ):
            if not result.valid:
                return Prepared(store, new, phase, at, entry, check, refused=result)
            if result.severity is not None:
                check = result  # a warning: stored, flagged for review
        errors = validate_directive_fields(entry.data)
        if errors:
            refused = ValidationResult(
                False, 1, "invalid directive fields: " + "; ".join(errors), "error"
            )
            return Prepared(store, new, phase, at, entry, check, refused=refused)
    cached_bigrams(entry.lesson)  # warm: the leader looks the lesson up, then indexes it
    layer3 = None
    if config.validation_enabled and check.severity is None:
        lesson_features(entry.lesson, config.validation_mode)
        layer3 = (
            ValidationResult(True, 3, REASON_VAGUE, "warning") if is_vague(entry.lesson) else OK
        )
    held = None
    if new.require_actionable:
        reason = check_actionability(entry.data)
        if reason is not None:
            update = {
                "status": Status.QUARANTINED_UNACTIONABLE.value,
                "unactionable_reason": reason,
                "quarantined_at": at,
            }
            held = entry.changed(update, bump_revision=False)
            held.raw_bytes()
    entry.raw_bytes()  # serialise now: a line that cannot be written fails this add alone
    return Prepared(store, new, phase, at, entry, check, layer3=layer3, held=held)
