"""Which way a recall reads a store: its persisted signature index or the process's mirror.

A recall (a failing call's lessons, a session start's facts) in a process that has not loaded a
store, such as the MCP or hook server answering between agent turns, would load all of it to
look up one signature (1.2 GB at 100k entries). Where the knowledge store names a directory
for the persisted signature indexes (``KnowledgeStore.recall_dir``, which the roster wiring
sets) and ``persistent_index`` is on, such a store is read through its index in that
directory instead; a store already loaded answers from its mirror's dictionary.

The hive's copy of a swarm lesson is dropped by the swarm's near-duplicate check. Without the
swarm's mirror it is answered from the swarm's persisted search index (the same check
:meth:`~swarmq.knowledge._ftsindex.FileIndex.has_near_duplicate` makes for a search) when the
store has one, so both paths drop the same entries; a store without one is checked against
the swarm's matches only (its near-duplicates elsewhere in the store are not looked for).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from swarmq.knowledge._ftsindex import FileIndex, StaleIndex, sidecar_path
from swarmq.knowledge.dedup import find_near_duplicate_scan
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.store import TierStore

log = logging.getLogger(__name__)


def signature_dir(
    knowledge: KnowledgeStore, store: TierStore, index_dir: Path | None
) -> Path | None:
    """The directory of ``store``'s persisted signature index to recall through (``index_dir``
    when given), or ``None`` to recall from its mirror."""
    if index_dir is not None:
        return index_dir
    if (
        knowledge.recall_dir is None
        or not knowledge.config.persistent_index
        or store.tier_file.mirror.state is not None
    ):
        return None
    return knowledge.recall_dir


@contextlib.contextmanager
def swarm_duplicates(
    knowledge: KnowledgeStore, indexed: bool, local: list[str]
) -> Iterator[Callable[[str], bool]]:
    """Whether a hive lesson near-duplicates an active swarm entry. ``indexed``: the swarm
    was recalled through its signature index (``local`` its matches' lessons), so its mirror
    is not loaded for the check unless nothing else can answer it."""
    swarm = knowledge.swarm
    threshold = swarm.config.dedup_threshold
    if not indexed or swarm.tier_file.mirror.state is not None:
        yield lambda lesson: swarm.find_duplicate(lesson) is not None
        return
    index = _search_index(knowledge)
    if index is None:
        yield lambda lesson: find_near_duplicate_scan(lesson, local, threshold) is not None
        return
    with index:

        def duplicate(lesson: str) -> bool:
            try:
                return index.has_near_duplicate(lesson, threshold)
            except StaleIndex as exc:
                log.warning("knowledge index stale (%s); checking the loaded store", exc)
                return swarm.find_duplicate(lesson) is not None

        yield duplicate


def _search_index(knowledge: KnowledgeStore) -> FileIndex | None:
    """The swarm's persisted search index, when it has one (never built here: a first search
    builds it)."""
    path = knowledge.swarm.files.knowledge
    if not knowledge.config.persistent_index or not sidecar_path(path).exists():
        return None
    try:
        return FileIndex.open(path)
    except (OSError, sqlite3.Error) as exc:
        log.warning("knowledge index of %s unusable (%s)", path, exc)
        return None
