"""A knowledge tier as the planner sees and changes it: its entries, changed in memory only.

Apart from :mod:`.knowledge` so that the lean population (:mod:`._lean`), which holds items
instead of entries, and the indexed night (:mod:`._indexed`) share the one rule that turns an
entry into the planner's :class:`~.items.Item` and the one way an action changes entries.
"""

from __future__ import annotations

import re
from typing import cast

from swarmq.consolidation._merge import (
    KEEP_APART,
    link_entries,
    merge_entries,
    strength,
    supersede_entries,
)
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Action, ActionKind, Item
from swarmq.knowledge.model import Entry, Tier
from swarmq.knowledge.store import TierStore
from swarmq.knowledge.templates import template_key
from swarmq.similarity.script import non_latin
from swarmq.similarity.text import normalize_opencode

_UNICODE_WORDS = re.compile(r"\w+")
"""Word runs in any script: the exact-duplicate key of a lesson in a non-Latin script."""

_NO_IDS: frozenset[str] = frozenset()
"""One shared empty ``apart`` set (nearly every entry's): a store's items are many."""


def entry_item(
    entry: Entry, order: int, tier: str, shared: dict[object, object] | None = None
) -> Item:
    """What the planner knows of ``entry``, the ``order``-th distinct id of a ``tier`` store.
    With ``shared``, equal strengths and projects are one object across the items that hold
    them (a store has few of each, and a million items)."""
    apart = entry.get(KEEP_APART)
    normalized = normalize_opencode(entry.lesson)
    if non_latin(entry.lesson):  # its ASCII residue would make two different lessons equal
        normalized = " ".join(_UNICODE_WORDS.findall(entry.lesson.casefold()))
    template = template_key(entry.lesson)
    project = entry.get("project_name") if tier != Tier.HIVE else None
    project = project if isinstance(project, str) and project else None
    power = strength(entry)
    if shared is not None:
        power = cast(tuple[float, ...], shared.setdefault(power, power))
        project = cast(str | None, shared.setdefault(project, project))
    # Same fields of a templated note, or same normalised text (two words at least), in one
    # project: one group, merged in a single round.
    key = (
        f"template:{template}" if template else f"text:{normalized}" if " " in normalized else None
    )
    kept = frozenset(a for a in apart if isinstance(a, str)) if isinstance(apart, list) else None
    return Item(
        id=entry.id,
        text=entry.lesson,
        created=entry.created_at,
        order=order,
        strength=power,
        fingerprint=None if key is None else f"{project or ''}\x00{key}",
        apart=kept if kept else _NO_IDS,
        template=template,
        project=project,
    )


class KnowledgePopulation:
    """The entries of a tier being consolidated, changed in memory only."""

    def __init__(
        self,
        entries: list[Entry],
        *,
        at: str,
        run_id: str,
        store: TierStore,
        config: ConsolidationConfig,
    ) -> None:
        self.current: dict[str, Entry] = {}
        for entry in entries:
            self.current.setdefault(entry.id, entry)  # a duplicated id: the first one counts
        self.order = {entry_id: n for n, entry_id in enumerate(self.current)}
        self.changed: dict[str, Entry] = {}
        self.at, self.run_id, self.store, self.config = at, run_id, store, config
        self._items: dict[str, Item] = {}

    def _item(self, entry: Entry) -> Item:
        item = self._items.get(entry.id)
        if item is None:
            item = self._items[entry.id] = entry_item(entry, self.order[entry.id], self.store.tier)
        return item

    def entry(self, entry_id: str) -> Entry:
        """The entry as this run's actions so far left it."""
        return self.current[entry_id]

    def items(self) -> list[Item]:
        return [self._item(e) for e in self.current.values() if e.is_active]

    def item(self, entry_id: str) -> Item:
        return self._item(self.entry(entry_id))

    def _set(self, entry: Entry) -> None:
        self._items.pop(entry.id, None)
        self.current[entry.id] = entry
        self.changed[entry.id] = entry

    def apply(self, action: Action) -> bool:
        keep, other = self.entry(action.keep), self.entry(action.other)
        if action.kind is ActionKind.MERGE:
            kept, gone = merge_entries(
                keep,
                other,
                at=self.at,
                run_id=self.run_id,
                reason=action.reason.value,
                config=self.store.config,
            )
        elif action.kind is ActionKind.SUPERSEDE:
            kept, gone = supersede_entries(
                keep, other, at=self.at, run_id=self.run_id, reason=action.reason.value
            )
        else:
            left, right = link_entries(keep, other, run_id=self.run_id)
            for entry in (left, right):
                if entry is not None:
                    self._set(entry)
            return left is not None or right is not None
        self._set(kept)
        self._set(gone)
        return True
