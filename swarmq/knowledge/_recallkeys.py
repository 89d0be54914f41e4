"""The keys an entry is recalled by: its failure signature (a failing call) and, when a session
start shows it, :data:`SESSION_START_KEY`.

Kept apart so both persisted indexes that answer a recall (the store's search index,
:mod:`._ftsindex`, and the signature index of a store without one, :mod:`._sigindex`) key an
entry by the same rule.
"""

from __future__ import annotations

from swarmq.knowledge._factrule import FACT_TAG
from swarmq.knowledge.model import Entry
from swarmq.knowledge.signature import SIGNATURE_FIELD, failure_signature

SESSION_START_KEY = "\x00session-start"
"""The index key of the entries a session start shows (project facts, critical directives):
no signature can be it."""


def shown_at_session_start(entry: Entry) -> bool:
    """Tagged a project fact, or a critical directive (activity and scope are checked when
    shown)."""
    return entry.priority == "critical" or FACT_TAG in entry.tags


def entry_signature(entry: Entry) -> str | None:
    """The entry's stored signature, else the one its lesson text states (cached by text)."""
    value = entry.get(SIGNATURE_FIELD)
    if isinstance(value, str) and value:
        return value
    return failure_signature(entry.lesson)


def recall_keys(entry: Entry) -> list[str]:
    """The keys ``entry`` is recalled by (none for most entries)."""
    signature = entry_signature(entry)
    keys = [signature] if signature is not None else []
    return [*keys, SESSION_START_KEY] if shown_at_session_start(entry) else keys
