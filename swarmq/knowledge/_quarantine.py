"""Quarantine, restore and retractions (opencode-swarm's ``quarantineEntry``/``restoreEntry``).

Quarantine moves an entry out of the store into ``*-quarantined.jsonl`` with ``status:
'quarantined'``, ``original_status``, ``quarantine_reason``, ``quarantined_at`` and
``reported_by``, and records a layer-3 rejected fingerprint. The sidecar is appended before the
store is rewritten, so a crash in between leaves the entry in both places, never in neither.

An entry that was in the store can always come back: restore re-validates only when asked
(``revalidate=True``; opencode-swarm always does, which made quarantine a one-way door for
lessons its own older rules refused), and :func:`restore_verdict` tells the operator what the
current validation mode says. swarmq also records where the line was and its exact bytes in
``*-quarantined-places.jsonl`` (a file opencode-swarm ignores), so quarantine + restore puts the
line back where it was, byte for byte when nothing else changed. Restore also revives an
archived entry to its status before archiving.

Each move touches the store and up to three sidecars, so a kill between the writes left the
entry both live and quarantined, and nothing said which way it was going. So quarantine and
restore are each **one atomic move**: before its first write a move appends its intent
(``{"op": "quarantine" | "restore", "id": …}``, fsynced) to ``.swarmq/<store>.moves.jsonl``
beside the store, and removes the file when done. Every quarantine or restore first settles an
intent left by a killed one, under the same lock: a quarantine whose sidecar record landed is
finished (the entry leaves the store), one whose record did not is undone (its other sidecar
lines go); a restore whose entry is back in the store is finished (its sidecar lines go), one
whose entry is not is undone (it stays quarantined). Either way the entry ends in exactly one
place, as before or as after the move.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmq.knowledge._sidecars import rejected_record, remove_lines, values
from swarmq.knowledge.errors import EntryNotFound, RestoreRefused
from swarmq.knowledge.model import (
    ACTIVE_STATUSES,
    PRE_ARCHIVE_KEY,
    Entry,
    ReportedBy,
    Status,
)
from swarmq.knowledge.serialize import dumps_js
from swarmq.knowledge.validation import ValidationResult, validate_lesson
from swarmq.similarity.text import normalize_opencode
from swarmq.storage.atomic import append_lines, fsync_dir, side_path, write_atomic
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.jsonl import quarantine_corrupt

if TYPE_CHECKING:
    from swarmq.knowledge._tierfile import TierFile

QUARANTINE_KEYS = ("original_status", "quarantine_reason", "quarantined_at", "reported_by")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clean_reason(reason: str) -> str:
    """Control characters stripped, at most 500 characters (opencode-swarm's rule)."""
    return _CONTROL.sub("", reason)[:500]


def places_path(store: TierFile) -> Path:
    """``knowledge-quarantined-places.jsonl``: where each quarantined line was, and its bytes."""
    quarantined = store.files.quarantined
    return quarantined.with_name(f"{quarantined.stem}-places.jsonl")


def moves_path(store: TierFile) -> Path:
    """The intent of a quarantine or restore under way (a line each; normally absent)."""
    return side_path(store.files.knowledge, ".moves.jsonl")


@contextlib.contextmanager
def _move(store: TierFile, op: str, entry_id: str, lease: Any) -> Iterator[None]:
    """Journal a move before its first write; forget it once every write landed. A failure
    (not a kill) settles it at once, so the entry is never left in two places."""
    path = moves_path(store)
    append_lines(path, [json.dumps({"op": op, "id": entry_id})], lease=lease)
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            settle_moves(store, lease)
        raise
    _forget_moves(path)


def _forget_moves(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
        fsync_dir(path.parent)


def settle_moves(store: TierFile, lease: Any) -> int:
    """Finish or undo the moves a killed quarantine or restore left (the caller holds the store
    lock); returns how many intents were settled."""
    path = moves_path(store)
    if not path.exists():
        return 0
    intents = [v for v in values(path) if isinstance(v, dict) and isinstance(v.get("id"), str)]
    for intent in intents:
        entry_id = str(intent["id"])
        store.mirror.refresh()
        slot = store.mirror.by_id.get(entry_id)
        held = _quarantined_record(store, entry_id) is not None
        if slot is None:
            continue  # quarantined and gone from the store, or a restore that never wrote it
        if intent.get("op") == "quarantine" and held:
            store.rewrite_file(lease, removed={slot: None})  # finish: the record landed
        else:
            _forget_quarantine(store, entry_id, lease)  # a restore done, or a quarantine undone
    _forget_moves(path)
    return len(intents)


def quarantine(store: TierFile, entry_id: str, reason: str, reported_by: str = "user") -> Entry:
    """Move an entry to the quarantine sidecar; idempotent for an already quarantined id."""
    reported = ReportedBy(reported_by).value
    with store.locked() as lease:
        settle_moves(store, lease)
        slot = store.mirror.by_id.get(entry_id)
        if slot is None:
            held = _quarantined_record(store, entry_id)
            if held is not None:
                return held
            raise EntryNotFound(f"no entry {entry_id} in {store.files.knowledge}")
        entry = store.mirror.slots[slot]
        at = store.now()
        why = clean_reason(reason)
        record = entry.changed().changed(
            {
                "status": Status.QUARANTINED.value,
                "original_status": entry.status,
                "quarantine_reason": why,
                "quarantined_at": at,
                "reported_by": reported,
            },
            bump_revision=False,
        )
        order = list(store.mirror.slots)
        at_index = order.index(slot)
        neighbours = [store.mirror.slots[s].id for s in order]
        place = {
            "id": entry.id,
            "index": at_index,
            "after": neighbours[at_index - 1] if at_index else None,
            "before": neighbours[at_index + 1] if at_index + 1 < len(neighbours) else None,
            "line": entry.line(),
        }
        with _move(store, "quarantine", entry.id, lease):
            store.append_sidecar(
                places_path(store), [dumps_js(place)], store.config.quarantined_max_entries, lease
            )
            store.append_sidecar(
                store.files.rejected,
                [rejected_record(entry.id, entry.lesson, why, 3, at)],
                store.config.rejected_max_entries,
                lease,
            )
            store.append_sidecar(
                store.files.quarantined,
                [record.line()],
                store.config.quarantined_max_entries,
                lease,
            )
            store.rewrite_file(lease, removed={slot: None})
        return record


def _quarantined_record(store: TierFile, entry_id: str) -> Entry | None:
    found = [
        v
        for v in values(store.files.quarantined)
        if isinstance(v, dict) and v.get("id") == entry_id
    ]
    return Entry(found[-1]) if found else None


def _place(store: TierFile, entry_id: str) -> dict[str, Any] | None:
    found = [
        v for v in values(places_path(store)) if isinstance(v, dict) and v.get("id") == entry_id
    ]
    return found[-1] if found else None


def restore_verdict(store: TierFile, entry: Entry) -> ValidationResult:
    """What the store's current validation mode says about an entry's lesson (advice only,
    unless restore is asked to re-validate)."""
    return validate_lesson(
        entry.lesson,
        category=entry.get("category"),
        scope=entry.get("scope"),
        confidence=entry.get("confidence"),
        existing=store.contradictions(),
        mode=store.config.validation_mode,
    )


def restore(store: TierFile, entry_id: str, *, revalidate: bool = False) -> Entry:
    """Bring back a quarantined entry where it was, or revive an archived one. With
    ``revalidate`` a quarantined entry whose lesson the current rules refuse stays quarantined
    (:class:`RestoreRefused`)."""
    with store.locked() as lease:
        settle_moves(store, lease)
        slot = store.mirror.by_id.get(entry_id)
        current = None if slot is None else store.mirror.slots[slot]
        if current is not None and current.status == Status.ARCHIVED:
            prior = current.get(PRE_ARCHIVE_KEY)
            status = (
                prior if prior in {s.value for s in ACTIVE_STATUSES} else Status.CANDIDATE.value
            )
            revived = current.changed(
                {"status": status, "phases_alive": 0, "updated_at": store.now()},
                remove=(PRE_ARCHIVE_KEY,),
            )
            store.rewrite_file(lease, replaced={slot: revived})  # type: ignore[dict-item]
            return revived
        held = _quarantined_record(store, entry_id)
        if current is not None:
            if held is not None:  # left over by a crash between the two writes
                _forget_quarantine(store, entry_id, lease)
            return current
        if held is None:
            raise EntryNotFound(f"no quarantined or archived entry {entry_id}")
        if revalidate:
            verdict = restore_verdict(store, held)
            if not verdict.valid:
                raise RestoreRefused(entry_id, verdict.reason or "invalid lesson")
        original = held.get("original_status")
        status = (
            original if original in {s.value for s in ACTIVE_STATUSES} else Status.CANDIDATE.value
        )
        restored = held.changed({"status": status}, remove=QUARANTINE_KEYS)
        place = _place(store, entry_id)
        with _move(store, "restore", entry_id, lease):
            if place is None:
                store.append_entries([restored], lease)
            else:
                restored = _put_back(store, restored, place, lease)
            _forget_quarantine(store, entry_id, lease)
        return restored


def _put_back(store: TierFile, restored: Entry, place: dict[str, Any], lease: Any) -> Entry:
    """Write the store with ``restored`` at its recorded place: before the entry that followed it,
    else after the one that preceded it, else at its old index. The recorded line is written
    when the entry is what it was (quarantine's revision bump aside)."""
    line = place.get("line")
    if isinstance(line, str):
        try:
            before = Entry(loads_bounded(line), raw=line)
        except (ValueError, TypeError):
            before = None
        if before is not None and _same(before, restored):
            restored = before
    entries = list(store.mirror.slots.values())
    ids = [e.id for e in entries]
    index = len(entries)
    if place.get("before") in ids:
        index = ids.index(place["before"])
    elif place.get("after") in ids:
        index = ids.index(place["after"]) + 1
    elif isinstance(place.get("index"), int):
        index = max(0, min(len(entries), place["index"]))
    entries.insert(index, restored)
    body = b"\n".join(e.raw_bytes() for e in entries) + b"\n"
    quarantine_corrupt(
        store.files.knowledge,
        store.mirror.all_corrupt(),
        lease=lease,
        corrupt_to=store.files.corrupt,
    )
    write_atomic(store.files.knowledge, body, lease=lease)
    store.mirror.refresh()
    return restored


def _same(before: Entry, restored: Entry) -> bool:
    def strip(entry: Entry) -> dict[str, Any]:
        return {k: v for k, v in entry.data.items() if k != "revision"}

    return strip(before) == strip(restored)


def _forget_quarantine(store: TierFile, entry_id: str, lease: Any) -> None:
    def match(v: Any) -> bool:
        return isinstance(v, dict) and v.get("id") == entry_id

    for path in (store.files.quarantined, store.files.rejected, places_path(store)):
        remove_lines(path, match, corrupt_to=store.files.corrupt, lease=lease)


def archive_updates(entry: Entry, at: str) -> dict[str, Any]:
    """The fields an archiving sweep sets (with the status to restore to)."""
    return {"status": Status.ARCHIVED.value, "updated_at": at, PRE_ARCHIVE_KEY: entry.status}


def retract(
    store: TierFile,
    text: str,
    *,
    reported_by: str = "architect",
    hive: TierFile | None = None,
) -> dict[str, Any] | None:
    """``RETRACT:``/``BAD RULE:`` handling: quarantine swarm entries whose normalised lesson
    equals the normalised text, and record the retraction once per normalised text."""
    normalized = normalize_opencode(text)
    matched = [e.id for e in store.read().entries if normalize_opencode(e.lesson) == normalized]
    for entry_id in matched:
        quarantine(store, entry_id, f"retracted: {text}", reported_by)
    hive_ids = (
        [e.id for e in hive.read().entries if normalize_opencode(e.lesson) == normalized]
        if hive is not None
        else []
    )
    with store.locked() as lease:
        seen = {
            v.get("normalized_lesson")
            for v in values(store.files.retractions)
            if isinstance(v, dict)
        }
        if normalized in seen:
            return None
        record = {
            "id": _uuid(),
            "retracted_lesson": text,
            "normalized_lesson": normalized,
            "recorded_at": store.now(),
            "reported_by": ReportedBy(reported_by).value,
            "matched_swarm_ids": matched,
            "matched_hive_ids": hive_ids,
        }
        append_lines(store.files.retractions, [dumps_js(record)], lease=lease)
        return record


def _uuid() -> str:
    import uuid

    return str(uuid.uuid4())
