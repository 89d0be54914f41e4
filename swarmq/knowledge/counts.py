"""How many entries a store holds, from its persisted index rather than the whole file.

Headers and summaries ("no entry of the 1,000,000 in the store is relevant", a link's entry
count) need one number. Loading the store to count it parses every line (seconds and gigabytes
at a million entries) for a figure the persisted index already holds: the index is brought
up to date with the file first (its usual sync: the lines changed since, nothing when none
did), so the count is the file's. A store this process has loaded is counted from its mirror,
and one with no usable index (``persistent_index`` off, a write in progress, an unreadable
index) is loaded as before.
"""

from __future__ import annotations

import logging
import sqlite3

from swarmq.knowledge._ftsindex import FileIndex
from swarmq.knowledge.store import TierStore

log = logging.getLogger(__name__)


def entry_count(store: TierStore, *, archived: bool = True) -> int:
    """The entries of ``store``'s file (without ``archived``: those not archived)."""
    if store.tier_file.mirror.state is None and store.config.persistent_index:
        try:
            index = FileIndex.open(store.files.knowledge)
        except (OSError, sqlite3.Error) as exc:
            log.warning("knowledge index of %s unusable (%s)", store.files.knowledge, exc)
            index = None
        if index is not None:
            with index:
                return index.count() if archived else index.count_unarchived()
        if not store.files.knowledge.exists():
            return 0
    entries = store.read().entries
    return len(entries) if archived else sum(1 for e in entries if e.status != "archived")
